#include "ThreadPool.h"
#include "RuntimeSizes.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

namespace {

/// One parallel loop: Parts contiguous ranges of [0, N), run by at most
/// Threads threads (its caller and Threads - 1 workers). Each of the first
/// Slots threads to join owns an even share of the ranges and takes them
/// in order, so consecutive loops give a thread the same rows (still in
/// its cache); a thread out of its own takes the last range of the thread
/// with the most left. Ranges are taken without the pool's lock, each
/// slot's from a cache line of its own, and a thread counts the ranges it
/// ran once, when none is left: a claim moves no line between cores
/// unless it steals. (On a 2-vCPU Xeon VM, three shared counters per range
/// made a 0.45 us gate loop of an LSTM step take 3.4 us on two threads.)
struct Job {
  static constexpr int32_t kMaxSlots = 64;
  kiln_task_fn Fn;
  void *Context;
  int64_t N;
  int32_t Parts;
  int32_t Threads;
  int32_t Slots;
  int32_t Joined = 1; // guarded by the pool's mutex; the caller has slot 0
  std::atomic<bool> Queued{true}; // set under the pool's mutex
  alignas(64) std::atomic<int32_t> Done{0};
  // Each slot's unclaimed ranges [lo, hi), as hi << 32 | lo.
  struct alignas(64) SlotRanges {
    std::atomic<uint64_t> Left;
  } Ranges[kMaxSlots];

  Job(kiln_task_fn Fn, void *Context, int64_t N, int32_t Parts, int32_t Threads)
      : Fn(Fn), Context(Context), N(N), Parts(Parts), Threads(Threads),
        Slots(std::min({Threads, Parts, kMaxSlots})) {
    for (int32_t S = 0; S < Slots; ++S)
      Ranges[S].Left.store(uint64_t(int64_t(Parts) * (S + 1) / Slots) << 32 |
                               uint64_t(int64_t(Parts) * S / Slots),
                           std::memory_order_relaxed);
  }

  /// Iterations [lo, hi) of range Part. Each slot's share of [0, N) is cut
  /// into ranges of linearly decreasing size (4, 3, 2, 1 tenths of it for
  /// four): as few claims as equal ranges, but the range a thread finishes
  /// last, its own or a stolen one, is short, and so is the others' wait.
  std::pair<int64_t, int64_t> bounds(int32_t Part) const {
    int64_t S = int64_t(Part) * Slots / Parts;
    while (int64_t(Parts) * (S + 1) / Slots <= Part)
      ++S;
    int64_t P0 = int64_t(Parts) * S / Slots;
    int64_t P = int64_t(Parts) * (S + 1) / Slots - P0;
    int64_t I0 = N * P0 / Parts, Share = N * (P0 + P) / Parts - I0;
    // The weights of the ranges before the j-th: P + (P - 1) + ...
    auto Start = [&](int64_t J) {
      return I0 + Share * (J * P - J * (J - 1) / 2) / (P * (P + 1) / 2);
    };
    return {Start(Part - P0), Start(Part - P0 + 1)};
  }

  /// The next range for the thread in Slot, or -1 when none is left.
  int32_t take(int32_t Slot) {
    auto Lo = [](uint64_t V) { return int32_t(V & 0xffffffffu); };
    auto Hi = [](uint64_t V) { return int32_t(V >> 32); };
    if (Slot < Slots) {
      uint64_t V = Ranges[Slot].Left.load(std::memory_order_relaxed);
      while (Lo(V) < Hi(V))
        if (Ranges[Slot].Left.compare_exchange_weak(V, V + 1,
                                                    std::memory_order_relaxed))
          return Lo(V);
    }
    for (;;) {
      int32_t Most = -1, MostLeft = 0;
      uint64_t MostV = 0;
      for (int32_t S = 0; S < Slots; ++S) {
        uint64_t V = Ranges[S].Left.load(std::memory_order_relaxed);
        if (Hi(V) - Lo(V) > MostLeft)
          Most = S, MostLeft = Hi(V) - Lo(V), MostV = V;
      }
      if (Most < 0)
        return -1;
      if (Ranges[Most].Left.compare_exchange_weak(
              MostV, MostV - (uint64_t(1) << 32), std::memory_order_relaxed))
        return Hi(MostV) - 1;
    }
  }
};

thread_local int32_t RunThreads = 1;
thread_local kiln::rt::Pool *RunPool = nullptr; // null: the shared pool
thread_local bool InParallel = false;

void spinPause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

/// Locks M, spinning a while first: a contended std::mutex sleeps in the
/// kernel, and waking the thread again took ~10 us on a 2-vCPU VM, longer
/// than the loops that the lock guards the queue of.
std::unique_lock<std::mutex> lockSpinning(std::mutex &M) {
  for (int I = 0; I < 2048; ++I) {
    if (M.try_lock())
      return std::unique_lock<std::mutex>(M, std::adopt_lock);
    spinPause();
  }
  return std::unique_lock<std::mutex>(M);
}

// How long an idle worker, or a caller waiting for the last range, spins
// before it sleeps: the gap between a model's consecutive parallel loops is
// shorter, so workers stay awake through a run and sleep between runs. (A
// GRU layer's serial steps took 150 us between two split loops: with a
// 100 us spin the worker woke late and two threads ran slower than one.)
constexpr std::chrono::microseconds kSpin(1000);

// Ranges per thread of a split loop, claimed in turn: a thread the VM
// holds back for a while leaves its later ranges to the others instead
// of keeping the whole loop waiting on its one share.
constexpr int64_t kRangesPerThread = 4;

void runPart(Job &J, int32_t Part) {
  auto [Lo, Hi] = J.bounds(Part);
  bool Was = InParallel;
  InParallel = true;
  if (Lo < Hi)
    J.Fn(J.Context, Lo, Hi);
  InParallel = Was;
}

} // namespace

namespace kiln::rt {

/// Workers that take the ranges of queued jobs. The shared pool starts
/// std::threads as loops ask for them and never stops; a session with
/// thread hooks gets its own, started and joined through the hooks.
class Pool {
public:
  Pool() = default;
  explicit Pool(const ThreadHooks &Hooks) : Hooks(Hooks), Private(true) {}
  ~Pool() { stop(); }

  /// Starts N workers through the hooks; false (with Error) if one fails.
  bool startPrivate(int32_t N, std::string &Error) {
    for (int32_t I = 0; I < N; ++I) {
      void *Handle = Hooks.Create(Hooks.User, &Pool::workerEntry, this);
      if (!Handle) {
        Error = "create_thread returned NULL for worker " +
                std::to_string(I + 1) + " of " + std::to_string(N);
        return false;
      }
      Handles.push_back(Handle);
    }
    Started.store(N, std::memory_order_release);
    return true;
  }

  void run(Job &J) {
    if (!Private) {
      ensureWorkers(std::min(J.Parts, J.Threads) - 1);
      keepWorkersOffCaller();
    }
    {
      auto L = lockSpinning(M);
      Queue.push_back(&J);
      Pushes.fetch_add(1, std::memory_order_release);
    }
    WorkCv.notify_all();
    // The caller takes ranges too, then waits for the others.
    int32_t Ran = 0;
    for (int32_t Part; (Part = J.take(0)) >= 0; ++Ran)
      runPart(J, Part);
    retire(J);
    J.Done.fetch_add(Ran, std::memory_order_acq_rel);
    auto Until = std::chrono::steady_clock::now() + kSpin;
    for (int I = 0; J.Done.load(std::memory_order_acquire) < J.Parts; ++I) {
      spinPause();
      if ((I & 63) == 0 && std::chrono::steady_clock::now() > Until) {
        std::unique_lock<std::mutex> L(M);
        DoneCv.wait(L, [&] {
          return J.Done.load(std::memory_order_acquire) == J.Parts;
        });
        break;
      }
    }
  }

  int32_t workers() { return Started.load(std::memory_order_acquire); }

private:
  ThreadHooks Hooks{};
  bool Private = false;
  std::vector<void *> Handles; // a private pool's workers
  std::atomic<bool> Stopping{false};
  std::mutex M, StartMutex;
  std::condition_variable WorkCv, DoneCv;
  std::deque<Job *> Queue;
  // Jobs queued so far: an idle worker looks at the queue (under the
  // lock) again only when this has changed since it last found nothing
  // there to join (a job never becomes joinable again), so workers idle
  // beside a full job do not keep taking the lock.
  std::atomic<uint64_t> Pushes{0};
  std::vector<std::thread> Workers;

  /// Takes J, whose ranges are all claimed, off the queue (if no other
  /// thread has): no thread joins it after this, and it may end once its
  /// ranges have run.
  void retire(Job &J) {
    if (!J.Queued.load(std::memory_order_acquire))
      return;
    auto L = lockSpinning(M);
    retireLocked(J);
  }
  void retireLocked(Job &J) {
    if (!J.Queued.load(std::memory_order_relaxed))
      return;
    J.Queued.store(false, std::memory_order_release);
    Queue.erase(std::find(Queue.begin(), Queue.end(), &J));
  }

  void ensureWorkers(int32_t N) {
    N = std::min<int32_t>(N, 255);
    // (Each loop asks: the lock only when the pool must grow.)
    if (Started.load(std::memory_order_acquire) >= N)
      return;
    std::lock_guard<std::mutex> L(StartMutex);
    // Each worker on a core other than the creator's: on KVM VMs an
    // unpinned new or woken worker was placed on the busy caller's vCPU
    // and waited there for milliseconds (a 5-node MLP ran 4.5x slower on
    // two threads in half the processes).
    if (Workers.empty() && pinThreads()) {
      int Creator = sched_getcpu();
      PinCpus = workerCpus(cpuCores(), Creator, true);
      if (!PinCpus.empty())
        CallerCpu.store(Creator, std::memory_order_release);
    }
    while (static_cast<int32_t>(Workers.size()) < N) {
      Workers.emplace_back([this] { work(); });
      // Set by the creator, so the thread never waits on the caller's CPU.
      if (size_t I = Workers.size() - 1; I < PinCpus.size())
        pin(Workers.back(), PinCpus[I]);
    }
    Started.store(static_cast<int32_t>(Workers.size()),
                  std::memory_order_release);
  }
  std::atomic<int32_t> Started{0};
  // The CPU each worker is pinned to, by start order (none past its end;
  // under StartMutex), and the CPU the caller last ran on (-1: workers not
  // pinned).
  std::vector<int> PinCpus;
  std::atomic<int> CallerCpu{-1};
  std::atomic<int64_t> NextRepin{0}; // steady clock, us
  static constexpr std::chrono::microseconds kRepinEvery{10000};

  static void pin(std::thread &T, int Cpu) {
    cpu_set_t Set;
    CPU_ZERO(&Set);
    CPU_SET(Cpu, &Set);
    pthread_setaffinity_np(T.native_handle(), sizeof(Set), &Set);
  }

  /// Moves the worker off the caller's CPU, to the one the caller left,
  /// when the kernel moved the caller onto it: the two then shared that
  /// CPU while another idled, the worker ran only when the caller waited,
  /// and two threads took as long as one (a 2-vCPU KVM VM: a GELU over
  /// 128 x 3072 in 4 of 6 processes, a 5-node MLP in 5 of 8). (A look at the
  /// CPU per loop; the lock and the re-pin only when it changed.)
  void keepWorkersOffCaller() {
    int Known = CallerCpu.load(std::memory_order_acquire);
    if (Known < 0) // (workers not pinned)
      return;
    int Cpu = sched_getcpu();
    if (Cpu < 0 || Cpu == Known)
      return;
    // At most every kRepinEvery: a caller the kernel moves back and forth
    // would otherwise move the worker at every loop.
    int64_t Now = std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count();
    if (Now < NextRepin.load(std::memory_order_relaxed))
      return;
    std::lock_guard<std::mutex> L(StartMutex);
    int Left = CallerCpu.load(std::memory_order_relaxed);
    if (Cpu == Left)
      return;
    CallerCpu.store(Cpu, std::memory_order_relaxed);
    NextRepin.store(Now + kRepinEvery.count(), std::memory_order_relaxed);
    // The worker on the caller's new CPU takes the one the caller left
    // (the others stay where they are).
    auto It = std::find(PinCpus.begin(), PinCpus.end(), Cpu);
    if (It == PinCpus.end())
      return;
    *It = Left;
    if (size_t I = It - PinCpus.begin(); I < Workers.size())
      pin(Workers[I], Left);
  }

  static void workerEntry(void *P) { static_cast<Pool *>(P)->work(); }

  /// Ends a private pool's workers (between runs: no job is queued).
  void stop() {
    if (!Private)
      return;
    {
      std::lock_guard<std::mutex> L(M);
      Stopping.store(true, std::memory_order_release);
    }
    WorkCv.notify_all();
    for (void *Handle : Handles)
      Hooks.Join(Hooks.User, Handle);
    Handles.clear();
  }

  void work() {
    for (;;) {
      Job *J = nullptr;
      int32_t Part, Slot;
      std::unique_lock<std::mutex> L;
      auto Until = std::chrono::steady_clock::now() + kSpin;
      // (Looks once on entry: jobs may have been queued while it ran one.)
      uint64_t Seen = ~uint64_t(0);
      for (int I = 1;; ++I) {
        if (Pushes.load(std::memory_order_acquire) != Seen ||
            Stopping.load(std::memory_order_acquire)) {
          L = lockSpinning(M);
          if (Stopping.load(std::memory_order_relaxed))
            return;
          // (A job seen queued may have lost its last range to the caller
          // before the lock: spin on rather than sleep, else the worker
          // misses the next loop until a futex wake reaches it.)
          if ((J = joinable()))
            break;
          Seen = Pushes.load(std::memory_order_relaxed);
          L.unlock();
        }
        spinPause();
        if ((I & 63) == 0 && std::chrono::steady_clock::now() > Until) {
          L = lockSpinning(M);
          WorkCv.wait(L, [&] {
            J = joinable();
            return J || Stopping.load(std::memory_order_relaxed);
          });
          if (!J)
            return;
          break;
        }
      }
      // (The first range is taken under the lock: J is queued, so alive.
      // None may be left: it then leaves the queue.)
      Slot = J->Joined++;
      Part = J->take(Slot);
      if (Part < 0) {
        retireLocked(*J);
        continue;
      }
      L.unlock();
      // Ranges of J until none is left; then J leaves the queue and the
      // ranges run count as done. (J may end as soon as Done reaches
      // Parts: nothing of J is read after that.)
      int32_t Ran = 0;
      for (; Part >= 0; Part = J->take(Slot), ++Ran)
        runPart(*J, Part);
      retire(*J);
      int32_t Parts = J->Parts;
      if (J->Done.fetch_add(Ran, std::memory_order_acq_rel) + Ran == Parts) {
        auto L = lockSpinning(M);
        DoneCv.notify_all();
      }
    }
  }

  /// The first queued job with room for another thread (M held).
  Job *joinable() {
    for (Job *J : Queue)
      if (J->Joined < J->Threads)
        return J;
    return nullptr;
  }
};

} // namespace kiln::rt

namespace {

using kiln::rt::Pool;

// Never destroyed: workers sleep in it until the process exits.
Pool &sharedPool() {
  static Pool *P = new Pool;
  return *P;
}

struct ScratchBuffers {
  std::vector<std::pair<void *, uint64_t>> Slots;
  ~ScratchBuffers() {
    for (auto &S : Slots)
      std::free(S.first);
  }
};
thread_local ScratchBuffers Scratch;

} // namespace

extern "C" {

void kilnParallelFor(kiln_task_fn Fn, void *Context, int64_t N, int64_t Grain) {
  if (N <= 0)
    return;
  bool Even = Grain < 0;
  int64_t Ranges = Even ? N : N / std::max<int64_t>(Grain, 1);
  if (RunThreads <= 1 || Ranges <= 1 || InParallel ||
      (Even && N % RunThreads != 0)) {
    Fn(Context, 0, N);
    return;
  }
  int64_t Parts = std::min<int64_t>(RunThreads * kRangesPerThread, Ranges);
  // Whole shares when there are few ranges: 3 on 2 threads ran 2 and 1
  // (1.5x at best); 2 longer ones still pass the grain.
  if (Parts > RunThreads)
    Parts -= Parts % RunThreads;
  Job J{Fn, Context, N, static_cast<int32_t>(Parts), RunThreads};
  (RunPool ? *RunPool : sharedPool()).run(J);
}

void *kilnThreadScratch(int64_t Slot, int64_t Bytes) {
  if (Slot < 0 || Bytes < 0)
    kilnRunFailed();
  if (static_cast<size_t>(Slot) >= Scratch.Slots.size())
    Scratch.Slots.resize(Slot + 1, {nullptr, 0});
  auto &[Ptr, Size] = Scratch.Slots[Slot];
  if (Size < static_cast<uint64_t>(Bytes) || !Ptr) {
    std::free(Ptr);
    uint64_t Rounded = (std::max<uint64_t>(Bytes, 1) + 63) & ~uint64_t(63);
    Ptr = std::aligned_alloc(64, Rounded);
    Size = Ptr ? Rounded : 0;
    if (!Ptr)
      kilnRunFailed();
  }
  return Ptr;
}

} // extern "C"

namespace kiln::rt {

std::vector<CpuCore> cpuCores() {
  cpu_set_t Set;
  std::vector<CpuCore> Cpus;
  // (The process's mask, the main thread's: not the calling thread's.)
  if (sched_getaffinity(getpid(), sizeof(Set), &Set) != 0)
    return Cpus;
  for (int Cpu = 0; Cpu < CPU_SETSIZE; ++Cpu) {
    if (!CPU_ISSET(Cpu, &Set))
      continue;
    auto Read = [&](const char *What) {
      char Path[128];
      std::snprintf(Path, sizeof(Path),
                    "/sys/devices/system/cpu/cpu%d/topology/%s", Cpu, What);
      long V = -1;
      if (FILE *F = std::fopen(Path, "r")) {
        if (std::fscanf(F, "%ld", &V) != 1)
          V = -1;
        std::fclose(F);
      }
      return V;
    };
    long Package = Read("physical_package_id"), Core = Read("core_id");
    // Without the topology, each CPU counts as a core.
    Cpus.push_back({Cpu, Core < 0 ? std::pair<long, long>{-1, Cpu}
                                  : std::pair{Package, Core}});
  }
  return Cpus;
}

int32_t physicalCores() {
  std::vector<CpuCore> Cpus = cpuCores();
  if (Cpus.empty())
    return std::max(1u, std::thread::hardware_concurrency());
  std::set<std::pair<long, long>> Cores;
  for (const CpuCore &C : Cpus)
    Cores.insert(C.Core);
  return static_cast<int32_t>(Cores.size());
}

std::vector<int> workerCpus(const std::vector<CpuCore> &Cpus, int Creator,
                            bool Pin) {
  auto It = std::find_if(Cpus.begin(), Cpus.end(),
                         [&](const CpuCore &C) { return C.Cpu == Creator; });
  // (Creator unknown: no pins, rather than one where the caller runs.)
  if (!Pin || It == Cpus.end())
    return {};
  // From the creator's CPU on, round the mask: processes started on
  // different cores pin their workers to different ones.
  std::set<std::pair<long, long>> Taken{It->Core};
  std::vector<int> Out;
  size_t At = It - Cpus.begin();
  for (size_t I = 1; I < Cpus.size(); ++I) {
    const CpuCore &C = Cpus[(At + I) % Cpus.size()];
    if (Taken.insert(C.Core).second)
      Out.push_back(C.Cpu);
  }
  return Out;
}

namespace {
/// $KILN_NUM_THREADS as a positive count, or 0 (unset or invalid).
long envThreadCount(const char *Env) {
  if (!Env)
    return 0;
  char *End = nullptr;
  long V = std::strtol(Env, &End, 10);
  return End != Env && *End == '\0' && V > 0 ? V : 0;
}
} // namespace

int32_t defaultThreadCount() {
  if (long V = envThreadCount(std::getenv("KILN_NUM_THREADS")))
    return static_cast<int32_t>(std::min<long>(V, 256));
  static const int32_t Cores = physicalCores();
  return Cores;
}

std::string badThreadCountEnv() {
  const char *Env = std::getenv("KILN_NUM_THREADS");
  if (Env && !envThreadCount(Env))
    return std::string("KILN_NUM_THREADS is \"") + Env +
           "\": expected a positive number of threads (unset it for the "
           "physical cores)";
  return "";
}

std::string badPinThreadsEnv() {
  const char *Pin = std::getenv("KILN_PIN_THREADS");
  if (!Pin || std::string(Pin) == "0" || std::string(Pin) == "1")
    return "";
  return std::string("KILN_PIN_THREADS is \"") + Pin +
         "\": expected 0 (workers unpinned) or 1 (each on a core of its own, "
         "the default)";
}

bool pinThreads() {
  const char *Pin = std::getenv("KILN_PIN_THREADS");
  return !Pin || std::string(Pin) != "0";
}

RunThreadsState setRunThreads(RunThreadsState State) {
  RunThreadsState Previous{RunThreads, RunPool};
  RunThreads = std::max<int32_t>(1, State.Threads);
  RunPool = State.P;
  return Previous;
}

int32_t poolWorkers() { return sharedPool().workers(); }

std::shared_ptr<Pool> createPool(int32_t Workers, const ThreadHooks &Hooks,
                                 std::string &Error) {
  auto P = std::make_shared<Pool>(Hooks);
  if (!P->startPrivate(Workers, Error))
    return nullptr; // (joins the workers it started)
  return P;
}

} // namespace kiln::rt
