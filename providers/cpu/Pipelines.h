//===- Pipelines.h - the CPU code generation pipelines ----------*- C++ -*-===//
//
// Shared by the compile driver (compiler/Pipeline.cpp) and by constant
// folding (providers/FoldConstants.cpp), which JIT-compiles folded ops with
// exactly the code the model would run, so both see the same numerics.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PROVIDERS_CPU_PIPELINES_H
#define KILN_PROVIDERS_CPU_PIPELINES_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

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

/// Between the two: strided copies would call MLIR's C runner library
/// (memrefCopy); as linalg.copy they become plain loops, so compiled models
/// stay freestanding and the constant-folding JIT needs no runtime library.
inline void stridedCopiesToLinalg(mlir::Operation *root) {
  root->walk([](mlir::memref::CopyOp copy) {
    auto src = mlir::cast<mlir::MemRefType>(copy.getSource().getType());
    auto dst = mlir::cast<mlir::MemRefType>(copy.getTarget().getType());
    if (src.getLayout().isIdentity() && dst.getLayout().isIdentity())
      return;
    mlir::OpBuilder b(copy);
    b.create<mlir::linalg::CopyOp>(copy.getLoc(), copy.getSource(), copy.getTarget());
    copy.erase();
  });
}

} // namespace kiln::cpu

#endif
