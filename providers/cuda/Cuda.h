//===- Cuda.h - the CUDA provider's shared names ----------------*- C++ -*-===//
#ifndef KILN_PROVIDERS_CUDA_CUDA_H
#define KILN_PROVIDERS_CUDA_CUDA_H

namespace kiln {

/// Marks structured ops that a CUDA partition produced.
inline constexpr const char *kCudaDeviceAttr = "kiln.device";
/// Marks the loop nest of a device op until it becomes a kernel; one left
/// after the GPU mapping would run on the host against device memory.
inline constexpr const char *kDeviceLoopAttr = "kiln.device_loop";

/// Marks the device twin of a constant: uploaded once per session, never
/// shares device memory with anything else.
inline constexpr const char *kDeviceConstantAttr = "kiln.device_constant";
/// A function whose arguments and results are device memory.
inline constexpr const char *kDeviceIOAttr = "kiln.device_io";
/// Runtime entry points (libkiln_rt) that generated host code calls.
inline constexpr const char *kDeviceArenaFn = "kilnDeviceArena";
inline constexpr const char *kDeviceUploadOnceFn = "kilnDeviceUploadOnce";
/// A device buffer of run-time size from the running session's device
/// allocator, and its release (kiln-plan-memory).
inline constexpr const char *kDeviceDynAllocFn = "kilnDeviceDynAlloc";
inline constexpr const char *kDeviceDynFreeFn = "kilnDeviceDynFree";

void registerCudaProvider();

} // namespace kiln

#endif
