//===- DivideByConstant.cpp - kiln-cpu-divide-by-constant -----------------===//
//
// f32 divisions by a constant (QuantizeLinear's x / scale in every 8-bit
// epilogue) as a multiplication by the reciprocal refined by two FMAs:
// the same correctly rounded quotient (see Passes.td) at a fraction of
// vdivps's cost.
//
//===----------------------------------------------------------------------===//
#include "providers/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_CPUDIVIDEBYCONSTANT
#include "providers/Passes.h.inc"

namespace {

/// The divisor's value when it is one finite, normal f32 constant (a
/// scalar or a splat) whose reciprocal is normal too.
std::optional<APFloat> constantDivisor(Value d) {
  FloatAttr scalar;
  APFloat v(0.0f);
  if (matchPattern(d, m_Constant(&scalar))) {
    v = scalar.getValue();
  } else {
    DenseElementsAttr dense;
    if (!matchPattern(d, m_Constant(&dense)) || !dense.isSplat() ||
        !isa<FloatType>(dense.getElementType()))
      return std::nullopt;
    v = dense.getSplatValue<APFloat>();
  }
  if (!v.isFiniteNonZero() || v.isDenormal())
    return std::nullopt;
  APFloat inv(1.0f);
  APFloat::opStatus status = inv.divide(v, APFloat::rmNearestTiesToEven);
  if ((status & ~APFloat::opInexact) != APFloat::opOK || inv.isDenormal())
    return std::nullopt;
  return v;
}

struct CpuDivideByConstantPass
    : public impl::CpuDivideByConstantBase<CpuDivideByConstantPass> {
  void runOnOperation() override {
    SmallVector<arith::DivFOp> divs;
    getOperation().walk([&](arith::DivFOp op) {
      if (getElementTypeOrSelf(op.getType()).isF32() &&
          !op->getParentOfType<gpu::GPUModuleOp>() &&
          constantDivisor(op.getRhs()))
        divs.push_back(op);
    });
    for (arith::DivFOp op : divs) {
      APFloat inv(1.0f);
      inv.divide(*constantDivisor(op.getRhs()), APFloat::rmNearestTiesToEven);
      OpBuilder b(op);
      Location loc = op.getLoc();
      Type t = op.getType();
      Value y;
      if (auto vt = dyn_cast<VectorType>(t))
        y = b.create<arith::ConstantOp>(
            loc, DenseElementsAttr::get(vt, b.getFloatAttr(b.getF32Type(), inv)));
      else
        y = b.create<arith::ConstantOp>(loc, b.getFloatAttr(t, inv));
      Value a = op.getLhs(), d = op.getRhs();
      // q0 = a * y; r = a - d * q0 (exact in an FMA); q = q0 + r * y.
      Value q0 = b.create<arith::MulFOp>(loc, a, y);
      Value r = b.create<math::FmaOp>(
          loc, b.create<arith::NegFOp>(loc, d), q0, a);
      Value q = b.create<math::FmaOp>(loc, r, y, q0);
      // (An infinite a, or a * y past the largest float, makes the
      // correction NaN: q0 is then division's infinity.)
      Value nan = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, q, q);
      q = b.create<arith::SelectOp>(loc, nan, q0, q);
      op.replaceAllUsesWith(q);
      op.erase();
      ++numDivisions;
    }
  }
};

} // namespace
} // namespace kiln
