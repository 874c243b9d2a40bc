// Concurrent sessions of one model: each owns its arena, so results must
// stay exact under contention.
#include "FakeModels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

using fake::floatTensor;
using fake::Shape23;

namespace {

/// Runs the arena-using model Iterations times with inputs unique to this
/// thread and iteration; returns the number of wrong results.
int hammer(kiln_session *S, int Thread, int Iterations) {
  std::vector<float> A(6), B(6), Y(6);
  int32_t ArenaOk = 0;
  const int64_t One[1] = {1};
  kiln_tensor In[] = {floatTensor("a", A, Shape23, 2),
                      floatTensor("b", B, Shape23, 2)};
  kiln_tensor Out[] = {floatTensor("sum", Y, Shape23, 2),
                       {"arena_ok", KILN_DTYPE_INT32, 1, One, &ArenaOk, 4}};
  int Wrong = 0;
  for (int It = 0; It < Iterations; ++It) {
    for (int I = 0; I < 6; ++I) {
      A[I] = static_cast<float>(Thread * 1000 + I);
      B[I] = static_cast<float>(It);
    }
    if (kiln_session_run(S, In, 2, Out, 2) != KILN_OK) {
      ++Wrong;
      continue;
    }
    for (int I = 0; I < 6; ++I)
      Wrong += Y[I] != 2 * A[I] + B[I];
    Wrong += ArenaOk != 1;
  }
  return Wrong;
}

TEST(Threads, SessionPerThread) {
  constexpr int NumThreads = 8, Iterations = 1000;
  std::atomic<int> Wrong{0}, Failed{0};
  std::vector<std::thread> Threads;
  for (int T = 0; T < NumThreads; ++T)
    Threads.emplace_back([&, T] {
      kiln_session *S = nullptr;
      if (kiln_session_create(fake::twoPartitionModel(), &S) != KILN_OK) {
        ++Failed;
        return;
      }
      Wrong += hammer(S, T, Iterations);
      kiln_session_destroy(S);
    });
  for (std::thread &T : Threads)
    T.join();
  EXPECT_EQ(Failed.load(), 0);
  EXPECT_EQ(Wrong.load(), 0);
}

TEST(Threads, SharedTraceCollectsEveryEvent) {
  constexpr int NumThreads = 4, Iterations = 200;
  kiln_trace *Trace = kiln_trace_create();
  std::atomic<int> Wrong{0};
  std::vector<std::thread> Threads;
  for (int T = 0; T < NumThreads; ++T)
    Threads.emplace_back([&, T] {
      kiln_session *S = nullptr;
      if (kiln_session_create(fake::twoPartitionModel(), &S) != KILN_OK ||
          kiln_session_set_profiler(S, kiln_trace_callback, Trace) != KILN_OK) {
        ++Wrong;
        return;
      }
      Wrong += hammer(S, T, Iterations);
      kiln_session_destroy(S);
    });
  for (std::thread &T : Threads)
    T.join();
  EXPECT_EQ(Wrong.load(), 0);

  // Count events by reading the trace back: one line per event.
  std::string Path = ::testing::TempDir() + "kiln_threads_trace.json";
  ASSERT_EQ(kiln_trace_write(Trace, Path.c_str()), KILN_OK);
  kiln_trace_destroy(Trace);
  FILE *F = std::fopen(Path.c_str(), "r");
  ASSERT_NE(F, nullptr);
  int Lines = 0, MaxTid = -1;
  char Buf[512];
  while (std::fgets(Buf, sizeof(Buf), F)) {
    const char *Tid = std::strstr(Buf, "\"tid\":");
    if (!Tid)
      continue;
    ++Lines;
    MaxTid = std::max(MaxTid, std::atoi(Tid + 6));
  }
  std::fclose(F);
  std::remove(Path.c_str());
  EXPECT_EQ(Lines, NumThreads * Iterations * 3); // run + 2 partitions
  EXPECT_EQ(MaxTid, NumThreads - 1);             // small thread numbers
}

} // namespace
