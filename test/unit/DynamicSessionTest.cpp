// Sessions of ABI-6 models with dynamic-shape outputs (KILN_VALUE_DYNAMIC):
// the caller passes a kiln_sequence that a run fills with the tensor.
#include "../../runtime/lib/Sequence.h"
#include "FakeModels.h"

#include "kiln/kiln.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

using fake::floatTensor;
using fake::Shape23;
using kiln::rt::liveSequenceCount;

namespace {

const int64_t Shape1[1] = {1};

kiln::Sequence sequenceOf(int32_t DType) {
  kiln::Sequence S;
  EXPECT_TRUE(kiln::Sequence::create(DType, S));
  return S;
}

/// The one tensor a dynamic-shape output holds, as T, and its shape.
template <typename T>
std::vector<T> tensorOf(const kiln::Sequence &S, std::vector<int64_t> &Shape) {
  EXPECT_FALSE(S.isNone());
  EXPECT_EQ(S.length(), 1);
  kiln_tensor V;
  if (!S.at(0, V))
    return {};
  Shape.assign(V.shape, V.shape + V.rank);
  const auto *P = static_cast<const T *>(V.data);
  return std::vector<T>(P, P + V.size_bytes / sizeof(T));
}

struct DynamicFixture : ::testing::Test {
  void SetUp() override {
    ASSERT_TRUE(Session.valid()) << Session.createStatus().message();
  }
  kiln::Status run() {
    kiln_tensor In[] = {floatTensor("x", X, Shape23, 2)};
    kiln_tensor Out[] = {Idx.tensor("idx"),
                         U.tensor("u"),
                         {"n", KILN_DTYPE_INT64, 1, Shape1, &N, 8}};
    return Session.run(In, 1, Out, 3);
  }

  kiln::Session Session{fake::dynamicModel()};
  kiln::Sequence Idx = sequenceOf(KILN_DTYPE_INT64),
                 U = sequenceOf(KILN_DTYPE_FLOAT);
  std::vector<float> X{0, 2, 0, 3, 0, 2};
  int64_t N = -1;
};

TEST_F(DynamicFixture, RunFillsTheCallersSequences) {
  EXPECT_EQ(kiln_model_value_kind(fake::dynamicModel(), 1, 0),
            KILN_VALUE_DYNAMIC);
  // Stale contents, and none-ness, that the run replaces.
  U.setNone(true);
  std::vector<int64_t> Stale{9, 9};
  const int64_t StaleShape[1] = {2};
  ASSERT_TRUE(
      Idx.append({nullptr, KILN_DTYPE_INT64, 1, StaleShape, Stale.data(), 16}));
  ASSERT_TRUE(
      Idx.append({nullptr, KILN_DTYPE_INT64, 1, StaleShape, Stale.data(), 16}));
  kiln::Status St = run();
  ASSERT_TRUE(St) << St.message();
  std::vector<int64_t> Shape;
  EXPECT_EQ(tensorOf<int64_t>(Idx, Shape),
            (std::vector<int64_t>{0, 1, 1, 1, 0, 2}));
  EXPECT_EQ(Shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(tensorOf<float>(U, Shape), (std::vector<float>{0, 2, 3}));
  EXPECT_EQ(Shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(N, 3);

  // Another input gives another shape.
  X = {1, 1, 1, 1, 1, 1};
  ASSERT_TRUE(run());
  EXPECT_EQ(tensorOf<int64_t>(Idx, Shape).size(), 12u);
  EXPECT_EQ(Shape, (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(tensorOf<float>(U, Shape), (std::vector<float>{1}));
  X = {0, 0, 0, 0, 0, 0};
  ASSERT_TRUE(run());
  EXPECT_EQ(tensorOf<int64_t>(Idx, Shape).size(), 0u);
  EXPECT_EQ(Shape, (std::vector<int64_t>{2, 0}));
}

TEST_F(DynamicFixture, RunsDoNotLeak) {
  size_t Live = liveSequenceCount();
  for (int I = 0; I < 100; ++I)
    ASSERT_TRUE(run());
  EXPECT_EQ(liveSequenceCount(), Live);
}

TEST_F(DynamicFixture, OutputChecks) {
  kiln_tensor In[] = {floatTensor("x", X, Shape23, 2)};
  kiln_tensor Out[] = {U.tensor("idx"),
                       U.tensor("u"),
                       {"n", KILN_DTYPE_INT64, 1, Shape1, &N, 8}};
  kiln::Status St = Session.run(In, 1, Out, 3);
  EXPECT_EQ(St.code(), KILN_ERROR_DTYPE_MISMATCH);
  EXPECT_EQ(St.message(), "output \"idx\": expected a dynamic-shape tensor of "
                          "int64, got one of float32");
  Out[0].data = nullptr;
  St = Session.run(In, 1, Out, 3);
  EXPECT_EQ(St.code(), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(St.message(), "output \"idx\": data is NULL (a dynamic-shape "
                          "tensor value is passed as a kiln_sequence*)");
}

TEST_F(DynamicFixture, DeviceRunRefused) {
  kiln::Status St = Session.runDevice(nullptr, 0, nullptr, 0);
  EXPECT_EQ(St.code(), KILN_ERROR_PROVIDER);
}

/// A model whose one output "y" (dynamic float32 [?, 3]) the partition
/// sets to what makeBox makes.
int64_t (*MakeBox)() = nullptr;

kiln_model_info boxModel(int64_t (*Make)()) {
  MakeBox = Make;
  static const int64_t YShape[2] = {-1, 3};
  static const kiln_tensor_info Outputs[] = {
      {"y", KILN_DTYPE_FLOAT, 2, YShape}};
  static const int32_t Kinds[] = {KILN_VALUE_DYNAMIC};
  static const kiln_partition_info Parts[] = {
      {"cpu_0", "cpu", 1, [](void *const *, void *const *Out, void *) {
         *static_cast<int64_t *>(Out[0]) = MakeBox();
       }}};
  kiln_model_info M{};
  M.abi_version = KILN_ABI_VERSION;
  M.name = "box";
  M.num_outputs = 1;
  M.outputs = Outputs;
  M.num_partitions = 1;
  M.partitions = Parts;
  M.output_kinds = Kinds;
  return M;
}

/// A run-owned float sequence holding tensors of the given shapes.
int64_t makeSeq(std::vector<std::vector<int64_t>> Shapes, bool None = false) {
  kiln::rt::SeqRun *Run = kiln::rt::currentSeqRun();
  Run->Pool.push_back(std::make_unique<kiln_sequence>(KILN_DTYPE_FLOAT));
  kiln_sequence *S = Run->Pool.back().get();
  S->None = None;
  for (const auto &Shape : Shapes) {
    uint64_t Bytes = 0;
    kiln::rt::denseBytes(KILN_DTYPE_FLOAT, Shape.data(),
                         static_cast<int32_t>(Shape.size()), Bytes);
    std::vector<uint8_t> Zeros(Bytes);
    S->Elements.push_back(kiln::rt::makeSeqElement(
        KILN_DTYPE_FLOAT, Shape.data(), static_cast<int32_t>(Shape.size()),
        Zeros.data(), Bytes));
  }
  return static_cast<int64_t>(reinterpret_cast<uintptr_t>(S));
}

kiln::Status runBox(int64_t (*Make)(), kiln::Sequence &Y) {
  kiln_model_info M = boxModel(Make);
  kiln::Session S(&M);
  EXPECT_TRUE(S.valid()) << S.createStatus().message();
  kiln_tensor O[] = {Y.tensor("y")};
  return S.run(nullptr, 0, O, 1);
}

TEST(DynamicSession, TheModelMustMakeOneTensorOfTheKnownShape) {
  kiln::Sequence Y = sequenceOf(KILN_DTYPE_FLOAT);
  kiln::Status St = runBox([] { return makeSeq({{4, 3}}); }, Y);
  ASSERT_TRUE(St) << St.message();
  ASSERT_EQ(Y.length(), 1);

  St = runBox([] { return makeSeq({{4, 3}, {1, 3}}); }, Y);
  EXPECT_EQ(St.code(), KILN_ERROR_INTERNAL);
  EXPECT_EQ(St.message(), "output \"y\": the model made a dynamic-shape "
                          "tensor of 2 elements");
  St = runBox([] { return makeSeq({}, true); }, Y);
  EXPECT_EQ(St.message(), "output \"y\": the model made a dynamic-shape "
                          "tensor of none");
  St = runBox([] { return makeSeq({{4, 2}}); }, Y);
  EXPECT_EQ(St.code(), KILN_ERROR_INTERNAL);
  EXPECT_EQ(St.message(), "output \"y\": the model made a tensor of shape "
                          "[4,2], the model info says [?,3]");
  St = runBox([] { return int64_t(0); }, Y);
  EXPECT_EQ(St.message(), "output \"y\": the model set no value");
  // A failed run leaves the caller's sequence as it was.
  EXPECT_EQ(Y.length(), 1);
}

TEST(DynamicSession, ModelChecks) {
  kiln_model_info M = *fake::dynamicModel();
  kiln_session *S = nullptr;
  // Only outputs can be dynamic-shape tensors.
  const int32_t InKinds[] = {KILN_VALUE_DYNAMIC};
  M.input_kinds = InKinds;
  EXPECT_EQ(kiln_session_create(&M, &S), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(),
               "model input \"x\" has value kind 4 (a dynamic-shape tensor), "
               "which only outputs can have");
  EXPECT_EQ(S, nullptr);

  M = *fake::dynamicModel();
  const int32_t BadKinds[] = {5, 0, 0};
  M.output_kinds = BadKinds;
  EXPECT_EQ(kiln_session_create(&M, &S), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(),
               "model output \"idx\" has an unknown value kind 5");
}

} // namespace
