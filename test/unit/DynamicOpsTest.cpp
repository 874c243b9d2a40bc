// The functions compiled models call for ops whose result shape only the
// data decides (kilnNonZero, kilnCompress, kilnUnique,
// kilnNonMaxSuppression), called directly inside a run scope. Expected
// values are ONNX's node tests and what numpy / onnx.reference give.
#include "../../runtime/lib/DynamicOps.h"
#include "../../runtime/lib/Sequence.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

using kiln::rt::liveSequenceCount;
using kiln::rt::SeqRunScope;

namespace {

int64_t addr(const void *P) {
  return static_cast<int64_t>(reinterpret_cast<uintptr_t>(P));
}

const char Node[] = "node \"d\" (DynamicOp)";
const int64_t NodeAddr = addr(Node);

using Shape = std::vector<int64_t>;
using I64 = std::vector<int64_t>;

/// The tensor in a box.
struct Boxed {
  int32_t DType = KILN_DTYPE_UNDEFINED;
  Shape Dims;
  std::vector<uint8_t> Bytes;

  template <typename T> std::vector<T> values() const {
    std::vector<T> V(Bytes.size() / sizeof(T));
    if (!V.empty())
      std::memcpy(V.data(), Bytes.data(), Bytes.size());
    return V;
  }
};

/// Checks that Handle is a box (one element, not none) and returns its
/// tensor.
Boxed unbox(int64_t Handle) {
  Boxed B;
  EXPECT_NE(Handle, 0);
  if (!Handle)
    return B;
  auto *Seq = reinterpret_cast<kiln_sequence *>(static_cast<uintptr_t>(Handle));
  EXPECT_FALSE(kiln_sequence_is_none(Seq));
  EXPECT_EQ(kiln_sequence_length(Seq), 1);
  kiln_tensor V;
  if (kiln_sequence_at(Seq, 0, &V) != KILN_OK)
    return B;
  EXPECT_EQ(kiln_sequence_dtype(Seq), V.dtype);
  B.DType = V.dtype;
  B.Dims.assign(V.shape, V.shape + V.rank);
  const auto *P = static_cast<const uint8_t *>(V.data);
  B.Bytes.assign(P, P + V.size_bytes);
  return B;
}

/// Runs the functions inside a run that ends with the fixture, which must
/// free every box they made.
struct DynOps : ::testing::Test {
  void SetUp() override { Live = liveSequenceCount(); }
  void TearDown() override {
    Run.reset();
    EXPECT_EQ(liveSequenceCount(), Live);
  }
  kiln_status status() const { return Run->run().Status; }
  const std::string &error() const { return Run->run().Error; }

  template <typename T>
  int64_t nonZero(const std::vector<T> &X, int32_t DType, Shape S) {
    return kilnNonZero(addr(X.data()), DType, static_cast<int32_t>(S.size()),
                       addr(S.data()), NodeAddr);
  }
  template <typename T>
  int64_t compress(const std::vector<T> &X, int32_t DType, Shape S,
                   std::vector<uint8_t> Cond, int64_t Axis, bool HasAxis) {
    return kilnCompress(addr(X.data()), DType, static_cast<int32_t>(S.size()),
                        addr(S.data()), addr(Cond.data()),
                        static_cast<int64_t>(Cond.size()), Axis, HasAxis,
                        NodeAddr);
  }
  template <typename T>
  int64_t unique(const std::vector<T> &X, int32_t DType, Shape S, int64_t Axis,
                 bool HasAxis, bool Sorted, int32_t Output) {
    return kilnUnique(addr(X.data()), DType, static_cast<int32_t>(S.size()),
                      addr(S.data()), Axis, HasAxis, Sorted, Output, NodeAddr);
  }
  /// All four Unique results.
  template <typename T>
  void uniqueAll(const std::vector<T> &X, int32_t DType, Shape S, int64_t Axis,
                 bool HasAxis, bool Sorted, Boxed &Y, I64 &Indices,
                 I64 &Inverse, I64 &Counts) {
    Y = unbox(unique(X, DType, S, Axis, HasAxis, Sorted, 0));
    I64 *Outs[] = {&Indices, &Inverse, &Counts};
    for (int32_t O = 1; O <= 3; ++O) {
      Boxed B = unbox(unique(X, DType, S, Axis, HasAxis, Sorted, O));
      EXPECT_EQ(B.DType, KILN_DTYPE_INT64);
      ASSERT_EQ(B.Dims.size(), 1u);
      *Outs[O - 1] = B.values<int64_t>();
    }
  }

  size_t Live = 0;
  std::unique_ptr<SeqRunScope> Run = std::make_unique<SeqRunScope>();
};

// --- NonZero ----------------------------------------------------------------

TEST_F(DynOps, NonZeroOnnxExample) {
  std::vector<uint8_t> X{1, 0, 1, 1};
  Boxed B = unbox(nonZero(X, KILN_DTYPE_BOOL, {2, 2}));
  EXPECT_EQ(B.DType, KILN_DTYPE_INT64);
  EXPECT_EQ(B.Dims, (Shape{2, 3}));
  EXPECT_EQ(B.values<int64_t>(), (I64{0, 1, 1, 0, 0, 1}));
  EXPECT_EQ(status(), KILN_OK);
}

TEST_F(DynOps, NonZeroRowMajorIn3D) {
  std::vector<int64_t> X{0, 5, -1, 0, 0, 7};
  Boxed B = unbox(nonZero(X, KILN_DTYPE_INT64, {3, 1, 2}));
  EXPECT_EQ(B.Dims, (Shape{3, 3}));
  // Flat 1, 2, 5: (0,0,1), (1,0,0), (2,0,1).
  EXPECT_EQ(B.values<int64_t>(), (I64{0, 1, 2, 0, 0, 0, 1, 0, 1}));
}

TEST_F(DynOps, NonZeroFloatsNanIsNotZeroMinusZeroIs) {
  const float Nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> X{0, -0.0f, Nan, 1.5f, 0, -INFINITY};
  Boxed B = unbox(nonZero(X, KILN_DTYPE_FLOAT, {6}));
  EXPECT_EQ(B.Dims, (Shape{1, 3}));
  EXPECT_EQ(B.values<int64_t>(), (I64{2, 3, 5}));
  std::vector<double> D{0, 1e-300, -0.0};
  EXPECT_EQ(unbox(nonZero(D, KILN_DTYPE_DOUBLE, {3})).values<int64_t>(),
            (I64{1}));
  // float16 and bfloat16: -0 (0x8000) is zero, NaN and subnormals are not.
  std::vector<uint16_t> H{0x0000, 0x8000, 0x3c00, 0x7e00, 0x0001};
  EXPECT_EQ(unbox(nonZero(H, KILN_DTYPE_FLOAT16, {5})).values<int64_t>(),
            (I64{2, 3, 4}));
  EXPECT_EQ(unbox(nonZero(H, KILN_DTYPE_BFLOAT16, {5})).values<int64_t>(),
            (I64{2, 3, 4}));
  // float8e4m3fn has a -0 (0x80); in float8e4m3fnuz 0x80 is NaN.
  std::vector<uint8_t> F8{0x00, 0x80, 0x38};
  EXPECT_EQ(unbox(nonZero(F8, KILN_DTYPE_FLOAT8E4M3FN, {3})).values<int64_t>(),
            (I64{2}));
  EXPECT_EQ(
      unbox(nonZero(F8, KILN_DTYPE_FLOAT8E4M3FNUZ, {3})).values<int64_t>(),
      (I64{1, 2}));
}

TEST_F(DynOps, NonZeroIntegerTypes) {
  std::vector<uint64_t> U{0, uint64_t(1) << 63, 0, 3};
  EXPECT_EQ(unbox(nonZero(U, KILN_DTYPE_UINT64, {2, 2})).values<int64_t>(),
            (I64{0, 1, 1, 1}));
  std::vector<int8_t> I8{-1, 0, 0, 2};
  EXPECT_EQ(unbox(nonZero(I8, KILN_DTYPE_INT8, {4})).values<int64_t>(),
            (I64{0, 3}));
  std::vector<int16_t> I16{0, -7};
  EXPECT_EQ(unbox(nonZero(I16, KILN_DTYPE_INT16, {2})).values<int64_t>(),
            (I64{1}));
  std::vector<int32_t> I32{9, 0, 9};
  EXPECT_EQ(unbox(nonZero(I32, KILN_DTYPE_INT32, {3})).values<int64_t>(),
            (I64{0, 2}));
}

TEST_F(DynOps, NonZeroScalarAndEmpty) {
  // As the reference: a scalar gives [0, count].
  std::vector<float> One{3}, Zero{0};
  Boxed B = unbox(nonZero(One, KILN_DTYPE_FLOAT, {}));
  EXPECT_EQ(B.Dims, (Shape{0, 1}));
  EXPECT_TRUE(B.Bytes.empty());
  EXPECT_EQ(unbox(nonZero(Zero, KILN_DTYPE_FLOAT, {})).Dims, (Shape{0, 0}));
  std::vector<float> Empty;
  EXPECT_EQ(unbox(nonZero(Empty, KILN_DTYPE_FLOAT, {0, 3})).Dims,
            (Shape{2, 0}));
  std::vector<float> Zeros(4, 0);
  EXPECT_EQ(unbox(nonZero(Zeros, KILN_DTYPE_FLOAT, {2, 2})).Dims,
            (Shape{2, 0}));
}

TEST_F(DynOps, NonZeroOfStringsFails) {
  std::vector<const char *> S{"a", ""};
  EXPECT_EQ(nonZero(S, KILN_DTYPE_STRING, {2}), 0);
  EXPECT_EQ(status(), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(error(), "node \"d\" (DynamicOp): NonZero of string tensors is "
                     "not supported");
  // Once the run has failed, every call returns 0.
  std::vector<float> X{1};
  EXPECT_EQ(nonZero(X, KILN_DTYPE_FLOAT, {1}), 0);
}

TEST_F(DynOps, OutsideARunNothingHappens) {
  Run.reset();
  std::vector<float> X{1};
  EXPECT_EQ(nonZero(X, KILN_DTYPE_FLOAT, {1}), 0);
  Run = std::make_unique<SeqRunScope>();
}

// --- Compress ---------------------------------------------------------------

const std::vector<float> X32{1, 2, 3, 4, 5, 6};

TEST_F(DynOps, CompressAlongAxes) {
  // ONNX's compress_0 and compress_1.
  Boxed B = unbox(compress(X32, KILN_DTYPE_FLOAT, {3, 2}, {0, 1, 1}, 0, true));
  EXPECT_EQ(B.DType, KILN_DTYPE_FLOAT);
  EXPECT_EQ(B.Dims, (Shape{2, 2}));
  EXPECT_EQ(B.values<float>(), (std::vector<float>{3, 4, 5, 6}));
  B = unbox(compress(X32, KILN_DTYPE_FLOAT, {3, 2}, {0, 1}, 1, true));
  EXPECT_EQ(B.Dims, (Shape{3, 1}));
  EXPECT_EQ(B.values<float>(), (std::vector<float>{2, 4, 6}));
  // The middle axis of a 3-D input.
  std::vector<int64_t> X{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  B = unbox(compress(X, KILN_DTYPE_INT64, {2, 3, 2}, {1, 0, 1}, 1, true));
  EXPECT_EQ(B.Dims, (Shape{2, 2, 2}));
  EXPECT_EQ(B.values<int64_t>(), (I64{0, 1, 4, 5, 6, 7, 10, 11}));
}

TEST_F(DynOps, CompressWithoutAxisFlattens) {
  // ONNX's compress_default_axis.
  Boxed B =
      unbox(compress(X32, KILN_DTYPE_FLOAT, {3, 2}, {0, 1, 0, 0, 1}, 0, false));
  EXPECT_EQ(B.Dims, (Shape{2}));
  EXPECT_EQ(B.values<float>(), (std::vector<float>{2, 5}));
  std::vector<uint8_t> Bools{1, 0, 1};
  B = unbox(compress(Bools, KILN_DTYPE_BOOL, {3}, {1, 1, 1}, 0, false));
  EXPECT_EQ(B.DType, KILN_DTYPE_BOOL);
  EXPECT_EQ(B.values<uint8_t>(), Bools);
  // A scalar is one element.
  std::vector<float> S{7};
  EXPECT_EQ(unbox(compress(S, KILN_DTYPE_FLOAT, {}, {1}, 0, false)).Dims,
            (Shape{1}));
}

TEST_F(DynOps, CompressShortConditionDropsTheRest) {
  Boxed B = unbox(compress(X32, KILN_DTYPE_FLOAT, {3, 2}, {0, 1}, 0, true));
  EXPECT_EQ(B.Dims, (Shape{1, 2}));
  EXPECT_EQ(B.values<float>(), (std::vector<float>{3, 4}));
  B = unbox(compress(X32, KILN_DTYPE_FLOAT, {3, 2}, {1, 0, 1}, 0, false));
  EXPECT_EQ(B.values<float>(), (std::vector<float>{1, 3}));
  B = unbox(compress(X32, KILN_DTYPE_FLOAT, {3, 2}, {}, 1, true));
  EXPECT_EQ(B.Dims, (Shape{3, 0}));
  B = unbox(compress(X32, KILN_DTYPE_FLOAT, {3, 2}, {0, 0, 0}, 0, true));
  EXPECT_EQ(B.Dims, (Shape{0, 2}));
  EXPECT_TRUE(B.Bytes.empty());
}

TEST_F(DynOps, CompressLongConditionFails) {
  EXPECT_EQ(compress(X32, KILN_DTYPE_FLOAT, {3, 2}, {1, 0, 1}, 1, true), 0);
  EXPECT_EQ(status(), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(error(), "node \"d\" (DynamicOp): the condition has 3 elements, "
                     "more than the 2 of axis 1 of the input [3,2]");
}

TEST_F(DynOps, CompressLongConditionWithoutAxisFails) {
  EXPECT_EQ(compress(X32, KILN_DTYPE_FLOAT, {3, 2}, std::vector<uint8_t>(7, 0),
                     0, false),
            0);
  EXPECT_EQ(error(), "node \"d\" (DynamicOp): the condition has 7 elements, "
                     "more than the 6 of the flattened input [3,2]");
}

TEST_F(DynOps, CompressOfStringsFails) {
  std::vector<const char *> S{"a"};
  EXPECT_EQ(compress(S, KILN_DTYPE_STRING, {1}, {1}, 0, true), 0);
  EXPECT_EQ(error(), "node \"d\" (DynamicOp): Compress of string tensors is "
                     "not supported");
}

// --- Unique -----------------------------------------------------------------

TEST_F(DynOps, UniqueSortedWithoutAxis) {
  std::vector<float> X{2, 1, 1, 3, 4, 3};
  Boxed Y;
  I64 Indices, Inverse, Counts;
  uniqueAll(X, KILN_DTYPE_FLOAT, {6}, 0, false, true, Y, Indices, Inverse,
            Counts);
  EXPECT_EQ(Y.DType, KILN_DTYPE_FLOAT);
  EXPECT_EQ(Y.Dims, (Shape{4}));
  EXPECT_EQ(Y.values<float>(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(Indices, (I64{1, 0, 3, 4}));
  EXPECT_EQ(Inverse, (I64{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ(Counts, (I64{2, 1, 2, 1}));
}

TEST_F(DynOps, UniqueNotSortedWithoutAxis) {
  std::vector<float> X{2, 1, 1, 3, 4, 3};
  Boxed Y;
  I64 Indices, Inverse, Counts;
  uniqueAll(X, KILN_DTYPE_FLOAT, {6}, 0, false, false, Y, Indices, Inverse,
            Counts);
  EXPECT_EQ(Y.values<float>(), (std::vector<float>{2, 1, 3, 4}));
  EXPECT_EQ(Indices, (I64{0, 1, 3, 4}));
  EXPECT_EQ(Inverse, (I64{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(Counts, (I64{1, 2, 2, 1}));
}

TEST_F(DynOps, UniqueWithoutAxisFlattens) {
  std::vector<int32_t> X{3, 1, 3, 2};
  Boxed Y;
  I64 Indices, Inverse, Counts;
  uniqueAll(X, KILN_DTYPE_INT32, {2, 2}, 0, false, false, Y, Indices, Inverse,
            Counts);
  EXPECT_EQ(Y.Dims, (Shape{3}));
  EXPECT_EQ(Y.values<int32_t>(), (std::vector<int32_t>{3, 1, 2}));
  EXPECT_EQ(Inverse, (I64{0, 1, 0, 2}));
}

TEST_F(DynOps, UniqueSortedWithAxis) {
  // ONNX's unique_sorted_with_axis.
  std::vector<float> X{1, 0, 0, 1, 0, 0, 2, 3, 4};
  Boxed Y;
  I64 Indices, Inverse, Counts;
  uniqueAll(X, KILN_DTYPE_FLOAT, {3, 3}, 0, true, true, Y, Indices, Inverse,
            Counts);
  EXPECT_EQ(Y.Dims, (Shape{2, 3}));
  EXPECT_EQ(Y.values<float>(), (std::vector<float>{1, 0, 0, 2, 3, 4}));
  EXPECT_EQ(Indices, (I64{0, 2}));
  EXPECT_EQ(Inverse, (I64{0, 0, 1}));
  EXPECT_EQ(Counts, (I64{2, 1}));
}

TEST_F(DynOps, UniqueSortedWithAxis3d) {
  // ONNX's unique_sorted_with_axis_3d: sub-tensors along axis 1.
  std::vector<float> X{1, 1, 0, 1, 2, 1, 0, 1, 1, 1, 0, 1, 2, 1, 0, 1};
  Boxed Y;
  I64 Indices, Inverse, Counts;
  uniqueAll(X, KILN_DTYPE_FLOAT, {2, 4, 2}, 1, true, true, Y, Indices, Inverse,
            Counts);
  EXPECT_EQ(Y.Dims, (Shape{2, 3, 2}));
  EXPECT_EQ(Y.values<float>(),
            (std::vector<float>{0, 1, 1, 1, 2, 1, 0, 1, 1, 1, 2, 1}));
  EXPECT_EQ(Indices, (I64{1, 0, 2}));
  EXPECT_EQ(Inverse, (I64{1, 0, 2, 0}));
  EXPECT_EQ(Counts, (I64{2, 1, 1}));
}

TEST_F(DynOps, UniqueSortedWithNegativeAxis) {
  // ONNX's unique_sorted_with_negative_axis: axis -1, normalized to 1.
  std::vector<float> X{1, 0, 0, 1, 0, 0, 2, 3, 3};
  Boxed Y;
  I64 Indices, Inverse, Counts;
  uniqueAll(X, KILN_DTYPE_FLOAT, {3, 3}, 1, true, true, Y, Indices, Inverse,
            Counts);
  EXPECT_EQ(Y.Dims, (Shape{3, 2}));
  EXPECT_EQ(Y.values<float>(), (std::vector<float>{0, 1, 0, 1, 3, 2}));
  EXPECT_EQ(Indices, (I64{1, 0}));
  EXPECT_EQ(Inverse, (I64{1, 0, 0}));
  EXPECT_EQ(Counts, (I64{2, 1}));
}

TEST_F(DynOps, UniqueWithAxisSortedAndNot) {
  std::vector<int64_t> X{2, 3, 4, 1, 0, 0, 2, 3, 4, 1, 0, 0, 0, 0, 9};
  Boxed Y;
  I64 Indices, Inverse, Counts;
  uniqueAll(X, KILN_DTYPE_INT64, {5, 3}, 0, true, true, Y, Indices, Inverse,
            Counts);
  EXPECT_EQ(Y.values<int64_t>(), (I64{0, 0, 9, 1, 0, 0, 2, 3, 4}));
  EXPECT_EQ(Indices, (I64{4, 1, 0}));
  EXPECT_EQ(Inverse, (I64{2, 1, 2, 1, 0}));
  EXPECT_EQ(Counts, (I64{1, 2, 2}));
  uniqueAll(X, KILN_DTYPE_INT64, {5, 3}, 0, true, false, Y, Indices, Inverse,
            Counts);
  EXPECT_EQ(Y.Dims, (Shape{3, 3}));
  EXPECT_EQ(Y.values<int64_t>(), (I64{2, 3, 4, 1, 0, 0, 0, 0, 9}));
  EXPECT_EQ(Indices, (I64{0, 1, 4}));
  EXPECT_EQ(Inverse, (I64{0, 1, 0, 1, 2}));
  EXPECT_EQ(Counts, (I64{2, 2, 1}));
  // Unsorted along axis 1: columns in first-occurrence order.
  std::vector<float> C{5, 1, 5, 7, 2, 7};
  uniqueAll(C, KILN_DTYPE_FLOAT, {2, 3}, 1, true, false, Y, Indices, Inverse,
            Counts);
  EXPECT_EQ(Y.Dims, (Shape{2, 2}));
  EXPECT_EQ(Y.values<float>(), (std::vector<float>{5, 1, 7, 2}));
  EXPECT_EQ(Indices, (I64{0, 1}));
  EXPECT_EQ(Inverse, (I64{0, 1, 0}));
}

TEST_F(DynOps, UniqueFloatsNanAndSignedZero) {
  // numpy: NaNs are one value, sorted last; -0 equals 0 and the first one
  // found is kept.
  const float Nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> X{2, Nan, 1, Nan, -0.0f, 0, 2};
  Boxed Y;
  I64 Indices, Inverse, Counts;
  uniqueAll(X, KILN_DTYPE_FLOAT, {7}, 0, false, true, Y, Indices, Inverse,
            Counts);
  std::vector<float> V = Y.values<float>();
  ASSERT_EQ(V.size(), 4u);
  EXPECT_EQ(V[0], 0);
  EXPECT_TRUE(std::signbit(V[0]));
  EXPECT_EQ(V[1], 1);
  EXPECT_EQ(V[2], 2);
  EXPECT_TRUE(std::isnan(V[3]));
  EXPECT_EQ(Indices, (I64{4, 2, 0, 1}));
  EXPECT_EQ(Inverse, (I64{2, 3, 1, 3, 0, 0, 2}));
  EXPECT_EQ(Counts, (I64{2, 1, 2, 2}));
  // Along an axis, a sub-tensor holding NaN equals no other (numpy).
  std::vector<float> R{1, Nan, 1, Nan, 0, 0};
  uniqueAll(R, KILN_DTYPE_FLOAT, {3, 2}, 0, true, true, Y, Indices, Inverse,
            Counts);
  EXPECT_EQ(Y.Dims, (Shape{3, 2}));
  EXPECT_EQ(Indices, (I64{2, 0, 1}));
  EXPECT_EQ(Inverse, (I64{1, 2, 0}));
  EXPECT_EQ(Counts, (I64{1, 1, 1}));
}

TEST_F(DynOps, UniqueHalvesCompareAsFloats) {
  // 2, -1, 0, -0, 0.5, -1: as floats -1 < 0 == -0 < 0.5 < 2 (as bit
  // patterns 0x0000 would come first).
  std::vector<uint16_t> H{0x4000, 0xbc00, 0x0000, 0x8000, 0x3800, 0xbc00};
  Boxed Y;
  I64 Indices, Inverse, Counts;
  uniqueAll(H, KILN_DTYPE_FLOAT16, {6}, 0, false, true, Y, Indices, Inverse,
            Counts);
  EXPECT_EQ(Y.DType, KILN_DTYPE_FLOAT16);
  EXPECT_EQ(Y.values<uint16_t>(),
            (std::vector<uint16_t>{0xbc00, 0x0000, 0x3800, 0x4000}));
  EXPECT_EQ(Indices, (I64{1, 2, 4, 0}));
  EXPECT_EQ(Inverse, (I64{3, 0, 1, 1, 2, 0}));
  EXPECT_EQ(Counts, (I64{2, 2, 1, 1}));
  // bfloat16: 2, -1, 0.5, -0, 0.
  std::vector<uint16_t> B{0x4000, 0xbf80, 0x3f00, 0x8000, 0x0000};
  Y = unbox(unique(B, KILN_DTYPE_BFLOAT16, {5}, 0, false, true, 0));
  EXPECT_EQ(Y.DType, KILN_DTYPE_BFLOAT16);
  EXPECT_EQ(Y.values<uint16_t>(),
            (std::vector<uint16_t>{0xbf80, 0x8000, 0x3f00, 0x4000}));
}

TEST_F(DynOps, UniqueIntegersCompareByValue) {
  const int64_t Min = std::numeric_limits<int64_t>::min();
  std::vector<int64_t> I{5, -3, 5, Min, 0};
  EXPECT_EQ(unbox(unique(I, KILN_DTYPE_INT64, {5}, 0, false, true, 0))
                .values<int64_t>(),
            (I64{Min, -3, 0, 5}));
  const uint64_t Big = (uint64_t(1) << 63) + 1;
  std::vector<uint64_t> U{Big, 1, Big};
  EXPECT_EQ(unbox(unique(U, KILN_DTYPE_UINT64, {3}, 0, false, true, 0))
                .values<uint64_t>(),
            (std::vector<uint64_t>{1, Big}));
  std::vector<int8_t> I8{-1, 127, -128, -1};
  EXPECT_EQ(unbox(unique(I8, KILN_DTYPE_INT8, {4}, 0, false, true, 0))
                .values<int8_t>(),
            (std::vector<int8_t>{-128, -1, 127}));
  std::vector<uint8_t> U8{255, 1};
  EXPECT_EQ(unbox(unique(U8, KILN_DTYPE_UINT8, {2}, 0, false, true, 0))
                .values<uint8_t>(),
            (std::vector<uint8_t>{1, 255}));
  std::vector<int16_t> I16{300, -300};
  EXPECT_EQ(unbox(unique(I16, KILN_DTYPE_INT16, {2}, 0, false, true, 0))
                .values<int16_t>(),
            (std::vector<int16_t>{-300, 300}));
  std::vector<uint16_t> U16{65535, 2};
  EXPECT_EQ(unbox(unique(U16, KILN_DTYPE_UINT16, {2}, 0, false, true, 0))
                .values<uint16_t>(),
            (std::vector<uint16_t>{2, 65535}));
  std::vector<uint32_t> U32{4000000000u, 2};
  EXPECT_EQ(unbox(unique(U32, KILN_DTYPE_UINT32, {2}, 0, false, true, 0))
                .values<uint32_t>(),
            (std::vector<uint32_t>{2, 4000000000u}));
  std::vector<double> D{0.5, -1e300, 0.5};
  EXPECT_EQ(unbox(unique(D, KILN_DTYPE_DOUBLE, {3}, 0, false, true, 0))
                .values<double>(),
            (std::vector<double>{-1e300, 0.5}));
  std::vector<uint8_t> Bools{1, 0, 1};
  Boxed Y = unbox(unique(Bools, KILN_DTYPE_BOOL, {3}, 0, false, true, 0));
  EXPECT_EQ(Y.DType, KILN_DTYPE_BOOL);
  EXPECT_EQ(Y.values<uint8_t>(), (std::vector<uint8_t>{0, 1}));
  EXPECT_EQ(unbox(unique(Bools, KILN_DTYPE_BOOL, {3}, 0, false, true, 3))
                .values<int64_t>(),
            (I64{1, 2}));
}

TEST_F(DynOps, UniqueScalarsAndEmpties) {
  std::vector<float> S{3};
  Boxed Y = unbox(unique(S, KILN_DTYPE_FLOAT, {}, 0, false, true, 0));
  EXPECT_EQ(Y.Dims, (Shape{1}));
  EXPECT_EQ(Y.values<float>(), (std::vector<float>{3}));
  std::vector<float> E;
  for (int32_t O = 0; O < 4; ++O) {
    Boxed B = unbox(unique(E, KILN_DTYPE_FLOAT, {0}, 0, false, true, O));
    EXPECT_EQ(B.Dims, (Shape{0}));
  }
  // Sub-tensors with no elements are all equal (numpy).
  Y = unbox(unique(E, KILN_DTYPE_FLOAT, {3, 0}, 0, true, true, 0));
  EXPECT_EQ(Y.Dims, (Shape{1, 0}));
  EXPECT_EQ(unbox(unique(E, KILN_DTYPE_FLOAT, {3, 0}, 0, true, true, 2))
                .values<int64_t>(),
            (I64{0, 0, 0}));
  EXPECT_EQ(unbox(unique(E, KILN_DTYPE_FLOAT, {3, 0}, 0, true, true, 3))
                .values<int64_t>(),
            (I64{3}));
  EXPECT_EQ(unbox(unique(E, KILN_DTYPE_FLOAT, {0, 3}, 0, true, true, 0)).Dims,
            (Shape{0, 3}));
}

TEST_F(DynOps, UniqueOfStringsFails) {
  std::vector<const char *> S{"a"};
  EXPECT_EQ(unique(S, KILN_DTYPE_STRING, {1}, 0, false, true, 0), 0);
  EXPECT_EQ(status(), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(error(), "node \"d\" (DynamicOp): Unique of string tensors is not "
                     "supported");
}

TEST_F(DynOps, UniqueOfComplexFails) {
  std::vector<float> C{1, 2};
  EXPECT_EQ(unique(C, 14, {1}, 0, false, true, 0), 0);
  EXPECT_EQ(error(), "node \"d\" (DynamicOp): Unique of complex64 tensors is "
                     "not supported");
}

TEST_F(DynOps, UniqueBadOutputIsInternal) {
  std::vector<float> X{1};
  EXPECT_EQ(unique(X, KILN_DTYPE_FLOAT, {1}, 0, false, true, 4), 0);
  EXPECT_EQ(status(), KILN_ERROR_INTERNAL);
}

// --- NonMaxSuppression ------------------------------------------------------

/// The boxes most of ONNX's node tests use: [y1, x1, y2, x2].
const std::vector<float> Boxes6{0.0f, 0.0f,  1.0f, 1.0f,   0.0f, 0.1f,
                                1.0f, 1.1f,  0.0f, -0.1f,  1.0f, 0.9f,
                                0.0f, 10.0f, 1.0f, 11.0f,  0.0f, 10.1f,
                                1.0f, 11.1f, 0.0f, 100.0f, 1.0f, 101.0f};
const std::vector<float> Scores6{0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f};

struct Nms : DynOps {
  /// Selected (batch, class, box) triples, checking the [n, 3] shape.
  I64 run(const std::vector<float> &Boxes, const std::vector<float> &Scores,
          int64_t Batches, int64_t Classes, int64_t Max, float Iou, float Score,
          bool HasScore = true, int32_t Center = 0) {
    int64_t N = Batches ? static_cast<int64_t>(Boxes.size()) / 4 / Batches : 0;
    Boxed B = unbox(kilnNonMaxSuppression(
        addr(Boxes.data()), Batches, N, addr(Scores.data()), Classes, Max, Iou,
        Score, HasScore, Center, NodeAddr));
    EXPECT_EQ(B.DType, KILN_DTYPE_INT64);
    I64 V = B.values<int64_t>();
    EXPECT_EQ(B.Dims, (Shape{static_cast<int64_t>(V.size() / 3), 3}));
    return V;
  }
};

TEST_F(Nms, SuppressByIou) {
  EXPECT_EQ(run(Boxes6, Scores6, 1, 1, 3, 0.5f, 0.0f),
            (I64{0, 0, 3, 0, 0, 0, 0, 0, 5}));
}

TEST_F(Nms, SuppressByIouAndScores) {
  EXPECT_EQ(run(Boxes6, Scores6, 1, 1, 3, 0.5f, 0.4f), (I64{0, 0, 3, 0, 0, 0}));
}

TEST_F(Nms, FlippedCoordinates) {
  std::vector<float> Boxes{1.0f, 1.0f,  0.0f, 0.0f,   0.0f, 0.1f,
                           1.0f, 1.1f,  0.0f, 0.9f,   1.0f, -0.1f,
                           0.0f, 10.0f, 1.0f, 11.0f,  1.0f, 10.1f,
                           0.0f, 11.1f, 1.0f, 101.0f, 0.0f, 100.0f};
  EXPECT_EQ(run(Boxes, Scores6, 1, 1, 3, 0.5f, 0.0f),
            (I64{0, 0, 3, 0, 0, 0, 0, 0, 5}));
}

TEST_F(Nms, LimitOutputSize) {
  EXPECT_EQ(run(Boxes6, Scores6, 1, 1, 2, 0.5f, 0.0f), (I64{0, 0, 3, 0, 0, 0}));
}

TEST_F(Nms, SingleBox) {
  EXPECT_EQ(run({0, 0, 1, 1}, {0.9f}, 1, 1, 3, 0.5f, 0.0f), (I64{0, 0, 0}));
}

TEST_F(Nms, IdenticalBoxes) {
  std::vector<float> Boxes, Scores(10, 0.9f);
  for (int I = 0; I < 10; ++I)
    Boxes.insert(Boxes.end(), {0, 0, 1, 1});
  EXPECT_EQ(run(Boxes, Scores, 1, 1, 3, 0.5f, 0.0f), (I64{0, 0, 0}));
}

TEST_F(Nms, CenterPointBoxFormat) {
  std::vector<float> Boxes{0.5f, 0.5f,  1.0f, 1.0f, 0.5f, 0.6f,   1.0f, 1.0f,
                           0.5f, 0.4f,  1.0f, 1.0f, 0.5f, 10.5f,  1.0f, 1.0f,
                           0.5f, 10.6f, 1.0f, 1.0f, 0.5f, 100.5f, 1.0f, 1.0f};
  EXPECT_EQ(run(Boxes, Scores6, 1, 1, 3, 0.5f, 0.0f, true, 1),
            (I64{0, 0, 3, 0, 0, 0, 0, 0, 5}));
}

TEST_F(Nms, TwoClasses) {
  std::vector<float> Scores = Scores6;
  Scores.insert(Scores.end(), Scores6.begin(), Scores6.end());
  EXPECT_EQ(run(Boxes6, Scores, 1, 2, 2, 0.5f, 0.0f),
            (I64{0, 0, 3, 0, 0, 0, 0, 1, 3, 0, 1, 0}));
}

TEST_F(Nms, TwoBatches) {
  std::vector<float> Boxes = Boxes6, Scores = Scores6;
  Boxes.insert(Boxes.end(), Boxes6.begin(), Boxes6.end());
  Scores.insert(Scores.end(), Scores6.begin(), Scores6.end());
  EXPECT_EQ(run(Boxes, Scores, 2, 1, 2, 0.5f, 0.0f),
            (I64{0, 0, 3, 0, 0, 0, 1, 0, 3, 1, 0, 0}));
}

TEST_F(Nms, IouEqualToTheThresholdIsKept) {
  // ONNX's iou_threshold_boundary: IoU 0.25 / 1.75 exactly.
  std::vector<float> Boxes{0, 0, 1, 1, 0.5f, 0.5f, 1.5f, 1.5f};
  float Iou = static_cast<float>(0.25 / 1.75);
  EXPECT_EQ(run(Boxes, {0.9f, 0.8f}, 1, 1, 3, Iou, 0.0f),
            (I64{0, 0, 0, 0, 0, 1}));
  // Just below it, box 1 is suppressed.
  EXPECT_EQ(run(Boxes, {0.9f, 0.8f}, 1, 1, 3, std::nextafter(Iou, 0.0f), 0.0f),
            (I64{0, 0, 0}));
}

TEST_F(Nms, ScoreThresholdIsExclusiveAndOptional) {
  // Without a score threshold every box is a candidate, also negative ones.
  std::vector<float> Scores{0.9f, 0.75f, 0.6f, 0.95f, -0.5f, 0.0f};
  EXPECT_EQ(run(Boxes6, Scores, 1, 1, 10, 0.5f, 0.0f, false),
            (I64{0, 0, 3, 0, 0, 0, 0, 0, 5}));
  // Score 0 is not above a threshold of 0.
  EXPECT_EQ(run(Boxes6, Scores, 1, 1, 10, 0.5f, 0.0f, true),
            (I64{0, 0, 3, 0, 0, 0}));
}

TEST_F(Nms, EqualScoresGoByIndex) {
  std::vector<float> Scores{0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
  // Boxes 0, 1, 2 overlap; 3, 4 overlap; 5 is alone.
  EXPECT_EQ(run(Boxes6, Scores, 1, 1, 10, 0.5f, 0.0f, false),
            (I64{0, 0, 0, 0, 0, 3, 0, 0, 5}));
}

TEST_F(Nms, NoOutputWithoutAMaximum) {
  EXPECT_EQ(run(Boxes6, Scores6, 1, 1, 0, 0.5f, 0.0f), I64{});
  EXPECT_EQ(run(Boxes6, Scores6, 1, 1, -4, 0.5f, 0.0f), I64{});
  EXPECT_EQ(run({}, {}, 0, 1, 5, 0.5f, 0.0f), I64{});
  // No boxes at all.
  Boxed B =
      unbox(kilnNonMaxSuppression(0, 2, 0, 0, 3, 5, 0.5, 0, 0, 0, NodeAddr));
  EXPECT_EQ(B.Dims, (Shape{0, 3}));
}

TEST_F(Nms, BadCenterPointBox) {
  EXPECT_EQ(kilnNonMaxSuppression(addr(Boxes6.data()), 1, 6,
                                  addr(Scores6.data()), 1, 3, 0.5, 0, 0, 2,
                                  NodeAddr),
            0);
  EXPECT_EQ(status(), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(error(), "node \"d\" (DynamicOp): center_point_box is 2, "
                     "expected 0 or 1");
}

} // namespace
