//===- OnnxToLinalg.h - CPU lowering of onnx ops ----------------*- C++ -*-===//
#ifndef KILN_PROVIDERS_CPU_ONNXTOLINALG_H
#define KILN_PROVIDERS_CPU_ONNXTOLINALG_H

#include "mlir/IR/Operation.h"
#include <string>

namespace kiln::cpu {

/// Whether the CPU codegen handles `op`; else `why` says what is missing.
bool canLowerOnCpu(mlir::Operation *op, std::string &why);
/// Whether `op` lowers to calls of libkiln_rt (which the constant-folding
/// JIT does not link).
bool callsRuntime(mlir::Operation *op);

/// Retypes unsigned tensors under `root` as signless, recording on each onnx
/// op which operands and results were unsigned; run before lowering.
void makeSignless(mlir::Operation *root);

/// Rewrites every onnx op under `root` into linalg/tensor/arith/math.
mlir::LogicalResult lowerOnnxToLinalg(mlir::Operation *root);

/// Set on a partition by a provider that maps structured ops to kernels of
/// its own: ops of run-time size stay whole structured ops there, not the
/// CPU's host loops over cache-sized blocks (a Conv's im2col per image).
inline constexpr const char *kStructuredOnlyAttr = "kiln.structured_only";
/// Whether `op` lies in such a partition.
bool structuredOnly(mlir::Operation *op);

} // namespace kiln::cpu

#endif
