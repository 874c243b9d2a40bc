#include "DeviceMemory.h"
#include "ProfileHooks.h"
#include "Error.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

using namespace kiln::rt::cuda;

namespace {
thread_local DeviceMemory *Current = nullptr;

struct TimedWork {
  CUevent Start = nullptr, End = nullptr;
  const char *Name = "", *OpName = "";
  int32_t Kind = KILN_EVENT_KERNEL;
  uint64_t Bytes = 0;
};
struct RunProfile {
  kiln_profile_callback Profiler = nullptr;
  void *User = nullptr;
  CUevent Base = nullptr;
  uint64_t BaseNs = 0;
  std::vector<TimedWork> Work;
};
thread_local RunProfile Profile;

using kiln::rt::nowNs;

DeviceMemory *current(const char *Fn) {
  if (!Current)
    recordError(std::string(Fn) + ": called outside a CUDA session's run");
  return Current;
}

// The device allocator's memory (see DynAllocator::Backing).
void *deviceAllocate(uint64_t Bytes) {
  const DriverApi *D = driver();
  CUdeviceptr P = 0;
  if (!D ||
      failed(D->cuMemAlloc(&P, static_cast<size_t>(Bytes)),
             "kilnDeviceDynAlloc",
             ("cuMemAlloc of " + std::to_string(Bytes) + " bytes").c_str()))
    return nullptr;
  return reinterpret_cast<void *>(static_cast<uintptr_t>(P));
}
void deviceRelease(void *Ptr) {
  if (const DriverApi *D = driver())
    D->cuMemFree(static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(Ptr)));
}

// Pinned host memory, falling back to pageable (copies then still work,
// staged by the driver); each block remembers which it is in a header.
constexpr uint64_t kPinnedHeader = 64;
void *pinnedAllocate(uint64_t Bytes) {
  char *P = nullptr;
  bool Pinned = false;
  if (const DriverApi *D = driver()) {
    void *Host = nullptr;
    if (makeContextCurrent() &&
        D->cuMemHostAlloc(&Host, static_cast<size_t>(Bytes + kPinnedHeader),
                          CU_MEMHOSTALLOC_PORTABLE) == CUDA_SUCCESS) {
      P = static_cast<char *>(Host);
      Pinned = true;
    }
  }
  if (!P)
    P = static_cast<char *>(std::aligned_alloc(64, Bytes + kPinnedHeader));
  if (!P)
    return nullptr;
  *reinterpret_cast<bool *>(P) = Pinned;
  return P + kPinnedHeader;
}
void pinnedRelease(void *Ptr) {
  char *P = static_cast<char *>(Ptr) - kPinnedHeader;
  if (!*reinterpret_cast<bool *>(P))
    std::free(P);
  else if (const DriverApi *D = driver())
    D->cuMemFreeHost(P);
}

} // namespace

namespace kiln::rt::cuda {

void beginDeviceRun(DeviceMemory *M, void *HostArena, uint64_t HostArenaBytes,
                    kiln_profile_callback Profiler, void *User) {
  Current = M;
  Profile = RunProfile{};
  const DriverApi *D = driver();
  // Pinning is an optimization: without it copies are staged by the driver.
  if (D && M && HostArena && HostArenaBytes && M->PinnedHost != HostArena &&
      D->cuMemHostRegister(HostArena, HostArenaBytes, CU_MEMHOSTREGISTER_PORTABLE) ==
          CUDA_SUCCESS)
    M->PinnedHost = HostArena;
  if (!D || !Profiler)
    return;
  // Kernels and copies are placed on the host clock relative to this
  // event, recorded when the run starts.
  if (D->cuEventCreate(&Profile.Base, 0) != CUDA_SUCCESS)
    return;
  Profile.Profiler = Profiler;
  Profile.User = User;
  // The host time of the base event: the middle of the call that records it.
  uint64_t Before = nowNs();
  if (D->cuEventRecord(Profile.Base, nullptr) != CUDA_SUCCESS)
    Profile.Profiler = nullptr;
  Profile.BaseNs = Before + (nowNs() - Before) / 2;
}

void *beginTimedWork(CUstream Stream) {
  const DriverApi *D = Profile.Profiler ? driver() : nullptr;
  if (!D)
    return nullptr;
  TimedWork W;
  if (D->cuEventCreate(&W.Start, 0) != CUDA_SUCCESS)
    return nullptr;
  if (D->cuEventCreate(&W.End, 0) != CUDA_SUCCESS ||
      D->cuEventRecord(W.Start, Stream) != CUDA_SUCCESS) {
    D->cuEventDestroy(W.Start);
    if (W.End)
      D->cuEventDestroy(W.End);
    return nullptr;
  }
  Profile.Work.push_back(W);
  // 1-based index, so that a token is never null.
  return reinterpret_cast<void *>(Profile.Work.size());
}

void endTimedWork(void *Token, CUstream Stream, const char *Name, int32_t Kind,
                  uint64_t Bytes, const char *OpName) {
  size_t I = reinterpret_cast<size_t>(Token);
  if (!I || I > Profile.Work.size())
    return;
  TimedWork &W = Profile.Work[I - 1];
  W.Name = Name;
  W.OpName = OpName ? OpName : Name;
  W.Kind = Kind;
  W.Bytes = Bytes;
  if (driver()->cuEventRecord(W.End, Stream) != CUDA_SUCCESS) {
    driver()->cuEventDestroy(W.End);
    W.End = nullptr;
  }
}

void endDeviceRun() {
  DeviceMemory *M = Current;
  Current = nullptr;
  const DriverApi *D = driver();
  if (!D)
    return;
  if (CUresult R = D->cuCtxSynchronize())
    recordError("device work of the run failed: " + errorString(R));
  // The run's device work is done: its buffers of run-time size are free,
  // and memory a run needed beyond the block can go.
  if (M && M->Dyn)
    M->Dyn->reset();
  if (!Profile.Profiler)
    return;
  for (TimedWork &W : Profile.Work) {
    // Both ends from the base: float milliseconds round the same way for
    // every event, so work that follows on the stream never overlaps.
    float ToStart = 0, ToEnd = 0;
    if (W.End &&
        D->cuEventElapsedTime(&ToStart, Profile.Base, W.Start) ==
            CUDA_SUCCESS &&
        D->cuEventElapsedTime(&ToEnd, Profile.Base, W.End) == CUDA_SUCCESS) {
      uint64_t StartNs = static_cast<uint64_t>(ToStart * 1e6);
      uint64_t EndNs = std::max(StartNs, static_cast<uint64_t>(ToEnd * 1e6));
      kiln_profile_event E{
          W.Name, "cuda",  W.OpName, W.Kind, Profile.BaseNs + StartNs,
          0,      W.Bytes, nullptr};
      Profile.Profiler(&E, 0, Profile.User);
      E.duration_ns = EndNs - StartNs;
      Profile.Profiler(&E, 1, Profile.User);
    }
    D->cuEventDestroy(W.Start);
    if (W.End)
      D->cuEventDestroy(W.End);
  }
  D->cuEventDestroy(Profile.Base);
  Profile = RunProfile{};
}

DynAllocator::Backing pinnedHostBacking() { return {pinnedAllocate, pinnedRelease}; }

void *stagingBuffer(DeviceMemory &M, uint64_t Bytes) {
  if (M.Staging && M.StagingBytes >= Bytes)
    return M.Staging;
  const DriverApi *D = driver();
  if (!D || !Bytes)
    return nullptr;
  if (M.Staging)
    D->cuMemFreeHost(M.Staging);
  M.Staging = nullptr;
  M.StagingBytes = 0;
  if (D->cuMemHostAlloc(&M.Staging, static_cast<size_t>(Bytes), CU_MEMHOSTALLOC_PORTABLE) !=
      CUDA_SUCCESS) {
    M.Staging = nullptr;
    return nullptr;
  }
  M.StagingBytes = Bytes;
  return M.Staging;
}

void releaseDeviceMemory(DeviceMemory &M) {
  if (!M.Arena && !M.Stream && !M.PinnedHost && !M.Staging && !M.Dyn)
    return;
  std::string Why;
  if (const DriverApi *D = driver(&Why); D && makeContextCurrent()) {
    if (M.Arena)
      D->cuMemFree(M.Arena);
    if (M.Stream)
      D->cuStreamDestroy(M.Stream);
    if (M.PinnedHost)
      D->cuMemHostUnregister(M.PinnedHost);
    if (M.Staging)
      D->cuMemFreeHost(M.Staging);
    M.Dyn.reset();
  }
  M = DeviceMemory{};
}

CUstream sessionStream() {
  if (!Current)
    return nullptr;
  if (!Current->Stream) {
    const DriverApi *D = driver();
    if (!D || failed(D->cuStreamCreate(&Current->Stream, CU_STREAM_NON_BLOCKING),
                     "sessionStream", "cuStreamCreate"))
      return nullptr;
  }
  return Current->Stream;
}

} // namespace kiln::rt::cuda

#define KILN_RT_EXPORT extern "C" __attribute__((visibility("default")))

// The device arena of the running session, `Bytes` long; null (with an
// error recorded) when it cannot be had.
KILN_RT_EXPORT void *kilnDeviceArena(int64_t Bytes) {
  DeviceMemory *M = current("kilnDeviceArena");
  const DriverApi *D = M ? ready("kilnDeviceArena") : nullptr;
  if (!D || Bytes <= 0)
    return nullptr;
  if (M->Arena && M->ArenaBytes != static_cast<uint64_t>(Bytes)) {
    D->cuMemFree(M->Arena);
    M->Arena = 0;
  }
  if (!M->Arena) {
    M->ConstantsCurrent = false;
    if (failed(D->cuMemAlloc(&M->Arena, static_cast<size_t>(Bytes)), "kilnDeviceArena",
               ("cuMemAlloc of a " + std::to_string(Bytes) + "-byte device arena").c_str())) {
      M->Arena = 0;
      return nullptr;
    }
    M->ArenaBytes = static_cast<uint64_t>(Bytes);
  }
  return reinterpret_cast<void *>(static_cast<uintptr_t>(M->Arena));
}

// A device buffer of `Bytes` for the running session (64-byte aligned),
// from memory it keeps from run to run; ends the run if there is none.
KILN_RT_EXPORT void *kilnDeviceDynAlloc(int64_t Bytes) {
  DeviceMemory *M = current("kilnDeviceDynAlloc");
  if (!M || Bytes < 0 || !ready("kilnDeviceDynAlloc"))
    kilnRunFailed();
  if (!M->Dyn)
    M->Dyn = std::make_unique<kiln::rt::DynAllocator>(
        kiln::rt::DynAllocator::Backing{deviceAllocate, deviceRelease});
  return M->Dyn->allocate(static_cast<uint64_t>(Bytes));
}

// Gives a buffer back; later work on the session's one stream may reuse it.
KILN_RT_EXPORT void kilnDeviceDynFree(void *Ptr) {
  if (Current && Current->Dyn)
    Current->Dyn->release(Ptr);
}

// Copies a constant to its place in the device arena, unless the session's
// earlier run already did. Queued on the session's stream, which every
// kernel of the run uses too, so it needs no synchronization of its own.
KILN_RT_EXPORT void kilnDeviceUploadOnce(int64_t Dst, int64_t Src, int64_t Bytes) {
  DeviceMemory *M = current("kilnDeviceUploadOnce");
  if (!M || M->ConstantsCurrent || Bytes <= 0)
    return;
  const DriverApi *D = ready("kilnDeviceUploadOnce");
  if (!D || !Dst || !sessionStream())
    return;
  void *Timed = beginTimedWork(M->Stream);
  failed(D->cuMemcpyAsync(static_cast<CUdeviceptr>(Dst), static_cast<CUdeviceptr>(Src),
                          static_cast<size_t>(Bytes), M->Stream),
         "kilnDeviceUploadOnce", "cuMemcpyAsync");
  endTimedWork(Timed, M->Stream, "upload_constant", KILN_EVENT_TRANSFER,
               static_cast<uint64_t>(Bytes), "MemcpyFromHost");
}

// The C API's device buffers, for callers of kiln_session_run_device that do
// not link the CUDA runtime themselves.
namespace {
/// The failure `ready` or `failed` recorded, as the call's status.
kiln_status providerError() {
  std::string Msg = firstError();
  clearErrors();
  return kiln::rt::fail(KILN_ERROR_PROVIDER, Msg);
}

CUdeviceptr dptr(const void *P) {
  return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(P));
}
} // namespace

extern "C" {

kiln_status kiln_device_alloc(uint64_t Bytes, void **Ptr) {
  if (!Ptr)
    return kiln::rt::fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_device_alloc: Ptr is NULL");
  *Ptr = nullptr;
  clearErrors();
  const DriverApi *D = ready("kiln_device_alloc");
  CUdeviceptr P = 0;
  if (!D || failed(D->cuMemAlloc(&P, Bytes ? Bytes : 1), "kiln_device_alloc", "cuMemAlloc"))
    return providerError();
  *Ptr = reinterpret_cast<void *>(static_cast<uintptr_t>(P));
  return KILN_OK;
}

kiln_status kiln_device_free(void *Ptr) {
  if (!Ptr)
    return KILN_OK;
  clearErrors();
  const DriverApi *D = ready("kiln_device_free");
  if (!D || failed(D->cuMemFree(dptr(Ptr)), "kiln_device_free", "cuMemFree"))
    return providerError();
  return KILN_OK;
}

kiln_status kiln_device_copy(void *Dst, const void *Src, uint64_t Bytes) {
  if (Bytes && (!Dst || !Src))
    return kiln::rt::fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_device_copy: NULL pointer");
  clearErrors();
  const DriverApi *D = ready("kiln_device_copy");
  if (!D || failed(D->cuMemcpy(dptr(Dst), dptr(Src), Bytes), "kiln_device_copy", "cuMemcpy"))
    return providerError();
  return KILN_OK;
}

} // extern "C"
