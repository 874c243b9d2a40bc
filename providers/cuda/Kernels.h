//===- Kernels.h - shared-memory CUDA kernels for linalg ops ----*- C++ -*-===//
#ifndef KILN_PROVIDERS_CUDA_KERNELS_H
#define KILN_PROVIDERS_CUDA_KERNELS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln::cuda {

/// Replaces a device generic (on buffers) by a `gpu.launch` that uses the
/// block's shared memory, when its shape suits one:
///  - a contraction (two inputs, one output, reduction dims; MatMul, Gemm,
///    batched MatMul, and Conv as an implicit GEMM) becomes a 64x64 output
///    tile per block, 16x16 threads of 4x4 outputs each, its operands staged
///    through shared memory 16 reduction steps at a time;
///  - a reduction whose body combines the output with one associative op
///    (sum, product, max, min: Softmax, LayerNorm, Reduce*) becomes one
///    block per output element, its threads reducing strided partial
///    results and then a tree in shared memory; over an outer dim (a [K, N]
///    matrix-vector product), a block takes 32 adjacent outputs, 8 threads
///    each, so that a warp's reads stay adjacent.
/// Returns None (changing nothing) for other ops, which stay one thread per
/// output.
enum class SharedMemoryKernel { None, Contraction, Reduction };
SharedMemoryKernel buildSharedMemoryKernel(mlir::RewriterBase &rewriter,
                                           mlir::linalg::GenericOp op);

} // namespace kiln::cuda

#endif
