//===- NormalizationOps.cpp - normalization, softmax, reductions ---===//
#include "providers/cpu/Lowering.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace kiln::onnx;

namespace kiln::cpu {
namespace {

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

} // namespace

void registerNormalizationOps(LoweringTable &m) {
  m["BatchNormalization"] = {lowerBatchNorm};
  m["LayerNormalization"] = {lowerLayerNorm};
  m["Softmax"] = {[](OpBuilder &b, Operation *op) { return lowerSoftmax(b, op, false); }};
  m["LogSoftmax"] = {[](OpBuilder &b, Operation *op) { return lowerSoftmax(b, op, true); }};
}

} // namespace kiln::cpu
