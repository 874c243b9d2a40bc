//===- DecomposeOps.h - kiln-decompose-ops internals ------------*- C++ -*-===//
//
// What the parts of kiln-decompose-ops share: the pass and most rewrites
// (DecomposeOps.cpp) and the quantization ops' (DecomposeQuantization.cpp).
// A rewrite returns false, leaving the op, when it does not apply.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_DECOMPOSEOPS_H
#define KILN_PASSES_DECOMPOSEOPS_H

#include "passes/GraphBuilder.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

namespace kiln::decompose {

/// `v`'s type when it is a ranked tensor of static shape, else null.
mlir::RankedTensorType staticType(mlir::Value v);
/// Operand `i` unless absent (missing or onnx.NoValue).
mlir::Value optionalOperand(mlir::Operation *op, unsigned i);
bool isFloat(mlir::Type t);
/// Replaces `op`'s used results by `values` and erases it.
void replaceResults(mlir::Operation *op, llvm::ArrayRef<mlir::Value> values);
/// `v` cast to element type `elt` (itself when it has it).
mlir::Value castTo(GraphBuilder &g, mlir::Value v, mlir::Type elt,
                   llvm::ArrayRef<mlir::NamedAttribute> extra = {});

// ConvTranspose as a Conv of its phases (DecomposeConvTranspose.cpp).
bool decomposeConvTranspose(mlir::Operation *op);

// Quantization (DecomposeQuantization.cpp).
bool decomposeDequantize(mlir::Operation *op);
bool decomposeQuantize(mlir::Operation *op);
bool decomposeDynamicQuantize(mlir::Operation *op);
bool decomposeMatMulInteger(mlir::Operation *op);
bool decomposeConvInteger(mlir::Operation *op);
bool decomposeQLinearMatMul(mlir::Operation *op);
bool decomposeQLinearConv(mlir::Operation *op);
/// Whether the CPU's 8-bit conv kernels take the groups of conv `op` with
/// 2-D weights of type `wt` [M, C/group, kh, kw]: none (the VNNI kernels),
/// or one channel in and out per group (depthwise: vector loops that sum
/// in f32, exact while 255 * 128 * taps < 2^24).
bool integerKernelGroups(mlir::Operation *op, mlir::RankedTensorType wt);

} // namespace kiln::decompose

#endif // KILN_PASSES_DECOMPOSEOPS_H
