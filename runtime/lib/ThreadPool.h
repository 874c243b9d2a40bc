// The runtime's threads: one pool per process, shared by every session, and
// the parallel-for entry that compiled code calls (kilnParallelFor) for a
// loop whose iterations are independent. A run sets its session's thread
// count on the calling thread; the loop's iterations are split into that
// many contiguous ranges, the caller running one. Iterations never change
// order within a range, and compiled code only splits loops without a
// reduction across iterations, so results do not depend on the count.
#ifndef KILN_RUNTIME_THREADPOOL_H
#define KILN_RUNTIME_THREADPOOL_H

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

extern "C" {
/// A parallel loop's body: iterations [Lo, Hi) with its captured values.
typedef void (*kiln_task_fn)(void *Context, int64_t Lo, int64_t Hi);
/// Called by compiled code: runs Fn over [0, N) on the running session's
/// threads, each range at least Grain iterations long (on the caller's
/// alone outside a run, with one thread, when N < 2 * Grain, or from
/// inside a range of another loop that runs split; a loop inside one that
/// runs whole on the caller may split). A negative Grain (kParallelEvenGrain)
/// splits the loop only if its iterations divide evenly among the threads;
/// otherwise it runs whole on the caller, and loops inside it split.
void kilnParallelFor(kiln_task_fn Fn, void *Context, int64_t N, int64_t Grain);
/// A per-thread scratch buffer of at least Bytes (64-byte aligned) for
/// slot Slot: a buffer a parallel loop's body writes before it reads,
/// private to the thread running it. Kept and grown per thread.
void *kilnThreadScratch(int64_t Slot, int64_t Bytes);
}

namespace kiln::rt {

/// The thread count a session gets when it asks for 0: $KILN_NUM_THREADS if
/// set (a positive integer), else the machine's physical cores available
/// to this process.
int32_t defaultThreadCount();
/// $KILN_NUM_THREADS when it is set but not a positive integer: a line
/// saying so, for the session that would take its default from it; else "".
std::string badThreadCountEnv();
/// $KILN_PIN_THREADS when it is set but not 0 or 1: a line saying so, for
/// a session with more than one thread; else "".
std::string badPinThreadsEnv();
/// The machine's physical cores in this process's CPU affinity mask.
int32_t physicalCores();

/// A CPU of this process's affinity mask and its core (package, core id).
struct CpuCore {
  int Cpu;
  std::pair<long, long> Core;
};
std::vector<CpuCore> cpuCores();
/// Whether the shared pool pins its workers: $KILN_PIN_THREADS is not "0".
bool pinThreads();
/// The CPUs the shared pool's workers are pinned to, in start order: one
/// per core other than the creating thread's (on `Creator`), from the
/// creator's CPU on round the mask; none unless `Pin` and `Creator` is in
/// `Cpus`. Workers past the list's end are not pinned.
std::vector<int> workerCpus(const std::vector<CpuCore> &Cpus, int Creator,
                            bool Pin);

class Pool;

/// An app's own thread creation (kiln_session_options' hooks).
struct ThreadHooks {
  void *(*Create)(void *User, void (*Worker)(void *), void *Arg);
  void (*Join)(void *User, void *Thread);
  void *User;
};

/// A pool of its own for one session: Workers threads started through
/// Hooks now and joined through them when the pool is destroyed. Null,
/// with Error set, if a thread could not be created.
std::shared_ptr<Pool> createPool(int32_t Workers, const ThreadHooks &Hooks,
                                 std::string &Error);

/// The thread count and pool (null: the shared one) of parallel loops run
/// on this thread.
struct RunThreadsState {
  int32_t Threads;
  Pool *P;
};
/// Sets them until the returned previous state is restored.
RunThreadsState setRunThreads(RunThreadsState State);

/// Workers the shared pool has started (for tests).
int32_t poolWorkers();

} // namespace kiln::rt

#endif
