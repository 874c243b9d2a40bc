// Session creation, input/output validation and running partitions.
#include "FakeModels.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>
#if defined(__x86_64__) && defined(__linux__)
#include <cpuid.h>
#endif

using fake::floatTensor;
using fake::Shape23;

namespace {

struct AddFixture : ::testing::Test {
  void SetUp() override {
    ASSERT_EQ(kiln_session_create(fake::addModel(), &S), KILN_OK);
  }
  void TearDown() override { kiln_session_destroy(S); }

  kiln_status run() {
    return kiln_session_run(S, In.data(), static_cast<int32_t>(In.size()),
                            Out.data(), static_cast<int32_t>(Out.size()));
  }
  std::string error() const { return kiln_session_error(S); }

  kiln_session *S = nullptr;
  std::vector<float> A{1, 2, 3, 4, 5, 6}, B{10, 20, 30, 40, 50, 60},
      Y = std::vector<float>(6, -1);
  std::vector<kiln_tensor> In{floatTensor("a", A, Shape23, 2),
                              floatTensor("b", B, Shape23, 2)};
  std::vector<kiln_tensor> Out{floatTensor("y", Y, Shape23, 2)};
};

TEST(Session, CreateAndDestroy) {
  kiln_session *S = nullptr;
  ASSERT_EQ(kiln_session_create(fake::addModel(), &S), KILN_OK);
  ASSERT_NE(S, nullptr);
  EXPECT_EQ(kiln_session_model(S), fake::addModel());
  EXPECT_STREQ(kiln_session_error(S), "");
  kiln_session_destroy(S);
  kiln_session_destroy(nullptr); // no-op
}

TEST(Session, CreateRejectsNull) {
  kiln_session *S = reinterpret_cast<kiln_session *>(1);
  EXPECT_EQ(kiln_session_create(nullptr, &S), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(S, nullptr);
  EXPECT_EQ(kiln_session_create(fake::addModel(), nullptr),
            KILN_ERROR_INVALID_ARGUMENT);
}

TEST(Session, BadPinThreadsEnvironmentFailsMultiThreadSessions) {
  setenv("KILN_PIN_THREADS", "on", 1);
  kiln_session_options Opts{};
  Opts.num_threads = 2;
  kiln_session *S = nullptr;
  EXPECT_EQ(kiln_session_create_with_options(fake::addModel(), &Opts, &S),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(S, nullptr);
  EXPECT_NE(std::string(kiln_last_error()).find("KILN_PIN_THREADS is \"on\""),
            std::string::npos);
  // One thread has no worker to pin.
  Opts.num_threads = 1;
  EXPECT_EQ(kiln_session_create_with_options(fake::addModel(), &Opts, &S),
            KILN_OK);
  kiln_session_destroy(S);
  unsetenv("KILN_PIN_THREADS");
}

#if defined(__x86_64__) && defined(__linux__)
// A partition that runs AMX tile instructions, as a model compiled for a
// CPU with AMX-INT8 does: without the tile state granted by the OS, the
// first one kills the process (SIGILL).
static void tileFn(void *const *, void *const *Out, void *) {
  alignas(64) unsigned char Config[64] = {1}; // palette 1
  Config[16] = 64;                            // tmm0: 64 bytes a row
  Config[48] = 16;                            // of 16 rows
  alignas(64) int32_t Tile[256];
  asm volatile("ldtilecfg %1\n\t"
               "tilezero %%tmm0\n\t"
               "movq $64, %%rax\n\t"
               "tilestored %%tmm0, (%0,%%rax,1)\n\t"
               "tilerelease"
               :
               : "r"(Tile), "m"(Config)
               : "rax", "memory");
  *static_cast<float *>(Out[0]) = float(Tile[0] + Tile[255]) + 1.0f;
}

TEST(Session, AmxTilesModelGetsTheTileStateOrAClearRefusal) {
  static const int64_t One[1] = {1};
  static const kiln_tensor_info Out[] = {{"y", KILN_DTYPE_FLOAT, 1, One}};
  static const kiln_partition_info Part[] = {{"cpu_0", "cpu", 1, tileFn}};
  kiln_model_info M = fake::modelInfo("tiles", nullptr, 0, Out, 1, Part);
  M.flags = KILN_MODEL_AMX_TILES;
  M.target_cpu = "sapphirerapids";
  unsigned A, B, C, D;
  bool Amx = __get_cpuid_count(7, 0, &A, &B, &C, &D) && (D & (1u << 24)) &&
             (D & (1u << 25));
  kiln_session *S = nullptr;
  kiln_status St = kiln_session_create(&M, &S);
  if (St != KILN_OK) {
    // Refused at creation, naming the model, its CPU and the reason: the
    // CPU's, or the OS's where the CPU has AMX.
    EXPECT_EQ(St, KILN_ERROR_PROVIDER);
    std::string Msg = kiln_last_error();
    EXPECT_NE(Msg.find("model \"tiles\" runs on AMX tiles (compiled for "
                       "sapphirerapids)"),
              std::string::npos)
        << Msg;
    EXPECT_NE(Msg.find(Amx ? "the OS refused the tile state"
                           : "the CPU has no AMX-INT8"),
              std::string::npos)
        << Msg;
    return;
  }
  EXPECT_TRUE(Amx);
  float Y = 0;
  kiln_tensor T{"y", KILN_DTYPE_FLOAT, 1, One, &Y, sizeof Y};
  ASSERT_EQ(kiln_session_run(S, nullptr, 0, &T, 1), KILN_OK)
      << kiln_session_error(S);
  EXPECT_EQ(Y, 1.0f);
  kiln_session_destroy(S);
}
#endif

TEST(Session, AbiMismatch) {
  kiln_model_info Info = *fake::addModel();
  Info.abi_version = KILN_ABI_VERSION + 1;
  kiln_session *S = nullptr;
  EXPECT_EQ(kiln_session_create(&Info, &S), KILN_ERROR_ABI_MISMATCH);
  EXPECT_EQ(S, nullptr);
  std::string Msg = kiln_last_error();
  EXPECT_NE(Msg.find("ABI version " + std::to_string(KILN_ABI_VERSION + 1)),
            std::string::npos)
      << Msg;
  EXPECT_NE(Msg.find("supports version " + std::to_string(KILN_ABI_VERSION)),
            std::string::npos)
      << Msg;
}

TEST(Session, RejectsMalformedModels) {
  kiln_session *S = nullptr;
  kiln_model_info Info = *fake::addModel();
  Info.inputs = nullptr;
  EXPECT_EQ(kiln_session_create(&Info, &S), KILN_ERROR_INVALID_ARGUMENT);

  kiln_partition_info NoFn = {"p", "cpu", 0, nullptr};
  Info = *fake::addModel();
  Info.partitions = &NoFn;
  EXPECT_EQ(kiln_session_create(&Info, &S), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kiln_last_error()).find("entry point"),
            std::string::npos);

  Info = *fake::addModel();
  Info.arena_size = 16;
  Info.arena_alignment = 48;
  EXPECT_EQ(kiln_session_create(&Info, &S), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kiln_last_error()).find("power of two"),
            std::string::npos);
  EXPECT_EQ(S, nullptr);
}

TEST_F(AddFixture, RunComputesSum) {
  ASSERT_EQ(run(), KILN_OK) << error();
  EXPECT_EQ(Y, (std::vector<float>{11, 22, 33, 44, 55, 66}));
}

TEST_F(AddFixture, PositionalTensors) {
  In[0].name = In[1].name = Out[0].name = nullptr;
  ASSERT_EQ(run(), KILN_OK) << error();
  EXPECT_EQ(Y[5], 66);
}

TEST_F(AddFixture, ReorderedNamedInputs) {
  std::swap(In[0], In[1]); // b first, a second: names decide
  B[0] = 100;
  ASSERT_EQ(run(), KILN_OK) << error();
  EXPECT_EQ(Y[0], 101);
}

TEST_F(AddFixture, UnknownInputName) {
  In[1].name = "bogus";
  EXPECT_EQ(run(), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(error().find("unknown input \"bogus\""), std::string::npos)
      << error();
  EXPECT_NE(error().find("\"a\", \"b\""), std::string::npos) << error();
  EXPECT_EQ(error(), kiln_last_error());
}

TEST_F(AddFixture, DuplicateInput) {
  In[1].name = "a";
  EXPECT_EQ(run(), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(error(), "input \"a\" is given twice");
}

TEST_F(AddFixture, WrongInputCount) {
  EXPECT_EQ(kiln_session_run(S, In.data(), 1, Out.data(), 1),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(error(), "expected 2 inputs, got 1");
  EXPECT_EQ(kiln_session_run(S, In.data(), 2, Out.data(), 0),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(error(), "expected 1 outputs, got 0");
  EXPECT_EQ(kiln_session_run(S, nullptr, 2, Out.data(), 1),
            KILN_ERROR_INVALID_ARGUMENT);
}

TEST_F(AddFixture, WrongDtype) {
  In[0].dtype = KILN_DTYPE_INT64;
  EXPECT_EQ(run(), KILN_ERROR_DTYPE_MISMATCH);
  EXPECT_EQ(error(), "input \"a\": expected dtype float32, got int64");
}

TEST_F(AddFixture, WrongShape) {
  const int64_t Bad[2] = {2, 2};
  In[1].shape = Bad;
  EXPECT_EQ(run(), KILN_ERROR_SHAPE_MISMATCH);
  EXPECT_EQ(error(), "input \"b\": expected shape [2,3], got [2,2]");

  const int64_t Flat[1] = {6};
  In[1].shape = Flat;
  In[1].rank = 1;
  EXPECT_EQ(run(), KILN_ERROR_SHAPE_MISMATCH);
  EXPECT_EQ(error(), "input \"b\": expected shape [2,3], got [6]");
}

TEST_F(AddFixture, NullDataAndShortBuffers) {
  In[0].data = nullptr;
  EXPECT_EQ(run(), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(error(), "input \"a\": data is NULL");
  In[0].data = A.data();

  In[0].size_bytes = 20;
  EXPECT_EQ(run(), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(error(), "input \"a\": buffer holds 20 bytes, needs 24");
  In[0].size_bytes = 24;

  In[0].shape = nullptr;
  EXPECT_EQ(run(), KILN_ERROR_INVALID_ARGUMENT);
}

TEST_F(AddFixture, OutputChecks) {
  // An output without a shape is checked by size only.
  Out[0].rank = 0;
  Out[0].shape = nullptr;
  ASSERT_EQ(run(), KILN_OK) << error();

  const int64_t Bad[2] = {3, 2};
  Out[0].rank = 2;
  Out[0].shape = Bad;
  EXPECT_EQ(run(), KILN_ERROR_SHAPE_MISMATCH);
  EXPECT_EQ(error(), "output \"y\": expected shape [2,3], got [3,2]");

  Out[0].shape = Shape23;
  Out[0].name = "z";
  EXPECT_EQ(run(), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(error().find("unknown output \"z\""), std::string::npos);

  Out[0].name = "y";
  Out[0].size_bytes = 4;
  EXPECT_EQ(run(), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(error(), "output \"y\": buffer holds 4 bytes, needs 24");
}

TEST_F(AddFixture, FailedRunDoesNotTouchOutputs) {
  In[0].dtype = KILN_DTYPE_DOUBLE;
  EXPECT_NE(run(), KILN_OK);
  EXPECT_EQ(Y[0], -1);
  // The session message survives a later success; the session still works.
  In[0].dtype = KILN_DTYPE_FLOAT;
  EXPECT_EQ(run(), KILN_OK);
  EXPECT_NE(error().find("float64"), std::string::npos);
}

TEST(Session, NullSession) {
  EXPECT_EQ(kiln_session_run(nullptr, nullptr, 0, nullptr, 0),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "session is NULL");
  EXPECT_EQ(kiln_session_model(nullptr), nullptr);
}

TEST(Session, TwoPartitionsShareTheArena) {
  kiln_session *S = nullptr;
  ASSERT_EQ(kiln_session_create(fake::twoPartitionModel(), &S), KILN_OK);
  std::vector<float> A{1, 2, 3, 4, 5, 6}, B(6, 0.5f), Y(6);
  int32_t ArenaOk = 0;
  const int64_t One[1] = {1};
  kiln_tensor In[] = {floatTensor("a", A, Shape23, 2),
                      floatTensor("b", B, Shape23, 2)};
  kiln_tensor Out[] = {floatTensor("sum", Y, Shape23, 2),
                       {"arena_ok", KILN_DTYPE_INT32, 1, One, &ArenaOk, 4}};
  ASSERT_EQ(kiln_session_run(S, In, 2, Out, 2), KILN_OK)
      << kiln_session_error(S);
  EXPECT_EQ(Y, (std::vector<float>{2.5, 4.5, 6.5, 8.5, 10.5, 12.5}));
  EXPECT_EQ(ArenaOk, 1);
  kiln_session_destroy(S);
}

TEST(Session, LastErrorIsPerThread) {
  kiln_model_info Info = *fake::addModel();
  Info.abi_version = 99;
  kiln_session *S = nullptr;
  EXPECT_NE(kiln_session_create(&Info, &S), KILN_OK);
  std::string Other;
  std::thread([&] { Other = kiln_last_error(); }).join();
  EXPECT_EQ(Other, "");
  EXPECT_NE(std::string(kiln_last_error()), "");
}

// Models of older kilns that ran their batch once per sample are refused
// with the way out, not run wrong.
TEST(Session, PerSampleBatchModelsAreRefused) {
  kiln_session *S = nullptr;
  EXPECT_EQ(kiln_session_create(fake::batchModel(), &S), KILN_ERROR_ABI_MISMATCH);
  EXPECT_EQ(S, nullptr);
  EXPECT_STREQ(kiln_last_error(),
               "model \"scale_batch\" runs its batch once per sample, which this "
               "runtime no longer does: recompile it (a symbolic batch now compiles "
               "with run-time sizes)");
}

TEST(Strings, StatusAndDtypes) {
  EXPECT_STREQ(kiln_status_string(KILN_OK), "ok");
  EXPECT_STREQ(kiln_status_string(KILN_ERROR_SHAPE_MISMATCH), "shape mismatch");
  EXPECT_STREQ(kiln_status_string(static_cast<kiln_status>(42)),
               "unknown status");
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_FLOAT), 4u);
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_INT64), 8u);
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_BOOL), 1u);
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_FLOAT16), 2u);
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_STRING), sizeof(const char *));
  EXPECT_EQ(kiln_dtype_size(1000), 0u);
  EXPECT_STREQ(kiln_dtype_name(KILN_DTYPE_FLOAT), "float32");
  EXPECT_STREQ(kiln_dtype_name(KILN_DTYPE_DOUBLE), "float64");
  EXPECT_STREQ(kiln_dtype_name(KILN_DTYPE_INT64), "int64");
  EXPECT_STREQ(kiln_dtype_name(KILN_DTYPE_BOOL), "bool");
  EXPECT_STREQ(kiln_dtype_name(1000), "unknown");
}

} // namespace
