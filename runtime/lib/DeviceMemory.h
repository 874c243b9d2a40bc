// Session-owned device memory for compiled CUDA partitions: the device
// arena that kiln-plan-memory laid out (activations at shared offsets, each
// constant at its own), allocated on a session's first run and kept, and
// the constants uploaded into it on that run only. Generated code reaches
// it through kilnDeviceArena/kilnDeviceUploadOnce, which act on the state
// the running session made current on this thread.
#ifndef KILN_RUNTIME_DEVICEMEMORY_H
#define KILN_RUNTIME_DEVICEMEMORY_H

#include "CudaDriver.h"

#include <cstdint>

namespace kiln::rt::cuda {

struct DeviceMemory {
  CUdeviceptr Arena = 0;
  uint64_t ArenaBytes = 0;
  // The constants in the arena are current: set after a successful run,
  // cleared when the arena is (re)allocated.
  bool ConstantsCurrent = false;
  CUstream Stream = nullptr; // for uploads
  uint64_t UploadedBytes = 0;
};

/// Makes `M` the state generated code on this thread uses (null: none).
void setCurrentDeviceMemory(DeviceMemory *M);
/// Frees the arena and stream (with device 0's context made current).
void releaseDeviceMemory(DeviceMemory &M);

} // namespace kiln::rt::cuda

#endif
