// A stand-in for libcuda.so.1 that runs on the host, so that the CUDA
// provider's host side (transfers, device arena, uploads, device I/O,
// event timing) is tested on machines without a GPU. Device memory is host
// memory the mock hands out and remembers, so copies know their direction;
// modules load anything and kernel launches are counted, not run.
//
// Point the runtime at it with KILN_CUDA_DRIVER=path/to/libkiln_mock_cuda.so.
// With KILN_MOCK_CUDA_STATS=file it writes its counters there as JSON when
// the process exits; kilnMockCudaStats() returns them in-process.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

namespace {

using CUresult = int;
using CUdeviceptr = unsigned long long;
constexpr CUresult Ok = 0, InvalidValue = 1, InvalidHandle = 400;

struct Stats {
  uint64_t Allocs = 0, Frees = 0, LiveBytes = 0;
  uint64_t HtoDCopies = 0, HtoDBytes = 0, DtoHCopies = 0, DtoHBytes = 0;
  uint64_t DtoDCopies = 0, DtoDBytes = 0;
  uint64_t Launches = 0, ModuleLoads = 0, EventRecords = 0, TimedEvents = 0;
  uint64_t Streams = 0, HostRegisters = 0;
  // Host-device copies whose host side is pageable (neither registered nor
  // from cuMemHostAlloc).
  uint64_t PageableCopies = 0;
};

std::mutex Mutex;
Stats Counters;
std::map<uintptr_t, size_t> DeviceRanges, PinnedRanges; // start -> size

bool inRanges(const std::map<uintptr_t, size_t> &Ranges, uintptr_t P) {
  auto It = Ranges.upper_bound(P);
  if (It == Ranges.begin())
    return false;
  --It;
  return P < It->first + It->second || (It->second == 0 && P == It->first);
}
bool isDevice(uintptr_t P) { return inRanges(DeviceRanges, P); }

struct Event {
  bool Timing;
  uint64_t Ns = 0;
};
struct Function {
  std::string Name;
};
int ContextTag, StreamTag, ModuleTag;
thread_local void *CurrentContext = nullptr;

uint64_t nowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

void copy(CUdeviceptr Dst, CUdeviceptr Src, size_t Bytes) {
  std::lock_guard<std::mutex> Lock(Mutex);
  bool D = isDevice(static_cast<uintptr_t>(Dst)), S = isDevice(static_cast<uintptr_t>(Src));
  if (D != S && Bytes &&
      !inRanges(PinnedRanges, static_cast<uintptr_t>(D ? Src : Dst)))
    ++Counters.PageableCopies;
  if (D && !S) {
    ++Counters.HtoDCopies;
    Counters.HtoDBytes += Bytes;
  } else if (!D && S) {
    ++Counters.DtoHCopies;
    Counters.DtoHBytes += Bytes;
  } else if (D && S) {
    ++Counters.DtoDCopies;
    Counters.DtoDBytes += Bytes;
  }
  if (Bytes)
    std::memmove(reinterpret_cast<void *>(Dst), reinterpret_cast<const void *>(Src), Bytes);
}

CUresult alloc(CUdeviceptr *P, size_t Bytes) {
  if (!P)
    return InvalidValue;
  void *Mem = std::calloc(1, Bytes ? Bytes : 1);
  if (!Mem)
    return 2; // CUDA_ERROR_OUT_OF_MEMORY
  std::lock_guard<std::mutex> Lock(Mutex);
  DeviceRanges[reinterpret_cast<uintptr_t>(Mem)] = Bytes;
  ++Counters.Allocs;
  Counters.LiveBytes += Bytes;
  *P = reinterpret_cast<uintptr_t>(Mem);
  return Ok;
}

void writeStatsAtExit() {
  const char *Path = std::getenv("KILN_MOCK_CUDA_STATS");
  if (!Path || !*Path)
    return;
  FILE *F = std::fopen(Path, "w");
  if (!F)
    return;
  const Stats &C = Counters;
  std::fprintf(F,
               "{\"allocs\": %llu, \"frees\": %llu, \"htod_copies\": %llu, \"htod_bytes\": %llu, "
               "\"dtoh_copies\": %llu, \"dtoh_bytes\": %llu, \"dtod_copies\": %llu, "
               "\"dtod_bytes\": %llu, \"launches\": %llu, \"module_loads\": %llu, "
               "\"event_records\": %llu, \"timed_events\": %llu, \"streams\": %llu, "
               "\"host_registers\": %llu, \"pageable_copies\": %llu}\n",
               (unsigned long long)C.Allocs, (unsigned long long)C.Frees,
               (unsigned long long)C.HtoDCopies, (unsigned long long)C.HtoDBytes,
               (unsigned long long)C.DtoHCopies, (unsigned long long)C.DtoHBytes,
               (unsigned long long)C.DtoDCopies, (unsigned long long)C.DtoDBytes,
               (unsigned long long)C.Launches, (unsigned long long)C.ModuleLoads,
               (unsigned long long)C.EventRecords, (unsigned long long)C.TimedEvents,
               (unsigned long long)C.Streams, (unsigned long long)C.HostRegisters,
               (unsigned long long)C.PageableCopies);
  std::fclose(F);
}
const int AtExit = std::atexit(writeStatsAtExit);

} // namespace

#define MOCK extern "C" __attribute__((visibility("default")))

MOCK const Stats *kilnMockCudaStats() { return &Counters; }

MOCK CUresult cuInit(unsigned) { return Ok; }
MOCK CUresult cuDriverGetVersion(int *V) { return V ? (*V = 13000, Ok) : InvalidValue; }
MOCK CUresult cuDeviceGet(int *D, int Ordinal) {
  return D && Ordinal == 0 ? (*D = 0, Ok) : InvalidValue;
}
MOCK CUresult cuDeviceGetCount(int *N) { return N ? (*N = 1, Ok) : InvalidValue; }
MOCK CUresult cuDeviceGetName(char *Name, int Len, int) {
  if (!Name || Len <= 0)
    return InvalidValue;
  std::snprintf(Name, static_cast<size_t>(Len), "%s", "kiln mock GPU");
  return Ok;
}
MOCK CUresult cuDevicePrimaryCtxRetain(void **Ctx, int) {
  return Ctx ? (*Ctx = &ContextTag, Ok) : InvalidValue;
}
MOCK CUresult cuDevicePrimaryCtxRelease_v2(int) { return Ok; }
MOCK CUresult cuCtxSetCurrent(void *Ctx) { return CurrentContext = Ctx, Ok; }
MOCK CUresult cuCtxSynchronize() { return Ok; }
MOCK CUresult cuCtxGetCurrent(void **Ctx) { return Ctx ? (*Ctx = CurrentContext, Ok) : InvalidValue; }

MOCK CUresult cuModuleLoadData(void **M, const void *Image) {
  if (!M || !Image)
    return InvalidValue;
  std::lock_guard<std::mutex> Lock(Mutex);
  ++Counters.ModuleLoads;
  *M = &ModuleTag;
  return Ok;
}
MOCK CUresult cuModuleLoadDataEx(void **M, const void *Image, unsigned, int *, void **) {
  return cuModuleLoadData(M, Image);
}
MOCK CUresult cuModuleUnload(void *) { return Ok; }
MOCK CUresult cuModuleGetFunction(void **F, void *M, const char *Name) {
  if (!F || M != &ModuleTag || !Name)
    return InvalidHandle;
  *F = new Function{Name}; // one per lookup; the runtime caches modules
  return Ok;
}
// Rejects what a real device would (CUDA_ERROR_INVALID_VALUE): an empty
// grid or block, a grid or block past the hardware limits, over 1024
// threads per block, more dynamic shared memory than the default 48 KiB.
MOCK CUresult cuLaunchKernel(void *F, unsigned GX, unsigned GY, unsigned GZ, unsigned BX,
                             unsigned BY, unsigned BZ, unsigned SharedBytes, void *, void **,
                             void **) {
  if (!F)
    return InvalidHandle;
  if (!GX || !GY || !GZ || !BX || !BY || !BZ || GX > 2147483647u || GY > 65535 || GZ > 65535 ||
      BX > 1024 || BY > 1024 || BZ > 64 || (uint64_t)BX * BY * BZ > 1024 ||
      SharedBytes > 48 * 1024)
    return InvalidValue;
  std::lock_guard<std::mutex> Lock(Mutex);
  ++Counters.Launches;
  return Ok;
}

MOCK CUresult cuStreamCreate(void **S, unsigned) {
  if (!S)
    return InvalidValue;
  std::lock_guard<std::mutex> Lock(Mutex);
  ++Counters.Streams;
  *S = &StreamTag;
  return Ok;
}
MOCK CUresult cuStreamDestroy_v2(void *) { return Ok; }
MOCK CUresult cuStreamSynchronize(void *) { return Ok; }
MOCK CUresult cuStreamWaitEvent(void *, void *, unsigned) { return Ok; }

MOCK CUresult cuEventCreate(void **E, unsigned Flags) {
  if (!E)
    return InvalidValue;
  *E = new Event{(Flags & 2u) == 0}; // CU_EVENT_DISABLE_TIMING
  return Ok;
}
MOCK CUresult cuEventDestroy_v2(void *E) {
  delete static_cast<Event *>(E);
  return Ok;
}
MOCK CUresult cuEventRecord(void *E, void *) {
  if (!E)
    return InvalidHandle;
  auto *Ev = static_cast<Event *>(E);
  Ev->Ns = nowNs();
  std::lock_guard<std::mutex> Lock(Mutex);
  ++Counters.EventRecords;
  Counters.TimedEvents += Ev->Timing;
  return Ok;
}
MOCK CUresult cuEventSynchronize(void *E) { return E ? Ok : InvalidHandle; }
MOCK CUresult cuEventElapsedTime_v2(float *Ms, void *A, void *B) {
  auto *Start = static_cast<Event *>(A), *End = static_cast<Event *>(B);
  if (!Ms || !Start || !End || !Start->Timing || !End->Timing)
    return InvalidHandle;
  *Ms = static_cast<float>(static_cast<double>(End->Ns - Start->Ns) / 1e6);
  return Ok;
}

MOCK CUresult cuMemAlloc_v2(CUdeviceptr *P, size_t Bytes) { return alloc(P, Bytes); }
MOCK CUresult cuMemAllocManaged(CUdeviceptr *P, size_t Bytes, unsigned) { return alloc(P, Bytes); }
MOCK CUresult cuMemFree_v2(CUdeviceptr P) {
  std::lock_guard<std::mutex> Lock(Mutex);
  auto It = DeviceRanges.find(static_cast<uintptr_t>(P));
  if (It == DeviceRanges.end())
    return InvalidValue;
  Counters.LiveBytes -= It->second;
  ++Counters.Frees;
  DeviceRanges.erase(It);
  std::free(reinterpret_cast<void *>(P));
  return Ok;
}
MOCK CUresult cuMemcpy(CUdeviceptr Dst, CUdeviceptr Src, size_t Bytes) {
  copy(Dst, Src, Bytes);
  return Ok;
}
MOCK CUresult cuMemcpyAsync(CUdeviceptr Dst, CUdeviceptr Src, size_t Bytes, void *) {
  copy(Dst, Src, Bytes);
  return Ok;
}
template <typename T> CUresult fill(CUdeviceptr P, T V, size_t N) {
  T *Out = reinterpret_cast<T *>(P);
  for (size_t I = 0; I < N; ++I)
    Out[I] = V;
  return Ok;
}
MOCK CUresult cuMemsetD32_v2(CUdeviceptr P, unsigned V, size_t N) { return fill(P, V, N); }
MOCK CUresult cuMemsetD16_v2(CUdeviceptr P, unsigned short V, size_t N) { return fill(P, V, N); }
MOCK CUresult cuMemsetD32Async(CUdeviceptr P, unsigned V, size_t N, void *) { return fill(P, V, N); }
MOCK CUresult cuMemsetD16Async(CUdeviceptr P, unsigned short V, size_t N, void *) {
  return fill(P, V, N);
}
MOCK CUresult cuMemHostAlloc(void **P, size_t Bytes, unsigned) {
  if (!P || !(*P = std::malloc(Bytes ? Bytes : 1)))
    return InvalidValue;
  std::lock_guard<std::mutex> Lock(Mutex);
  PinnedRanges[reinterpret_cast<uintptr_t>(*P)] = Bytes;
  return Ok;
}
MOCK CUresult cuMemFreeHost(void *P) {
  std::lock_guard<std::mutex> Lock(Mutex);
  PinnedRanges.erase(reinterpret_cast<uintptr_t>(P));
  return std::free(P), Ok;
}
MOCK CUresult cuMemHostRegister_v2(void *P, size_t Bytes, unsigned) {
  if (!P)
    return InvalidValue;
  std::lock_guard<std::mutex> Lock(Mutex);
  ++Counters.HostRegisters;
  PinnedRanges[reinterpret_cast<uintptr_t>(P)] = Bytes;
  return Ok;
}
MOCK CUresult cuMemHostUnregister(void *P) {
  std::lock_guard<std::mutex> Lock(Mutex);
  PinnedRanges.erase(reinterpret_cast<uintptr_t>(P));
  return Ok;
}
MOCK CUresult cuGetErrorString(CUresult, const char **S) { return S ? (*S = "mock error", Ok) : InvalidValue; }
MOCK CUresult cuGetErrorName(CUresult, const char **S) {
  return S ? (*S = "CUDA_ERROR_MOCK", Ok) : InvalidValue;
}
MOCK CUresult cuPointerGetAttribute(void *Out, int Attr, CUdeviceptr P) {
  if (!Out || Attr != 2) // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
    return InvalidValue;
  std::lock_guard<std::mutex> Lock(Mutex);
  *static_cast<unsigned *>(Out) = isDevice(static_cast<uintptr_t>(P)) ? 2u : 1u;
  return Ok;
}
