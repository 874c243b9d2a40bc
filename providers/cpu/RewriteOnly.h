//===- RewriteOnly.h - apply patterns to chosen ops only --------*- C++ -*-===//
#ifndef KILN_PROVIDERS_CPU_REWRITEONLY_H
#define KILN_PROVIDERS_CPU_REWRITEONLY_H

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln::cpu {

/// Rewrites `ops` alone with `patterns` (ExistingOps strictness): for passes
/// that pick the ops they change and leave the rest of the module as is.
inline mlir::LogicalResult rewriteOnly(llvm::ArrayRef<mlir::Operation *> ops,
                                       mlir::RewritePatternSet &&patterns) {
  mlir::GreedyRewriteConfig config;
  config.strictMode = mlir::GreedyRewriteStrictness::ExistingOps;
  return mlir::applyOpPatternsAndFold(ops, std::move(patterns), config);
}

} // namespace kiln::cpu

#endif
