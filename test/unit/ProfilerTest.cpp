// Profiler callbacks and the Chrome trace writer.
#include "FakeModels.h"
#include "MiniJson.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using fake::floatTensor;
using fake::Shape23;

namespace {

struct Recorded {
  std::string Name, Provider, OpName;
  int32_t Kind;
  int32_t IsEnd;
  uint64_t Start, Duration;
};

void record(const kiln_profile_event *E, int32_t IsEnd, void *User) {
  static_cast<std::vector<Recorded> *>(User)->push_back(
      {E->name, E->provider, E->op_name, E->kind, IsEnd, E->start_ns,
       E->duration_ns});
}

/// Runs the two-partition model N times on S.
void runTwo(kiln_session *S, int N) {
  std::vector<float> A(6, 1), B(6, 2), Y(6);
  int32_t ArenaOk;
  const int64_t One[1] = {1};
  kiln_tensor In[] = {floatTensor("a", A, Shape23, 2),
                      floatTensor("b", B, Shape23, 2)};
  kiln_tensor Out[] = {floatTensor("sum", Y, Shape23, 2),
                       {nullptr, KILN_DTYPE_INT32, 1, One, &ArenaOk, 4}};
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(kiln_session_run(S, In, 2, Out, 2), KILN_OK)
        << kiln_session_error(S);
}

std::string tempPath(const char *Stem) {
  return ::testing::TempDir() + Stem + std::to_string(getpid()) + ".json";
}

/// The JSON kiln_trace_write writes for `T` (through a temporary file).
minijson::Value writtenTrace(const kiln_trace *T, const char *Stem) {
  std::string Path = tempPath(Stem);
  EXPECT_EQ(kiln_trace_write(T, Path.c_str()), KILN_OK) << kiln_last_error();
  std::ifstream F(Path);
  std::stringstream SS;
  SS << F.rdbuf();
  std::remove(Path.c_str());
  minijson::Value Root;
  EXPECT_TRUE(minijson::parse(SS.str(), Root)) << SS.str();
  return Root;
}

TEST(Profiler, EventsInOrder) {
  kiln_session *S = nullptr;
  ASSERT_EQ(kiln_session_create(fake::twoPartitionModel(), &S), KILN_OK);
  std::vector<Recorded> Events;
  ASSERT_EQ(kiln_session_set_profiler(S, record, &Events), KILN_OK);
  runTwo(S, 1);
  ASSERT_EQ(Events.size(), 6u);
  const char *Names[] = {"model_run",  "scale",      "scale",
                         "accumulate", "accumulate", "model_run"};
  const int32_t Ends[] = {0, 0, 1, 0, 1, 1};
  for (size_t I = 0; I < 6; ++I) {
    EXPECT_EQ(Events[I].Name, Names[I]) << I;
    EXPECT_EQ(Events[I].IsEnd, Ends[I]) << I;
    if (!Ends[I])
      EXPECT_EQ(Events[I].Duration, 0u) << I;
  }
  EXPECT_EQ(Events[0].Kind, KILN_EVENT_RUN);
  EXPECT_EQ(Events[0].OpName, "two");
  EXPECT_EQ(Events[1].Kind, KILN_EVENT_PARTITION);
  EXPECT_EQ(Events[1].Provider, "cpu");
  EXPECT_EQ(Events[1].OpName, "partition");
  EXPECT_EQ(Events[3].Provider, "fake_accel");
  // An end event repeats its begin's start; partitions nest in the run.
  EXPECT_EQ(Events[2].Start, Events[1].Start);
  EXPECT_EQ(Events[5].Start, Events[0].Start);
  EXPECT_GE(Events[1].Start, Events[0].Start);
  EXPECT_GE(Events[3].Start, Events[2].Start + Events[2].Duration);
  EXPECT_GE(Events[5].Start + Events[5].Duration,
            Events[4].Start + Events[4].Duration);

  // A NULL callback turns profiling off.
  ASSERT_EQ(kiln_session_set_profiler(S, nullptr, nullptr), KILN_OK);
  runTwo(S, 1);
  EXPECT_EQ(Events.size(), 6u);
  kiln_session_destroy(S);
  EXPECT_EQ(kiln_session_set_profiler(nullptr, record, &Events),
            KILN_ERROR_INVALID_ARGUMENT);
}

TEST(Trace, WritesChromeTraceJson) {
  kiln_session *S = nullptr;
  ASSERT_EQ(kiln_session_create(fake::twoPartitionModel(), &S), KILN_OK);
  kiln_trace *T = kiln_trace_create();
  ASSERT_NE(T, nullptr);
  ASSERT_EQ(kiln_session_set_profiler(S, kiln_trace_callback, T), KILN_OK);
  runTwo(S, 2);
  // Names that need escaping survive the round trip.
  kiln_profile_event Odd = {"copy \"x\"\\\n\x01",
                            "fake_accel",
                            "Memcpy",
                            KILN_EVENT_TRANSFER,
                            5,
                            7000,
                            1234,
                            nullptr};
  kiln_trace_callback(&Odd, 0, T); // begin events are not recorded
  kiln_trace_callback(&Odd, 1, T);
  // A compiled node's event: its args are spliced in as they are.
  kiln_profile_event Node = {"/fc1/Gemm", "cpu", "Gemm", KILN_EVENT_NODE, 9, 3000, 0,
                             "\"output_size\":\"2048\",\"fused_nodes\":[\"/fc1/Gemm\"]"};
  kiln_trace_callback(&Node, 1, T);
  minijson::Value Root = writtenTrace(T, "kiln_trace_");
  kiln_session_destroy(S);
  kiln_trace_destroy(T);
  ASSERT_EQ(Root.K, minijson::Value::Array);
  ASSERT_EQ(Root.Items.size(), 8u);

  std::vector<std::string> Names;
  for (const minijson::Value &E : Root.Items) {
    ASSERT_EQ(E.K, minijson::Value::Object);
    for (const char *Key :
         {"cat", "name", "ph", "ts", "dur", "pid", "tid", "args"})
      ASSERT_NE(E.get(Key), nullptr) << Key;
    EXPECT_EQ(E.get("ph")->Str, "X");
    EXPECT_EQ(E.get("pid")->Num, getpid());
    // Host events on the one host thread, the device copy on the first
    // device track.
    EXPECT_EQ(E.get("tid")->Num, E.get("cat")->Str == "Kernel" ? -1 : 0);
    EXPECT_GE(E.get("ts")->Num, 0);
    if (E.get("name")->Str != "model_run")
      ASSERT_NE(E.get("args")->get("provider"), nullptr);
    Names.push_back(E.get("name")->Str);
  }
  const std::vector<std::string> Expected = {
      "scale",      "accumulate", "model_run",         "scale",
      "accumulate", "model_run",  "copy \"x\"\\\n\x01", "/fc1/Gemm_kernel_time"};
  EXPECT_EQ(Names, Expected);
  // ONNX Runtime's schema: runs and partitions are "Session" events,
  // providers are named as ONNX Runtime names them.
  EXPECT_EQ(Root.Items[2].get("cat")->Str, "Session");
  EXPECT_EQ(Root.Items[2].get("args")->get("model_name")->Str, "two");
  EXPECT_EQ(Root.Items[0].get("cat")->Str, "Session");
  EXPECT_EQ(Root.Items[1].get("args")->get("provider")->Str, "FAKE_ACCELExecutionProvider");
  const minijson::Value &Copy = Root.Items[6];
  EXPECT_EQ(Copy.get("cat")->Str, "Kernel");
  EXPECT_EQ(Copy.get("args")->get("op_name")->Str, "Memcpy");
  EXPECT_EQ(Copy.get("dur")->Num, 7.0); // microseconds
  ASSERT_NE(Copy.get("args")->get("bytes"), nullptr);
  EXPECT_EQ(Copy.get("args")->get("bytes")->Num, 1234);
  const minijson::Value &N = Root.Items[7];
  EXPECT_EQ(N.get("cat")->Str, "Node");
  EXPECT_EQ(N.get("args")->get("op_name")->Str, "Gemm");
  EXPECT_EQ(N.get("args")->get("provider")->Str, "CPUExecutionProvider");
  EXPECT_EQ(N.get("args")->get("output_size")->Str, "2048");
  ASSERT_NE(N.get("args")->get("fused_nodes"), nullptr);
}

TEST(Trace, EmptyTraceAndBadPath) {
  kiln_trace *T = kiln_trace_create();
  minijson::Value Root = writtenTrace(T, "kiln_empty_");
  EXPECT_EQ(Root.K, minijson::Value::Array);
  EXPECT_TRUE(Root.Items.empty());

  EXPECT_EQ(kiln_trace_write(T, "/nonexistent-dir/x.json"),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kiln_last_error()).find("/nonexistent-dir/x.json"),
            std::string::npos);
  EXPECT_EQ(kiln_trace_write(nullptr, tempPath("kiln_empty_").c_str()),
            KILN_ERROR_INVALID_ARGUMENT);
  kiln_trace_destroy(T);
}

// Device work gets tracks of its own, one per provider and thread that
// reports it (two sessions' streams may overlap); host events stay on the
// host threads' tids.
TEST(Trace, DeviceWorkOnTracksOfItsOwn) {
  kiln_trace *T = kiln_trace_create();
  auto report = [T](const char *Provider, int32_t Kind) {
    kiln_profile_event E = {"k", Provider, "MatMul", Kind, 10, 5, 0, nullptr};
    kiln_trace_callback(&E, 1, T);
  };
  report("accel", KILN_EVENT_KERNEL);
  report("accel", KILN_EVENT_TRANSFER);
  report("other", KILN_EVENT_KERNEL);
  report("cpu", KILN_EVENT_PARTITION);
  std::thread([&] { report("accel", KILN_EVENT_KERNEL); }).join();
  minijson::Value Root = writtenTrace(T, "kiln_tracks_");
  kiln_trace_destroy(T);
  std::vector<double> Tids;
  for (const minijson::Value &E : Root.Items)
    Tids.push_back(E.get("tid")->Num);
  EXPECT_EQ(Tids, (std::vector<double>{-1, -1, -2, 0, -3}));
}

} // namespace
