//===- Cuda.h - the CUDA provider's shared names ----------------*- C++ -*-===//
#ifndef KILN_PROVIDERS_CUDA_CUDA_H
#define KILN_PROVIDERS_CUDA_CUDA_H

namespace kiln {

/// Marks structured ops that a CUDA partition produced.
inline constexpr const char *kCudaDeviceAttr = "kiln.device";

void registerCudaProvider();

} // namespace kiln

#endif
