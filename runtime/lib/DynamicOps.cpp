// ONNX operators whose result shape only the data decides, as functions
// that compiled model code calls: NonZero, Compress, Unique and
// NonMaxSuppression. Each returns a box, a new one-element sequence owned
// by the run that holds the result tensor; the compiled code unpacks it
// (kilnSeqAt) where the model declares a static shape, and hands it on
// otherwise (a model output of kind KILN_VALUE_DYNAMIC, a sequence op).
// Conventions as in SequenceOps.cpp: pointers travel as int64, `Node`
// names the calling node in error messages, a failure is recorded in the
// thread's current run and the function returns 0, and after a failure or
// outside a run every function returns 0 at once. Semantics follow the
// ONNX reference implementation (onnx.reference.ops), which is numpy's.
#include "DynamicOps.h"

#include "RunCall.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

// NonMaxSuppression's IoU is computed operation by operation in float, as
// the reference does in float32: no fused multiply-adds.
#ifdef __clang__
#pragma clang fp contract(off)
#endif

using namespace kiln::rt;

namespace {

/// A new element of DType and Shape with room for its data.
std::shared_ptr<SeqElement> newElement(int32_t DType,
                                       std::vector<int64_t> Shape) {
  auto E = std::make_shared<SeqElement>();
  E->DType = DType;
  E->Shape = std::move(Shape);
  E->Bytes = kiln_dtype_size(DType);
  for (int64_t D : E->Shape)
    E->Bytes *= static_cast<uint64_t>(D);
  if (E->Bytes)
    E->Data.reset(new uint8_t[E->Bytes]);
  return E;
}

/// A 1-D int64 element holding V.
SeqElementRef int64Element(const std::vector<int64_t> &V) {
  auto E = newElement(KILN_DTYPE_INT64, {static_cast<int64_t>(V.size())});
  if (E->Bytes)
    std::memcpy(E->Data.get(), V.data(), E->Bytes);
  return E;
}

/// Checks the described input tensor: well formed, with data, not strings.
bool checkInput(SeqRun &Run, int64_t Node, const char *Fn, const char *Op,
                int64_t Data, int32_t DType, int32_t Rank, int64_t Dims,
                uint64_t &Bytes) {
  if (DType == KILN_DTYPE_STRING) {
    record(Run, Node, Fn, KILN_ERROR_INVALID_ARGUMENT,
           std::string(Op) + " of string tensors is not supported");
    return false;
  }
  if (!checkDense(Run, Node, Fn, DType, Rank, Dims, Bytes))
    return false;
  if (Bytes && !Data) {
    record(Run, Node, Fn, KILN_ERROR_INTERNAL, "tensor data is NULL");
    return false;
  }
  return true;
}

template <typename T> T load(const uint8_t *P) {
  T V;
  std::memcpy(&V, P, sizeof(T));
  return V;
}

/// Whether the element at P is not zero (numpy's truth value; NaN is not
/// zero, -0.0 is). False for a dtype without one.
bool isNonZero(int32_t DType, const uint8_t *P) {
  switch (DType) {
  case KILN_DTYPE_BOOL:
  case KILN_DTYPE_UINT8:
  case KILN_DTYPE_INT8:
  case KILN_DTYPE_FLOAT8E4M3FNUZ: // 0x80 is NaN
  case KILN_DTYPE_FLOAT8E5M2FNUZ:
    return *P != 0;
  case KILN_DTYPE_FLOAT8E4M3FN: // 0x80 is -0
  case KILN_DTYPE_FLOAT8E5M2:
    return (*P & 0x7f) != 0;
  case KILN_DTYPE_UINT4:
  case KILN_DTYPE_INT4:
    return (*P & 0xf) != 0;
  case KILN_DTYPE_FLOAT4E2M1:
    return (*P & 0x7) != 0;
  case KILN_DTYPE_UINT2:
  case KILN_DTYPE_INT2:
    return (*P & 0x3) != 0;
  case KILN_DTYPE_FLOAT8E8M0: // a power of two or NaN, never 0
    return true;
  case KILN_DTYPE_UINT16:
  case KILN_DTYPE_INT16:
    return load<uint16_t>(P) != 0;
  case KILN_DTYPE_FLOAT16:
  case KILN_DTYPE_BFLOAT16:
    return (load<uint16_t>(P) & 0x7fff) != 0;
  case KILN_DTYPE_FLOAT:
    return load<float>(P) != 0.0f;
  case KILN_DTYPE_DOUBLE:
    return load<double>(P) != 0.0;
  case KILN_DTYPE_INT32:
  case KILN_DTYPE_UINT32:
    return load<uint32_t>(P) != 0;
  case KILN_DTYPE_INT64:
  case KILN_DTYPE_UINT64:
    return load<uint64_t>(P) != 0;
  case 14: // complex64
    return load<float>(P) != 0.0f || load<float>(P + 4) != 0.0f;
  case 15: // complex128
    return load<double>(P) != 0.0 || load<double>(P + 8) != 0.0;
  default:
    return false;
  }
}

/// The result of Unique: per unique value (or sub-tensor) in output order
/// the first index where it occurs and how often; per input position its
/// unique value's index.
struct UniqueGroups {
  std::vector<int64_t> First, Inverse, Counts;
};

template <typename T> bool isNan(T V) {
  if constexpr (std::is_floating_point_v<T>)
    return std::isnan(V);
  else
    return false;
}

/// numpy's sort order: NaN after everything else, equal to NaN.
template <typename T> bool sortsBefore(T A, T B) {
  return A < B || (isNan(B) && !isNan(A));
}

/// Groups the Extent rows of RowLen values at Rows (row-major): as numpy's
/// unique does, rows are sorted stably (lexicographically), and neighbours
/// that compare equal form a group; NaN equals NaN only with NanEqual
/// (numpy's 1-D case; with an axis, a row holding NaN is unique). Sorted
/// false orders the groups by first occurrence instead.
template <typename T>
UniqueGroups groupRows(const T *Rows, int64_t Extent, int64_t RowLen,
                       bool NanEqual, bool Sorted) {
  // Ties by index: a stable sort.
  auto RowBefore = [&](int64_t A, int64_t B) {
    const T *X = Rows + A * RowLen, *Y = Rows + B * RowLen;
    for (int64_t J = 0; J < RowLen; ++J) {
      if (sortsBefore(X[J], Y[J]))
        return true;
      if (sortsBefore(Y[J], X[J]))
        return false;
    }
    return A < B;
  };
  auto RowEqual = [&](int64_t A, int64_t B) {
    const T *X = Rows + A * RowLen, *Y = Rows + B * RowLen;
    for (int64_t J = 0; J < RowLen; ++J)
      if (!(X[J] == Y[J] || (NanEqual && isNan(X[J]) && isNan(Y[J]))))
        return false;
    return true;
  };
  std::vector<int64_t> Order(Extent);
  std::iota(Order.begin(), Order.end(), 0);
  std::sort(Order.begin(), Order.end(), RowBefore);
  UniqueGroups G;
  G.Inverse.resize(Extent);
  for (int64_t K = 0; K < Extent; ++K) {
    if (K == 0 || !RowEqual(Order[K - 1], Order[K])) {
      G.First.push_back(Order[K]);
      G.Counts.push_back(0);
    }
    G.Inverse[Order[K]] = static_cast<int64_t>(G.First.size()) - 1;
    ++G.Counts.back();
  }
  if (Sorted)
    return G;
  // The reference: argsort of the first indices, and the inverse remapped.
  size_t U = G.First.size();
  std::vector<int64_t> ByFirst(U), NewIndex(U);
  std::iota(ByFirst.begin(), ByFirst.end(), 0);
  std::sort(ByFirst.begin(), ByFirst.end(),
            [&](int64_t A, int64_t B) { return G.First[A] < G.First[B]; });
  UniqueGroups R;
  for (size_t K = 0; K < U; ++K) {
    NewIndex[ByFirst[K]] = static_cast<int64_t>(K);
    R.First.push_back(G.First[ByFirst[K]]);
    R.Counts.push_back(G.Counts[ByFirst[K]]);
  }
  R.Inverse.resize(Extent);
  for (int64_t I = 0; I < Extent; ++I)
    R.Inverse[I] = NewIndex[G.Inverse[I]];
  return R;
}

/// groupRows of the input as [Outer, Extent, Inner] values of type T
/// (Convert makes them from each element's bytes): row r is the Outer *
/// Inner values at [., r, .].
template <typename T, typename Convert>
UniqueGroups groupTyped(const uint8_t *Src, size_t ElemSize, int64_t Outer,
                        int64_t Extent, int64_t Inner, bool NanEqual,
                        bool Sorted, Convert Conv) {
  int64_t RowLen = Outer * Inner;
  std::vector<T> Rows(static_cast<size_t>(Extent * RowLen));
  for (int64_t O = 0; O < Outer; ++O)
    for (int64_t R = 0; R < Extent; ++R)
      for (int64_t I = 0; I < Inner; ++I)
        Rows[R * RowLen + O * Inner + I] =
            Conv(Src + ((O * Extent + R) * Inner + I) * ElemSize);
  return groupRows(Rows.data(), Extent, RowLen, NanEqual, Sorted);
}

/// Unique's groups for a supported dtype; false otherwise.
bool groupUnique(int32_t DType, const uint8_t *Src, int64_t Outer,
                 int64_t Extent, int64_t Inner, bool NanEqual, bool Sorted,
                 UniqueGroups &G) {
  size_t Size = kiln_dtype_size(DType);
  auto Run = [&](auto Tag, auto Conv) {
    using T = decltype(Tag);
    G = groupTyped<T>(Src, Size, Outer, Extent, Inner, NanEqual, Sorted, Conv);
    return true;
  };
  auto Plain = [&](auto Tag) {
    using T = decltype(Tag);
    return Run(Tag, [](const uint8_t *P) { return load<T>(P); });
  };
  switch (DType) {
  case KILN_DTYPE_FLOAT:
    return Plain(float());
  case KILN_DTYPE_DOUBLE:
    return Plain(double());
  case KILN_DTYPE_FLOAT16:
    return Run(float(),
               [](const uint8_t *P) { return kiln_float16_to_float(load<uint16_t>(P)); });
  case KILN_DTYPE_BFLOAT16:
    return Run(float(), [](const uint8_t *P) {
      return kiln_bfloat16_to_float(load<uint16_t>(P));
    });
  case KILN_DTYPE_BOOL:
    return Run(uint8_t(),
               [](const uint8_t *P) { return static_cast<uint8_t>(*P != 0); });
  case KILN_DTYPE_INT8:
    return Plain(int8_t());
  case KILN_DTYPE_UINT8:
    return Plain(uint8_t());
  case KILN_DTYPE_INT16:
    return Plain(int16_t());
  case KILN_DTYPE_UINT16:
    return Plain(uint16_t());
  case KILN_DTYPE_INT32:
    return Plain(int32_t());
  case KILN_DTYPE_UINT32:
    return Plain(uint32_t());
  case KILN_DTYPE_INT64:
    return Plain(int64_t());
  case KILN_DTYPE_UINT64:
    return Plain(uint64_t());
  default:
    return false;
  }
}

/// Bounding coordinates of a NonMaxSuppression box, as the reference
/// computes them.
struct Extents {
  float XMin, XMax, YMin, YMax;
};

/// The reference's max_min: (min, max), the pair as given unless
/// Lhs >= Rhs.
void minMax(float Lhs, float Rhs, float &Min, float &Max) {
  if (Lhs >= Rhs) {
    Min = Rhs;
    Max = Lhs;
  } else {
    Min = Lhs;
    Max = Rhs;
  }
}

Extents boxExtents(const float *B, bool CenterPoint) {
  Extents E;
  if (!CenterPoint) { // [y1, x1, y2, x2], corners in any order
    minMax(B[1], B[3], E.XMin, E.XMax);
    minMax(B[0], B[2], E.YMin, E.YMax);
  } else { // [x_center, y_center, width, height]
    float HalfW = B[2] / 2, HalfH = B[3] / 2;
    E.XMin = B[0] - HalfW;
    E.XMax = B[0] + HalfW;
    E.YMin = B[1] - HalfH;
    E.YMax = B[1] + HalfH;
  }
  return E;
}

// Python's max/min of two: the first unless the second is greater/less.
float pyMax(float A, float B) { return B > A ? B : A; }
float pyMin(float A, float B) { return B < A ? B : A; }

/// The reference's suppress_by_iou, in float as it computes in float32.
bool suppressedByIou(const Extents &A, const Extents &B, float Threshold) {
  float IxMin = pyMax(A.XMin, B.XMin), IxMax = pyMin(A.XMax, B.XMax);
  if (IxMax <= IxMin)
    return false;
  float IyMin = pyMax(A.YMin, B.YMin), IyMax = pyMin(A.YMax, B.YMax);
  if (IyMax <= IyMin)
    return false;
  float Intersection = (IxMax - IxMin) * (IyMax - IyMin);
  if (Intersection <= 0)
    return false;
  float AreaA = (A.XMax - A.XMin) * (A.YMax - A.YMin);
  float AreaB = (B.XMax - B.XMin) * (B.YMax - B.YMin);
  float Union = AreaA + AreaB - Intersection;
  if (AreaA <= 0 || AreaB <= 0 || Union <= 0)
    return false;
  return Intersection / Union > Threshold;
}

} // namespace

// ONNX NonZero: the indices of the input's nonzero elements, int64
// [rank, count], in row-major order (a scalar gives [0, count]).
KILN_RT_EXPORT int64_t kilnNonZero(int64_t Data, int32_t DType, int32_t Rank,
                                   int64_t Dims, int64_t Node) {
  const char *Fn = "kilnNonZero";
  return guarded<int64_t>(Node, Fn, [&](SeqRun &Run) -> int64_t {
    uint64_t Bytes = 0;
    if (!checkInput(Run, Node, Fn, "NonZero", Data, DType, Rank, Dims, Bytes))
      return 0;
    const int64_t *Shape = ptrOf<int64_t>(Dims);
    size_t Size = kiln_dtype_size(DType);
    int64_t N = static_cast<int64_t>(Bytes / Size);
    const uint8_t *Src = ptrOf<uint8_t>(Data);
    std::vector<int64_t> Flat;
    for (int64_t I = 0; I < N; ++I)
      if (isNonZero(DType, Src + I * Size))
        Flat.push_back(I);
    int64_t Count = static_cast<int64_t>(Flat.size());
    auto E = newElement(KILN_DTYPE_INT64, {Rank, Count});
    auto *Out = reinterpret_cast<int64_t *>(E->Data.get());
    for (int64_t K = 0; K < Count; ++K) {
      int64_t Rest = Flat[K];
      for (int32_t D = Rank - 1; D >= 0; --D) {
        Out[D * Count + K] = Rest % Shape[D];
        Rest /= Shape[D];
      }
    }
    return newBox(Run, std::move(E));
  });
}

// ONNX Compress: the slices along Axis (normalized) whose entry in the
// bool condition at Cond (CondLength bytes) is true; without HasAxis, the
// elements of the flattened input. A condition shorter than the axis drops
// the rest; a longer one is an error.
KILN_RT_EXPORT int64_t kilnCompress(int64_t Data, int32_t DType, int32_t Rank,
                                    int64_t Dims, int64_t Cond,
                                    int64_t CondLength, int64_t Axis,
                                    int32_t HasAxis, int64_t Node) {
  const char *Fn = "kilnCompress";
  return guarded<int64_t>(Node, Fn, [&](SeqRun &Run) -> int64_t {
    uint64_t Bytes = 0;
    if (!checkInput(Run, Node, Fn, "Compress", Data, DType, Rank, Dims, Bytes))
      return 0;
    const int64_t *Shape = ptrOf<int64_t>(Dims);
    if ((HasAxis && (Axis < 0 || Axis >= Rank)) || CondLength < 0 ||
        (CondLength > 0 && !Cond)) {
      record(Run, Node, Fn, KILN_ERROR_INTERNAL,
             "invalid arguments (axis " + std::to_string(Axis) + " of rank " +
                 std::to_string(Rank) + ", condition length " +
                 std::to_string(CondLength) + ")");
      return 0;
    }
    size_t Size = kiln_dtype_size(DType);
    // The input as [Outer, Extent, Inner].
    int32_t A = static_cast<int32_t>(Axis);
    int64_t Outer = HasAxis ? product(Shape, 0, A) : 1;
    int64_t Extent = HasAxis ? Shape[A] : static_cast<int64_t>(Bytes / Size);
    int64_t Inner = HasAxis ? product(Shape, A + 1, Rank) : 1;
    if (CondLength > Extent) {
      record(Run, Node, Fn, KILN_ERROR_INVALID_ARGUMENT,
             "the condition has " + std::to_string(CondLength) +
                 " elements, more than the " + std::to_string(Extent) +
                 (HasAxis
                      ? " of axis " + std::to_string(A) + " of the input " +
                            formatShape(Shape, Rank)
                      : " of the flattened input " + formatShape(Shape, Rank)));
      return 0;
    }
    const uint8_t *Keep = ptrOf<uint8_t>(Cond);
    std::vector<int64_t> Selected;
    for (int64_t I = 0; I < CondLength; ++I)
      if (Keep[I])
        Selected.push_back(I);
    int64_t Count = static_cast<int64_t>(Selected.size());
    std::vector<int64_t> OutShape{Count};
    if (HasAxis) {
      OutShape.assign(Shape, Shape + Rank);
      OutShape[A] = Count;
    }
    auto E = newElement(DType, OutShape);
    uint64_t Piece = static_cast<uint64_t>(Inner) * Size;
    const uint8_t *Src = ptrOf<uint8_t>(Data);
    uint8_t *Dst = E->Data.get();
    for (int64_t O = 0; O < Outer && Piece && Count; ++O)
      for (int64_t S : Selected) {
        std::memcpy(Dst, Src + (O * Extent + S) * Piece, Piece);
        Dst += Piece;
      }
    return newBox(Run, std::move(E));
  });
}

// ONNX Unique, one of its results (Output): 0 Y, the unique values (the
// input's dtype; 1-D, or with HasAxis the unique sub-tensors along the
// normalized Axis), 1 indices, 2 inverse_indices, 3 counts (int64 1-D).
// Sorted orders them as numpy.unique does (sub-tensors lexicographically),
// else by first occurrence.
KILN_RT_EXPORT int64_t kilnUnique(int64_t Data, int32_t DType, int32_t Rank,
                                  int64_t Dims, int64_t Axis, int32_t HasAxis,
                                  int32_t Sorted, int32_t Output,
                                  int64_t Node) {
  const char *Fn = "kilnUnique";
  return guarded<int64_t>(Node, Fn, [&](SeqRun &Run) -> int64_t {
    uint64_t Bytes = 0;
    if (!checkInput(Run, Node, Fn, "Unique", Data, DType, Rank, Dims, Bytes))
      return 0;
    const int64_t *Shape = ptrOf<int64_t>(Dims);
    if ((HasAxis && (Axis < 0 || Axis >= Rank)) || Output < 0 || Output > 3) {
      record(Run, Node, Fn, KILN_ERROR_INTERNAL,
             "invalid arguments (axis " + std::to_string(Axis) + " of rank " +
                 std::to_string(Rank) + ", output " + std::to_string(Output) +
                 ")");
      return 0;
    }
    size_t Size = kiln_dtype_size(DType);
    int32_t A = static_cast<int32_t>(Axis);
    int64_t Outer = HasAxis ? product(Shape, 0, A) : 1;
    int64_t Extent = HasAxis ? Shape[A] : static_cast<int64_t>(Bytes / Size);
    int64_t Inner = HasAxis ? product(Shape, A + 1, Rank) : 1;
    const uint8_t *Src = ptrOf<uint8_t>(Data);
    UniqueGroups G;
    if (!groupUnique(DType, Src, Outer, Extent, Inner, /*NanEqual=*/!HasAxis,
                     Sorted != 0, G)) {
      record(Run, Node, Fn, KILN_ERROR_INVALID_ARGUMENT,
             std::string("Unique of ") + kiln_dtype_name(DType) +
                 " tensors is not supported");
      return 0;
    }
    switch (Output) {
    case 1:
      return newBox(Run, int64Element(G.First));
    case 2:
      return newBox(Run, int64Element(G.Inverse));
    case 3:
      return newBox(Run, int64Element(G.Counts));
    default:
      break;
    }
    int64_t U = static_cast<int64_t>(G.First.size());
    std::vector<int64_t> OutShape{U};
    if (HasAxis) {
      OutShape.assign(Shape, Shape + Rank);
      OutShape[A] = U;
    }
    auto E = newElement(DType, OutShape);
    uint64_t Piece = static_cast<uint64_t>(Inner) * Size;
    uint8_t *Dst = E->Data.get();
    for (int64_t O = 0; O < Outer && Piece && U; ++O)
      for (int64_t F : G.First) {
        std::memcpy(Dst, Src + (O * Extent + F) * Piece, Piece);
        Dst += Piece;
      }
    return newBox(Run, std::move(E));
  });
}

// ONNX NonMaxSuppression of float boxes [NumBatches, NumBoxes, 4] with
// scores [NumBatches, NumClasses, NumBoxes]: int64 [selected, 3] of (batch,
// class, box), per batch and class by descending score (ties: the lower
// box index first). Boxes scoring <= ScoreThreshold (with
// HasScoreThreshold) are no candidates; a candidate whose IoU with a box
// already selected exceeds IouThreshold is suppressed; at most
// MaxOutputPerClass boxes (none when <= 0) per class.
KILN_RT_EXPORT int64_t kilnNonMaxSuppression(
    int64_t Boxes, int64_t NumBatches, int64_t NumBoxes, int64_t Scores,
    int64_t NumClasses, int64_t MaxOutputPerClass, double IouThreshold,
    double ScoreThreshold, int32_t HasScoreThreshold, int32_t CenterPointBox,
    int64_t Node) {
  const char *Fn = "kilnNonMaxSuppression";
  return guarded<int64_t>(Node, Fn, [&](SeqRun &Run) -> int64_t {
    if (NumBatches < 0 || NumBoxes < 0 || NumClasses < 0 ||
        (NumBatches * NumBoxes > 0 && !Boxes) ||
        (NumBatches * NumClasses * NumBoxes > 0 && !Scores)) {
      record(Run, Node, Fn, KILN_ERROR_INTERNAL,
             "invalid arguments (" + std::to_string(NumBatches) + " batches, " +
                 std::to_string(NumClasses) + " classes, " +
                 std::to_string(NumBoxes) + " boxes)");
      return 0;
    }
    if (CenterPointBox != 0 && CenterPointBox != 1) {
      record(Run, Node, Fn, KILN_ERROR_INVALID_ARGUMENT,
             "center_point_box is " + std::to_string(CenterPointBox) +
                 ", expected 0 or 1");
      return 0;
    }
    const float *BoxData = ptrOf<float>(Boxes),
                *ScoreData = ptrOf<float>(Scores);
    float IouMax = static_cast<float>(IouThreshold);
    float ScoreMin = static_cast<float>(ScoreThreshold);
    int64_t Limit = std::max<int64_t>(MaxOutputPerClass, 0);
    std::vector<int64_t> Result;
    std::vector<Extents> Ext(static_cast<size_t>(NumBoxes));
    struct Candidate {
      float Score;
      int64_t Box;
    };
    std::vector<Candidate> Candidates;
    std::vector<int64_t> Selected;
    for (int64_t B = 0; B < NumBatches && Limit > 0; ++B) {
      for (int64_t I = 0; I < NumBoxes; ++I)
        Ext[I] =
            boxExtents(BoxData + (B * NumBoxes + I) * 4, CenterPointBox == 1);
      for (int64_t C = 0; C < NumClasses; ++C) {
        const float *Score = ScoreData + (B * NumClasses + C) * NumBoxes;
        Candidates.clear();
        for (int64_t I = 0; I < NumBoxes; ++I)
          if (!HasScoreThreshold || Score[I] > ScoreMin)
            Candidates.push_back({Score[I], I});
        // Descending score, ties by the lower index; NaN scores last.
        std::sort(Candidates.begin(), Candidates.end(),
                  [](const Candidate &X, const Candidate &Y) {
                    bool XNan = std::isnan(X.Score), YNan = std::isnan(Y.Score);
                    if (XNan != YNan)
                      return YNan;
                    if (!XNan && X.Score != Y.Score)
                      return X.Score > Y.Score;
                    return X.Box < Y.Box;
                  });
        Selected.clear();
        for (const Candidate &Next : Candidates) {
          if (static_cast<int64_t>(Selected.size()) >= Limit)
            break;
          bool Keep = true;
          for (int64_t S : Selected)
            if (suppressedByIou(Ext[Next.Box], Ext[S], IouMax)) {
              Keep = false;
              break;
            }
          if (!Keep)
            continue;
          Selected.push_back(Next.Box);
          Result.insert(Result.end(), {B, C, Next.Box});
        }
      }
    }
    int64_t Count = static_cast<int64_t>(Result.size() / 3);
    auto E = newElement(KILN_DTYPE_INT64, {Count, 3});
    if (E->Bytes)
      std::memcpy(E->Data.get(), Result.data(), E->Bytes);
    return newBox(Run, std::move(E));
  });
}
