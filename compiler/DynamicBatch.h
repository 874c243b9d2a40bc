//===- DynamicBatch.h - a batch dimension resolved at run time --*- C++ -*-===//
//
// A model whose inputs keep one symbolic dimension (the batch) compiles once
// for a single sample. kiln compiles the graph twice more with the batch
// pinned to two probe sizes, and proves from the pair that every op works on
// each sample independently: the dimension that scales with the probe size
// must flow through elementwise ops, the N of Conv/pools, the rows of
// MatMul, and reshapes that keep samples contiguous, and never be reduced,
// normalized, sliced or mixed. The runtime then runs the per-sample code once
// per sample of the caller's batch.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_DYNAMICBATCH_H
#define KILN_COMPILER_DYNAMICBATCH_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>
#include <string>

namespace kiln {

struct BatchPlan {
  /// The dim_param (or kUnnamedDim) that names the batch.
  std::string symbol;
  /// Per graph input/output: the axis that holds the samples, -1 for a
  /// tensor that is the same for every sample.
  llvm::SmallVector<int> inputAxes, outputAxes;
};

/// The batch symbol of a freshly imported model whose inputs still have
/// symbolic dimensions (`onnx.dim_params`), std::nullopt when all inputs
/// are static. Fails, naming the input, when a symbolic dimension other
/// than the batch (the first dimension's symbol) is left unpinned.
mlir::FailureOr<std::optional<std::string>> findBatchSymbol(mlir::ModuleOp module);
/// Whether an input has a symbolic dimension other than the batch (which
/// the per-sample scheme cannot resolve: the model needs run-time sizes).
bool hasSymbolsBesidesBatch(mlir::ModuleOp module);

/// Checks that `a` and `b`, the same model imported and optimized with the
/// batch pinned to `sizeA` and `sizeB`, compute every sample on its own.
/// Errors name the node that mixes samples.
mlir::FailureOr<BatchPlan> analyzeBatch(mlir::ModuleOp a, mlir::ModuleOp b,
                                        int64_t sizeA, int64_t sizeB);

/// Records the plan on @main (`kiln.batch_axis` on arguments and results,
/// `kiln.batch_symbol` on the module) for the descriptor.
void annotateBatch(mlir::ModuleOp module, const BatchPlan &plan);

} // namespace kiln

#endif
