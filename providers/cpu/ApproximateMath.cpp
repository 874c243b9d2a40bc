//===- ApproximateMath.cpp - kiln-approximate-math ------------------------===//
//
// Polynomial erf/tanh/exp on the host (see Passes.td for why).
//
//===----------------------------------------------------------------------===//
#include "providers/Passes.h"
#include "providers/cpu/RewriteOnly.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_APPROXIMATEMATH
#include "providers/Passes.h.inc"

namespace {

struct ApproximateMathPass : public impl::ApproximateMathBase<ApproximateMathPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<math::ErfOp, math::TanhOp, math::ExpOp>(op) && !op->getParentOfType<gpu::GPUModuleOp>() &&
          getElementTypeOrSelf(op->getResult(0).getType()).isF32())
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(cpu::rewriteOnly(ops, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace kiln
