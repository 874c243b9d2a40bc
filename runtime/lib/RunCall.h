// What the functions compiled model code calls (SequenceOps.cpp,
// DynamicOps.cpp) share: handles and addresses as int64, failures recorded
// in the thread's current run with the calling node's name, and results
// made as new sequences owned by the run.
#ifndef KILN_RUNTIME_RUNCALL_H
#define KILN_RUNTIME_RUNCALL_H

#include "Error.h"
#include "Sequence.h"

#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <utility>

#define KILN_RT_EXPORT extern "C" __attribute__((visibility("default")))

namespace kiln::rt {

inline kiln_sequence *seqOf(int64_t Handle) {
  return reinterpret_cast<kiln_sequence *>(static_cast<uintptr_t>(Handle));
}

inline int64_t handleOf(const kiln_sequence *Seq) {
  return static_cast<int64_t>(reinterpret_cast<uintptr_t>(Seq));
}

template <typename T> const T *ptrOf(int64_t Address) {
  return reinterpret_cast<const T *>(static_cast<uintptr_t>(Address));
}

/// Records the run's first failure, prefixed with the node's name (else
/// with Fn, the function's).
inline void record(SeqRun &Run, int64_t Node, const char *Fn,
                   kiln_status Status, const std::string &Message) {
  if (Run.Status != KILN_OK)
    return;
  Run.Status = Status;
  Run.Error = std::string(Node ? ptrOf<char>(Node) : Fn) + ": " + Message;
}

/// Runs Body with the current run unless there is none or it has failed;
/// no exception reaches the compiled caller.
template <typename R, typename F>
R guarded(int64_t Node, const char *Fn, F Body) {
  SeqRun *Run = currentSeqRun();
  if (!Run || Run->Status != KILN_OK)
    return R();
  try {
    return Body(*Run);
  } catch (const std::bad_alloc &) {
    record(*Run, Node, Fn, KILN_ERROR_OUT_OF_MEMORY, "out of memory");
  } catch (...) {
    record(*Run, Node, Fn, KILN_ERROR_INTERNAL, "unexpected exception");
  }
  return R();
}

/// A new sequence owned by the run.
inline kiln_sequence *newSeq(SeqRun &Run, const kiln_sequence &From) {
  Run.Pool.push_back(std::make_unique<kiln_sequence>(From));
  return Run.Pool.back().get();
}

/// A new box owned by the run: a one-element sequence (not none) holding E.
inline int64_t newBox(SeqRun &Run, SeqElementRef E) {
  kiln_sequence *Box = newSeq(Run, kiln_sequence(E->DType));
  Box->Elements.push_back(std::move(E));
  return handleOf(Box);
}

/// Checks a tensor the compiled code describes; false (recorded) when it
/// is malformed, which is a compiler bug.
inline bool checkDense(SeqRun &Run, int64_t Node, const char *Fn, int32_t DType,
                       int32_t Rank, int64_t Dims, uint64_t &Bytes) {
  if (denseBytes(DType, ptrOf<int64_t>(Dims), Rank, Bytes) &&
      kiln_dtype_size(DType) != 0)
    return true;
  record(Run, Node, Fn, KILN_ERROR_INTERNAL,
         std::string("invalid tensor description: ") + kiln_dtype_name(DType) +
             " " + formatShape(ptrOf<int64_t>(Dims), Rank < 0 ? 0 : Rank));
  return false;
}

/// The product of Dims[Begin..End).
inline int64_t product(const int64_t *Dims, int32_t Begin, int32_t End) {
  int64_t N = 1;
  for (int32_t D = Begin; D < End; ++D)
    N *= Dims[D];
  return N;
}

} // namespace kiln::rt

#endif // KILN_RUNTIME_RUNCALL_H
