//===- Pipelines.h - the CPU code generation pipelines ----------*- C++ -*-===//
//
// Shared by the compile driver (compiler/Pipeline.cpp) and by constant
// folding (providers/FoldConstants.cpp), which JIT-compiles folded ops with
// exactly the code the model would run, so both see the same numerics.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PROVIDERS_CPU_PIPELINES_H
#define KILN_PROVIDERS_CPU_PIPELINES_H

namespace kiln::cpu {

/// Tensors to memrefs (after the providers lowered onnx to linalg/tensor).
inline constexpr const char *kBufferizePipeline =
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    "func.func(canonicalize,cse)";

/// Buffers and loops to the LLVM dialect; functions take bare pointers.
inline constexpr const char *kToLlvmPipeline =
    "func.func(convert-linalg-to-loops),expand-strided-metadata,lower-affine,"
    "convert-scf-to-cf,func.func(canonicalize,cse),"
    "convert-math-to-llvm,convert-math-to-libm,finalize-memref-to-llvm,convert-arith-to-llvm,"
    "convert-index-to-llvm,"
    "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},convert-cf-to-llvm,"
    "gpu-to-llvm,reconcile-unrealized-casts,canonicalize";

} // namespace kiln::cpu

#endif
