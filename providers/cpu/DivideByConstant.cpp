//===- DivideByConstant.cpp - kiln-cpu-divide-by-constant -----------------===//
//
// f32 divisions by a constant (QuantizeLinear's x / scale in every 8-bit
// epilogue) as a multiplication by the reciprocal refined by two FMAs:
// the same correctly rounded quotient (see Passes.td) at a fraction of
// vdivps's cost.
//
//===----------------------------------------------------------------------===//
#include "passes/FusionUtils.h"
#include "providers/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

#include <cmath>

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_CPUDIVIDEBYCONSTANT
#include "providers/Passes.h.inc"

namespace {

/// The reciprocal, rounded, of the divisor when it is one finite, normal
/// f32 constant (a scalar or a splat) whose reciprocal is normal too.
std::optional<APFloat> roundedReciprocal(Value d) {
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
  return inv;
}

/// Upper bounds on |v| for values finite by construction: integers
/// converted, finite constants (also loaded from constant globals: an
/// epilogue's per-channel scales), and sums, products, roundings, min/max
/// and selects of such (an 8-bit epilogue's values); none otherwise.
struct MagnitudeBounds {
  DenseMap<Operation *, std::optional<double>> globals;
  // (Epilogue chains share operands: each value is bounded once.)
  DenseMap<Value, std::optional<double>> values;

  /// The largest |element| of the constant global `get` reads.
  std::optional<double> global(memref::GetGlobalOp get) {
    auto g = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
        get, get.getNameAttr());
    if (!g || !g.getConstant())
      return std::nullopt;
    auto [it, added] = globals.try_emplace(g, std::nullopt);
    if (!added)
      return it->second;
    auto init = dyn_cast_or_null<ElementsAttr>(g.getInitialValueAttr());
    if (std::optional<SmallVector<float>> values =
            fusion::elementsFloats(init)) {
      double most = 0;
      bool finite = true;
      for (float x : *values) {
        finite &= std::isfinite(x);
        most = std::max(most, double(std::fabs(x)));
      }
      if (finite)
        it->second = most;
    }
    return it->second;
  }

  /// None also where a value on the way may pass 1e37 (an f32 product
  /// overflowing to infinity before a later factor scales it back).
  std::optional<double> of(Value v, int depth = 0) {
    if (auto it = values.find(v); it != values.end())
      return it->second;
    std::optional<double> b = step(v, depth);
    if (b && *b > 1e37)
      b = std::nullopt;
    values[v] = b;
    return b;
  }
  std::optional<double> step(Value v, int depth);
};

std::optional<double> MagnitudeBounds::step(Value v, int depth) {
  if (depth > 64)
    return std::nullopt;
  auto bound = [&](Value x) { return of(x, depth + 1); };
  FloatAttr scalar;
  DenseElementsAttr dense;
  if (matchPattern(v, m_Constant(&scalar))) {
    if (!scalar.getValue().isFinite())
      return std::nullopt;
    return std::fabs(scalar.getValueAsDouble());
  }
  if (matchPattern(v, m_Constant(&dense)) &&
      isa<FloatType>(dense.getElementType())) {
    double most = 0;
    for (APFloat x : dense.getValues<APFloat>()) {
      if (!x.isFinite())
        return std::nullopt;
      most = std::max(most, std::fabs(x.convertToDouble()));
    }
    return most;
  }
  Operation *op = v.getDefiningOp();
  if (!op)
    return std::nullopt;
  auto bits = [&](Value x) {
    return getElementTypeOrSelf(x.getType()).getIntOrFloatBitWidth();
  };
  if (auto c = dyn_cast<arith::SIToFPOp>(op))
    return std::ldexp(1.0, bits(c.getIn()) - 1);
  if (auto c = dyn_cast<arith::UIToFPOp>(op))
    return std::ldexp(1.0, bits(c.getIn()));
  auto two =
      [&](Value a, Value b,
          function_ref<double(double, double)> f) -> std::optional<double> {
    std::optional<double> x = bound(a), y = bound(b);
    if (!x || !y)
      return std::nullopt;
    return f(*x, *y);
  };
  auto sum = [](double x, double y) { return x + y; };
  auto most = [](double x, double y) { return std::max(x, y); };
  if (isa<arith::AddFOp, arith::SubFOp>(op))
    return two(op->getOperand(0), op->getOperand(1), sum);
  if (isa<arith::MulFOp>(op))
    return two(op->getOperand(0), op->getOperand(1),
               [](double x, double y) { return x * y; });
  if (isa<arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
          arith::MinNumFOp>(op))
    return two(op->getOperand(0), op->getOperand(1), most);
  if (auto s = dyn_cast<arith::SelectOp>(op))
    return two(s.getTrueValue(), s.getFalseValue(), most);
  if (isa<arith::NegFOp, math::AbsFOp>(op))
    return bound(op->getOperand(0));
  if (isa<math::RoundEvenOp, math::RoundOp, math::FloorOp, math::CeilOp>(op))
    if (std::optional<double> x = bound(op->getOperand(0)))
      return *x + 1;
  if (auto f = dyn_cast<math::FmaOp>(op)) {
    std::optional<double> ab = two(f.getA(), f.getB(),
                                   [](double x, double y) { return x * y; }),
                          c = bound(f.getC());
    if (ab && c)
      return *ab + *c;
  }
  if (isa<vector::BroadcastOp, vector::SplatOp>(op))
    return bound(op->getOperand(0));
  Value memory;
  if (auto load = dyn_cast<memref::LoadOp>(op))
    memory = load.getMemRef();
  else if (auto load = dyn_cast<vector::LoadOp>(op))
    memory = load.getBase();
  if (memory)
    if (auto get = memory.getDefiningOp<memref::GetGlobalOp>())
      return global(get);
  return std::nullopt;
}

struct CpuDivideByConstantPass
    : public impl::CpuDivideByConstantBase<CpuDivideByConstantPass> {
  void runOnOperation() override {
    SmallVector<std::pair<arith::DivFOp, APFloat>> divs;
    getOperation().walk([&](arith::DivFOp op) {
      if (!getElementTypeOrSelf(op.getType()).isF32() ||
          op->getParentOfType<gpu::GPUModuleOp>())
        return;
      if (std::optional<APFloat> inv = roundedReciprocal(op.getRhs()))
        divs.push_back({op, *inv});
    });
    MagnitudeBounds bounds;
    for (auto &[op, inv] : divs) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      Type t = op.getType();
      Value y;
      if (auto vt = dyn_cast<VectorType>(t))
        y = b.create<arith::ConstantOp>(
            loc,
            DenseElementsAttr::get(vt, b.getFloatAttr(b.getF32Type(), inv)));
      else
        y = b.create<arith::ConstantOp>(loc, b.getFloatAttr(t, inv));
      Value a = op.getLhs(), d = op.getRhs();
      // q0 = a * y; r = a - d * q0 (exact in an FMA); q = q0 + r * y.
      Value q0 = b.create<arith::MulFOp>(loc, a, y);
      Value r =
          b.create<math::FmaOp>(loc, b.create<arith::NegFOp>(loc, d), q0, a);
      Value q = b.create<math::FmaOp>(loc, r, y, q0);
      // (An infinite a, or a * y past the largest float, makes the
      // correction NaN: q0 is then division's infinity. Not where a is
      // bounded well inside the range: an epilogue's converted integers.)
      std::optional<double> bound = bounds.of(a);
      if (!bound || *bound * std::fabs(inv.convertToDouble()) > 1e36) {
        Value nan =
            b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, q, q);
        q = b.create<arith::SelectOp>(loc, nan, q0, q);
      } else {
        ++numBounded;
      }
      op.replaceAllUsesWith(q);
      // (Its result's storage may come back for a new value.)
      bounds.values.erase(op.getResult());
      op.erase();
      ++numDivisions;
    }
  }
};

} // namespace
} // namespace kiln
