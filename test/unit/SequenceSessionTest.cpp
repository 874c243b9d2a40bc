// Sessions of ABI-6 models with sequence and optional inputs/outputs.
#include "../../runtime/lib/Sequence.h"
#include "FakeModels.h"

#include "kiln/kiln.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

using fake::floatTensor;
using fake::Shape23;
using kiln::rt::liveSequenceCount;

namespace {

const int64_t Shape1[1] = {1};

std::vector<float> floatsAt(const kiln::Sequence &S, int64_t I) {
  kiln_tensor V;
  EXPECT_TRUE(S.at(I, V));
  const auto *F = static_cast<const float *>(V.data);
  return std::vector<float>(F, F + V.size_bytes / sizeof(float));
}

kiln::Sequence floatSequence() {
  kiln::Sequence S;
  EXPECT_TRUE(kiln::Sequence::create(KILN_DTYPE_FLOAT, S));
  return S;
}

void appendFloats(kiln::Sequence &S, std::vector<float> V,
                  std::vector<int64_t> Shape) {
  kiln_tensor T{
      nullptr,      KILN_DTYPE_FLOAT, static_cast<int32_t>(Shape.size()),
      Shape.data(), V.data(),         V.size() * sizeof(float)};
  kiln::Status St = S.append(T);
  ASSERT_TRUE(St) << St.message();
}

/// seq_insert: out = SequenceInsert(seq, x, pos), len = length(out).
struct SeqInsertFixture : ::testing::Test {
  void SetUp() override {
    ASSERT_TRUE(Session.valid()) << Session.createStatus().message();
    appendFloats(Seq, {7, 8}, {2});
    // Stale contents that a successful run replaces.
    appendFloats(Result, {-1}, {1});
    appendFloats(Result, {-2}, {1});
    appendFloats(Result, {-3}, {1});
  }

  kiln::Status run() {
    kiln_tensor In[] = {Seq.tensor("seq"),
                        floatTensor("x", X, Shape23, 2),
                        {"pos", KILN_DTYPE_INT64, 1, Shape1, &Pos, 8}};
    kiln_tensor Out[] = {Result.tensor("out"),
                         {"len", KILN_DTYPE_INT64, 1, Shape1, &Len, 8}};
    return Session.run(In, 3, Out, 2);
  }

  kiln::Session Session{fake::seqInsertModel()};
  kiln::Sequence Seq = floatSequence(), Result = floatSequence();
  std::vector<float> X{1, 2, 3, 4, 5, 6};
  int64_t Pos = 0, Len = -1;
};

TEST_F(SeqInsertFixture, RunInsertsIntoTheCallersSequence) {
  kiln::Status St = run();
  ASSERT_TRUE(St) << St.message();
  EXPECT_EQ(Len, 2);
  ASSERT_EQ(Result.length(), 2);
  EXPECT_FALSE(Result.isNone());
  EXPECT_EQ(floatsAt(Result, 0), X);
  EXPECT_EQ(floatsAt(Result, 1), (std::vector<float>{7, 8}));
  kiln_tensor View;
  ASSERT_TRUE(Result.at(0, View));
  EXPECT_EQ(View.rank, 2);
  EXPECT_EQ(View.shape[1], 3);
  // The input is never modified.
  EXPECT_EQ(Seq.length(), 1);

  Pos = -1; // before the last
  ASSERT_TRUE(run());
  EXPECT_EQ(floatsAt(Result, 0), X);
  Pos = 1;
  ASSERT_TRUE(run());
  EXPECT_EQ(floatsAt(Result, 1), X);
}

TEST_F(SeqInsertFixture, FailingSeqCallFailsTheRun) {
  Pos = 5;
  kiln::Status St = run();
  EXPECT_EQ(St.code(), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(St.message(), "node \"ins\" (SequenceInsert): position 5 is out "
                          "of range [-1, 1] for a sequence of length 1");
  EXPECT_EQ(St.message(), kiln_session_error(Session.get()));
  // The caller's output is untouched.
  ASSERT_EQ(Result.length(), 3);
  EXPECT_EQ(floatsAt(Result, 2), (std::vector<float>{-3}));
  // The session works on.
  Pos = 0;
  ASSERT_TRUE(run());
  EXPECT_EQ(Result.length(), 2);
}

TEST_F(SeqInsertFixture, RunsDoNotLeak) {
  size_t Live = liveSequenceCount();
  for (int I = 0; I < 200; ++I) {
    Pos = I % 2 ? 0 : 7; // every other run fails
    run();
  }
  EXPECT_EQ(liveSequenceCount(), Live);
  EXPECT_EQ(Seq.length(), 1);
}

TEST_F(SeqInsertFixture, InputChecks) {
  kiln_tensor In[] = {Seq.tensor("seq"),
                      floatTensor("x", X, Shape23, 2),
                      {"pos", KILN_DTYPE_INT64, 1, Shape1, &Pos, 8}};
  kiln_tensor Out[] = {Result.tensor("out"),
                       {"len", KILN_DTYPE_INT64, 1, Shape1, &Len, 8}};
  In[0].data = nullptr;
  kiln::Status St = Session.run(In, 3, Out, 2);
  EXPECT_EQ(St.code(), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(St.message(), "input \"seq\": data is NULL (a sequence value is "
                          "passed as a kiln_sequence*)");

  kiln::Sequence Ints;
  ASSERT_TRUE(kiln::Sequence::create(KILN_DTYPE_INT64, Ints));
  In[0] = Ints.tensor("seq");
  St = Session.run(In, 3, Out, 2);
  EXPECT_EQ(St.code(), KILN_ERROR_DTYPE_MISMATCH);
  EXPECT_EQ(St.message(), "input \"seq\": expected a sequence of float32, got "
                          "one of int64");

  kiln::Sequence None = floatSequence();
  None.setNone(true);
  In[0] = None.tensor("seq");
  St = Session.run(In, 3, Out, 2);
  EXPECT_EQ(St.code(), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(St.message(), "input \"seq\": a sequence input cannot be none");

  In[0] = Seq.tensor("seq");
  Out[0] = Ints.tensor("out");
  St = Session.run(In, 3, Out, 2);
  EXPECT_EQ(St.code(), KILN_ERROR_DTYPE_MISMATCH);
  EXPECT_EQ(St.message(), "output \"out\": expected a sequence of float32, "
                          "got one of int64");

  // By position, and the same object as input and output.
  Out[0] = Seq.tensor(nullptr);
  In[0].name = In[1].name = In[2].name = Out[1].name = nullptr;
  ASSERT_TRUE(Session.run(In, 3, Out, 2));
  EXPECT_EQ(Seq.length(), 2);
}

// Each thread's runs own their sequences: sessions on two threads share a
// caller's input sequence and fail independently.
TEST(SequenceSession, ConcurrentSessions) {
  kiln::Sequence Shared = floatSequence();
  appendFloats(Shared, {7}, {1});
  size_t Live = liveSequenceCount();
  auto Work = [&](int64_t Pos, int64_t WantLen, bool &Ok) {
    kiln::Session S(fake::seqInsertModel());
    kiln::Sequence Out = floatSequence();
    std::vector<float> X(6, 1);
    int64_t Len = 0;
    kiln_tensor In[] = {Shared.tensor("seq"),
                        floatTensor("x", X, Shape23, 2),
                        {"pos", KILN_DTYPE_INT64, 1, Shape1, &Pos, 8}};
    kiln_tensor Outs[] = {Out.tensor("out"),
                          {"len", KILN_DTYPE_INT64, 1, Shape1, &Len, 8}};
    Ok = true;
    for (int I = 0; I < 300; ++I) {
      kiln::Status St = S.run(In, 3, Outs, 2);
      Ok &= WantLen ? St.ok() && Len == WantLen && Out.length() == WantLen
                    : St.code() == KILN_ERROR_INVALID_ARGUMENT;
    }
  };
  bool GoodOk = false, BadOk = false;
  std::thread Good(Work, 0, 2, std::ref(GoodOk));
  std::thread Bad(Work, 9, 0, std::ref(BadOk));
  Good.join();
  Bad.join();
  EXPECT_TRUE(GoodOk);
  EXPECT_TRUE(BadOk);
  EXPECT_EQ(Shared.length(), 1);
  EXPECT_EQ(liveSequenceCount(), Live);
}

TEST(SequenceSession, OptionalSequence) {
  kiln::Session S(fake::optionalGetModel());
  ASSERT_TRUE(S.valid()) << S.createStatus().message();
  kiln::Sequence Maybe = floatSequence(), Got = floatSequence();
  appendFloats(Maybe, {1, 2, 3}, {1, 3});
  appendFloats(Maybe, {4, 5, 6, 7, 8, 9}, {2, 3});
  uint8_t Has = 7;
  kiln_tensor In[] = {Maybe.tensor("maybe")};
  kiln_tensor Out[] = {{"has", KILN_DTYPE_BOOL, 1, Shape1, &Has, 1},
                       Got.tensor("seq")};
  kiln::Status St = S.run(In, 1, Out, 2);
  ASSERT_TRUE(St) << St.message();
  EXPECT_EQ(Has, 1);
  ASSERT_EQ(Got.length(), 2);
  EXPECT_EQ(floatsAt(Got, 1), (std::vector<float>{4, 5, 6, 7, 8, 9}));

  // OptionalGetElement of none fails the run; `got` keeps its elements.
  Maybe.setNone(true);
  St = S.run(In, 1, Out, 2);
  EXPECT_EQ(St.code(), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(St.message(), "node \"get\" (OptionalGetElement): the optional "
                          "input has no value");
  EXPECT_EQ(Has, 0);
  EXPECT_EQ(Got.length(), 2);

  // Elements must fit the model's element shape [?,3].
  Maybe.setNone(false);
  appendFloats(Maybe, {1, 2}, {1, 2});
  St = S.run(In, 1, Out, 2);
  EXPECT_EQ(St.code(), KILN_ERROR_SHAPE_MISMATCH);
  EXPECT_EQ(St.message(),
            "input \"maybe\": element 0 has shape [1,2], the model expects "
            "[?,3]");
}

/// A one-input model that passes an optional tensor through.
void passThrough(void *const *In, void *const *Out, void *) {
  *static_cast<int64_t *>(Out[0]) = *static_cast<const int64_t *>(In[0]);
}

kiln_model_info optionalTensorModel() {
  static const kiln_tensor_info Info[] = {{"o", KILN_DTYPE_FLOAT, 2, Shape23}};
  static const int32_t Kinds[] = {KILN_VALUE_OPTIONAL};
  static const kiln_partition_info Parts[] = {{"cpu_0", "cpu", 1, passThrough}};
  kiln_model_info M{};
  M.abi_version = KILN_ABI_VERSION;
  M.name = "opt_identity";
  M.num_inputs = M.num_outputs = 1;
  M.inputs = M.outputs = Info;
  M.num_partitions = 1;
  M.partitions = Parts;
  M.input_kinds = M.output_kinds = Kinds;
  return M;
}

TEST(SequenceSession, OptionalTensorIdentity) {
  kiln_model_info M = optionalTensorModel();
  kiln::Session S(&M);
  ASSERT_TRUE(S.valid()) << S.createStatus().message();
  kiln::Sequence In = floatSequence(), Out = floatSequence();
  kiln_tensor I[] = {In.tensor()}, O[] = {Out.tensor()};
  In.setNone(true);
  appendFloats(Out, {1, 2, 3, 4, 5, 6}, {2, 3});
  ASSERT_TRUE(S.run(I, 1, O, 1));
  EXPECT_TRUE(Out.isNone());
  EXPECT_EQ(Out.length(), 0);

  In.setNone(false);
  appendFloats(In, {1, 2, 3, 4, 5, 6}, {2, 3});
  ASSERT_TRUE(S.run(I, 1, O, 1));
  EXPECT_FALSE(Out.isNone());
  EXPECT_EQ(floatsAt(Out, 0), floatsAt(In, 0));

  appendFloats(In, {1, 2, 3, 4, 5, 6}, {2, 3});
  kiln::Status St = S.run(I, 1, O, 1);
  EXPECT_EQ(St.code(), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(St.message(), "input \"o\": an optional tensor holds one element "
                          "or is none, got 2 elements");

  // Not none, but empty: no value to hold.
  In.clear();
  St = S.run(I, 1, O, 1);
  EXPECT_EQ(St.code(), KILN_ERROR_INVALID_ARGUMENT);
}

TEST(SequenceSession, OutputThatTheModelNeverSet) {
  kiln_model_info M = optionalTensorModel();
  static const kiln_partition_info Parts[] = {
      {"cpu_0", "cpu", 1, [](void *const *, void *const *, void *) {}}};
  M.partitions = Parts;
  kiln::Session S(&M);
  kiln::Sequence In = floatSequence(), Out = floatSequence();
  In.setNone(true);
  kiln_tensor I[] = {In.tensor()}, O[] = {Out.tensor()};
  kiln::Status St = S.run(I, 1, O, 1);
  EXPECT_EQ(St.code(), KILN_ERROR_INTERNAL);
  EXPECT_EQ(St.message(), "output \"o\": the model set no value");
}

TEST(SequenceSession, ModelChecks) {
  kiln_model_info M = *fake::seqInsertModel();
  kiln_session *S = nullptr;
  const int32_t BadKinds[] = {7, 0, 0};
  M.input_kinds = BadKinds;
  EXPECT_EQ(kiln_session_create(&M, &S), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(),
               "model input \"seq\" has an unknown value kind 7");

  M = *fake::seqInsertModel();
  EXPECT_EQ(kiln_model_value_kind(&M, 0, 0), KILN_VALUE_SEQUENCE);
  EXPECT_EQ(kiln_model_value_kind(&M, 1, 1), KILN_VALUE_TENSOR);
  EXPECT_EQ(kiln_model_value_kind(&M, 1, 2), KILN_VALUE_TENSOR);
  EXPECT_EQ(kiln_model_value_kind(nullptr, 0, 0), KILN_VALUE_TENSOR);
  // A sequence's shape is that of its elements, as compiled.
  int64_t Shape[2] = {-7, -7};
  kiln_model_shape_at(&M, 0, 0, Shape);
  EXPECT_EQ(Shape[0], -7);

  // Strings cannot be sequence elements.
  M = *fake::seqInsertModel();
  kiln_tensor_info Inputs[3];
  std::memcpy(Inputs, M.inputs, sizeof(Inputs));
  Inputs[0].dtype = KILN_DTYPE_STRING;
  M.inputs = Inputs;
  EXPECT_EQ(kiln_session_create(&M, &S), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(),
               "model input \"seq\": sequences of strings are not supported");
}

TEST(SequenceSession, DeviceRunRefused) {
  kiln::Session S(fake::seqInsertModel());
  ASSERT_TRUE(S.valid());
  EXPECT_EQ(S.runDevice(nullptr, 0, nullptr, 0).code(), KILN_ERROR_PROVIDER);
}

TEST(SequenceSession, Abi5ModelsNeverReadKinds) {
  // An ABI-5 model ends before input_kinds: what follows is poison.
  fake::OldAbiAdd Old(5, offsetof(kiln_model_info, input_kinds));
  kiln_model_info *M = Old.info();
  kiln::Session S(M);
  ASSERT_TRUE(S.valid()) << S.createStatus().message();
  std::vector<float> A(6, 1), B(6, 2), Y(6);
  kiln_tensor In[] = {floatTensor("a", A, Shape23, 2),
                      floatTensor("b", B, Shape23, 2)};
  kiln_tensor Out[] = {floatTensor("y", Y, Shape23, 2)};
  ASSERT_TRUE(S.run(In, 2, Out, 1));
  EXPECT_EQ(Y[0], 3);
}

} // namespace
