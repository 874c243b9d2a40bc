//===- ApproximateMath.cpp - kiln-approximate-math ------------------------===//
//
// Polynomial erf/tanh/exp on the host (see Passes.td for why).
//
//===----------------------------------------------------------------------===//
#include "providers/Passes.h"
#include "providers/cpu/RewriteOnly.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_APPROXIMATEMATH
#include "providers/Passes.h.inc"

namespace {

/// f32 erf as one rational function on |x| <= 4, x P(x^2) / Q(x^2) (the
/// coefficients XLA's and Eigen's f32 erf use): no intervals, so no
/// coefficient selects. MLIR's approximation (three intervals) takes 29
/// compares and selects a vector besides its polynomials; on a BERT
/// layer's GELU (128 x 1024 after the FFN's first MatMul) that was 0.9 ns
/// an element, 3/4 of the MatMul's own time. Error at most 4.2e-7 (at
/// |x| = 3.3; float32 evaluation against double erf over [-5, 5]); past
/// |x| = 4, erf is 1 in f32; a NaN stays NaN through the clamp.
struct ErfRational : public OpRewritePattern<math::ErfOp> {
  ErfRational(MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(math::ErfOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return failure();
    static constexpr double kP[] = {
        -2.72614225801306e-10, 2.77068142495902e-08,  -2.10102402082508e-06,
        -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
        -1.60960333262415e-02};
    static constexpr double kQ[] = {
        -1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
        -7.37332916720468e-03, -1.42647390514189e-02};
    Location loc = op.getLoc();
    auto c = [&](double v) -> Value {
      Attribute a = rewriter.getF32FloatAttr(v);
      if (auto vt = dyn_cast<VectorType>(type))
        a = DenseElementsAttr::get(vt, a);
      return rewriter.create<arith::ConstantOp>(loc, type, cast<TypedAttr>(a));
    };
    Value x = rewriter.create<arith::MinimumFOp>(
        loc, rewriter.create<arith::MaximumFOp>(loc, op.getOperand(), c(-4.0)),
        c(4.0));
    Value x2 = rewriter.create<arith::MulFOp>(loc, x, x);
    auto horner = [&](ArrayRef<double> coeffs) {
      Value acc = c(coeffs.front());
      for (double k : coeffs.drop_front())
        acc = rewriter.create<math::FmaOp>(loc, acc, x2, c(k));
      return acc;
    };
    Value p = rewriter.create<arith::MulFOp>(loc, horner(kP), x);
    rewriter.replaceOpWithNewOp<arith::DivFOp>(op, p, horner(kQ));
    return success();
  }
};

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
    patterns.add<ErfRational>(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(cpu::rewriteOnly(ops, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace kiln
