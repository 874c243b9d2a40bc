// kiln_sequence's C API and the kilnSeq* functions compiled models call,
// called directly inside a run scope.
#include "../../runtime/lib/Sequence.h"
#include "../../runtime/lib/SequenceOps.h"

#include "kiln/kiln.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

using kiln::rt::liveSequenceCount;
using kiln::rt::SeqRunScope;

namespace {

int64_t addr(const void *P) {
  return static_cast<int64_t>(reinterpret_cast<uintptr_t>(P));
}

kiln_sequence *seq(int64_t Handle) {
  return reinterpret_cast<kiln_sequence *>(static_cast<uintptr_t>(Handle));
}

const char Node[] = "node \"s\" (SequenceOp)";
const int64_t NodeAddr = addr(Node);

/// Element I of Seq as floats, and its shape.
std::vector<float> floatsAt(const kiln_sequence *Seq, int64_t I,
                            std::vector<int64_t> *Shape = nullptr) {
  kiln_tensor V;
  EXPECT_EQ(kiln_sequence_at(Seq, I, &V), KILN_OK) << kiln_last_error();
  if (Shape)
    Shape->assign(V.shape, V.shape + V.rank);
  const auto *F = static_cast<const float *>(V.data);
  return std::vector<float>(F, F + V.size_bytes / sizeof(float));
}

/// Appends a float tensor of Shape holding Values.
void append(kiln_sequence *Seq, std::vector<float> Values,
            std::vector<int64_t> Shape) {
  kiln_tensor T{
      nullptr,      KILN_DTYPE_FLOAT, static_cast<int32_t>(Shape.size()),
      Shape.data(), Values.data(),    Values.size() * sizeof(float)};
  ASSERT_EQ(kiln_sequence_append(Seq, &T), KILN_OK) << kiln_last_error();
}

TEST(SequenceApi, CreateAppendAt) {
  kiln_sequence *S = nullptr;
  ASSERT_EQ(kiln_sequence_create(KILN_DTYPE_FLOAT, &S), KILN_OK);
  EXPECT_EQ(kiln_sequence_dtype(S), KILN_DTYPE_FLOAT);
  EXPECT_EQ(kiln_sequence_length(S), 0);
  EXPECT_FALSE(kiln_sequence_is_none(S));

  std::vector<float> V{1, 2, 3, 4, 5, 6};
  const int64_t Shape[2] = {2, 3};
  kiln_tensor T{"ignored", KILN_DTYPE_FLOAT, 2, Shape, V.data(), 24};
  ASSERT_EQ(kiln_sequence_append(S, &T), KILN_OK);
  V[0] = 100; // the sequence holds a copy
  append(S, {7}, {});
  EXPECT_EQ(kiln_sequence_length(S), 2);

  std::vector<int64_t> Got;
  EXPECT_EQ(floatsAt(S, 0, &Got), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(Got, (std::vector<int64_t>{2, 3}));
  kiln_tensor View;
  ASSERT_EQ(kiln_sequence_at(S, 1, &View), KILN_OK);
  EXPECT_EQ(View.name, nullptr);
  EXPECT_EQ(View.dtype, KILN_DTYPE_FLOAT);
  EXPECT_EQ(View.rank, 0);
  EXPECT_EQ(View.size_bytes, 4u);

  EXPECT_EQ(kiln_sequence_at(S, 2, &View), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_sequence_at: index 2 is out of range "
                                  "for a sequence of length 2");
  EXPECT_EQ(kiln_sequence_at(S, -1, &View), KILN_ERROR_INVALID_ARGUMENT);

  kiln_sequence_clear(S);
  EXPECT_EQ(kiln_sequence_length(S), 0);
  kiln_sequence_destroy(S);
  kiln_sequence_destroy(nullptr);
}

TEST(SequenceApi, AppendChecks) {
  kiln_sequence *S = nullptr;
  ASSERT_EQ(kiln_sequence_create(KILN_DTYPE_INT64, &S), KILN_OK);
  std::vector<float> V(6);
  const int64_t Shape[2] = {2, 3}, Negative[1] = {-1};
  kiln_tensor T{nullptr, KILN_DTYPE_FLOAT, 2, Shape, V.data(), 24};
  EXPECT_EQ(kiln_sequence_append(S, &T), KILN_ERROR_DTYPE_MISMATCH);
  EXPECT_STREQ(kiln_last_error(), "kiln_sequence_append: a float32 tensor "
                                  "does not fit a sequence of int64");
  T.dtype = KILN_DTYPE_INT64;
  EXPECT_EQ(kiln_sequence_append(S, &T), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_sequence_append: buffer holds 24 "
                                  "bytes, shape [2,3] needs 48");
  T.shape = Negative;
  T.rank = 1;
  EXPECT_EQ(kiln_sequence_append(S, &T), KILN_ERROR_INVALID_ARGUMENT);
  T.rank = 0;
  T.data = nullptr;
  EXPECT_EQ(kiln_sequence_append(S, &T), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_sequence_append(nullptr, &T), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_sequence_length(S), 0);
  kiln_sequence_destroy(S);

  EXPECT_EQ(kiln_sequence_create(KILN_DTYPE_STRING, &S),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(S, nullptr);
  EXPECT_STREQ(kiln_last_error(),
               "kiln_sequence_create: sequences of strings are not supported");
  EXPECT_EQ(kiln_sequence_create(1000, &S), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_sequence_create(KILN_DTYPE_FLOAT, nullptr),
            KILN_ERROR_INVALID_ARGUMENT);
}

TEST(SequenceApi, NoneClearsAndRefusesAppend) {
  kiln_sequence *S = nullptr;
  ASSERT_EQ(kiln_sequence_create(KILN_DTYPE_FLOAT, &S), KILN_OK);
  append(S, {1}, {1});
  kiln_sequence_set_none(S, 1);
  EXPECT_TRUE(kiln_sequence_is_none(S));
  EXPECT_EQ(kiln_sequence_length(S), 0);
  std::vector<float> V{2};
  const int64_t Shape[1] = {1};
  kiln_tensor T{nullptr, KILN_DTYPE_FLOAT, 1, Shape, V.data(), 4};
  EXPECT_EQ(kiln_sequence_append(S, &T), KILN_ERROR_INVALID_ARGUMENT);
  kiln_sequence_set_none(S, 0);
  EXPECT_FALSE(kiln_sequence_is_none(S));
  EXPECT_EQ(kiln_sequence_append(S, &T), KILN_OK);
  kiln_sequence_destroy(S);
}

TEST(SequenceApi, CppWrapper) {
  size_t Live = liveSequenceCount();
  {
    kiln::Sequence S;
    ASSERT_TRUE(kiln::Sequence::create(KILN_DTYPE_FLOAT, S));
    EXPECT_EQ(liveSequenceCount(), Live + 1);
    std::vector<float> V{3, 4};
    const int64_t Shape[1] = {2};
    ASSERT_TRUE(S.append({nullptr, KILN_DTYPE_FLOAT, 1, Shape, V.data(), 8}));
    kiln::Sequence Moved = std::move(S);
    EXPECT_FALSE(S.valid());
    EXPECT_EQ(Moved.length(), 1);
    kiln_tensor View;
    ASSERT_TRUE(Moved.at(0, View));
    EXPECT_EQ(static_cast<const float *>(View.data)[1], 4);
    EXPECT_EQ(Moved.at(1, View).code(), KILN_ERROR_INVALID_ARGUMENT);
    kiln_tensor Arg = Moved.tensor("s");
    EXPECT_STREQ(Arg.name, "s");
    EXPECT_EQ(Arg.data, Moved.get());
    Moved.setNone(true);
    EXPECT_TRUE(Moved.isNone());
    kiln::Sequence Bad;
    EXPECT_EQ(kiln::Sequence::create(KILN_DTYPE_STRING, Bad).code(),
              KILN_ERROR_INVALID_ARGUMENT);
  }
  EXPECT_EQ(liveSequenceCount(), Live);
}

/// Calls kilnSeq* functions inside a run; the run's sequences are freed
/// with the fixture.
struct SeqOps : ::testing::Test {
  void SetUp() override { Live = liveSequenceCount(); }
  void TearDown() override {
    Run.reset();
    EXPECT_EQ(liveSequenceCount(), Live);
  }

  /// A new float sequence of N 1-D tensors: {1}, {11, 12}, {21, 22, 23}...
  int64_t counting(int N) {
    int64_t S = kilnSeqNew(KILN_DTYPE_FLOAT, 0);
    for (int I = 0; I < N; ++I) {
      std::vector<float> V(I + 1);
      for (int J = 0; J <= I; ++J)
        V[J] = static_cast<float>(10 * I + J + 1);
      const int64_t Dims[1] = {I + 1};
      S = kilnSeqInsert(S, addr(V.data()), KILN_DTYPE_FLOAT, 1, addr(Dims), 0,
                        0, NodeAddr);
    }
    return S;
  }
  kiln_status status() const { return Run->run().Status; }
  const std::string &error() const { return Run->run().Error; }

  size_t Live = 0;
  std::unique_ptr<SeqRunScope> Run = std::make_unique<SeqRunScope>();
};

TEST_F(SeqOps, InsertAtPositions) {
  int64_t S0 = kilnSeqNew(KILN_DTYPE_FLOAT, 0);
  ASSERT_NE(S0, 0);
  std::vector<float> A{1, 2}, B{3}, C{4, 5, 6};
  const int64_t DA[1] = {2}, DB[1] = {1}, DC[1] = {3};
  int64_t S1 = kilnSeqInsert(S0, addr(A.data()), KILN_DTYPE_FLOAT, 1, addr(DA),
                             0, 0, NodeAddr);
  int64_t S2 = kilnSeqInsert(S1, addr(B.data()), KILN_DTYPE_FLOAT, 1, addr(DB),
                             0, 1, NodeAddr); // front
  int64_t S3 = kilnSeqInsert(S2, addr(C.data()), KILN_DTYPE_FLOAT, 1, addr(DC),
                             -1, 1, NodeAddr); // before the last
  ASSERT_EQ(status(), KILN_OK) << error();
  // Values are immutable: every insert made a new sequence.
  EXPECT_EQ(kiln_sequence_length(seq(S0)), 0);
  EXPECT_EQ(kiln_sequence_length(seq(S1)), 1);
  EXPECT_EQ(kilnSeqLength(S2, NodeAddr), 2);
  ASSERT_EQ(kilnSeqLength(S3, NodeAddr), 3);
  EXPECT_EQ(floatsAt(seq(S3), 0), B);
  EXPECT_EQ(floatsAt(seq(S3), 1), C);
  EXPECT_EQ(floatsAt(seq(S3), 2), A);
  EXPECT_EQ(Run->run().Pool.size(), 4u);
  // Position n appends.
  int64_t S4 = kilnSeqInsert(S3, addr(B.data()), KILN_DTYPE_FLOAT, 1, addr(DB),
                             3, 1, NodeAddr);
  EXPECT_EQ(floatsAt(seq(S4), 3), B);
  EXPECT_EQ(status(), KILN_OK) << error();
}

TEST_F(SeqOps, InsertOutOfRangeFailsTheRun) {
  int64_t S = counting(2);
  std::vector<float> V{1};
  const int64_t D[1] = {1};
  EXPECT_EQ(kilnSeqInsert(S, addr(V.data()), KILN_DTYPE_FLOAT, 1, addr(D), 3, 1,
                          NodeAddr),
            0);
  EXPECT_EQ(status(), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(error(), "node \"s\" (SequenceOp): position 3 is out of range "
                     "[-2, 2] for a sequence of length 2");
  // The first error stays; later calls do nothing.
  EXPECT_EQ(kilnSeqInsert(S, addr(V.data()), KILN_DTYPE_FLOAT, 1, addr(D), -3,
                          1, NodeAddr),
            0);
  EXPECT_EQ(kilnSeqLength(S, NodeAddr), 0);
  EXPECT_NE(error().find("position 3"), std::string::npos);
  // status() makes it the thread's last error.
  EXPECT_EQ(Run->status(), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_last_error(), error());
}

TEST_F(SeqOps, InsertDtypeMismatch) {
  int64_t S = kilnSeqNew(KILN_DTYPE_FLOAT, 0);
  int64_t V = 5;
  EXPECT_EQ(kilnSeqInsert(S, addr(&V), KILN_DTYPE_INT64, 0, 0, 0, 0, NodeAddr),
            0);
  EXPECT_EQ(status(), KILN_ERROR_DTYPE_MISMATCH);
  EXPECT_EQ(error(), "node \"s\" (SequenceOp): cannot insert a int64 tensor "
                     "into a sequence of float32");
}

TEST_F(SeqOps, ZeroHandleIsQuiet) {
  float F = 1;
  EXPECT_EQ(kilnSeqInsert(0, addr(&F), KILN_DTYPE_FLOAT, 0, 0, 0, 0, NodeAddr),
            0);
  EXPECT_EQ(kilnSeqErase(0, 0, 0, NodeAddr), 0);
  EXPECT_EQ(kilnSeqLength(0, NodeAddr), 0);
  EXPECT_EQ(kilnSeqSome(0, NodeAddr), 0);
  EXPECT_EQ(kilnSeqHasValue(0, NodeAddr), 0);
  EXPECT_EQ(kilnSeqGetValue(0, NodeAddr), 0);
  F = 9;
  const int64_t D[1] = {1};
  kilnSeqAt(0, 0, 1, KILN_DTYPE_FLOAT, 1, addr(D), NodeAddr, addr(&F));
  EXPECT_EQ(F, 0); // zeroed: what follows must not see garbage
  kilnSeqConcat(0, KILN_DTYPE_FLOAT, 1, addr(D), 0, 0, NodeAddr, addr(&F));
  EXPECT_EQ(status(), KILN_OK);
  EXPECT_TRUE(Run->run().Pool.empty());
}

TEST_F(SeqOps, OutsideARunNothingHappens) {
  Run.reset();
  EXPECT_EQ(kilnSeqNew(KILN_DTYPE_FLOAT, 0), 0);
  EXPECT_EQ(kiln::rt::seqRunStatus(), KILN_OK);
}

TEST_F(SeqOps, Erase) {
  int64_t S = counting(3);
  int64_t Last = kilnSeqErase(S, 0, 0, NodeAddr);
  ASSERT_EQ(kilnSeqLength(Last, NodeAddr), 2);
  EXPECT_EQ(floatsAt(seq(Last), 1), (std::vector<float>{11, 12}));
  int64_t First = kilnSeqErase(S, -3, 1, NodeAddr);
  ASSERT_EQ(kilnSeqLength(First, NodeAddr), 2);
  EXPECT_EQ(floatsAt(seq(First), 0), (std::vector<float>{11, 12}));
  EXPECT_EQ(kilnSeqLength(S, NodeAddr), 3);
  EXPECT_EQ(status(), KILN_OK) << error();

  EXPECT_EQ(kilnSeqErase(S, 3, 1, NodeAddr), 0);
  EXPECT_EQ(error(), "node \"s\" (SequenceOp): position 3 is out of range "
                     "[-3, 2] for a sequence of length 3");
}

TEST_F(SeqOps, EraseFromEmpty) {
  EXPECT_EQ(kilnSeqErase(kilnSeqNew(KILN_DTYPE_FLOAT, 0), 0, 0, NodeAddr), 0);
  EXPECT_EQ(error(),
            "node \"s\" (SequenceOp): cannot erase from an empty sequence");
}

TEST_F(SeqOps, At) {
  int64_t S = counting(3);
  float Out[2] = {-1, -1};
  const int64_t D2[1] = {2};
  kilnSeqAt(S, 1, 1, KILN_DTYPE_FLOAT, 1, addr(D2), NodeAddr, addr(Out));
  EXPECT_EQ(Out[0], 11);
  EXPECT_EQ(Out[1], 12);
  float One = -1;
  const int64_t D1[1] = {1};
  kilnSeqAt(S, -3, 1, KILN_DTYPE_FLOAT, 1, addr(D1), NodeAddr, addr(&One));
  EXPECT_EQ(One, 1);
  EXPECT_EQ(status(), KILN_OK) << error();
}

TEST_F(SeqOps, AtShapeMismatchNamesBothShapes) {
  int64_t S = counting(3);
  float Out[3] = {-1, -1, -1};
  const int64_t D[2] = {1, 3};
  kilnSeqAt(S, 1, 1, KILN_DTYPE_FLOAT, 2, addr(D), NodeAddr, addr(Out));
  EXPECT_EQ(status(), KILN_ERROR_SHAPE_MISMATCH);
  EXPECT_EQ(error(), "node \"s\" (SequenceOp): element 1 has shape [2], the "
                     "compiled model expects [1,3]");
  EXPECT_EQ(Out[0], 0);
  EXPECT_EQ(Out[2], 0);
}

TEST_F(SeqOps, AtDtypeMismatch) {
  int64_t S = counting(1);
  int64_t Out = 0;
  const int64_t D[1] = {1};
  kilnSeqAt(S, 0, 1, KILN_DTYPE_INT64, 1, addr(D), NodeAddr, addr(&Out));
  EXPECT_EQ(status(), KILN_ERROR_DTYPE_MISMATCH);
  EXPECT_EQ(error(), "node \"s\" (SequenceOp): element 0 is float32, the "
                     "compiled model expects int64");
}

TEST_F(SeqOps, AtOutOfRange) {
  int64_t S = counting(2);
  float Out = 0;
  const int64_t D[1] = {1};
  kilnSeqAt(S, -3, 1, KILN_DTYPE_FLOAT, 1, addr(D), NodeAddr, addr(&Out));
  EXPECT_EQ(error(), "node \"s\" (SequenceOp): position -3 is out of range "
                     "[-2, 1] for a sequence of length 2");
}

TEST_F(SeqOps, AtOfNone) {
  int64_t None = kilnSeqNew(KILN_DTYPE_FLOAT, 1);
  float Out = 5;
  kilnSeqAt(None, 0, 1, KILN_DTYPE_FLOAT, 0, 0, NodeAddr, addr(&Out));
  EXPECT_EQ(status(), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(error(),
            "node \"s\" (SequenceOp): the optional input has no value");
  EXPECT_EQ(Out, 0);
}

TEST_F(SeqOps, AtBoxSharesTheElement) {
  int64_t S = counting(3);
  int64_t Box = kilnSeqAtBox(S, -1, 1, NodeAddr);
  ASSERT_NE(Box, 0);
  const kiln_sequence *B = reinterpret_cast<const kiln_sequence *>(Box);
  ASSERT_EQ(kiln_sequence_length(B), 1);
  EXPECT_FALSE(kiln_sequence_is_none(B));
  kiln_tensor View;
  ASSERT_EQ(kiln_sequence_at(B, 0, &View), KILN_OK);
  ASSERT_EQ(View.rank, 1);
  EXPECT_EQ(View.shape[0], 3);
  EXPECT_EQ(static_cast<const float *>(View.data)[2], 23);
  EXPECT_EQ(kilnSeqAtBox(S, 3, 1, NodeAddr), 0);
  EXPECT_EQ(error(), "node \"s\" (SequenceOp): position 3 is out of range "
                     "[-3, 2] for a sequence of length 3");
}

TEST_F(SeqOps, ConcatBoxTakesItsShapeFromTheElements) {
  int64_t S = counting(3); // {1}, {11, 12}, {21, 22, 23}
  int64_t Box = kilnSeqConcatBox(S, -1, 0, NodeAddr);
  ASSERT_NE(Box, 0) << error();
  kiln_tensor View;
  ASSERT_EQ(kiln_sequence_at(reinterpret_cast<const kiln_sequence *>(Box), 0, &View), KILN_OK);
  ASSERT_EQ(View.rank, 1);
  EXPECT_EQ(View.shape[0], 6);
  EXPECT_EQ(static_cast<const float *>(View.data)[5], 23);
  // Stacking needs equal shapes.
  EXPECT_EQ(kilnSeqConcatBox(S, 0, 1, NodeAddr), 0);
  EXPECT_EQ(status(), KILN_ERROR_SHAPE_MISMATCH);
}

TEST_F(SeqOps, SplitWithoutSplitInput) {
  const std::vector<float> X{1, 2, 3, 4, 5, 6};
  const int64_t D[2] = {2, 3};
  int64_t Keep = kilnSeqSplit(addr(X.data()), KILN_DTYPE_FLOAT, 2, addr(D), 1,
                              0, -1, 0, 1, NodeAddr);
  ASSERT_EQ(kilnSeqLength(Keep, NodeAddr), 3);
  std::vector<int64_t> Shape;
  EXPECT_EQ(floatsAt(seq(Keep), 1, &Shape), (std::vector<float>{2, 5}));
  EXPECT_EQ(Shape, (std::vector<int64_t>{2, 1}));
  int64_t Drop = kilnSeqSplit(addr(X.data()), KILN_DTYPE_FLOAT, 2, addr(D), 0,
                              0, -1, 0, 0, NodeAddr);
  ASSERT_EQ(kilnSeqLength(Drop, NodeAddr), 2);
  EXPECT_EQ(floatsAt(seq(Drop), 1, &Shape), (std::vector<float>{4, 5, 6}));
  EXPECT_EQ(Shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(status(), KILN_OK) << error();
}

TEST_F(SeqOps, SplitByChunkAndLengths) {
  std::vector<float> X(10);
  for (int I = 0; I < 10; ++I)
    X[I] = static_cast<float>(I);
  const int64_t D[2] = {2, 5};
  int64_t Chunk = 2;
  // keepdims is ignored with a split input.
  int64_t S = kilnSeqSplit(addr(X.data()), KILN_DTYPE_FLOAT, 2, addr(D), 1,
                           addr(&Chunk), 0, 0, 0, NodeAddr);
  ASSERT_EQ(kilnSeqLength(S, NodeAddr), 3);
  std::vector<int64_t> Shape;
  EXPECT_EQ(floatsAt(seq(S), 0, &Shape), (std::vector<float>{0, 1, 5, 6}));
  EXPECT_EQ(Shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(floatsAt(seq(S), 2, &Shape), (std::vector<float>{4, 9}));
  EXPECT_EQ(Shape, (std::vector<int64_t>{2, 1}));

  const int64_t Lengths[3] = {1, 0, 4};
  S = kilnSeqSplit(addr(X.data()), KILN_DTYPE_FLOAT, 2, addr(D), 1,
                   addr(Lengths), 1, 3, 1, NodeAddr);
  ASSERT_EQ(kilnSeqLength(S, NodeAddr), 3);
  EXPECT_EQ(floatsAt(seq(S), 1, &Shape), (std::vector<float>{}));
  EXPECT_EQ(Shape, (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(floatsAt(seq(S), 2), (std::vector<float>{1, 2, 3, 4, 6, 7, 8, 9}));
  EXPECT_EQ(status(), KILN_OK) << error();
}

TEST_F(SeqOps, SplitLengthsMustAddUp) {
  std::vector<float> X(6);
  const int64_t D[1] = {6}, Lengths[2] = {2, 3};
  EXPECT_EQ(kilnSeqSplit(addr(X.data()), KILN_DTYPE_FLOAT, 1, addr(D), 0,
                         addr(Lengths), 1, 2, 1, NodeAddr),
            0);
  EXPECT_EQ(status(), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(error(), "node \"s\" (SequenceOp): split lengths add up to 5, the "
                     "input has 6 on axis 0 (shape [6])");
}

TEST_F(SeqOps, SplitChunkMustBePositive) {
  std::vector<float> X(6);
  const int64_t D[1] = {6};
  int64_t Chunk = 0;
  EXPECT_EQ(kilnSeqSplit(addr(X.data()), KILN_DTYPE_FLOAT, 1, addr(D), 0,
                         addr(&Chunk), 0, 0, 1, NodeAddr),
            0);
  EXPECT_EQ(error(), "node \"s\" (SequenceOp): split length 0 is not positive");
}

TEST_F(SeqOps, ConcatJoinsAndStacks) {
  std::vector<float> X(12);
  for (int I = 0; I < 12; ++I)
    X[I] = static_cast<float>(I);
  const int64_t D[2] = {3, 4}, Lengths[2] = {1, 3};
  int64_t S = kilnSeqSplit(addr(X.data()), KILN_DTYPE_FLOAT, 2, addr(D), 1,
                           addr(Lengths), 1, 2, 1, NodeAddr);
  std::vector<float> Y(12, -1);
  kilnSeqConcat(S, KILN_DTYPE_FLOAT, 2, addr(D), 1, 0, NodeAddr,
                addr(Y.data()));
  EXPECT_EQ(Y, X);

  int64_t Rows = kilnSeqSplit(addr(X.data()), KILN_DTYPE_FLOAT, 2, addr(D), 0,
                              0, -1, 0, 0, NodeAddr); // three [4] rows
  const int64_t Stacked[2] = {4, 3};                  // stacked on axis 1
  kilnSeqConcat(Rows, KILN_DTYPE_FLOAT, 2, addr(Stacked), 1, 1, NodeAddr,
                addr(Y.data()));
  EXPECT_EQ(Y, (std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  EXPECT_EQ(status(), KILN_OK) << error();
}

TEST_F(SeqOps, ConcatShapeMismatch) {
  int64_t S = counting(2); // [1] and [2]
  std::vector<float> Y(4, -1);
  const int64_t D[1] = {4};
  kilnSeqConcat(S, KILN_DTYPE_FLOAT, 1, addr(D), 0, 0, NodeAddr,
                addr(Y.data()));
  EXPECT_EQ(status(), KILN_ERROR_SHAPE_MISMATCH);
  EXPECT_EQ(error(), "node \"s\" (SequenceOp): 2 elements make 3 on axis 0, "
                     "the compiled output shape [4] has 4");
  EXPECT_EQ(Y, std::vector<float>(4, 0));
}

TEST_F(SeqOps, ConcatElementShapeMismatch) {
  int64_t S = counting(2);
  std::vector<float> Y(4);
  const int64_t D[2] = {2, 2};
  kilnSeqConcat(S, KILN_DTYPE_FLOAT, 2, addr(D), 0, 1, NodeAddr,
                addr(Y.data()));
  EXPECT_EQ(error(), "node \"s\" (SequenceOp): element 0 has shape [1], which "
                     "does not fit the compiled output shape [2,2] (stacking "
                     "on a new axis 0)");
}

TEST_F(SeqOps, ConcatOfEmpty) {
  float Y = 0;
  const int64_t D[1] = {1};
  kilnSeqConcat(kilnSeqNew(KILN_DTYPE_FLOAT, 0), KILN_DTYPE_FLOAT, 1, addr(D),
                0, 0, NodeAddr, addr(&Y));
  EXPECT_EQ(error(),
            "node \"s\" (SequenceOp): cannot concatenate an empty sequence");
}

TEST_F(SeqOps, Optionals) {
  int64_t None = kilnSeqNew(KILN_DTYPE_FLOAT, 1);
  int64_t S = counting(2);
  EXPECT_EQ(kilnSeqHasValue(None, NodeAddr), 0);
  EXPECT_EQ(kilnSeqHasValue(S, NodeAddr), 1);
  int64_t Some = kilnSeqSome(S, NodeAddr);
  EXPECT_NE(Some, S);
  EXPECT_EQ(kilnSeqHasValue(Some, NodeAddr), 1);
  EXPECT_EQ(kilnSeqLength(Some, NodeAddr), 2);
  int64_t Got = kilnSeqGetValue(Some, NodeAddr);
  EXPECT_NE(Got, Some);
  EXPECT_EQ(floatsAt(seq(Got), 0), floatsAt(seq(S), 0));
  EXPECT_EQ(status(), KILN_OK) << error();

  EXPECT_EQ(kilnSeqGetValue(None, NodeAddr), 0);
  EXPECT_EQ(status(), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(error(),
            "node \"s\" (SequenceOp): the optional input has no value");
}

// A Loop body's slice by its counter, boxed, then inserted.
TEST_F(SeqOps, SliceBoxesAndInsertBoxShares) {
  std::vector<float> X(12);
  for (int I = 0; I < 12; ++I)
    X[I] = static_cast<float>(I);
  const int64_t D[2] = {3, 4};
  // Rows 2 and 0 (step -2), columns 1..2.
  const int64_t Start[2] = {2, 1}, Step[2] = {-2, 1}, Size[2] = {2, 2};
  int64_t Box = kilnSeqSlice(addr(X.data()), KILN_DTYPE_FLOAT, 2, addr(D),
                             addr(Start), addr(Step), addr(Size), NodeAddr);
  ASSERT_EQ(kilnSeqLength(Box, NodeAddr), 1);
  std::vector<int64_t> Shape;
  EXPECT_EQ(floatsAt(seq(Box), 0, &Shape), (std::vector<float>{9, 10, 1, 2}));
  EXPECT_EQ(Shape, (std::vector<int64_t>{2, 2}));

  int64_t S = counting(1);
  int64_t Front = kilnSeqInsertBox(S, Box, 0, 1, NodeAddr);
  int64_t Back = kilnSeqInsertBox(S, Box, 0, 0, NodeAddr);
  ASSERT_EQ(kilnSeqLength(Front, NodeAddr), 2);
  EXPECT_EQ(floatsAt(seq(Front), 0), (std::vector<float>{9, 10, 1, 2}));
  EXPECT_EQ(floatsAt(seq(Back), 1), (std::vector<float>{9, 10, 1, 2}));
  kiln_tensor A, B;
  ASSERT_EQ(kiln_sequence_at(seq(Box), 0, &A), KILN_OK);
  ASSERT_EQ(kiln_sequence_at(seq(Front), 0, &B), KILN_OK);
  EXPECT_EQ(A.data, B.data);

  // An empty slice (a loop's first iteration).
  const int64_t None[2] = {0, 4};
  int64_t Empty = kilnSeqSlice(addr(X.data()), KILN_DTYPE_FLOAT, 2, addr(D),
                               addr(Start), addr(Step), addr(None), NodeAddr);
  EXPECT_EQ(floatsAt(seq(Empty), 0, &Shape), std::vector<float>{});
  EXPECT_EQ(Shape, (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(status(), KILN_OK) << error();

  EXPECT_EQ(kilnSeqInsertBox(S, Box, 3, 1, NodeAddr), 0);
  EXPECT_EQ(error(), "node \"s\" (SequenceOp): position 3 is out of range "
                     "[-1, 1] for a sequence of length 1");
}

TEST_F(SeqOps, InsertBoxDtypeMismatch) {
  int64_t V = 3;
  const int64_t D[1] = {1}, Start[1] = {0}, Step[1] = {1}, Size[1] = {1};
  int64_t Box = kilnSeqSlice(addr(&V), KILN_DTYPE_INT64, 1, addr(D),
                             addr(Start), addr(Step), addr(Size), NodeAddr);
  EXPECT_EQ(kilnSeqInsertBox(counting(1), Box, 0, 0, NodeAddr), 0);
  EXPECT_EQ(status(), KILN_ERROR_DTYPE_MISMATCH);
  EXPECT_EQ(error(), "node \"s\" (SequenceOp): cannot insert a int64 tensor "
                     "into a sequence of float32");
}

TEST_F(SeqOps, AtWithoutPositionTakesTheFirst) {
  float One = -1;
  const int64_t D1[1] = {1};
  kilnSeqAt(counting(2), 5, 0, KILN_DTYPE_FLOAT, 1, addr(D1), NodeAddr,
            addr(&One));
  EXPECT_EQ(One, 1);
  EXPECT_EQ(status(), KILN_OK) << error();
}

TEST_F(SeqOps, NewRejectsStrings) {
  EXPECT_EQ(kilnSeqNew(KILN_DTYPE_STRING, 0), 0);
  EXPECT_EQ(error(), "kilnSeqNew: sequences of strings are not supported");
}

TEST_F(SeqOps, ElementsAreShared) {
  int64_t S = counting(2);
  int64_t T = kilnSeqErase(S, 0, 1, NodeAddr);
  kiln_tensor A, B;
  ASSERT_EQ(kiln_sequence_at(seq(S), 1, &A), KILN_OK);
  ASSERT_EQ(kiln_sequence_at(seq(T), 0, &B), KILN_OK);
  EXPECT_EQ(A.data, B.data);
}

} // namespace
