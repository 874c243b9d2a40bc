// The runtime's thread pool: kilnParallelFor splits a loop's iterations into
// contiguous ranges, a few per thread, claimed in turn by at most the run's
// thread count, each iteration run exactly once; one thread (or a call from
// inside a parallel loop) runs on the caller alone.
#include "../../runtime/lib/ThreadPool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sched.h>

namespace {

struct Record {
  std::mutex M;
  std::vector<int> Hits;
  std::set<std::thread::id> Threads;
  std::vector<std::pair<int64_t, int64_t>> Ranges;
};

// Notes the range and its thread; the caller holds R.M.
void noteRange(Record &R, int64_t Lo, int64_t Hi) {
  R.Ranges.push_back({Lo, Hi});
  R.Threads.insert(std::this_thread::get_id());
  for (int64_t I = Lo; I < Hi; ++I)
    ++R.Hits[I];
}

void record(void *Ctx, int64_t Lo, int64_t Hi) {
  auto *R = static_cast<Record *>(Ctx);
  std::lock_guard<std::mutex> L(R->M);
  noteRange(*R, Lo, Hi);
  // Long enough that the other threads take their ranges.
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

struct ThreadsScope {
  kiln::rt::RunThreadsState Previous;
  explicit ThreadsScope(int32_t N, kiln::rt::Pool *P = nullptr)
      : Previous(kiln::rt::setRunThreads({N, P})) {}
  ~ThreadsScope() { kiln::rt::setRunThreads(Previous); }
};

} // namespace

TEST(ThreadPool, EveryIterationOnceInContiguousRanges) {
  // (2 again after 8: the pool has more workers than the loop may use.)
  for (int32_t Threads : {1, 2, 3, 8, 2}) {
    for (int64_t N : {1, 2, 5, 16, 1000}) {
      ThreadsScope Scope(Threads);
      Record R;
      R.Hits.assign(N, 0);
      kilnParallelFor(record, &R, N, 1);
      for (int64_t I = 0; I < N; ++I)
        EXPECT_EQ(R.Hits[I], 1) << "iteration " << I << " of " << N << " at " << Threads;
      // Four ranges per thread, never more ranges than iterations (a
      // multiple of the threads where there are more), and never more
      // threads than the run has.
      int64_t Ranges = Threads == 1 ? 1 : std::min<int64_t>(4 * Threads, N);
      if (Ranges > Threads)
        Ranges -= Ranges % Threads;
      EXPECT_EQ(R.Ranges.size(), static_cast<size_t>(Ranges));
      EXPECT_LE(R.Threads.size(), R.Ranges.size());
      EXPECT_LE(R.Threads.size(), static_cast<size_t>(Threads));
    }
  }
}

TEST(ThreadPool, OneThreadRunsOnTheCaller) {
  ThreadsScope Scope(1);
  Record R;
  R.Hits.assign(10, 0);
  kilnParallelFor(record, &R, 10, 1);
  ASSERT_EQ(R.Threads.size(), 1u);
  EXPECT_EQ(*R.Threads.begin(), std::this_thread::get_id());
  EXPECT_EQ(R.Ranges.front(), (std::pair<int64_t, int64_t>{0, 10}));
}

/// Each range waits (10 s at most) until both have started: the caller
/// cannot take the second range while it runs the first, so a working pool
/// runs them on two threads however loaded the machine is.
void meet(void *Ctx, int64_t Lo, int64_t Hi) {
  auto *R = static_cast<std::pair<Record, std::atomic<int>> *>(Ctx);
  R->second.fetch_add(1);
  auto Until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (R->second.load() < 2 && std::chrono::steady_clock::now() < Until)
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  record(&R->first, Lo, Hi);
}

TEST(ThreadPool, UsesOtherThreads) {
  ThreadsScope Scope(2);
  std::pair<Record, std::atomic<int>> Both;
  Record &R = Both.first;
  Both.second = 0;
  R.Hits.assign(2, 0);
  kilnParallelFor(meet, &Both, 2, 1);
  EXPECT_EQ(R.Threads.size(), 2u) << "two ranges ran on one thread";
  EXPECT_GE(kiln::rt::poolWorkers(), 1);
}

namespace {
struct HeldBack {
  std::thread::id Caller = std::this_thread::get_id();
  std::atomic<int> CallerRanges{0}, Waited{0};
  Record R;
};

/// A range on a worker waits (10 s at most) until the caller has run all
/// the others: as when the VM holds that worker back.
void holdBackWorker(void *Ctx, int64_t Lo, int64_t Hi) {
  auto *H = static_cast<HeldBack *>(Ctx);
  if (std::this_thread::get_id() == H->Caller) {
    ++H->CallerRanges;
  } else {
    auto Until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (H->CallerRanges.load() < 7 &&
           std::chrono::steady_clock::now() < Until)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    H->Waited += H->CallerRanges.load() == 7;
  }
  record(&H->R, Lo, Hi);
}
} // namespace

TEST(ThreadPool, HeldBackThreadLeavesItsRangesToTheOthers) {
  ThreadsScope Scope(2);
  HeldBack H;
  H.R.Hits.assign(8, 0);
  kilnParallelFor(holdBackWorker, &H, 8, 1); // 8 ranges
  for (int I = 0; I < 8; ++I)
    EXPECT_EQ(H.R.Hits[I], 1);
  // The worker ran one range at most, and only after the caller ran 7.
  EXPECT_GE(H.CallerRanges.load(), 7);
  EXPECT_EQ(H.Waited.load() + H.CallerRanges.load(), 8);
}

namespace {
/// An outer loop whose every range runs an inner loop of 8 iterations,
/// counting the inner loops that split (more than one range).
struct Outer {
  std::mutex M;
  std::vector<std::pair<int64_t, int64_t>> Ranges;
  int InnerSplit = 0;
};

void outerBody(void *Ctx, int64_t Lo, int64_t Hi) {
  auto *O = static_cast<Outer *>(Ctx);
  Record Inner;
  Inner.Hits.assign(8, 0);
  kilnParallelFor(record, &Inner, 8, 1);
  std::lock_guard<std::mutex> L(O->M);
  O->Ranges.push_back({Lo, Hi});
  O->InnerSplit += Inner.Ranges.size() > 1;
}
} // namespace

TEST(ThreadPool, EachThreadsShareEndsInShortRanges) {
  // Whoever runs them, each thread's share is cut 4:3:2:1, so the range a
  // thread finishes last is a tenth of its share, not a quarter.
  ThreadsScope Scope(2);
  Record R;
  R.Hits.assign(1000, 0);
  kilnParallelFor(record, &R, 1000, 1);
  std::sort(R.Ranges.begin(), R.Ranges.end());
  std::vector<std::pair<int64_t, int64_t>> Expected = {
      {0, 200},   {200, 350}, {350, 450}, {450, 500},
      {500, 700}, {700, 850}, {850, 950}, {950, 1000}};
  EXPECT_EQ(R.Ranges, Expected);
}

TEST(ThreadPool, GrainBoundsTheRanges) {
  ThreadsScope Scope(4);
  Record R;
  R.Hits.assign(10, 0);
  kilnParallelFor(record, &R, 10, 4); // 2 ranges of at least 4
  EXPECT_EQ(R.Ranges.size(), 2u);
  Record S;
  S.Hits.assign(7, 0);
  kilnParallelFor(record, &S, 7, 4); // fewer than 2 x 4: on the caller
  ASSERT_EQ(S.Ranges.size(), 1u);
  EXPECT_EQ(*S.Threads.begin(), std::this_thread::get_id());
}

TEST(ThreadPool, FewRangesMakeWholeShares) {
  // 3 ranges of the grain on 2 threads would run 2:1: two halves instead.
  ThreadsScope Scope(2);
  Record R;
  R.Hits.assign(112, 0);
  kilnParallelFor(record, &R, 112, 37);
  ASSERT_EQ(R.Ranges.size(), 2u);
  std::sort(R.Ranges.begin(), R.Ranges.end());
  EXPECT_EQ(R.Ranges[0], (std::pair<int64_t, int64_t>{0, 56}));
  // 5 on 2 threads: 4.
  Record S;
  S.Hits.assign(50, 0);
  kilnParallelFor(record, &S, 50, 10);
  EXPECT_EQ(S.Ranges.size(), 4u);
}

TEST(ThreadPool, EvenGrainSplitsOnlyEqualShares) {
  ThreadsScope Scope(2);
  // 4 blocks on 2 threads: the outer loop splits, its inner loops run
  // inline.
  Outer Four;
  kilnParallelFor(outerBody, &Four, 4, -1);
  EXPECT_EQ(Four.Ranges.size(), 4u);
  EXPECT_EQ(Four.InnerSplit, 0);
  // 3 blocks would leave a thread idle a third of the time: the outer loop
  // runs whole on the caller and its inner loop splits.
  Outer Three;
  kilnParallelFor(outerBody, &Three, 3, -1);
  ASSERT_EQ(Three.Ranges.size(), 1u);
  EXPECT_EQ(Three.Ranges.front(), (std::pair<int64_t, int64_t>{0, 3}));
  EXPECT_EQ(Three.InnerSplit, 1);
}

TEST(ThreadPool, NestedLoopsRunInline) {
  // A parallel loop inside a task runs on that thread alone (one range).
  ThreadsScope Scope(2);
  Outer O;
  kilnParallelFor(outerBody, &O, 2, 1);
  EXPECT_EQ(O.Ranges.size(), 2u);
  EXPECT_EQ(O.InnerSplit, 0);
}

TEST(ThreadPool, ManyCallersShareThePool) {
  // Four callers at two threads each, 200 loops each: every iteration once.
  std::atomic<int> Wrong{0};
  std::vector<std::thread> Callers;
  for (int C = 0; C < 4; ++C)
    Callers.emplace_back([&] {
      ThreadsScope Scope(2);
      for (int It = 0; It < 200; ++It) {
        Record R;
        R.Hits.assign(7, 0);
        kilnParallelFor(
            [](void *Ctx, int64_t Lo, int64_t Hi) {
              auto *Rec = static_cast<Record *>(Ctx);
              std::lock_guard<std::mutex> L(Rec->M);
              for (int64_t I = Lo; I < Hi; ++I)
                ++Rec->Hits[I];
            },
            &R, 7, 1);
        for (int H : R.Hits)
          Wrong += H != 1;
      }
    });
  for (std::thread &T : Callers)
    T.join();
  EXPECT_EQ(Wrong.load(), 0);
}

TEST(ThreadPool, ScratchIsPerThreadAndKept) {
  void *A = kilnThreadScratch(0, 100);
  void *B = kilnThreadScratch(1, 100);
  EXPECT_NE(A, B);
  EXPECT_EQ(kilnThreadScratch(0, 64), A) << "a smaller request reuses the buffer";
  EXPECT_EQ(reinterpret_cast<uintptr_t>(A) % 64, 0u);
  void *Other = nullptr;
  std::thread([&] { Other = kilnThreadScratch(0, 100); }).join();
  EXPECT_NE(Other, A);
}

TEST(ThreadPool, DefaultCountFromEnvironment) {
  const char *Saved = std::getenv("KILN_NUM_THREADS");
  std::string Keep = Saved ? Saved : "";
  setenv("KILN_NUM_THREADS", "3", 1);
  EXPECT_EQ(kiln::rt::defaultThreadCount(), 3);
  EXPECT_EQ(kiln::rt::badThreadCountEnv(), "");
  setenv("KILN_NUM_THREADS", "zero", 1);
  EXPECT_EQ(kiln::rt::defaultThreadCount(), kiln::rt::physicalCores());
  // A session that would take its count from it says why it cannot.
  EXPECT_NE(kiln::rt::badThreadCountEnv().find("KILN_NUM_THREADS is \"zero\""),
            std::string::npos);
  if (Saved)
    setenv("KILN_NUM_THREADS", Keep.c_str(), 1);
  else
    unsetenv("KILN_NUM_THREADS");
  EXPECT_GE(kiln::rt::physicalCores(), 1);
}

namespace {
/// An app's thread hooks: std::threads it owns, recorded by id.
struct AppThreads {
  std::mutex M;
  std::vector<std::thread *> Live;
  std::set<std::thread::id> Ids;
  int Created = 0, Joined = 0, FailAfter = 1 << 30;

  static void *create(void *User, void (*Worker)(void *), void *Arg) {
    auto *A = static_cast<AppThreads *>(User);
    std::lock_guard<std::mutex> L(A->M);
    if (A->Created == A->FailAfter)
      return nullptr;
    ++A->Created;
    auto *T = new std::thread(Worker, Arg);
    A->Ids.insert(T->get_id());
    return T;
  }
  static void join(void *User, void *Handle) {
    auto *A = static_cast<AppThreads *>(User);
    auto *T = static_cast<std::thread *>(Handle);
    T->join();
    delete T;
    std::lock_guard<std::mutex> L(A->M);
    ++A->Joined;
  }
};
} // namespace

// Records like `record`, then waits (up to 10 s) until three threads have
// arrived: a thread waiting here cannot take a second range, so under load
// (ctest -j on 2 cores, a worker slow to wake) the caller does not take a
// late worker's range, as it may in `record`.
static void recordThree(void *Ctx, int64_t Lo, int64_t Hi) {
  auto *R = static_cast<Record *>(Ctx);
  {
    std::lock_guard<std::mutex> L(R->M);
    noteRange(*R, Lo, Hi);
  }
  auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < Deadline) {
    {
      std::lock_guard<std::mutex> L(R->M);
      if (R->Threads.size() >= 3)
        return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

TEST(ThreadPool, AppThreadHooksRunTheRangesAndAreJoined) {
  AppThreads App;
  {
    std::string Error;
    auto P = kiln::rt::createPool(
        2, {AppThreads::create, AppThreads::join, &App}, Error);
    ASSERT_TRUE(P) << Error;
    EXPECT_EQ(App.Created, 2);
    ThreadsScope Scope(3, P.get());
    Record R;
    R.Hits.assign(3, 0);
    kilnParallelFor(recordThree, &R, 3, 1);
    for (int H : R.Hits)
      EXPECT_EQ(H, 1);
    // The ranges ran on the caller and the app's threads only.
    for (std::thread::id Id : R.Threads)
      EXPECT_TRUE(Id == std::this_thread::get_id() || App.Ids.count(Id));
    EXPECT_EQ(R.Threads.size(), 3u);
  }
  EXPECT_EQ(App.Joined, 2) << "destroying the pool joins its threads";
}

TEST(ThreadPool, AppThreadHookFailureJoinsTheStarted) {
  AppThreads App;
  App.FailAfter = 1;
  std::string Error;
  auto P = kiln::rt::createPool(3, {AppThreads::create, AppThreads::join, &App},
                                Error);
  EXPECT_FALSE(P);
  EXPECT_NE(Error.find("create_thread returned NULL for worker 2 of 3"),
            std::string::npos)
      << Error;
  EXPECT_EQ(App.Joined, 1);
}

TEST(ThreadPool, WorkersPinnedToCoresOtherThanTheCreators) {
  using kiln::rt::CpuCore;
  // Two cores with two SMT siblings each (CPUs 0, 2 on core 0; 1, 3 on 1),
  // created on CPU 2: one worker, on core 1's CPU after it.
  std::vector<CpuCore> Smt{{0, {0, 0}}, {1, {0, 1}}, {2, {0, 0}}, {3, {0, 1}}};
  EXPECT_EQ(kiln::rt::workerCpus(Smt, 2, true), std::vector<int>{3});
  EXPECT_EQ(kiln::rt::workerCpus(Smt, 1, true), std::vector<int>{2});
  // Four cores over two packages, created on CPU 5: the other three, from
  // the next on (another process started on CPU 6 pins to 7 first).
  std::vector<CpuCore> Four{{4, {0, 0}}, {5, {0, 1}}, {6, {1, 0}}, {7, {1, 1}}};
  EXPECT_EQ(kiln::rt::workerCpus(Four, 5, true), (std::vector<int>{6, 7, 4}));
  EXPECT_EQ(kiln::rt::workerCpus(Four, 6, true), (std::vector<int>{7, 4, 5}));
  // A creator outside the mask, or unknown (-1): no pins.
  EXPECT_TRUE(kiln::rt::workerCpus(Four, 0, true).empty());
  EXPECT_TRUE(kiln::rt::workerCpus(Four, -1, true).empty());
  EXPECT_TRUE(kiln::rt::workerCpus(Four, 5, false).empty());
}

namespace {
struct Affinities {
  std::mutex M;
  std::thread::id Caller;
  std::atomic<bool> WorkerRan{false};
  // Per range: whether the caller ran it, and its thread's mask.
  std::vector<std::pair<bool, cpu_set_t>> Masks;
};

void recordAffinity(void *Ctx, int64_t Lo, int64_t) {
  auto *A = static_cast<Affinities *>(Ctx);
  cpu_set_t Set;
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(Set), &Set), 0);
  bool OnCaller = std::this_thread::get_id() == A->Caller;
  {
    std::lock_guard<std::mutex> L(A->M);
    A->Masks.push_back({OnCaller, Set});
  }
  if (!OnCaller) {
    A->WorkerRan = true;
    return;
  }
  // The caller's range waits for the worker to take the other (10 s at
  // most), instead of running both.
  auto Until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (Lo == 0 && !A->WorkerRan && std::chrono::steady_clock::now() < Until)
    std::this_thread::sleep_for(std::chrono::microseconds(100));
}

/// A 2-thread loop of two ranges run from a thread pinned to `CallerCpu`
/// (the pool's creator; -1: not pinned): each range's thread and mask.
std::vector<std::pair<bool, cpu_set_t>> loopAffinities(int CallerCpu) {
  Affinities A;
  std::thread T([&] {
    cpu_set_t One;
    CPU_ZERO(&One);
    CPU_SET(CallerCpu, &One);
    // (A worker starts with its creator's mask.)
    if (CallerCpu >= 0)
      ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof(One), &One), 0);
    A.Caller = std::this_thread::get_id();
    ThreadsScope Scope(2);
    kilnParallelFor(recordAffinity, &A, 2, 1);
  });
  T.join();
  return A.Masks;
}

/// The worker's mask in a 2-thread loop of two ranges run from a thread
/// pinned to `CallerCpu` (see loopAffinities), each range on its own thread.
void workerMask(int CallerCpu, cpu_set_t &Worker) {
  auto Masks = loopAffinities(CallerCpu);
  ASSERT_EQ(Masks.size(), 2u);
  ASSERT_NE(Masks[0].first, Masks[1].first) << "one thread ran both ranges";
  Worker = Masks[0].first ? Masks[1].second : Masks[0].second;
}

/// The first CPU of this process's mask, and the mask's CPU count.
std::pair<int, int> processCpus() {
  cpu_set_t Set;
  EXPECT_EQ(sched_getaffinity(0, sizeof(Set), &Set), 0);
  int First = 0;
  while (First < CPU_SETSIZE && !CPU_ISSET(First, &Set))
    ++First;
  return {First, CPU_COUNT(&Set)};
}
} // namespace

// (ctest runs each test in a process of its own: the shared pool starts
// in it, after the test has set $KILN_PIN_THREADS.)
TEST(ThreadPool, SharedPoolWorkerPinnedOffTheCreatorsCore) {
  if (kiln::rt::physicalCores() < 2)
    GTEST_SKIP() << "one core in this process's mask: nothing to pin to";
  ASSERT_EQ(kiln::rt::poolWorkers(), 0) << "run this test alone (ctest does)";
  unsetenv("KILN_PIN_THREADS");
  int Creator = processCpus().first;
  cpu_set_t Worker;
  ASSERT_NO_FATAL_FAILURE(workerMask(Creator, Worker));
  std::vector<int> Want = kiln::rt::workerCpus(kiln::rt::cpuCores(), Creator,
                                               /*Pin=*/true);
  ASSERT_FALSE(Want.empty());
  EXPECT_EQ(CPU_COUNT(&Worker), 1);
  EXPECT_TRUE(CPU_ISSET(Want[0], &Worker)) << "not on " << Want[0];
  EXPECT_FALSE(CPU_ISSET(Creator, &Worker));
}

// A caller the kernel later runs on the worker's CPU: the worker moves off
// it (else the two share that CPU and the worker runs only while the
// caller waits).
TEST(ThreadPool, SharedPoolWorkerMovesOffTheCallersNewCpu) {
  if (kiln::rt::physicalCores() < 2)
    GTEST_SKIP() << "one core in this process's mask: nothing to pin to";
  ASSERT_EQ(kiln::rt::poolWorkers(), 0) << "run this test alone (ctest does)";
  unsetenv("KILN_PIN_THREADS");
  int Creator = processCpus().first;
  std::vector<int> First = kiln::rt::workerCpus(kiln::rt::cpuCores(), Creator,
                                                /*Pin=*/true);
  ASSERT_FALSE(First.empty());
  ASSERT_EQ(loopAffinities(Creator).size(), 2u);
  // Now from a thread on the worker's CPU: the worker on the CPU the
  // caller left.
  cpu_set_t Worker;
  ASSERT_NO_FATAL_FAILURE(workerMask(First[0], Worker));
  EXPECT_EQ(CPU_COUNT(&Worker), 1);
  EXPECT_TRUE(CPU_ISSET(Creator, &Worker)) << "not on " << Creator;
  EXPECT_FALSE(CPU_ISSET(First[0], &Worker)) << "still on the caller's CPU";
}

TEST(ThreadPool, SharedPoolWorkerUnpinnedOnRequest) {
  if (kiln::rt::physicalCores() < 2)
    GTEST_SKIP() << "one core in this process's mask: pinning is moot";
  ASSERT_EQ(kiln::rt::poolWorkers(), 0) << "run this test alone (ctest does)";
  setenv("KILN_PIN_THREADS", "0", 1);
  int Count = processCpus().second;
  cpu_set_t Worker;
  workerMask(-1, Worker);
  unsetenv("KILN_PIN_THREADS");
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(CPU_COUNT(&Worker), Count);
}

TEST(ThreadPool, BadPinThreadsEnvironmentIsReported) {
  setenv("KILN_PIN_THREADS", "yes", 1);
  EXPECT_NE(kiln::rt::badPinThreadsEnv().find("KILN_PIN_THREADS is \"yes\""),
            std::string::npos);
  EXPECT_TRUE(kiln::rt::pinThreads());
  setenv("KILN_PIN_THREADS", "0", 1);
  EXPECT_EQ(kiln::rt::badPinThreadsEnv(), "");
  EXPECT_FALSE(kiln::rt::pinThreads());
  unsetenv("KILN_PIN_THREADS");
  EXPECT_EQ(kiln::rt::badPinThreadsEnv(), "");
  EXPECT_TRUE(kiln::rt::pinThreads());
}
