// Session-owned device memory for compiled CUDA partitions: the device
// arena that kiln-plan-memory laid out (activations at shared offsets, each
// constant at its own), allocated on a session's first run and kept, and
// the constants uploaded into it on that run only. Generated code reaches
// it through kilnDeviceArena/kilnDeviceUploadOnce, which act on the state
// the running session made current on this thread.
#ifndef KILN_RUNTIME_DEVICEMEMORY_H
#define KILN_RUNTIME_DEVICEMEMORY_H

#include "CudaDriver.h"
#include "RuntimeSizes.h"

#include "kiln/kiln_rt.h"

#include <cstdint>
#include <memory>

namespace kiln::rt::cuda {

struct DeviceMemory {
  CUdeviceptr Arena = 0;
  uint64_t ArenaBytes = 0;
  // The constants in the arena are current: set after a successful run,
  // cleared when the arena is (re)allocated.
  bool ConstantsCurrent = false;
  // The session's one stream: all of a run's copies and kernels (the mgpu
  // shims hand it out instead of pooled streams while the run is current).
  CUstream Stream = nullptr;
  // The host arena, page-locked on the first run so that copies between
  // it and the device are real DMA (null: not registered).
  void *PinnedHost = nullptr;
  // Page-locked staging for the caller's inputs and outputs (cuMemHostAlloc,
  // grown on demand): their copies are then asynchronous DMA too.
  void *Staging = nullptr;
  uint64_t StagingBytes = 0;
  // Device buffers of run-time size (kilnDeviceDynAlloc): made on first
  // use, grown between runs to the most a run needed.
  std::unique_ptr<DynAllocator> Dyn;
};

/// Pinned host memory of at least `Bytes` for staging a run's inputs and
/// outputs, or null (copies then use the caller's pageable buffers).
void *stagingBuffer(DeviceMemory &M, uint64_t Bytes);

/// Page-locked host memory (cuMemHostAlloc) for a DynAllocator; plain
/// aligned memory where the driver cannot give it.
DynAllocator::Backing pinnedHostBacking();

/// Frees the arena and the stream and unpins the host arena (with device
/// 0's context made current).
void releaseDeviceMemory(DeviceMemory &M);

/// One run of a session's CUDA partitions on this thread: generated code
/// uses `M`, and with a profiler every kernel launch and copy is timed with
/// CUDA events on its stream. endDeviceRun waits for all device work (the
/// run's one synchronization point of its own), then reports the timed work
/// as KILN_EVENT_KERNEL/KILN_EVENT_TRANSFER events with provider "cuda".
void beginDeviceRun(DeviceMemory *M, void *HostArena, uint64_t HostArenaBytes,
                    kiln_profile_callback Profiler, void *User);
void endDeviceRun();

/// The running session's stream (created on first use), or null outside a
/// session's run.
CUstream sessionStream();

/// For the mgpu shims: a timed piece of device work on `Stream` (no-ops
/// unless the run is profiled). `Name` must outlive the run.
void *beginTimedWork(CUstream Stream);
void endTimedWork(void *Token, CUstream Stream, const char *Name, int32_t Kind,
                  uint64_t Bytes, const char *OpName = nullptr);

} // namespace kiln::rt::cuda

#endif
