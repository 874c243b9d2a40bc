// kiln_sequence: the public sequence/optional object and the run scope that
// owns the sequences compiled models make.
#include "Sequence.h"

#include "Error.h"

#include <atomic>
#include <cstring>
#include <limits>
#include <new>

using kiln::rt::fail;

namespace {
std::atomic<size_t> LiveSequences{0};
thread_local kiln::rt::SeqRun *CurrentRun = nullptr;
} // namespace

kiln_sequence::kiln_sequence(int32_t DType) : DType(DType) { ++LiveSequences; }

kiln_sequence::kiln_sequence(const kiln_sequence &Other)
    : DType(Other.DType), None(Other.None), Elements(Other.Elements) {
  ++LiveSequences;
}

kiln_sequence::~kiln_sequence() { --LiveSequences; }

namespace kiln::rt {

SeqRunScope::SeqRunScope(std::deque<std::string> *Strings) : Outer(CurrentRun) {
  Run.Strings = Strings;
  CurrentRun = &Run;
}

SeqRunScope::~SeqRunScope() { CurrentRun = Outer; }

kiln_status SeqRunScope::status() const {
  return Run.Status == KILN_OK ? KILN_OK : fail(Run.Status, Run.Error);
}

kiln_status seqRunStatus() {
  if (!CurrentRun || CurrentRun->Status == KILN_OK)
    return KILN_OK;
  return fail(CurrentRun->Status, CurrentRun->Error);
}

SeqRun *currentSeqRun() { return CurrentRun; }

std::string seqDTypeProblem(int32_t DType) {
  if (DType == KILN_DTYPE_STRING)
    return "sequences of strings are not supported";
  if (kiln_dtype_size(DType) == 0)
    return std::string("unsupported element dtype ") + kiln_dtype_name(DType) +
           " (" + std::to_string(DType) + ")";
  return "";
}

bool denseBytes(int32_t DType, const int64_t *Shape, int32_t Rank,
                uint64_t &Bytes) {
  if (Rank < 0 || (Rank > 0 && !Shape))
    return false;
  uint64_t N = kiln_dtype_size(DType);
  for (int32_t D = 0; D < Rank; ++D) {
    if (Shape[D] < 0)
      return false;
    uint64_t Dim = static_cast<uint64_t>(Shape[D]);
    if (Dim != 0 && N > std::numeric_limits<uint64_t>::max() / Dim)
      return false;
    N *= Dim;
  }
  Bytes = N;
  return true;
}

SeqElementRef makeSeqElement(int32_t DType, const int64_t *Shape, int32_t Rank,
                             const void *Data, uint64_t Bytes) {
  auto E = std::make_shared<SeqElement>();
  E->DType = DType;
  E->Shape.assign(Shape, Shape + Rank);
  E->Bytes = Bytes;
  if (Bytes) {
    E->Data.reset(new uint8_t[Bytes]);
    std::memcpy(E->Data.get(), Data, Bytes);
  }
  return E;
}

size_t liveSequenceCount() { return LiveSequences.load(); }

} // namespace kiln::rt

extern "C" {

kiln_status kiln_sequence_create(int32_t DType, kiln_sequence **Out) {
  if (!Out)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "kiln_sequence_create: output pointer is NULL");
  *Out = nullptr;
  std::string Problem = kiln::rt::seqDTypeProblem(DType);
  if (!Problem.empty())
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "kiln_sequence_create: " + Problem);
  *Out = new (std::nothrow) kiln_sequence(DType);
  if (!*Out)
    return fail(KILN_ERROR_OUT_OF_MEMORY,
                "kiln_sequence_create: out of memory");
  return KILN_OK;
}

void kiln_sequence_destroy(kiln_sequence *Seq) { delete Seq; }

int32_t kiln_sequence_dtype(const kiln_sequence *Seq) {
  return Seq ? Seq->DType : KILN_DTYPE_UNDEFINED;
}

int64_t kiln_sequence_length(const kiln_sequence *Seq) {
  return Seq ? static_cast<int64_t>(Seq->Elements.size()) : 0;
}

int32_t kiln_sequence_is_none(const kiln_sequence *Seq) {
  return Seq && Seq->None;
}

void kiln_sequence_set_none(kiln_sequence *Seq, int32_t None) {
  if (!Seq)
    return;
  Seq->None = None != 0;
  if (Seq->None)
    Seq->Elements.clear();
}

kiln_status kiln_sequence_append(kiln_sequence *Seq, const kiln_tensor *T) {
  if (!Seq || !T)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "kiln_sequence_append: sequence or tensor is NULL");
  if (Seq->None)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "kiln_sequence_append: the value is none (call "
                "kiln_sequence_set_none(seq, 0) first)");
  if (T->dtype != Seq->DType)
    return fail(KILN_ERROR_DTYPE_MISMATCH,
                std::string("kiln_sequence_append: a ") +
                    kiln_dtype_name(T->dtype) +
                    " tensor does not fit a sequence of " +
                    kiln_dtype_name(Seq->DType));
  uint64_t Bytes = 0;
  if (!kiln::rt::denseBytes(T->dtype, T->shape, T->rank, Bytes))
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "kiln_sequence_append: invalid shape " +
                    kiln::rt::formatShape(T->shape, T->rank));
  if (Bytes && !T->data)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "kiln_sequence_append: data is NULL");
  if (T->size_bytes < Bytes)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "kiln_sequence_append: buffer holds " +
                    std::to_string(T->size_bytes) + " bytes, shape " +
                    kiln::rt::formatShape(T->shape, T->rank) + " needs " +
                    std::to_string(Bytes));
  try {
    Seq->Elements.push_back(
        kiln::rt::makeSeqElement(T->dtype, T->shape, T->rank, T->data, Bytes));
  } catch (const std::bad_alloc &) {
    return fail(KILN_ERROR_OUT_OF_MEMORY,
                "kiln_sequence_append: out of memory");
  }
  return KILN_OK;
}

kiln_status kiln_sequence_at(const kiln_sequence *Seq, int64_t Index,
                             kiln_tensor *View) {
  if (!Seq || !View)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "kiln_sequence_at: sequence or view is NULL");
  int64_t N = static_cast<int64_t>(Seq->Elements.size());
  if (Index < 0 || Index >= N)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "kiln_sequence_at: index " + std::to_string(Index) +
                    " is out of range for a sequence of length " +
                    std::to_string(N));
  const kiln::rt::SeqElement &E = *Seq->Elements[Index];
  View->name = nullptr;
  View->dtype = E.DType;
  View->rank = static_cast<int32_t>(E.Shape.size());
  View->shape = E.Shape.data();
  View->data = E.Data.get();
  View->size_bytes = E.Bytes;
  return KILN_OK;
}

void kiln_sequence_clear(kiln_sequence *Seq) {
  if (Seq)
    Seq->Elements.clear();
}

} // extern "C"
