//===- OnnxToLinalg.cpp - CPU lowering of onnx ops ------------------------===//
//
// Each supported op becomes linalg/tensor/arith/math on static-shaped
// tensors. Ops are lowered in program order by a table keyed on the ONNX op
// type; the same table answers the CPU provider's capability query, so what
// the partitioner accepts is exactly what lowers.
//
//===----------------------------------------------------------------------===//

#include "providers/cpu/OnnxToLinalg.h"
#include "dialects/onnx/ShapeInference.h"
#include "passes/NodeName.h"
#include "providers/cpu/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace kiln::onnx;

namespace kiln::cpu {
namespace {

using Results = FailureOr<SmallVector<Value>>;
using LowerFn = std::function<Results(OpBuilder &, Operation *)>;

RankedTensorType resultType(Operation *op, unsigned i = 0) {
  return cast<RankedTensorType>(op->getResult(i).getType());
}
RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }
bool isFloat(Type t) { return isa<FloatType>(t); }

Value cst(OpBuilder &b, Location loc, Type elt, double v) {
  return scalarConst(b, loc, elt, v);
}

SmallVector<Value> present(ValueRange vals) {
  SmallVector<Value> out;
  for (Value v : vals)
    if (!isNone(v))
      out.push_back(v);
  return out;
}

// --- elementwise -----------------------------------------------------------

using ScalarFn = std::function<Value(OpBuilder &, Location, ValueRange, Operation *)>;

LowerFn elementwiseOp(ScalarFn fn) {
  return [fn](OpBuilder &b, Operation *op) -> Results {
    Value r = elementwise(b, op->getLoc(), resultType(op),
                          present(op->getOperands()),
                          [&](OpBuilder &nb, Location l, ValueRange a) {
                            return fn(nb, l, a, op);
                          });
    return SmallVector<Value>{r};
  };
}

template <typename FOp, typename IOp>
ScalarFn arithBinary() {
  return [](OpBuilder &b, Location l, ValueRange a, Operation *) -> Value {
    if (isFloat(a[0].getType()))
      return b.create<FOp>(l, a[0], a[1]);
    return b.create<IOp>(l, a[0], a[1]);
  };
}

/// Folds a variadic op's scalars left to right.
ScalarFn fold(ScalarFn binary) {
  return [binary](OpBuilder &b, Location l, ValueRange a, Operation *op) {
    Value acc = a[0];
    for (Value v : a.drop_front())
      acc = binary(b, l, ValueRange{acc, v}, op);
    return acc;
  };
}

ScalarFn unaryF(std::function<Value(OpBuilder &, Location, Value, Operation *)> f) {
  return [f](OpBuilder &b, Location l, ValueRange a, Operation *op) {
    return f(b, l, a[0], op);
  };
}

Value sigmoid(OpBuilder &b, Location l, Value x) {
  Type t = x.getType();
  Value e = b.create<math::ExpOp>(l, b.create<arith::NegFOp>(l, x));
  return b.create<arith::DivFOp>(l, cst(b, l, t, 1.0),
                                 b.create<arith::AddFOp>(l, cst(b, l, t, 1.0), e));
}

Value clampF(OpBuilder &b, Location l, Value x, Value lo, Value hi) {
  return b.create<arith::MinimumFOp>(l, b.create<arith::MaximumFOp>(l, x, lo), hi);
}

Value castScalar(OpBuilder &b, Location l, Value x, Type to) {
  Type from = x.getType();
  if (from == to)
    return x;
  bool fromF = isFloat(from), toF = isFloat(to);
  auto fromUnsigned = from.isUnsignedInteger();
  if (fromF && toF)
    return from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()
               ? (Value)b.create<arith::ExtFOp>(l, to, x)
               : (Value)b.create<arith::TruncFOp>(l, to, x);
  if (to.isInteger(1)) {
    if (fromF)
      return b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNE, x,
                                     cst(b, l, from, 0.0));
    return b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne, x,
                                   cst(b, l, from, 0));
  }
  if (fromF)
    return b.create<arith::FPToSIOp>(l, to, x);
  if (toF)
    return from.isInteger(1) || fromUnsigned
               ? (Value)b.create<arith::UIToFPOp>(l, to, x)
               : (Value)b.create<arith::SIToFPOp>(l, to, x);
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (fw < tw)
    return from.isInteger(1) || fromUnsigned
               ? (Value)b.create<arith::ExtUIOp>(l, to, x)
               : (Value)b.create<arith::ExtSIOp>(l, to, x);
  return b.create<arith::TruncIOp>(l, to, x);
}

ScalarFn compare(arith::CmpFPredicate fp, arith::CmpIPredicate ip) {
  return [fp, ip](OpBuilder &b, Location l, ValueRange a, Operation *) -> Value {
    if (isFloat(a[0].getType()))
      return b.create<arith::CmpFOp>(l, fp, a[0], a[1]);
    return b.create<arith::CmpIOp>(l, ip, a[0], a[1]);
  };
}

// --- contractions ------------------------------------------------------------

Results lowerMatMul(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  Value a = op->getOperand(0), bb = op->getOperand(1);
  auto at = typeOf(a), bt = typeOf(bb);
  auto out = resultType(op);
  Type elt = out.getElementType();
  // Loop nest: (batch..., m, k, n): the innermost loop walks rows of B and
  // of the result contiguously, so LLVM vectorizes it without reassociating
  // the reduction. 1-D operands lose m or n.
  bool aVec = at.getRank() == 1, bVec = bt.getRank() == 1;
  int64_t batch = out.getRank() - (aVec ? 0 : 1) - (bVec ? 0 : 1);
  int64_t mDim = batch, kDim = batch + 1, nDim = batch + 2, nLoops = batch + 3;
  auto dim = [&](int64_t d) { return getAffineDimExpr(d, ctx); };
  auto zero = getAffineConstantExpr(0, ctx);
  SmallVector<AffineExpr> aExprs, bExprs, oExprs;
  auto batchExprs = [&](RankedTensorType t, int64_t matRank,
                        SmallVector<AffineExpr> &exprs) {
    int64_t tb = t.getRank() - matRank;
    for (int64_t i = 0; i < tb; ++i) {
      int64_t od = batch - tb + i;
      exprs.push_back(t.getDimSize(i) == 1 && out.getDimSize(od) != 1 ? zero
                                                                        : dim(od));
    }
  };
  batchExprs(at, aVec ? 1 : 2, aExprs);
  if (!aVec)
    aExprs.push_back(dim(mDim));
  aExprs.push_back(dim(kDim));
  batchExprs(bt, bVec ? 1 : 2, bExprs);
  bExprs.push_back(dim(kDim));
  if (!bVec)
    bExprs.push_back(dim(nDim));
  for (int64_t i = 0; i < batch; ++i)
    oExprs.push_back(dim(i));
  if (!aVec)
    oExprs.push_back(dim(mDim));
  if (!bVec)
    oExprs.push_back(dim(nDim));
  // A unit m or n loop keeps the nest uniform; its extent comes from a
  // broadcast-free dummy when the operand is a vector.
  SmallVector<Value> ins = {a, bb};
  SmallVector<AffineMap> maps = {AffineMap::get(nLoops, 0, aExprs, ctx),
                                 AffineMap::get(nLoops, 0, bExprs, ctx)};
  if (aVec || bVec) {
    SmallVector<AffineExpr> unit;
    if (aVec)
      unit.push_back(dim(mDim));
    if (bVec)
      unit.push_back(dim(nDim));
    ins.push_back(emptyTensor(b, loc, RankedTensorType::get(
                                          SmallVector<int64_t>(unit.size(), 1), elt)));
    maps.push_back(AffineMap::get(nLoops, 0, unit, ctx));
  }
  maps.push_back(AffineMap::get(nLoops, 0, oExprs, ctx));
  SmallVector<utils::IteratorType> iters(nLoops, utils::IteratorType::parallel);
  iters[kDim] = utils::IteratorType::reduction;
  Value acc = filledTensor(b, loc, out, 0.0);
  bool fl = isFloat(elt);
  auto g = b.create<linalg::GenericOp>(
      loc, TypeRange{out}, ins, ValueRange{acc}, maps, iters,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value p = fl ? (Value)nb.create<arith::MulFOp>(l, args[0], args[1])
                     : (Value)nb.create<arith::MulIOp>(l, args[0], args[1]);
        Value s = fl ? (Value)nb.create<arith::AddFOp>(l, args.back(), p)
                     : (Value)nb.create<arith::AddIOp>(l, args.back(), p);
        nb.create<linalg::YieldOp>(l, s);
      });
  return SmallVector<Value>{g.getResult(0)};
}

Results lowerGemm(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  auto out = resultType(op);
  Type elt = out.getElementType();
  bool ta = getIntAttr(op, "transA", 0), tb = getIntAttr(op, "transB", 0);
  double alpha = getFloatAttr(op, "alpha", 1.0), beta = getFloatAttr(op, "beta", 1.0);
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  // Loops (m, k, n), innermost n as in MatMul.
  AffineMap aMap = AffineMap::get(3, 0, ta ? ArrayRef<AffineExpr>{d(1), d(0)}
                                           : ArrayRef<AffineExpr>{d(0), d(1)}, ctx);
  AffineMap bMap = AffineMap::get(3, 0, tb ? ArrayRef<AffineExpr>{d(2), d(1)}
                                           : ArrayRef<AffineExpr>{d(1), d(2)}, ctx);
  AffineMap oMap = AffineMap::get(3, 0, {d(0), d(2)}, ctx);
  Value init;
  Value c = op->getNumOperands() > 2 ? op->getOperand(2) : Value();
  if (!isNone(c) && beta != 0.0) {
    init = elementwise(b, loc, out, ValueRange{c},
                       [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                         if (beta == 1.0)
                           return a[0];
                         return nb.create<arith::MulFOp>(l, a[0], cst(nb, l, elt, beta));
                       });
  } else {
    init = filledTensor(b, loc, out, 0.0);
  }
  auto g = b.create<linalg::GenericOp>(
      loc, TypeRange{out}, ValueRange{op->getOperand(0), op->getOperand(1)},
      ValueRange{init}, ArrayRef<AffineMap>{aMap, bMap, oMap},
      ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                    utils::IteratorType::reduction,
                                    utils::IteratorType::parallel},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value p = nb.create<arith::MulFOp>(l, args[0], args[1]);
        if (alpha != 1.0)
          p = nb.create<arith::MulFOp>(l, p, cst(nb, l, elt, alpha));
        nb.create<linalg::YieldOp>(l, ValueRange{nb.create<arith::AddFOp>(l, args[2], p)});
      });
  return SmallVector<Value>{g.getResult(0)};
}

Results lowerConv(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  Value x = op->getOperand(0), w = op->getOperand(1);
  auto xt = typeOf(x), wt = typeOf(w), out = resultType(op);
  Type elt = out.getElementType();
  int64_t sp = xt.getRank() - 2;
  int64_t group = getIntAttr(op, "group", 1);
  SmallVector<int64_t> kernel(wt.getShape().begin() + 2, wt.getShape().end());
  SmallVector<int64_t> pb, pe, outSp;
  if (failed(computeWindowPads(op, xt.getShape().drop_front(2), kernel, pb, pe, outSp)))
    return failure();
  SmallVector<int64_t> strides = getIntsAttr(op, "strides"), dil = getIntsAttr(op, "dilations");
  if (strides.empty()) strides.assign(sp, 1);
  if (dil.empty()) dil.assign(sp, 1);
  // Pad so that every window lies inside the tensor.
  SmallVector<int64_t> low = {0, 0}, high = {0, 0};
  for (int64_t i = 0; i < sp; ++i) {
    low.push_back(pb[i]);
    int64_t need = (outSp[i] - 1) * strides[i] + dil[i] * (kernel[i] - 1) + 1;
    high.push_back(std::max<int64_t>(0, need - xt.getDimSize(2 + i) - pb[i]));
  }
  Value padded = padTensor(b, loc, x, low, high, 0.0);
  int64_t ocg = wt.getDimSize(0) / group, icg = wt.getDimSize(1);
  // Loops: n, m, c, k_1..k_sp, o_1..o_sp: output positions innermost, so the
  // inner loop is a contiguous (vectorizable) multiply-add over a row.
  int64_t nLoops = 2 + sp + 1 + sp;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  int64_t cDim = 2;
  auto kDim = [&](int64_t i) { return 3 + i; };
  auto oDim = [&](int64_t i) { return 3 + sp + i; };
  SmallVector<AffineExpr> xE = {d(0), d(1).floorDiv(ocg) * icg + d(cDim)};
  SmallVector<AffineExpr> wE = {d(1), d(cDim)};
  SmallVector<AffineExpr> oE = {d(0), d(1)};
  for (int64_t i = 0; i < sp; ++i) {
    xE.push_back(d(oDim(i)) * strides[i] + d(kDim(i)) * dil[i]);
    wE.push_back(d(kDim(i)));
    oE.push_back(d(oDim(i)));
  }
  if (group == 1)
    xE[1] = d(cDim);
  Value init;
  if (op->getNumOperands() > 2 && !isNone(op->getOperand(2))) {
    AffineMap biasMap = AffineMap::get(out.getRank(), 0, {d(1)}, ctx);
    init = mapped(b, loc, out, ValueRange{op->getOperand(2)}, {biasMap},
                  [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  } else {
    init = filledTensor(b, loc, out, 0.0);
  }
  SmallVector<utils::IteratorType> iters(nLoops, utils::IteratorType::parallel);
  for (int64_t i = cDim; i < oDim(0); ++i)
    iters[i] = utils::IteratorType::reduction;
  auto g = b.create<linalg::GenericOp>(
      loc, TypeRange{out}, ValueRange{padded, w}, ValueRange{init},
      ArrayRef<AffineMap>{AffineMap::get(nLoops, 0, xE, ctx),
                          AffineMap::get(nLoops, 0, wE, ctx),
                          AffineMap::get(nLoops, 0, oE, ctx)},
      iters, [&](OpBuilder &nb, Location l, ValueRange args) {
        Value p = nb.create<arith::MulFOp>(l, args[0], args[1]);
        nb.create<linalg::YieldOp>(l, ValueRange{nb.create<arith::AddFOp>(l, args[2], p)});
      });
  (void)elt;
  return SmallVector<Value>{g.getResult(0)};
}

// --- pooling and normalization ----------------------------------------------

Results lowerPool(OpBuilder &b, Operation *op, bool isMax) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  Value x = op->getOperand(0);
  auto xt = typeOf(x), out = resultType(op);
  Type elt = out.getElementType();
  int64_t sp = xt.getRank() - 2;
  SmallVector<int64_t> kernel = getIntsAttr(op, "kernel_shape");
  SmallVector<int64_t> pb, pe, outSp;
  if (failed(computeWindowPads(op, xt.getShape().drop_front(2), kernel, pb, pe, outSp)))
    return failure();
  SmallVector<int64_t> strides = getIntsAttr(op, "strides"), dil = getIntsAttr(op, "dilations");
  if (strides.empty()) strides.assign(sp, 1);
  if (dil.empty()) dil.assign(sp, 1);
  SmallVector<int64_t> low = {0, 0}, high = {0, 0};
  for (int64_t i = 0; i < sp; ++i) {
    low.push_back(pb[i]);
    int64_t need = (outSp[i] - 1) * strides[i] + dil[i] * (kernel[i] - 1) + 1;
    high.push_back(std::max<int64_t>(0, need - xt.getDimSize(2 + i) - pb[i]));
  }
  double padValue = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
  Value padded = padTensor(b, loc, x, low, high, padValue);
  // Loops: n, c, k_1..k_sp, o_1..o_sp (output positions innermost).
  int64_t nLoops = 2 + 2 * sp;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> xE = {d(0), d(1)}, kE, oE = {d(0), d(1)};
  for (int64_t i = 0; i < sp; ++i) {
    xE.push_back(d(2 + sp + i) * strides[i] + d(2 + i) * dil[i]);
    kE.push_back(d(2 + i));
    oE.push_back(d(2 + sp + i));
  }
  // The window operand only gives the k loops their extent.
  Value window = emptyTensor(b, loc, RankedTensorType::get(kernel, elt));
  Value acc = filledTensor(b, loc, out, padValue);
  SmallVector<utils::IteratorType> iters(nLoops, utils::IteratorType::parallel);
  for (int64_t i = 2; i < 2 + sp; ++i)
    iters[i] = utils::IteratorType::reduction;
  auto g = b.create<linalg::GenericOp>(
      loc, TypeRange{out}, ValueRange{padded, window}, ValueRange{acc},
      ArrayRef<AffineMap>{AffineMap::get(nLoops, 0, xE, ctx),
                          AffineMap::get(nLoops, 0, kE, ctx),
                          AffineMap::get(nLoops, 0, oE, ctx)},
      iters, [&](OpBuilder &nb, Location l, ValueRange args) {
        Value r = isMax ? (Value)nb.create<arith::MaximumFOp>(l, args[2], args[0])
                        : (Value)nb.create<arith::AddFOp>(l, args[2], args[0]);
        nb.create<linalg::YieldOp>(l, r);
      });
  Value result = g.getResult(0);
  if (isMax)
    return SmallVector<Value>{result};

  // Divisor per output position, decided at compile time: the number of
  // window taps inside the input (or inside input+pads with
  // count_include_pad), exactly as ONNX Runtime counts them.
  bool includePad = getIntAttr(op, "count_include_pad", 0) != 0;
  SmallVector<float> inv;
  int64_t total = 1;
  for (int64_t o : outSp)
    total *= o;
  inv.resize(total);
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rem = flat, count = 1;
    for (int64_t i = sp - 1; i >= 0; --i) {
      int64_t o = rem % outSp[i];
      rem /= outSp[i];
      int64_t lo = includePad ? -pb[i] : 0;
      int64_t hi = xt.getDimSize(2 + i) + (includePad ? pe[i] : 0);
      int64_t n = 0;
      for (int64_t k = 0; k < kernel[i]; ++k) {
        int64_t pos = o * strides[i] - pb[i] + k * dil[i];
        n += pos >= lo && pos < hi;
      }
      count *= n;
    }
    inv[flat] = count ? 1.0f / count : 0.0f;
  }
  auto invType = RankedTensorType::get(outSp, elt);
  Value invConst = b.create<arith::ConstantOp>(
      loc, DenseElementsAttr::get(invType, ArrayRef<float>(inv)));
  SmallVector<AffineExpr> spatial;
  for (int64_t i = 0; i < sp; ++i)
    spatial.push_back(d(2 + i));
  AffineMap id = AffineMap::getMultiDimIdentityMap(out.getRank(), ctx);
  AffineMap invMap = AffineMap::get(out.getRank(), 0, spatial, ctx);
  Value avg = mapped(b, loc, out, ValueRange{result, invConst}, {id, invMap},
                     [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                       return nb.create<arith::MulFOp>(l, a[0], a[1]);
                     });
  return SmallVector<Value>{avg};
}

Results lowerGlobalPool(OpBuilder &b, Operation *op, bool isMax) {
  Location loc = op->getLoc();
  Value x = op->getOperand(0);
  auto xt = typeOf(x), out = resultType(op);
  Type elt = out.getElementType();
  SmallVector<int64_t> dims;
  int64_t count = 1;
  for (int64_t i = 2; i < xt.getRank(); ++i) {
    dims.push_back(i);
    count *= xt.getDimSize(i);
  }
  double init = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
  Value r = reduce(b, loc, x, dims, init, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
    return isMax ? (Value)nb.create<arith::MaximumFOp>(l, a[1], a[0])
                 : (Value)nb.create<arith::AddFOp>(l, a[1], a[0]);
  });
  if (!isMax)
    r = elementwise(b, loc, typeOf(r), ValueRange{r},
                    [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                      return nb.create<arith::MulFOp>(l, a[0], cst(nb, l, elt, 1.0 / count));
                    });
  return SmallVector<Value>{reshapeTo(b, loc, r, out)};
}

Results lowerBatchNorm(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  auto out = resultType(op);
  Type elt = out.getElementType();
  double eps = getFloatAttr(op, "epsilon", 1e-5);
  AffineMap id = AffineMap::getMultiDimIdentityMap(out.getRank(), ctx);
  AffineMap ch = AffineMap::get(out.getRank(), 0, {getAffineDimExpr(1, ctx)}, ctx);
  Value r = mapped(b, loc, out,
                   ValueRange{op->getOperand(0), op->getOperand(1), op->getOperand(2),
                              op->getOperand(3), op->getOperand(4)},
                   {id, ch, ch, ch, ch},
                   [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                     Value var = nb.create<arith::AddFOp>(l, a[4], cst(nb, l, elt, eps));
                     Value inv = nb.create<arith::DivFOp>(
                         l, cst(nb, l, elt, 1.0), nb.create<math::SqrtOp>(l, var));
                     Value xc = nb.create<arith::SubFOp>(l, a[0], a[3]);
                     Value s = nb.create<arith::MulFOp>(l, a[1], inv);
                     return nb.create<arith::AddFOp>(l, nb.create<arith::MulFOp>(l, xc, s), a[2]);
                   });
  return SmallVector<Value>{r};
}

/// LayerNormalization: statistics over dims [axis, rank), then the affine
/// scale and bias broadcast from the right.
Results lowerLayerNorm(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  Value x = op->getOperand(0);
  auto out = resultType(op);
  Type elt = out.getElementType();
  int64_t rank = out.getRank();
  int64_t axis = getIntAttr(op, "axis", -1);
  if (axis < 0)
    axis += rank;
  double eps = getFloatAttr(op, "epsilon", 1e-5f);
  SmallVector<int64_t> dims;
  int64_t count = 1;
  for (int64_t i = axis; i < rank; ++i) {
    dims.push_back(i);
    count *= out.getDimSize(i);
  }
  auto add = [](OpBuilder &nb, Location l, ValueRange a) -> Value {
    return nb.create<arith::AddFOp>(l, a[1], a[0]);
  };
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap red = dropDimsMap(ctx, rank, dims);
  Value sum = reduce(b, loc, x, dims, 0.0, add);
  Value centered = mapped(b, loc, out, ValueRange{x, sum}, {id, red},
                          [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                            Value mean = nb.create<arith::DivFOp>(l, a[1], cst(nb, l, elt, count));
                            return nb.create<arith::SubFOp>(l, a[0], mean);
                          });
  Value sq = elementwise(b, loc, out, ValueRange{centered},
                         [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                           return nb.create<arith::MulFOp>(l, a[0], a[0]);
                         });
  Value var = reduce(b, loc, sq, dims, 0.0, add);
  SmallVector<Value> ins = {centered, var, op->getOperand(1)};
  SmallVector<AffineMap> maps = {id, red,
                                 broadcastMap(ctx, out.getShape(), typeOf(op->getOperand(1)))};
  bool hasBias = op->getNumOperands() > 2 && !isNone(op->getOperand(2));
  if (hasBias) {
    ins.push_back(op->getOperand(2));
    maps.push_back(broadcastMap(ctx, out.getShape(), typeOf(op->getOperand(2))));
  }
  Value y = mapped(b, loc, out, ins, maps, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
    Value v = nb.create<arith::DivFOp>(l, a[1], cst(nb, l, elt, count));
    v = nb.create<arith::AddFOp>(l, v, cst(nb, l, elt, eps));
    Value norm = nb.create<arith::DivFOp>(l, a[0], nb.create<math::SqrtOp>(l, v));
    Value r = nb.create<arith::MulFOp>(l, norm, a[2]);
    return hasBias ? (Value)nb.create<arith::AddFOp>(l, r, a[3]) : r;
  });
  SmallVector<Value> results = {y};
  for (unsigned i = 1; i < op->getNumResults(); ++i)
    results.push_back(Value());
  return results;
}

/// Softmax/LogSoftmax over `dims` (one axis since opset 13, all trailing
/// dims from `axis` before).
Results lowerSoftmax(OpBuilder &b, Operation *op, bool isLog) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  Value x = op->getOperand(0);
  auto out = resultType(op);
  Type elt = out.getElementType();
  int64_t rank = out.getRank();
  int64_t version = getIntAttr(op, "onnx.version", 13);
  int64_t axis = getIntAttr(op, "axis", version < 13 ? 1 : -1);
  if (axis < 0)
    axis += rank;
  SmallVector<int64_t> dims = {axis};
  if (version < 13)
    for (int64_t i = axis + 1; i < rank; ++i)
      dims.push_back(i);
  double ninf = -std::numeric_limits<double>::infinity();
  Value mx = reduce(b, loc, x, dims, ninf, [](OpBuilder &nb, Location l, ValueRange a) -> Value {
    return nb.create<arith::MaximumFOp>(l, a[1], a[0]);
  });
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap red = dropDimsMap(ctx, rank, dims);
  Value shifted = mapped(b, loc, out, ValueRange{x, mx}, {id, red},
                         [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                           return nb.create<arith::SubFOp>(l, a[0], a[1]);
                         });
  Value e = elementwise(b, loc, out, ValueRange{shifted},
                        [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                          return nb.create<math::ExpOp>(l, a[0]);
                        });
  Value sum = reduce(b, loc, e, dims, 0.0, [](OpBuilder &nb, Location l, ValueRange a) -> Value {
    return nb.create<arith::AddFOp>(l, a[1], a[0]);
  });
  Value r = isLog ? mapped(b, loc, out, ValueRange{shifted, sum}, {id, red},
                           [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                             return nb.create<arith::SubFOp>(l, a[0], nb.create<math::LogOp>(l, a[1]));
                           })
                  : mapped(b, loc, out, ValueRange{e, sum}, {id, red},
                           [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                             return nb.create<arith::DivFOp>(l, a[0], a[1]);
                           });
  (void)elt;
  return SmallVector<Value>{r};
}

Results lowerReduce(OpBuilder &b, Operation *op, StringRef kind) {
  Location loc = op->getLoc();
  Value x = op->getOperand(0);
  auto xt = typeOf(x), out = resultType(op);
  Type elt = out.getElementType();
  SmallVector<int64_t> axes;
  if (op->getNumOperands() > 1 && !isNone(op->getOperand(1))) {
    auto got = getConstantInts(op->getOperand(1));
    if (!got)
      return emitNodeError(op) << "axes must be a constant", failure();
    axes = *got;
  }
  bool noop = getIntAttr(op, "noop_with_empty_axes", 0) != 0;
  if (axes.empty() && noop)
    return SmallVector<Value>{x};
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < xt.getRank(); ++i)
    if (axes.empty() || llvm::is_contained(axes, i) ||
        llvm::is_contained(axes, i - xt.getRank()))
      dims.push_back(i);
  int64_t count = 1;
  for (int64_t dd : dims)
    count *= xt.getDimSize(dd);
  bool fl = isFloat(elt);
  double inf = std::numeric_limits<double>::infinity();
  Value input = x;
  if (kind == "SumSquare" || kind == "L2")
    input = elementwise(b, loc, xt, ValueRange{x}, [](OpBuilder &nb, Location l, ValueRange a) -> Value {
      return nb.create<arith::MulFOp>(l, a[0], a[0]);
    });
  else if (kind == "L1")
    input = elementwise(b, loc, xt, ValueRange{x}, [](OpBuilder &nb, Location l, ValueRange a) -> Value {
      return nb.create<math::AbsFOp>(l, a[0]);
    });
  double init = kind == "Max" ? (fl ? -inf : (double)std::numeric_limits<int64_t>::min())
               : kind == "Min" ? (fl ? inf : (double)std::numeric_limits<int64_t>::max())
               : kind == "Prod" ? 1.0 : 0.0;
  Value r = reduce(b, loc, input, dims, init, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
    if (kind == "Max")
      return fl ? (Value)nb.create<arith::MaximumFOp>(l, a[1], a[0])
                : (Value)nb.create<arith::MaxSIOp>(l, a[1], a[0]);
    if (kind == "Min")
      return fl ? (Value)nb.create<arith::MinimumFOp>(l, a[1], a[0])
                : (Value)nb.create<arith::MinSIOp>(l, a[1], a[0]);
    if (kind == "Prod")
      return fl ? (Value)nb.create<arith::MulFOp>(l, a[1], a[0])
                : (Value)nb.create<arith::MulIOp>(l, a[1], a[0]);
    return fl ? (Value)nb.create<arith::AddFOp>(l, a[1], a[0])
              : (Value)nb.create<arith::AddIOp>(l, a[1], a[0]);
  });
  if (kind == "Mean" || kind == "L2")
    r = elementwise(b, loc, typeOf(r), ValueRange{r}, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
      if (kind == "L2")
        return nb.create<math::SqrtOp>(l, a[0]);
      return fl ? (Value)nb.create<arith::DivFOp>(l, a[0], cst(nb, l, elt, count))
                : (Value)nb.create<arith::DivSIOp>(l, a[0], cst(nb, l, elt, count));
    });
  return SmallVector<Value>{reshapeTo(b, loc, r, out)};
}

// --- data movement -------------------------------------------------------------

Results lowerReshapeLike(OpBuilder &b, Operation *op) {
  return SmallVector<Value>{reshapeTo(b, op->getLoc(), op->getOperand(0), resultType(op))};
}

Results lowerTranspose(OpBuilder &b, Operation *op) {
  Value x = op->getOperand(0);
  auto xt = typeOf(x);
  SmallVector<int64_t> perm = getIntsAttr(op, "perm");
  if (perm.empty())
    for (int64_t i = xt.getRank() - 1; i >= 0; --i)
      perm.push_back(i);
  Value init = emptyTensor(b, op->getLoc(), resultType(op));
  auto t = b.create<linalg::TransposeOp>(op->getLoc(), x, init, perm);
  return SmallVector<Value>{t->getResult(0)};
}

Results lowerConcat(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  auto out = resultType(op);
  int64_t axis = getIntAttr(op, "axis", 0);
  if (axis < 0)
    axis += out.getRank();
  Value acc = emptyTensor(b, loc, out);
  int64_t offset = 0;
  for (Value in : op->getOperands()) {
    auto t = typeOf(in);
    SmallVector<OpFoldResult> offs, sizes, strides;
    for (int64_t i = 0; i < out.getRank(); ++i) {
      offs.push_back(b.getIndexAttr(i == axis ? offset : 0));
      sizes.push_back(b.getIndexAttr(t.getDimSize(i)));
      strides.push_back(b.getIndexAttr(1));
    }
    acc = b.create<tensor::InsertSliceOp>(loc, in, acc, offs, sizes, strides);
    offset += t.getDimSize(axis);
  }
  return SmallVector<Value>{acc};
}

Results lowerGather(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  Value data = op->getOperand(0), indices = op->getOperand(1);
  auto dt = typeOf(data), it = typeOf(indices), out = resultType(op);
  int64_t axis = getIntAttr(op, "axis", 0);
  if (axis < 0)
    axis += dt.getRank();
  int64_t ir = it.getRank();
  SmallVector<AffineExpr> idxE;
  for (int64_t i = 0; i < ir; ++i)
    idxE.push_back(getAffineDimExpr(axis + i, ctx));
  AffineMap idxMap = AffineMap::get(out.getRank(), 0, idxE, ctx);
  Value r = mapped(b, loc, out, ValueRange{indices}, {idxMap},
                   [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                     Value idx = nb.create<arith::IndexCastOp>(l, nb.getIndexType(), a[0]);
                     Value dim = nb.create<arith::ConstantIndexOp>(l, dt.getDimSize(axis));
                     Value zero = nb.create<arith::ConstantIndexOp>(l, 0);
                     Value neg = nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, idx, zero);
                     idx = nb.create<arith::SelectOp>(l, neg, nb.create<arith::AddIOp>(l, idx, dim), idx);
                     // Out-of-range indices are clamped rather than read wild.
                     Value maxIdx = nb.create<arith::ConstantIndexOp>(l, dt.getDimSize(axis) - 1);
                     idx = nb.create<arith::MaxSIOp>(l, nb.create<arith::MinSIOp>(l, idx, maxIdx), zero);
                     SmallVector<Value> coords;
                     for (int64_t i = 0; i < axis; ++i)
                       coords.push_back(nb.create<linalg::IndexOp>(l, i));
                     coords.push_back(idx);
                     for (int64_t i = axis + 1; i < dt.getRank(); ++i)
                       coords.push_back(nb.create<linalg::IndexOp>(l, i - 1 + ir));
                     return nb.create<tensor::ExtractOp>(l, data, coords);
                   });
  return SmallVector<Value>{r};
}

Results lowerConstant(OpBuilder &b, Operation *op) {
  auto value = cast<TypedAttr>(op->getAttr("value"));
  return SmallVector<Value>{b.create<arith::ConstantOp>(op->getLoc(), value)};
}

Results lowerShape(OpBuilder &b, Operation *op) {
  auto xt = typeOf(op->getOperand(0));
  auto out = resultType(op);
  int64_t r = xt.getRank();
  int64_t start = getIntAttr(op, "start", 0);
  if (start < 0) start += r;
  start = std::clamp<int64_t>(start, 0, r);
  SmallVector<int64_t> dims(xt.getShape().begin() + start,
                            xt.getShape().begin() + start + out.getDimSize(0));
  return SmallVector<Value>{b.create<arith::ConstantOp>(
      op->getLoc(), DenseElementsAttr::get(out, ArrayRef<int64_t>(dims)))};
}

Results forward(OpBuilder &, Operation *op) {
  SmallVector<Value> r = {op->getOperand(0)};
  for (unsigned i = 1; i < op->getNumResults(); ++i)
    r.push_back(Value());
  return r;
}

// --- the table ------------------------------------------------------------------

struct OpLowering {
  LowerFn lower;
  bool floatOnly = true;
};

const llvm::StringMap<OpLowering> &table() {
  static const llvm::StringMap<OpLowering> t = [] {
    llvm::StringMap<OpLowering> m;
    auto ew = [&](const char *name, ScalarFn fn, bool floatOnly = true) {
      m[name] = {elementwiseOp(std::move(fn)), floatOnly};
    };
    ew("Add", fold(arithBinary<arith::AddFOp, arith::AddIOp>()), false);
    ew("Sub", arithBinary<arith::SubFOp, arith::SubIOp>(), false);
    ew("Mul", fold(arithBinary<arith::MulFOp, arith::MulIOp>()), false);
    ew("Div", arithBinary<arith::DivFOp, arith::DivSIOp>(), false);
    ew("Sum", fold(arithBinary<arith::AddFOp, arith::AddIOp>()), false);
    ew("Max", fold(arithBinary<arith::MaximumFOp, arith::MaxSIOp>()), false);
    ew("Min", fold(arithBinary<arith::MinimumFOp, arith::MinSIOp>()), false);
    ew("Mean", [](OpBuilder &b, Location l, ValueRange a, Operation *) -> Value {
      Value acc = a[0];
      for (Value v : a.drop_front())
        acc = b.create<arith::AddFOp>(l, acc, v);
      return b.create<arith::DivFOp>(l, acc, cst(b, l, acc.getType(), a.size()));
    });
    ew("Pow", [](OpBuilder &b, Location l, ValueRange a, Operation *) -> Value {
      Value e = castScalar(b, l, a[1], a[0].getType());
      return b.create<math::PowFOp>(l, a[0], e);
    });
    ew("Relu", unaryF([](OpBuilder &b, Location l, Value x, Operation *) -> Value {
      return b.create<arith::MaximumFOp>(l, x, cst(b, l, x.getType(), 0.0));
    }));
    ew("Sigmoid", unaryF([](OpBuilder &b, Location l, Value x, Operation *) { return sigmoid(b, l, x); }));
    ew("Tanh", unaryF([](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::TanhOp>(l, x); }));
    ew("Exp", unaryF([](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::ExpOp>(l, x); }));
    ew("Log", unaryF([](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::LogOp>(l, x); }));
    ew("Sqrt", unaryF([](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::SqrtOp>(l, x); }));
    ew("Erf", unaryF([](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::ErfOp>(l, x); }));
    ew("Abs", unaryF([](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::AbsFOp>(l, x); }));
    ew("Neg", unaryF([](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<arith::NegFOp>(l, x); }));
    ew("Floor", unaryF([](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::FloorOp>(l, x); }));
    ew("Ceil", unaryF([](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::CeilOp>(l, x); }));
    ew("Reciprocal", unaryF([](OpBuilder &b, Location l, Value x, Operation *) -> Value {
      return b.create<arith::DivFOp>(l, cst(b, l, x.getType(), 1.0), x);
    }));
    ew("LeakyRelu", unaryF([](OpBuilder &b, Location l, Value x, Operation *op) -> Value {
      Value a = cst(b, l, x.getType(), getFloatAttr(op, "alpha", 0.01f));
      Value neg = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLT, x, cst(b, l, x.getType(), 0.0));
      return b.create<arith::SelectOp>(l, neg, b.create<arith::MulFOp>(l, x, a), x);
    }));
    ew("HardSigmoid", unaryF([](OpBuilder &b, Location l, Value x, Operation *op) -> Value {
      Type t = x.getType();
      Value y = b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, x, cst(b, l, t, getFloatAttr(op, "alpha", 0.2f))),
                                        cst(b, l, t, getFloatAttr(op, "beta", 0.5f)));
      return clampF(b, l, y, cst(b, l, t, 0.0), cst(b, l, t, 1.0));
    }));
    ew("HardSwish", unaryF([](OpBuilder &b, Location l, Value x, Operation *) -> Value {
      Type t = x.getType();
      Value y = b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, x, cst(b, l, t, 1.0 / 6.0)), cst(b, l, t, 0.5));
      return b.create<arith::MulFOp>(l, x, clampF(b, l, y, cst(b, l, t, 0.0), cst(b, l, t, 1.0)));
    }));
    ew("Gelu", unaryF([](OpBuilder &b, Location l, Value x, Operation *op) -> Value {
      Type t = x.getType();
      Value half = cst(b, l, t, 0.5), one = cst(b, l, t, 1.0);
      Value inner;
      if (getStrAttr(op, "approximate", "none") == "tanh") {
        Value x3 = b.create<arith::MulFOp>(l, x, b.create<arith::MulFOp>(l, x, x));
        Value p = b.create<arith::AddFOp>(l, x, b.create<arith::MulFOp>(l, x3, cst(b, l, t, 0.044715)));
        inner = b.create<math::TanhOp>(l, b.create<arith::MulFOp>(l, p, cst(b, l, t, std::sqrt(2.0 / M_PI))));
      } else {
        inner = b.create<math::ErfOp>(l, b.create<arith::MulFOp>(l, x, cst(b, l, t, M_SQRT1_2)));
      }
      return b.create<arith::MulFOp>(l, b.create<arith::MulFOp>(l, x, half), b.create<arith::AddFOp>(l, one, inner));
    }));
    ew("Clip", [](OpBuilder &b, Location l, ValueRange a, Operation *op) -> Value {
      // Operands are x and whichever of min/max are present.
      Value x = a[0];
      unsigned next = 1;
      if (!isNone(op->getOperand(1)))
        x = b.create<arith::MaximumFOp>(l, x, a[next++]);
      if (op->getNumOperands() > 2 && !isNone(op->getOperand(2)))
        x = b.create<arith::MinimumFOp>(l, x, a[next]);
      return x;
    });
    ew("Where", [](OpBuilder &b, Location l, ValueRange a, Operation *) -> Value {
      return b.create<arith::SelectOp>(l, a[0], a[1], a[2]);
    }, false);
    ew("Equal", compare(arith::CmpFPredicate::OEQ, arith::CmpIPredicate::eq), false);
    ew("Less", compare(arith::CmpFPredicate::OLT, arith::CmpIPredicate::slt), false);
    ew("Greater", compare(arith::CmpFPredicate::OGT, arith::CmpIPredicate::sgt), false);
    ew("LessOrEqual", compare(arith::CmpFPredicate::OLE, arith::CmpIPredicate::sle), false);
    ew("GreaterOrEqual", compare(arith::CmpFPredicate::OGE, arith::CmpIPredicate::sge), false);
    ew("Not", unaryF([](OpBuilder &b, Location l, Value x, Operation *) -> Value {
      return b.create<arith::XOrIOp>(l, x, cst(b, l, x.getType(), 1));
    }), false);
    ew("And", arithBinary<arith::AndIOp, arith::AndIOp>(), false);
    ew("Or", arithBinary<arith::OrIOp, arith::OrIOp>(), false);
    ew("Xor", arithBinary<arith::XOrIOp, arith::XOrIOp>(), false);
    ew("Cast", [](OpBuilder &b, Location l, ValueRange a, Operation *op) -> Value {
      return castScalar(b, l, a[0], resultType(op).getElementType());
    }, false);
    m["MatMul"] = {lowerMatMul, false};
    m["Gemm"] = {lowerGemm};
    m["Conv"] = {lowerConv};
    m["MaxPool"] = {[](OpBuilder &b, Operation *op) { return lowerPool(b, op, true); }};
    m["AveragePool"] = {[](OpBuilder &b, Operation *op) { return lowerPool(b, op, false); }};
    m["GlobalAveragePool"] = {[](OpBuilder &b, Operation *op) { return lowerGlobalPool(b, op, false); }};
    m["GlobalMaxPool"] = {[](OpBuilder &b, Operation *op) { return lowerGlobalPool(b, op, true); }};
    m["BatchNormalization"] = {lowerBatchNorm};
    m["LayerNormalization"] = {lowerLayerNorm};
    m["Softmax"] = {[](OpBuilder &b, Operation *op) { return lowerSoftmax(b, op, false); }};
    m["LogSoftmax"] = {[](OpBuilder &b, Operation *op) { return lowerSoftmax(b, op, true); }};
    for (const char *k : {"Mean", "Sum", "Max", "Min", "Prod", "L1", "L2", "SumSquare"})
      m[std::string("Reduce") + k] = {[k](OpBuilder &b, Operation *op) { return lowerReduce(b, op, k); },
                                      std::string(k) != "Max" && std::string(k) != "Min" &&
                                          std::string(k) != "Sum" && std::string(k) != "Prod"};
    for (const char *k : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"})
      m[k] = {lowerReshapeLike, false};
    m["Transpose"] = {lowerTranspose, false};
    m["Concat"] = {lowerConcat, false};
    m["Gather"] = {lowerGather, false};
    m["Constant"] = {lowerConstant, false};
    m["Shape"] = {lowerShape, false};
    m["Identity"] = {forward, false};
    m["Dropout"] = {forward, false};
    return m;
  }();
  return t;
}

bool isStaticTensorOrNone(Type t) {
  if (isa<NoneType>(t))
    return true;
  auto rt = dyn_cast<RankedTensorType>(t);
  return rt && rt.hasStaticShape();
}

bool isSupportedElement(Type t, bool floatOnly) {
  if (t.isF32())
    return true;
  return !floatOnly && (t.isInteger(64) || t.isInteger(32) || t.isInteger(1));
}

} // namespace

bool canLowerOnCpu(Operation *op, std::string &why) {
  StringRef name = op->getName().getStringRef();
  if (name == "onnx.NoValue")
    return true;
  if (!name.consume_front("onnx.")) {
    why = "not an onnx op";
    return false;
  }
  auto it = table().find(name);
  if (it == table().end()) {
    why = "no CPU lowering for this op";
    return false;
  }
  SmallVector<Type> types(op->getOperandTypes());
  for (Value r : op->getResults())
    if (!r.use_empty() || r == op->getResult(0))
      types.push_back(r.getType());
  for (Type t : types) {
    if (!isStaticTensorOrNone(t)) {
      llvm::raw_string_ostream os(why);
      os << "needs static shapes, got " << t
         << " (pin input shapes with --input-shape)";
      return false;
    }
    if (auto rt = dyn_cast<RankedTensorType>(t);
        rt && !isSupportedElement(rt.getElementType(), it->second.floatOnly)) {
      llvm::raw_string_ostream os(why);
      os << "element type " << rt.getElementType() << " is not supported";
      return false;
    }
  }
  // Results the CPU code does not compute must be unused.
  auto unusedBeyond = [&](unsigned n) {
    for (unsigned i = n; i < op->getNumResults(); ++i)
      if (!op->getResult(i).use_empty() && !isa<NoneType>(op->getResult(i).getType()))
        return false;
    return true;
  };
  if ((name == "MaxPool" || name == "Dropout" || name == "BatchNormalization" ||
       name == "LayerNormalization") &&
      !unusedBeyond(1)) {
    why = name == "BatchNormalization" ? "training-mode outputs are not supported"
                                        : "only the first output is supported";
    return false;
  }
  if (name == "BatchNormalization" && getIntAttr(op, "training_mode", 0)) {
    why = "training_mode=1 is not supported";
    return false;
  }
  if ((name == "Reshape" || name == "Squeeze" || name == "Unsqueeze") &&
      op->getNumOperands() > 1 && !isNone(op->getOperand(1)) &&
      !getConstantInts(op->getOperand(1)) && name != "Reshape") {
    why = "axes must be a constant";
    return false;
  }
  return true;
}

LogicalResult lowerOnnxToLinalg(Operation *root) {
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) {
    if (op->getDialect() && op->getDialect()->getNamespace() == "onnx" &&
        op->getName().getStringRef() != "onnx.NoValue")
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    std::string why;
    if (!canLowerOnCpu(op, why))
      return emitNodeError(op) << "not supported by provider cpu: " << why;
    StringRef name = op->getName().getStringRef().drop_front(5);
    OpBuilder b(op);
    Results r = table().find(name)->second.lower(b, op);
    if (failed(r))
      return failure();
    for (auto [i, v] : llvm::enumerate(*r))
      if (v)
        op->getResult(i).replaceAllUsesWith(v);
    op->erase();
  }
  // NoValue ops are dead now.
  root->walk([&](Operation *op) {
    if (op->getName().getStringRef() == "onnx.NoValue" && op->use_empty())
      op->erase();
  });
  return success();
}

} // namespace kiln::cpu
