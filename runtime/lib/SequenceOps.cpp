// The ONNX sequence and optional operators, as functions that compiled
// model code calls (model ABI 6). Pointers and handles travel as int64;
// `Node` is the address of a C string naming the calling node, which
// prefixes error messages. A failure is recorded in the thread's current
// run (the first one wins, see Sequence.h) and the function returns 0;
// after that, and outside a run, every function returns 0 at once. A
// tensor the compiled code expects back is zero-filled when it is not
// written, so that what runs on until the partition ends sees no garbage
// (a trip count, say).
#include "SequenceOps.h"

#include "RunCall.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>

using namespace kiln::rt;

namespace {

std::string shapeText(const std::vector<int64_t> &Shape) {
  return formatShape(Shape.data(), static_cast<int32_t>(Shape.size()));
}

std::string lengthText(int64_t N) {
  return N == 0 ? std::string("an empty sequence")
                : "a sequence of length " + std::to_string(N);
}

/// Normalizes an ONNX position in [-N, N - 1], or [-N, N] with End, to
/// [0, N - 1] / [0, N].
bool normalizePosition(SeqRun &Run, int64_t Node, const char *Fn, int64_t &Pos,
                       int64_t N, bool End) {
  int64_t Hi = End ? N : N - 1;
  if (Pos >= -N && Pos <= Hi) {
    Pos = Pos < 0 ? Pos + N : Pos;
    return true;
  }
  std::string Range =
      Hi < -N ? std::string()
              : " [" + std::to_string(-N) + ", " + std::to_string(Hi) + "]";
  record(Run, Node, Fn, KILN_ERROR_INVALID_ARGUMENT,
         "position " + std::to_string(Pos) + " is out of range" + Range +
             " for " + lengthText(N));
  return false;
}

bool checkHasValue(SeqRun &Run, int64_t Node, const char *Fn,
                   const kiln_sequence &S, const char *What) {
  if (!S.None)
    return true;
  record(Run, Node, Fn, KILN_ERROR_INVALID_ARGUMENT,
         std::string("the ") + What + " input has no value");
  return false;
}

/// Zeroes the compiled tensor at Out when it is well described.
void zeroFill(int64_t Out, int32_t DType, int32_t Rank, int64_t Dims) {
  uint64_t Bytes = 0;
  if (Out && denseBytes(DType, ptrOf<int64_t>(Dims), Rank, Bytes) && Bytes)
    std::memset(reinterpret_cast<void *>(static_cast<uintptr_t>(Out)), 0,
                Bytes);
}

bool sameShape(const std::vector<int64_t> &Shape, const int64_t *Dims,
               int32_t Rank) {
  return static_cast<int32_t>(Shape.size()) == Rank &&
         std::equal(Shape.begin(), Shape.end(), Dims);
}

/// Whether a sequence may hold DType; false once recorded.
bool checkSeqDType(SeqRun &Run, int64_t Node, const char *Fn, int32_t DType) {
  std::string Problem = seqDTypeProblem(DType);
  if (Problem.empty())
    return true;
  record(Run, Node, Fn, KILN_ERROR_INVALID_ARGUMENT, Problem);
  return false;
}

/// The sequence behind handle Seq, which must not be none; null for handle 0
/// (the run failed already) or once recorded.
const kiln_sequence *sequenceOf(SeqRun &Run, int64_t Node, const char *Fn, int64_t Seq) {
  if (!Seq)
    return nullptr;
  const kiln_sequence &S = *seqOf(Seq);
  return checkHasValue(Run, Node, Fn, S, "sequence") ? &S : nullptr;
}

/// Element Pos of the sequence (or optional: then it must have a value)
/// Seq, Pos normalized (0 without HasPosition); null once recorded.
const SeqElementRef *elementAt(SeqRun &Run, int64_t Node, const char *Fn, int64_t Seq,
                               int64_t &Pos, int32_t HasPosition) {
  const kiln_sequence &S = *seqOf(Seq);
  if (!checkHasValue(Run, Node, Fn, S, "optional"))
    return nullptr;
  if (!HasPosition)
    Pos = 0;
  if (!normalizePosition(Run, Node, Fn, Pos, static_cast<int64_t>(S.Elements.size()),
                         /*End=*/false))
    return nullptr;
  return &S.Elements[Pos];
}

} // namespace

// Whether the current run has not failed yet: a run-time Loop whose body
// calls the runtime stops once a call failed (its results are zeros, which
// could otherwise keep the loop going for ever). 1 outside a run.
KILN_RT_EXPORT int32_t kilnRunOk(void) {
  SeqRun *Run = currentSeqRun();
  return !Run || Run->Status == KILN_OK;
}

// A new sequence of DType, empty or none.
KILN_RT_EXPORT int64_t kilnSeqNew(int32_t DType, int32_t None) {
  return guarded<int64_t>(0, "kilnSeqNew", [&](SeqRun &Run) -> int64_t {
    if (!checkSeqDType(Run, 0, "kilnSeqNew", DType))
      return 0;
    kiln_sequence *S = newSeq(Run, kiln_sequence(DType));
    S->None = None != 0;
    return handleOf(S);
  });
}

// ONNX SequenceInsert: a copy of Seq with the tensor at Data inserted at
// Position (default: at the back).
KILN_RT_EXPORT int64_t kilnSeqInsert(int64_t Seq, int64_t Data, int32_t DType,
                                     int32_t Rank, int64_t Dims,
                                     int64_t Position, int32_t HasPosition,
                                     int64_t Node) {
  const char *Fn = "kilnSeqInsert";
  return guarded<int64_t>(Node, Fn, [&](SeqRun &Run) -> int64_t {
    const kiln_sequence *Found = sequenceOf(Run, Node, Fn, Seq);
    uint64_t Bytes = 0;
    if (!Found || !checkDense(Run, Node, Fn, DType, Rank, Dims, Bytes))
      return 0;
    const kiln_sequence &S = *Found;
    if (DType != S.DType) {
      record(Run, Node, Fn, KILN_ERROR_DTYPE_MISMATCH,
             std::string("cannot insert a ") + kiln_dtype_name(DType) +
                 " tensor into a sequence of " + kiln_dtype_name(S.DType));
      return 0;
    }
    if (Bytes && !Data) {
      record(Run, Node, Fn, KILN_ERROR_INTERNAL, "tensor data is NULL");
      return 0;
    }
    int64_t N = static_cast<int64_t>(S.Elements.size());
    int64_t Pos = HasPosition ? Position : N;
    if (!normalizePosition(Run, Node, Fn, Pos, N, /*End=*/true))
      return 0;
    SeqElementRef E = makeSeqElement(DType, ptrOf<int64_t>(Dims), Rank,
                                     ptrOf<void>(Data), Bytes);
    kiln_sequence *Out = newSeq(Run, S);
    Out->Elements.insert(Out->Elements.begin() + Pos, std::move(E));
    return handleOf(Out);
  });
}

// ONNX SequenceErase: a copy of Seq without the element at Position
// (default: the last).
KILN_RT_EXPORT int64_t kilnSeqErase(int64_t Seq, int64_t Position,
                                    int32_t HasPosition, int64_t Node) {
  const char *Fn = "kilnSeqErase";
  return guarded<int64_t>(Node, Fn, [&](SeqRun &Run) -> int64_t {
    const kiln_sequence *Found = sequenceOf(Run, Node, Fn, Seq);
    if (!Found)
      return 0;
    const kiln_sequence &S = *Found;
    int64_t N = static_cast<int64_t>(S.Elements.size());
    if (N == 0) {
      record(Run, Node, Fn, KILN_ERROR_INVALID_ARGUMENT,
             "cannot erase from an empty sequence");
      return 0;
    }
    int64_t Pos = HasPosition ? Position : N - 1;
    if (!normalizePosition(Run, Node, Fn, Pos, N, /*End=*/false))
      return 0;
    kiln_sequence *Out = newSeq(Run, S);
    Out->Elements.erase(Out->Elements.begin() + Pos);
    return handleOf(Out);
  });
}

// ONNX SequenceLength.
KILN_RT_EXPORT int64_t kilnSeqLength(int64_t Seq, int64_t Node) {
  const char *Fn = "kilnSeqLength";
  return guarded<int64_t>(Node, Fn, [&](SeqRun &Run) -> int64_t {
    if (!Seq || !checkHasValue(Run, Node, Fn, *seqOf(Seq), "sequence"))
      return 0;
    return static_cast<int64_t>(seqOf(Seq)->Elements.size());
  });
}

// ONNX SequenceAt, and OptionalGetElement of an optional tensor (position
// 0): copies the element to Out, whose compiled dtype and static shape it
// must have. Without HasPosition, the position is 0.
KILN_RT_EXPORT void kilnSeqAt(int64_t Seq, int64_t Position,
                              int32_t HasPosition, int32_t DType, int32_t Rank,
                              int64_t Dims, int64_t Node, int64_t Out) {
  const char *Fn = "kilnSeqAt";
  bool Done = guarded<bool>(Node, Fn, [&](SeqRun &Run) {
    if (!Seq)
      return false;
    uint64_t Bytes = 0;
    if (!checkDense(Run, Node, Fn, DType, Rank, Dims, Bytes))
      return false;
    int64_t Pos = Position;
    const SeqElementRef *Found = elementAt(Run, Node, Fn, Seq, Pos, HasPosition);
    if (!Found)
      return false;
    const SeqElement &E = **Found;
    const int64_t *Want = ptrOf<int64_t>(Dims);
    if (E.DType != DType) {
      record(Run, Node, Fn, KILN_ERROR_DTYPE_MISMATCH,
             "element " + std::to_string(Pos) + " is " +
                 kiln_dtype_name(E.DType) + ", the compiled model expects " +
                 kiln_dtype_name(DType));
      return false;
    }
    if (!sameShape(E.Shape, Want, Rank)) {
      record(Run, Node, Fn, KILN_ERROR_SHAPE_MISMATCH,
             "element " + std::to_string(Pos) + " has shape " +
                 shapeText(E.Shape) + ", the compiled model expects " +
                 formatShape(Want, Rank));
      return false;
    }
    if (Bytes)
      std::memcpy(reinterpret_cast<void *>(static_cast<uintptr_t>(Out)),
                  E.Data.get(), Bytes);
    return true;
  });
  if (!Done)
    zeroFill(Out, DType, Rank, Dims);
}

// ONNX SplitToSequence of the tensor at Data along Axis (normalized).
// SplitRank -1: no split input, pieces of length 1 (without the axis unless
// KeepDims); 0: Split is the address of one chunk length (the last piece
// may be shorter); 1: the address of SplitLength lengths that add up to
// the axis' extent.
KILN_RT_EXPORT int64_t kilnSeqSplit(int64_t Data, int32_t DType, int32_t Rank,
                                    int64_t Dims, int64_t Axis, int64_t Split,
                                    int32_t SplitRank, int64_t SplitLength,
                                    int32_t KeepDims, int64_t Node) {
  const char *Fn = "kilnSeqSplit";
  return guarded<int64_t>(Node, Fn, [&](SeqRun &Run) -> int64_t {
    uint64_t Bytes = 0;
    if (!checkDense(Run, Node, Fn, DType, Rank, Dims, Bytes) ||
        !checkSeqDType(Run, Node, Fn, DType))
      return 0;
    const int64_t *Shape = ptrOf<int64_t>(Dims);
    if (Axis < 0 || Axis >= Rank || SplitRank < -1 || SplitRank > 1 ||
        (Bytes && !Data) || (SplitRank >= 0 && !Split) || SplitLength < 0) {
      record(Run, Node, Fn, KILN_ERROR_INTERNAL,
             "invalid arguments (axis " + std::to_string(Axis) + " of rank " +
                 std::to_string(Rank) + ", split rank " +
                 std::to_string(SplitRank) + ")");
      return 0;
    }
    int32_t A = static_cast<int32_t>(Axis);
    int64_t Extent = Shape[A];
    std::vector<int64_t> Lengths;
    if (SplitRank == -1) {
      Lengths.assign(Extent, 1);
    } else if (SplitRank == 0) {
      int64_t Chunk = *ptrOf<int64_t>(Split);
      if (Chunk <= 0) {
        record(Run, Node, Fn, KILN_ERROR_INVALID_ARGUMENT,
               "split length " + std::to_string(Chunk) + " is not positive");
        return 0;
      }
      for (int64_t Start = 0; Start < Extent; Start += Chunk)
        Lengths.push_back(std::min(Chunk, Extent - Start));
    } else {
      const int64_t *Given = ptrOf<int64_t>(Split);
      Lengths.assign(Given, Given + SplitLength);
      int64_t Sum = 0;
      for (int64_t L : Lengths) {
        if (L < 0) {
          record(Run, Node, Fn, KILN_ERROR_INVALID_ARGUMENT,
                 "split length " + std::to_string(L) + " is negative");
          return 0;
        }
        Sum += L;
      }
      if (Sum != Extent) {
        record(Run, Node, Fn, KILN_ERROR_INVALID_ARGUMENT,
               "split lengths add up to " + std::to_string(Sum) +
                   ", the input has " + std::to_string(Extent) + " on axis " +
                   std::to_string(A) + " (shape " + formatShape(Shape, Rank) +
                   ")");
        return 0;
      }
    }
    // The input as [Outer, Extent, Inner bytes].
    int64_t Outer = product(Shape, 0, A);
    uint64_t Inner = kiln_dtype_size(DType) *
                     static_cast<uint64_t>(product(Shape, A + 1, Rank));
    const uint8_t *Src = ptrOf<uint8_t>(Data);
    bool DropAxis = SplitRank == -1 && !KeepDims;
    kiln_sequence *Out = newSeq(Run, kiln_sequence(DType));
    int64_t Start = 0;
    for (int64_t L : Lengths) {
      auto E = std::make_shared<SeqElement>();
      E->DType = DType;
      E->Shape.assign(Shape, Shape + Rank);
      E->Shape[A] = L;
      if (DropAxis)
        E->Shape.erase(E->Shape.begin() + A);
      uint64_t Piece = static_cast<uint64_t>(L) * Inner;
      E->Bytes = Piece * static_cast<uint64_t>(Outer);
      if (E->Bytes) {
        E->Data.reset(new uint8_t[E->Bytes]);
        for (int64_t O = 0; O < Outer; ++O)
          std::memcpy(E->Data.get() + O * Piece,
                      Src + (O * Extent + Start) * Inner, Piece);
      }
      Out->Elements.push_back(std::move(E));
      Start += L;
    }
    return handleOf(Out);
  });
}

// ONNX ConcatFromSequence into Out, whose compiled shape (Rank, Dims) the
// elements must make up: joined on Axis, or stacked on a new Axis.
KILN_RT_EXPORT void kilnSeqConcat(int64_t Seq, int32_t DType, int32_t Rank,
                                  int64_t Dims, int64_t Axis, int32_t NewAxis,
                                  int64_t Node, int64_t Out) {
  const char *Fn = "kilnSeqConcat";
  bool Done = guarded<bool>(Node, Fn, [&](SeqRun &Run) {
    const kiln_sequence *Found = sequenceOf(Run, Node, Fn, Seq);
    uint64_t Bytes = 0;
    if (!Found || !checkDense(Run, Node, Fn, DType, Rank, Dims, Bytes))
      return false;
    const kiln_sequence &S = *Found;
    const int64_t *Shape = ptrOf<int64_t>(Dims);
    if (Axis < 0 || Axis >= Rank || (Bytes && !Out)) {
      record(Run, Node, Fn, KILN_ERROR_INTERNAL,
             "invalid arguments (axis " + std::to_string(Axis) +
                 " of output rank " + std::to_string(Rank) + ")");
      return false;
    }
    if (S.Elements.empty()) {
      record(Run, Node, Fn, KILN_ERROR_INVALID_ARGUMENT,
             "cannot concatenate an empty sequence");
      return false;
    }
    int32_t A = static_cast<int32_t>(Axis);
    std::string How =
        (NewAxis ? "stacking on a new axis " : "joining on axis ") +
        std::to_string(A);
    // Each element's shape is the output's, but on the axis (absent when
    // stacking).
    int64_t Total = 0;
    for (size_t I = 0; I < S.Elements.size(); ++I) {
      const SeqElement &E = *S.Elements[I];
      if (E.DType != DType) {
        record(Run, Node, Fn, KILN_ERROR_DTYPE_MISMATCH,
               "element " + std::to_string(I) + " is " +
                   kiln_dtype_name(E.DType) + ", the compiled model expects " +
                   kiln_dtype_name(DType));
        return false;
      }
      std::vector<int64_t> Want(Shape, Shape + Rank);
      if (NewAxis)
        Want.erase(Want.begin() + A);
      else if (static_cast<int32_t>(E.Shape.size()) == Rank)
        Want[A] = E.Shape[A];
      if (E.Shape != Want) {
        record(Run, Node, Fn, KILN_ERROR_SHAPE_MISMATCH,
               "element " + std::to_string(I) + " has shape " +
                   shapeText(E.Shape) +
                   ", which does not fit the compiled "
                   "output shape " +
                   formatShape(Shape, Rank) + " (" + How + ")");
        return false;
      }
      Total += NewAxis ? 1 : E.Shape[A];
    }
    if (Total != Shape[A]) {
      record(Run, Node, Fn, KILN_ERROR_SHAPE_MISMATCH,
             std::to_string(S.Elements.size()) + " elements make " +
                 std::to_string(Total) + " on axis " + std::to_string(A) +
                 ", the compiled output shape " + formatShape(Shape, Rank) +
                 " has " + std::to_string(Shape[A]));
      return false;
    }
    // The output as [Outer, Shape[A], Inner bytes].
    int64_t Outer = product(Shape, 0, A);
    uint64_t Inner = kiln_dtype_size(DType) *
                     static_cast<uint64_t>(product(Shape, A + 1, Rank));
    auto *Dst = reinterpret_cast<uint8_t *>(static_cast<uintptr_t>(Out));
    int64_t Offset = 0;
    for (const SeqElementRef &E : S.Elements) {
      int64_t L = NewAxis ? 1 : E->Shape[A];
      uint64_t Piece = static_cast<uint64_t>(L) * Inner;
      for (int64_t O = 0; O < Outer && Piece; ++O)
        std::memcpy(Dst + (O * Shape[A] + Offset) * Inner,
                    E->Data.get() + O * Piece, Piece);
      Offset += L;
    }
    return true;
  });
  if (!Done)
    zeroFill(Out, DType, Rank, Dims);
}

// ONNX Optional(seq): a copy that has a value.
KILN_RT_EXPORT int64_t kilnSeqSome(int64_t Seq, int64_t Node) {
  return guarded<int64_t>(Node, "kilnSeqSome", [&](SeqRun &Run) -> int64_t {
    if (!Seq)
      return 0;
    kiln_sequence *Out = newSeq(Run, *seqOf(Seq));
    Out->None = false;
    return handleOf(Out);
  });
}

// ONNX OptionalHasElement.
KILN_RT_EXPORT int32_t kilnSeqHasValue(int64_t Seq, int64_t Node) {
  return guarded<int32_t>(Node, "kilnSeqHasValue", [&](SeqRun &) -> int32_t {
    return Seq && !seqOf(Seq)->None;
  });
}

// OptionalGetElement of an optional sequence: the sequence it holds.
KILN_RT_EXPORT int64_t kilnSeqGetValue(int64_t Opt, int64_t Node) {
  const char *Fn = "kilnSeqGetValue";
  return guarded<int64_t>(Node, Fn, [&](SeqRun &Run) -> int64_t {
    if (!Opt || !checkHasValue(Run, Node, Fn, *seqOf(Opt), "optional"))
      return 0;
    kiln_sequence *Out = newSeq(Run, *seqOf(Opt));
    Out->None = false;
    return handleOf(Out);
  });
}

// A Slice whose shape is known only at run time (a Loop body slicing by its
// counter), boxed: a new one-element sequence holding the copy of
// x[Start + i * Step] for i < Size, per dimension (each the address of Rank
// int64). Indices are clamped to x, like the compiled Slice: a bad step was
// reported by the compiled code's own check.
KILN_RT_EXPORT int64_t kilnSeqSlice(int64_t Data, int32_t DType, int32_t Rank,
                                    int64_t Dims, int64_t Start, int64_t Step,
                                    int64_t Size, int64_t Node) {
  const char *Fn = "kilnSeqSlice";
  return guarded<int64_t>(Node, Fn, [&](SeqRun &Run) -> int64_t {
    uint64_t Bytes = 0, OutBytes = 0;
    if (!checkDense(Run, Node, Fn, DType, Rank, Dims, Bytes) ||
        !checkSeqDType(Run, Node, Fn, DType))
      return 0;
    const int64_t *Shape = ptrOf<int64_t>(Dims);
    const int64_t *From = ptrOf<int64_t>(Start), *By = ptrOf<int64_t>(Step),
                  *Count = ptrOf<int64_t>(Size);
    if (Rank > 0 && (!From || !By || !Count)) {
      record(Run, Node, Fn, KILN_ERROR_INTERNAL, "slice bounds are NULL");
      return 0;
    }
    std::vector<int64_t> OutShape(Count, Count + Rank);
    bool Empty = false;
    for (int32_t D = 0; D < Rank; ++D)
      Empty |= OutShape[D] == 0;
    if (!denseBytes(DType, OutShape.data(), Rank, OutBytes) ||
        (!Empty && (Bytes == 0 || !Data))) {
      record(Run, Node, Fn, KILN_ERROR_INTERNAL,
             "invalid slice of size " + shapeText(OutShape) + " from shape " +
                 formatShape(Shape, Rank));
      return 0;
    }
    size_t ElemSize = kiln_dtype_size(DType);
    auto E = std::make_shared<SeqElement>();
    E->DType = DType;
    E->Shape = OutShape;
    E->Bytes = OutBytes;
    if (OutBytes) {
      E->Data.reset(new uint8_t[OutBytes]);
      // Row-major strides of x, in elements.
      std::vector<int64_t> Stride(Rank, 1), Index(Rank, 0);
      for (int32_t D = Rank - 1; D > 0; --D)
        Stride[D - 1] = Stride[D] * Shape[D];
      const uint8_t *Src = ptrOf<uint8_t>(Data);
      uint64_t N = OutBytes / ElemSize;
      for (uint64_t I = 0; I < N; ++I) {
        int64_t Offset = 0;
        for (int32_t D = 0; D < Rank; ++D) {
          int64_t At = From[D] + Index[D] * By[D];
          Offset +=
              std::min(std::max<int64_t>(At, 0), Shape[D] - 1) * Stride[D];
        }
        std::memcpy(E->Data.get() + I * ElemSize, Src + Offset * ElemSize,
                    ElemSize);
        for (int32_t D = Rank - 1; D >= 0 && ++Index[D] == OutShape[D]; --D)
          Index[D] = 0;
      }
    }
    kiln_sequence *Box = newSeq(Run, kiln_sequence(DType));
    Box->Elements.push_back(std::move(E));
    return handleOf(Box);
  });
}

// ONNX ConcatFromSequence whose output shape the compiled code does not
// know (the sequence's length or its elements' shapes are run-time values):
// the shape follows element 0, and the result is a box.
KILN_RT_EXPORT int64_t kilnSeqConcatBox(int64_t Seq, int64_t Axis, int32_t NewAxis,
                                        int64_t Node) {
  const char *Fn = "kilnSeqConcatBox";
  return guarded<int64_t>(Node, Fn, [&](SeqRun &Run) -> int64_t {
    const kiln_sequence *Found = sequenceOf(Run, Node, Fn, Seq);
    if (!Found)
      return 0;
    const kiln_sequence &S = *Found;
    if (S.Elements.empty()) {
      record(Run, Node, Fn, KILN_ERROR_INVALID_ARGUMENT, "cannot concatenate an empty sequence");
      return 0;
    }
    std::vector<int64_t> Shape = S.Elements[0]->Shape;
    int64_t Rank = static_cast<int64_t>(Shape.size()) + (NewAxis ? 1 : 0);
    int64_t A = Axis < 0 ? Axis + Rank : Axis;
    if (A < 0 || A >= Rank) {
      record(Run, Node, Fn, KILN_ERROR_INVALID_ARGUMENT,
             "axis " + std::to_string(Axis) + " is out of range for rank " + std::to_string(Rank));
      return 0;
    }
    if (NewAxis)
      Shape.insert(Shape.begin() + A, static_cast<int64_t>(S.Elements.size()));
    else
      for (size_t I = 1; I < S.Elements.size(); ++I)
        Shape[A] += S.Elements[I]->Shape.size() == Shape.size() ? S.Elements[I]->Shape[A] : 0;
    int32_t DType = S.Elements[0]->DType;
    uint64_t Bytes = 0;
    if (!denseBytes(DType, Shape.data(), static_cast<int32_t>(Rank), Bytes)) {
      record(Run, Node, Fn, KILN_ERROR_INVALID_ARGUMENT, "the result is too large");
      return 0;
    }
    // Concatenated straight into the new element; kilnSeqConcat checks
    // every element against that shape.
    auto E = std::make_shared<SeqElement>();
    E->DType = DType;
    E->Shape = Shape;
    E->Bytes = Bytes;
    if (Bytes)
      E->Data.reset(new uint8_t[Bytes]);
    auto address = [](const void *P) {
      return static_cast<int64_t>(reinterpret_cast<uintptr_t>(P));
    };
    kilnSeqConcat(Seq, DType, static_cast<int32_t>(Rank), address(Shape.data()), A, NewAxis,
                  Node, address(E->Data.get()));
    if (Run.Status != KILN_OK)
      return 0;
    return newBox(Run, std::move(E));
  });
}

// ONNX SequenceAt of an element whose shape the compiled code does not know:
// a box sharing the element.
KILN_RT_EXPORT int64_t kilnSeqAtBox(int64_t Seq, int64_t Position, int32_t HasPosition,
                                    int64_t Node) {
  const char *Fn = "kilnSeqAtBox";
  return guarded<int64_t>(Node, Fn, [&](SeqRun &Run) -> int64_t {
    if (!Seq)
      return 0;
    int64_t Pos = Position;
    const SeqElementRef *Found = elementAt(Run, Node, Fn, Seq, Pos, HasPosition);
    return Found ? newBox(Run, *Found) : 0;
  });
}

// SequenceInsert of a boxed tensor (see kilnSeqSlice): a copy of Seq with
// Box's one element inserted at Position (default: at the back). The
// element is shared, not copied.
KILN_RT_EXPORT int64_t kilnSeqInsertBox(int64_t Seq, int64_t Box,
                                        int64_t Position, int32_t HasPosition,
                                        int64_t Node) {
  const char *Fn = "kilnSeqInsertBox";
  return guarded<int64_t>(Node, Fn, [&](SeqRun &Run) -> int64_t {
    if (!Seq || !Box)
      return 0;
    const kiln_sequence &S = *seqOf(Seq), &B = *seqOf(Box);
    if (!checkHasValue(Run, Node, Fn, S, "sequence"))
      return 0;
    if (B.None || B.Elements.size() != 1) {
      record(Run, Node, Fn, KILN_ERROR_INTERNAL,
             "a boxed tensor holds " + std::to_string(B.Elements.size()) +
                 " elements");
      return 0;
    }
    if (B.DType != S.DType) {
      record(Run, Node, Fn, KILN_ERROR_DTYPE_MISMATCH,
             std::string("cannot insert a ") + kiln_dtype_name(B.DType) +
                 " tensor into a sequence of " + kiln_dtype_name(S.DType));
      return 0;
    }
    int64_t N = static_cast<int64_t>(S.Elements.size());
    int64_t Pos = HasPosition ? Position : N;
    if (!normalizePosition(Run, Node, Fn, Pos, N, /*End=*/true))
      return 0;
    kiln_sequence *Out = newSeq(Run, S);
    Out->Elements.insert(Out->Elements.begin() + Pos, B.Elements[0]);
    return handleOf(Out);
  });
}
