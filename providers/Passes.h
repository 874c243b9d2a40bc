//===- Passes.h - provider passes -------------------------------*- C++ -*-===//
#ifndef KILN_PROVIDERS_PASSES_H
#define KILN_PROVIDERS_PASSES_H

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

/// The buffer `v` views (through subviews, reshapes and casts).
inline mlir::Value rootOf(mlir::Value v) {
  while (auto view = v.getDefiningOp<mlir::ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

#define GEN_PASS_DECL
#include "providers/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "providers/Passes.h.inc"

} // namespace kiln

#endif
