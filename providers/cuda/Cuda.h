//===- Cuda.h - the CUDA provider's shared names ----------------*- C++ -*-===//
#ifndef KILN_PROVIDERS_CUDA_CUDA_H
#define KILN_PROVIDERS_CUDA_CUDA_H

namespace kiln {

/// Marks structured ops that a CUDA partition produced.
inline constexpr const char *kCudaDeviceAttr = "kiln.device";
/// Marks the loop nest of a device op until it becomes a kernel; one left
/// after the GPU mapping would run on the host against device memory.
inline constexpr const char *kDeviceLoopAttr = "kiln.device_loop";

void registerCudaProvider();

} // namespace kiln

#endif
