//===- NormalizationOps.cpp - normalization, softmax, reductions ---===//
#include "providers/cpu/Lowering.h"

#include "dialects/kiln/KilnDialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <limits>
#include <tuple>

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

using BodyN = std::function<SmallVector<Value>(OpBuilder &, Location, ValueRange)>;

/// A linalg.generic with several inputs and outputs (inits), explicit maps
/// (inputs then outputs) and iterators.
SmallVector<Value> generic(OpBuilder &b, Location loc, ValueRange ins,
                           ValueRange outs, ArrayRef<AffineMap> maps,
                           ArrayRef<utils::IteratorType> iters, const BodyN &body) {
  SmallVector<Type> types;
  for (Value v : outs)
    types.push_back(v.getType());
  auto g = b.create<linalg::GenericOp>(
      loc, types, ins, outs, maps, iters, [&](OpBuilder &nb, Location l, ValueRange args) {
        nb.create<linalg::YieldOp>(l, body(nb, l, args));
      });
  return SmallVector<Value>(g.getResults());
}

Value fillWith(OpBuilder &b, Location loc, RankedTensorType t, Value v,
               ValueRange dynSizes = {}) {
  return b.create<linalg::FillOp>(loc, v, emptyTensor(b, loc, t, dynSizes)).getResult(0);
}

/// The identity of max (lowest value) or min (highest value) for `elt`.
Value extremum(OpBuilder &b, Location loc, Type elt, bool lowest, bool isUnsigned = false) {
  if (auto ft = dyn_cast<FloatType>(elt))
    return b.create<arith::ConstantOp>(
        loc, b.getFloatAttr(ft, lowest ? -std::numeric_limits<double>::infinity()
                                       : std::numeric_limits<double>::infinity()));
  unsigned w = elt.getIntOrFloatBitWidth();
  APInt v = isUnsigned ? (lowest ? APInt::getMinValue(w) : APInt::getMaxValue(w))
                       : (lowest ? APInt::getSignedMinValue(w) : APInt::getSignedMaxValue(w));
  return b.create<arith::ConstantOp>(loc, b.getIntegerAttr(elt, v));
}

Value index64(OpBuilder &b, Location l, int64_t dim) {
  Value i = b.create<linalg::IndexOp>(l, dim);
  return b.create<arith::IndexCastOp>(l, b.getI64Type(), i);
}

/// Shape of `t` with `dims` dropped.
RankedTensorType dropDims(RankedTensorType t, ArrayRef<int64_t> dims, Type elt = {}) {
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < t.getRank(); ++i)
    if (!llvm::is_contained(dims, i))
      shape.push_back(t.getDimSize(i));
  return RankedTensorType::get(shape, elt ? elt : t.getElementType());
}

/// Reduction over `dims` starting from the scalar `init`.
Value reduceFrom(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> dims,
                 Value init, const BodyFn &combine) {
  MLIRContext *ctx = b.getContext();
  auto xt = typeOf(x);
  auto outType = dropDims(xt, dims);
  SmallVector<utils::IteratorType> iters;
  for (int64_t i = 0; i < xt.getRank(); ++i)
    iters.push_back(llvm::is_contained(dims, i) ? utils::IteratorType::reduction
                                                : utils::IteratorType::parallel);
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(xt.getRank(), ctx),
                                 dropDimsMap(ctx, xt.getRank(), dims)};
  SmallVector<Value> kept;
  for (int64_t i = 0; i < xt.getRank(); ++i)
    if (xt.isDynamicDim(i) && !llvm::is_contained(dims, i))
      kept.push_back(dimSize(b, loc, x, i));
  return generic(b, loc, ValueRange{x}, ValueRange{fillWith(b, loc, outType, init, kept)},
                 maps, iters, [&](OpBuilder &nb, Location l, ValueRange a) {
                   return SmallVector<Value>{combine(nb, l, a)};
                 })[0];
}

Value addF(OpBuilder &nb, Location l, ValueRange a) {
  return nb.create<arith::AddFOp>(l, a[1], a[0]);
}

/// 1/sqrt(sum / count + eps), elementwise: the normalizing factor from a
/// sum of squares over `count` elements.
/// The number of elements of `x` over `dims`: static, or a scalar of the
/// element type computed at run time where a dim has run-time size.
struct ElementCount {
  int64_t count = 1;
  Value runtime;
  /// The count as a scalar of type `elt` inside a body being built (a
  /// constant there when static).
  Value at(OpBuilder &nb, Location l, Type elt) const {
    return runtime ? runtime : cst(nb, l, elt, count);
  }
};

ElementCount elementCount(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> dims, Type elt) {
  auto xt = typeOf(x);
  ElementCount c;
  if (llvm::none_of(dims, [&](int64_t d) { return xt.isDynamicDim(d); })) {
    for (int64_t d : dims)
      c.count *= xt.getDimSize(d);
    return c;
  }
  Value n = b.create<arith::ConstantIndexOp>(loc, 1);
  for (int64_t d : dims)
    n = b.create<arith::MulIOp>(loc, n, dimSize(b, loc, x, d));
  Value count = b.create<arith::IndexCastOp>(loc, b.getI64Type(), n);
  c.runtime = isFloat(elt)          ? (Value)b.create<arith::SIToFPOp>(loc, elt, count)
              : elt.isInteger(64) ? count
                                  : (Value)b.create<arith::TruncIOp>(loc, elt, count);
  return c;
}

Value inverseRootMean(OpBuilder &b, Location loc, Value sum, const ElementCount &count,
                      double eps) {
  Type elt = typeOf(sum).getElementType();
  return elementwise(b, loc, typeOf(sum), ValueRange{sum},
                     [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                       Value v = nb.create<arith::DivFOp>(l, a[0], count.at(nb, l, elt));
                       v = nb.create<arith::AddFOp>(l, v, cst(nb, l, elt, eps));
                       return nb.create<arith::DivFOp>(l, cst(nb, l, elt, 1.0),
                                                       nb.create<math::SqrtOp>(l, v));
                     });
}

/// The dims [axis, rank) of a LayerNorm-like op (negative axis from the end).
SmallVector<int64_t> trailingDims(Operation *op, int64_t rank) {
  int64_t axis = getIntAttr(op, "axis", -1);
  if (axis < 0)
    axis += rank;
  SmallVector<int64_t> dims;
  for (int64_t i = axis; i < rank; ++i)
    dims.push_back(i);
  return dims;
}

/// Mean and 1/sqrt(var + eps) of `x` over `dims` (population variance),
/// both with the dims dropped; also returns x - mean.
struct Moments {
  Value mean, invStd, centered;
};
/// With `skip` (a residual of x's type), the statistics are those of
/// x + skip, summed inside the reduction and the centering (SkipLayerNorm).
Moments moments(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> dims, double eps,
                Value skip = {}) {
  MLIRContext *ctx = b.getContext();
  auto xt = typeOf(x);
  Type elt = xt.getElementType();
  ElementCount count = elementCount(b, loc, x, dims, elt);
  AffineMap id = AffineMap::getMultiDimIdentityMap(xt.getRank(), ctx);
  AffineMap red = dropDimsMap(ctx, xt.getRank(), dims);
  Value sum;
  if (skip) {
    SmallVector<utils::IteratorType> iters;
    for (int64_t i = 0; i < xt.getRank(); ++i)
      iters.push_back(llvm::is_contained(dims, i) ? utils::IteratorType::reduction
                                                  : utils::IteratorType::parallel);
    SmallVector<Value> kept;
    for (int64_t i = 0; i < xt.getRank(); ++i)
      if (xt.isDynamicDim(i) && !llvm::is_contained(dims, i))
        kept.push_back(dimSize(b, loc, x, i));
    sum = generic(b, loc, ValueRange{x, skip},
                  ValueRange{fillWith(b, loc, dropDims(xt, dims), cst(b, loc, elt, 0.0), kept)},
                  {id, id, red}, iters, [](OpBuilder &nb, Location l, ValueRange a) {
                    Value v = nb.create<arith::AddFOp>(l, a[0], a[1]);
                    return SmallVector<Value>{nb.create<arith::AddFOp>(l, a[2], v)};
                  })[0];
  } else {
    sum = reduce(b, loc, x, dims, 0.0, addF);
  }
  Value mean = elementwise(b, loc, typeOf(sum), ValueRange{sum},
                           [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                             return nb.create<arith::DivFOp>(l, a[0], count.at(nb, l, elt));
                           });
  SmallVector<Value> ins = {x};
  SmallVector<AffineMap> maps = {id};
  if (skip) {
    ins.push_back(skip);
    maps.push_back(id);
  }
  ins.push_back(mean);
  maps.push_back(red);
  Value centered = mapped(b, loc, xt, ins, maps, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
    Value v = skip ? (Value)nb.create<arith::AddFOp>(l, a[0], a[1]) : a[0];
    return nb.create<arith::SubFOp>(l, v, a.back());
  });
  Value sq = elementwise(b, loc, xt, ValueRange{centered},
                         [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                           return nb.create<arith::MulFOp>(l, a[0], a[0]);
                         });
  Value var = reduce(b, loc, sq, dims, 0.0, addF);
  return {mean, inverseRootMean(b, loc, var, count, eps), centered};
}

/// The operands a and b when `v` is a + b computed by an elementwise
/// generic (the lowered residual Add) over two tensors of v's type.
std::optional<std::pair<Value, Value>> sumOperands(Value v) {
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g || g.getNumDpsInputs() != 2 || g.getNumResults() != 1 ||
      !llvm::all_of(g.getIndexingMapsArray(), [](AffineMap m) { return m.isIdentity(); }) ||
      g.getDpsInputs()[0].getType() != v.getType() || g.getDpsInputs()[1].getType() != v.getType())
    return std::nullopt;
  Block &body = g.getRegion().front();
  auto add = dyn_cast<arith::AddFOp>(body.getTerminator()->getOperand(0).getDefiningOp());
  if (!add || !llvm::hasSingleElement(body.without_terminator()) ||
      !((add.getLhs() == body.getArgument(0) && add.getRhs() == body.getArgument(1)) ||
        (add.getLhs() == body.getArgument(1) && add.getRhs() == body.getArgument(0))))
    return std::nullopt;
  return std::make_pair(g.getDpsInputs()[0], g.getDpsInputs()[1]);
}

/// LayerNormalization: statistics over dims [axis, rank), then the affine
/// scale and bias broadcast from the right. Mean and InvStdDev keep the
/// reduced dims as 1.
Results lowerLayerNorm(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  Value x = op->getOperand(0);
  auto out = resultType(op);
  int64_t rank = out.getRank();
  SmallVector<int64_t> dims = trailingDims(op, rank);
  // A LayerNorm of a residual Add (marked by kiln-fuse-subgraphs) reads the
  // Add's operands: the sum is formed inside its kernels, and the Add's
  // own kernel goes when nothing else reads it.
  Value skip;
  if (op->hasAttr("kiln.skip_layer_norm"))
    if (auto ab = sumOperands(x)) {
      x = ab->first;
      skip = ab->second;
    }
  Moments mo = moments(b, loc, x, dims, getFloatAttr(op, "epsilon", 1e-5f), skip);
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap red = dropDimsMap(ctx, rank, dims);
  SmallVector<Value> ins = {mo.centered, mo.invStd, op->getOperand(1)};
  SmallVector<AffineMap> maps = {id, red,
                                 broadcastMap(ctx, out.getShape(), typeOf(op->getOperand(1)))};
  bool hasBias = op->getNumOperands() > 2 && !isNone(op->getOperand(2));
  if (hasBias) {
    ins.push_back(op->getOperand(2));
    maps.push_back(broadcastMap(ctx, out.getShape(), typeOf(op->getOperand(2))));
  }
  Value y = mapped(b, loc, out, ins, maps, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
    Value r = nb.create<arith::MulFOp>(l, nb.create<arith::MulFOp>(l, a[0], a[1]), a[2]);
    return hasBias ? (Value)nb.create<arith::AddFOp>(l, r, a[3]) : r;
  });
  SmallVector<Value> results = {y, Value(), Value()};
  for (unsigned i = 1; i < 3 && i < op->getNumResults(); ++i)
    if (auto t = dyn_cast<RankedTensorType>(op->getResult(i).getType()))
      results[i] = reshapeTo(b, loc, i == 1 ? mo.mean : mo.invStd, t);
  results.resize(op->getNumResults());
  return results;
}

/// RMSNormalization: x / sqrt(mean(x^2 over [axis, rank)) + eps) * scale.
Results lowerRMSNorm(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  Value x = op->getOperand(0), scale = op->getOperand(1);
  auto out = resultType(op);
  auto xt = typeOf(x);
  int64_t rank = out.getRank();
  SmallVector<int64_t> dims = trailingDims(op, rank);
  ElementCount count = elementCount(b, loc, x, dims, xt.getElementType());
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap red = dropDimsMap(ctx, rank, dims);
  Value sumSq = reduce(b, loc, x, dims, 0.0, [](OpBuilder &nb, Location l, ValueRange a) -> Value {
    return nb.create<arith::AddFOp>(l, a[1], nb.create<arith::MulFOp>(l, a[0], a[0]));
  });
  Value invRms = inverseRootMean(b, loc, sumSq, count, getFloatAttr(op, "epsilon", 1e-5f));
  Value y = mapped(b, loc, out, {x, invRms, scale},
                   {id, red, broadcastMap(ctx, out.getShape(), typeOf(scale))},
                   [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                     return nb.create<arith::MulFOp>(l, nb.create<arith::MulFOp>(l, a[0], a[1]),
                                                     a[2]);
                   });
  return SmallVector<Value>{y};
}

/// InstanceNormalization: per (n, c) statistics over the spatial dims.
Results lowerInstanceNorm(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  auto out = resultType(op);
  int64_t rank = out.getRank();
  SmallVector<int64_t> dims;
  for (int64_t i = 2; i < rank; ++i)
    dims.push_back(i);
  Moments mo = moments(b, loc, op->getOperand(0), dims, getFloatAttr(op, "epsilon", 1e-5f));
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap red = dropDimsMap(ctx, rank, dims);
  AffineMap ch = AffineMap::get(rank, 0, {getAffineDimExpr(1, ctx)}, ctx);
  Value y = mapped(b, loc, out, ValueRange{mo.centered, mo.invStd, op->getOperand(1), op->getOperand(2)},
                   {id, red, ch, ch}, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                     Value r = nb.create<arith::MulFOp>(l, nb.create<arith::MulFOp>(l, a[0], a[1]), a[2]);
                     return nb.create<arith::AddFOp>(l, r, a[3]);
                   });
  return SmallVector<Value>{y};
}

/// GroupNormalization: statistics per (n, group) over the group's channels
/// and the spatial dims, computed on x viewed as [N, G, C/G, spatial]; scale
/// and bias are per channel (opset 21) or per group (opset 18).
Results lowerGroupNorm(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  auto out = resultType(op);
  int64_t groups = getIntAttr(op, "num_groups", 1), channels = out.getDimSize(1);
  int64_t perGroup = channels / groups, spatial = out.getNumElements() / out.getDimSize(0) / channels;
  auto grouped = RankedTensorType::get({out.getDimSize(0), groups, perGroup, spatial}, out.getElementType());
  Value x = reshapeTo(b, loc, op->getOperand(0), grouped);
  Moments mo = moments(b, loc, x, {2, 3}, getFloatAttr(op, "epsilon", 1e-5f));
  AffineMap id = AffineMap::getMultiDimIdentityMap(4, ctx);
  AffineMap red = dropDimsMap(ctx, 4, {2, 3});
  auto affineOf = [&](Value v) {
    AffineExpr e = typeOf(v).getDimSize(0) == channels && groups != channels
                       ? getAffineDimExpr(1, ctx) * perGroup + getAffineDimExpr(2, ctx)
                       : getAffineDimExpr(1, ctx);
    return AffineMap::get(4, 0, {e}, ctx);
  };
  Value scale = op->getOperand(1), bias = op->getOperand(2);
  Value y = mapped(b, loc, grouped, ValueRange{mo.centered, mo.invStd, scale, bias},
                   {id, red, affineOf(scale), affineOf(bias)},
                   [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                     Value r = nb.create<arith::MulFOp>(l, nb.create<arith::MulFOp>(l, a[0], a[1]), a[2]);
                     return nb.create<arith::AddFOp>(l, r, a[3]);
                   });
  return SmallVector<Value>{reshapeTo(b, loc, y, out)};
}

/// LRN: x / (bias + alpha / size * sum of squares over the channel window
/// [c - (size-1)/2, c + ceil((size-1)/2)])^beta, the window zero-padded.
Results lowerLRN(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  Value x = op->getOperand(0);
  auto out = resultType(op);
  Type elt = out.getElementType();
  int64_t rank = out.getRank(), size = getIntAttr(op, "size", 1);
  double alpha = getFloatAttr(op, "alpha", 1e-4f), beta = getFloatAttr(op, "beta", 0.75f),
         bias = getFloatAttr(op, "bias", 1.0f);
  Value sq = elementwise(b, loc, out, ValueRange{x}, [](OpBuilder &nb, Location l, ValueRange a) -> Value {
    return nb.create<arith::MulFOp>(l, a[0], a[0]);
  });
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  low[1] = (size - 1) / 2;
  high[1] = size - 1 - low[1];
  Value padded = padTensor(b, loc, sq, low, high, 0.0);
  // Loops: the output dims, then the window offset k (a reduction).
  SmallVector<AffineExpr> window;
  for (int64_t i = 0; i < rank; ++i)
    window.push_back(i == 1 ? getAffineDimExpr(1, ctx) + getAffineDimExpr(rank, ctx)
                            : getAffineDimExpr(i, ctx));
  SmallVector<AffineExpr> outDims;
  for (int64_t i = 0; i < rank; ++i)
    outDims.push_back(getAffineDimExpr(i, ctx));
  SmallVector<AffineMap> maps = {AffineMap::get(rank + 1, 0, window, ctx),
                                 AffineMap::get(rank + 1, 0, {getAffineDimExpr(rank, ctx)}, ctx),
                                 AffineMap::get(rank + 1, 0, outDims, ctx)};
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  iters.push_back(utils::IteratorType::reduction);
  Value taps = emptyTensor(b, loc, RankedTensorType::get({size}, elt));
  Value sum = generic(b, loc, ValueRange{padded, taps}, ValueRange{filledTensor(b, loc, out, 0.0)}, maps,
                      iters, [](OpBuilder &nb, Location l, ValueRange a) {
                        return SmallVector<Value>{nb.create<arith::AddFOp>(l, a[2], a[0])};
                      })[0];
  Value y = elementwise(b, loc, out, ValueRange{x, sum}, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
    Value d = nb.create<arith::MulFOp>(l, a[1], cst(nb, l, elt, alpha / size));
    d = nb.create<arith::AddFOp>(l, d, cst(nb, l, elt, bias));
    d = nb.create<math::PowFOp>(l, d, cst(nb, l, elt, beta));
    return nb.create<arith::DivFOp>(l, a[0], d);
  });
  return SmallVector<Value>{y};
}

/// BatchNormalization with training_mode=1: batch statistics over every dim
/// but the channel; running mean/var blended with `momentum`.
Results lowerBatchNormTraining(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  auto out = resultType(op);
  Type elt = out.getElementType();
  int64_t rank = out.getRank();
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < rank; ++i)
    if (i != 1)
      dims.push_back(i);
  double eps = getFloatAttr(op, "epsilon", 1e-5f);
  double momentum = getFloatAttr(op, "momentum", 0.9f);
  Moments mo = moments(b, loc, op->getOperand(0), dims, eps);
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap ch = AffineMap::get(rank, 0, {getAffineDimExpr(1, ctx)}, ctx);
  Value y = mapped(b, loc, out, ValueRange{mo.centered, mo.invStd, op->getOperand(1), op->getOperand(2)},
                   {id, ch, ch, ch}, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                     Value r = nb.create<arith::MulFOp>(l, nb.create<arith::MulFOp>(l, a[0], a[1]), a[2]);
                     return nb.create<arith::AddFOp>(l, r, a[3]);
                   });
  SmallVector<Value> results = {y, Value(), Value()};
  auto chType = typeOf(mo.mean);
  auto blend = [&](Value running, Value current) {
    return elementwise(b, loc, chType, ValueRange{running, current},
                       [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                         Value r = nb.create<arith::MulFOp>(l, a[0], cst(nb, l, elt, momentum));
                         Value c = nb.create<arith::MulFOp>(l, a[1], cst(nb, l, elt, 1.0 - momentum));
                         return nb.create<arith::AddFOp>(l, r, c);
                       });
  };
  if (op->getNumResults() > 1 && !isa<NoneType>(op->getResult(1).getType()))
    results[1] = blend(op->getOperand(3), mo.mean);
  if (op->getNumResults() > 2 && !isa<NoneType>(op->getResult(2).getType())) {
    // Population variance = (1/invStd)^2 - eps.
    Value var = elementwise(b, loc, chType, ValueRange{mo.invStd},
                            [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                              Value s = nb.create<arith::DivFOp>(l, cst(nb, l, elt, 1.0), a[0]);
                              return nb.create<arith::SubFOp>(l, nb.create<arith::MulFOp>(l, s, s),
                                                              cst(nb, l, elt, eps));
                            });
    results[2] = blend(op->getOperand(4), var);
  }
  results.resize(op->getNumResults());
  return results;
}

Results lowerBatchNormAny(OpBuilder &b, Operation *op) {
  if (getIntAttr(op, "training_mode", 0))
    return lowerBatchNormTraining(b, op);
  return lowerBatchNorm(b, op);
}

/// MeanVarianceNormalization: (x - mean) / (sqrt(E[x^2] - mean^2) + 1e-9)
/// over `axes` (default N, H, W), as the ONNX function body computes it.
Results lowerMVN(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  Value x = op->getOperand(0);
  auto out = resultType(op);
  Type elt = out.getElementType();
  int64_t rank = out.getRank();
  SmallVector<int64_t> axes = getIntsAttr(op, "axes");
  if (!op->hasAttr("axes"))
    axes = {0, 2, 3};
  SmallVector<int64_t> dims;
  for (int64_t a : axes)
    dims.push_back(a < 0 ? a + rank : a);
  llvm::sort(dims);
  int64_t count = 1;
  for (int64_t d : dims)
    count *= out.getDimSize(d);
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap red = dropDimsMap(ctx, rank, dims);
  Value sum = reduce(b, loc, x, dims, 0.0, addF);
  Value sq = elementwise(b, loc, out, ValueRange{x}, [](OpBuilder &nb, Location l, ValueRange a) -> Value {
    return nb.create<arith::MulFOp>(l, a[0], a[0]);
  });
  Value sumSq = reduce(b, loc, sq, dims, 0.0, addF);
  Value y = mapped(b, loc, out, ValueRange{x, sum, sumSq}, {id, red, red},
                   [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                     Value n = cst(nb, l, elt, count);
                     Value mean = nb.create<arith::DivFOp>(l, a[1], n);
                     Value meanSq = nb.create<arith::DivFOp>(l, a[2], n);
                     Value var = nb.create<arith::SubFOp>(l, meanSq, nb.create<arith::MulFOp>(l, mean, mean));
                     Value sd = nb.create<arith::AddFOp>(l, nb.create<math::SqrtOp>(l, var), cst(nb, l, elt, 1e-9));
                     return nb.create<arith::DivFOp>(l, nb.create<arith::SubFOp>(l, a[0], mean), sd);
                   });
  return SmallVector<Value>{y};
}

/// LpNormalization: x / ||x||_p along `axis` (p = 1 or 2).
Results lowerLpNorm(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  Value x = op->getOperand(0);
  auto out = resultType(op);
  int64_t rank = out.getRank();
  int64_t axis = getIntAttr(op, "axis", -1);
  if (axis < 0)
    axis += rank;
  bool l1 = getIntAttr(op, "p", 2) == 1;
  Value mag = elementwise(b, loc, out, ValueRange{x}, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
    return l1 ? (Value)nb.create<math::AbsFOp>(l, a[0]) : (Value)nb.create<arith::MulFOp>(l, a[0], a[0]);
  });
  Value norm = reduce(b, loc, mag, {axis}, 0.0, addF);
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  Value y = mapped(b, loc, out, ValueRange{x, norm}, {id, dropDimsMap(ctx, rank, {axis})},
                   [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                     Value n = l1 ? a[1] : (Value)nb.create<math::SqrtOp>(l, a[1]);
                     // A zero norm gives 0, not 0/0.
                     Value zero = cst(nb, l, a[0].getType(), 0.0);
                     Value isZero = nb.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, n, zero);
                     return nb.create<arith::SelectOp>(l, isZero, zero,
                                                       nb.create<arith::DivFOp>(l, a[0], n));
                   });
  return SmallVector<Value>{y};
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

/// Index of the first (or last) extreme element over `dims`, in row-major
/// order of those dims: one pass keeping (best value, its linear index).
Value argExtreme(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> dims,
                 bool largest, bool last) {
  MLIRContext *ctx = b.getContext();
  auto xt = typeOf(x);
  Type elt = xt.getElementType();
  int64_t rank = xt.getRank();
  auto valType = dropDims(xt, dims), idxType = dropDims(xt, dims, b.getI64Type());
  SmallVector<utils::IteratorType> iters;
  for (int64_t i = 0; i < rank; ++i)
    iters.push_back(llvm::is_contained(dims, i) ? utils::IteratorType::reduction
                                                : utils::IteratorType::parallel);
  AffineMap red = dropDimsMap(ctx, rank, dims);
  // Run-time sizes of the kept dims.
  SmallVector<Value> keptSizes;
  for (int64_t i = 0; i < rank; ++i)
    if (!llvm::is_contained(dims, i) && xt.isDynamicDim(i))
      keptSizes.push_back(dimSize(b, loc, x, i));
  Value vInit = fillWith(b, loc, valType, extremum(b, loc, elt, largest), keptSizes);
  Value iInit = fillWith(b, loc, idxType, cst(b, loc, b.getI64Type(), 0), keptSizes);
  return generic(b, loc, ValueRange{x}, ValueRange{vInit, iInit},
                 {AffineMap::getMultiDimIdentityMap(rank, ctx), red, red}, iters,
                 [&](OpBuilder &nb, Location l, ValueRange a) -> SmallVector<Value> {
                   Value idx = cst(nb, l, nb.getI64Type(), 0);
                   for (int64_t d : dims) {
                     idx = nb.create<arith::MulIOp>(l, idx, cst(nb, l, nb.getI64Type(), xt.getDimSize(d)));
                     idx = nb.create<arith::AddIOp>(l, idx, index64(nb, l, d));
                   }
                   Value better;
                   if (isFloat(elt)) {
                     better = nb.create<arith::CmpFOp>(l, largest ? arith::CmpFPredicate::OGT
                                                                  : arith::CmpFPredicate::OLT, a[0], a[1]);
                     if (last)
                       better = nb.create<arith::OrIOp>(l, better, nb.create<arith::CmpFOp>(
                                                                       l, arith::CmpFPredicate::OEQ, a[0], a[1]));
                   } else {
                     better = nb.create<arith::CmpIOp>(l, largest ? arith::CmpIPredicate::sgt
                                                                  : arith::CmpIPredicate::slt, a[0], a[1]);
                     if (last)
                       better = nb.create<arith::OrIOp>(l, better, nb.create<arith::CmpIOp>(
                                                                       l, arith::CmpIPredicate::eq, a[0], a[1]));
                   }
                   // The first element always wins, so an all -inf row gives 0.
                   Value first = nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, idx,
                                                          cst(nb, l, nb.getI64Type(), 0));
                   better = nb.create<arith::OrIOp>(l, better, first);
                   return {nb.create<arith::SelectOp>(l, better, a[0], a[1]),
                           nb.create<arith::SelectOp>(l, better, idx, a[2])};
                 })[1];
}

Results lowerArg(OpBuilder &b, Operation *op, bool largest) {
  auto xt = typeOf(op->getOperand(0));
  int64_t axis = getIntAttr(op, "axis", 0);
  if (axis < 0)
    axis += xt.getRank();
  // An empty axis of run-time size has no extreme: the run fails there.
  if (xt.isDynamicDim(axis)) {
    Location loc = op->getLoc();
    b.create<CheckOp>(loc,
                      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt,
                                              dimSize(b, loc, op->getOperand(0), axis),
                                              b.create<arith::ConstantIndexOp>(loc, 0)),
                      describeNode(op) + ": the axis is empty at run time", /*fatal=*/true);
  }
  Value r = argExtreme(b, op->getLoc(), op->getOperand(0), {axis}, largest,
                       getIntAttr(op, "select_last_index", 0) != 0);
  return SmallVector<Value>{reshapeTo(b, op->getLoc(), r, resultType(op))};
}

/// Hardmax: 1 at the first maximum over the normalized dims, else 0.
Results lowerHardmax(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  auto out = resultType(op);
  int64_t rank = out.getRank();
  int64_t version = getIntAttr(op, "onnx.version", 13);
  int64_t axis = getIntAttr(op, "axis", version < 13 ? 1 : -1);
  if (axis < 0)
    axis += rank;
  SmallVector<int64_t> dims = {axis};
  if (version < 13)
    for (int64_t i = axis + 1; i < rank; ++i)
      dims.push_back(i);
  Value idx = argExtreme(b, loc, op->getOperand(0), dims, true, false);
  AffineMap red = dropDimsMap(ctx, rank, dims);
  Value y = mapped(b, loc, out, ValueRange{idx}, {red}, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
    Value here = cst(nb, l, nb.getI64Type(), 0);
    for (int64_t d : dims) {
      here = nb.create<arith::MulIOp>(l, here, cst(nb, l, nb.getI64Type(), out.getDimSize(d)));
      here = nb.create<arith::AddIOp>(l, here, index64(nb, l, d));
    }
    Value hit = nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, here, a[0]);
    Type elt = out.getElementType();
    return nb.create<arith::SelectOp>(l, hit, cst(nb, l, elt, 1.0), cst(nb, l, elt, 0.0));
  });
  return SmallVector<Value>{y};
}

/// TopK with a constant k, O(n^2) along the axis: each element's rank is the
/// number of elements ordered before it (ties by lower index), then output
/// slot r takes the element of rank r. Always sorted.
Results lowerTopK(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  Value x = op->getOperand(0);
  auto xt = typeOf(x);
  Type elt = xt.getElementType(), i64 = b.getI64Type();
  int64_t rank = xt.getRank();
  int64_t axis = getIntAttr(op, "axis", -1);
  if (axis < 0)
    axis += rank;
  bool largest = getIntAttr(op, "largest", 1) != 0;
  // Loop nest: the tensor's dims plus one extra dim (rank) along the axis.
  SmallVector<AffineExpr> own, other;
  for (int64_t i = 0; i < rank; ++i) {
    own.push_back(getAffineDimExpr(i, ctx));
    other.push_back(getAffineDimExpr(i == axis ? rank : i, ctx));
  }
  AffineMap ownMap = AffineMap::get(rank + 1, 0, own, ctx);
  AffineMap otherMap = AffineMap::get(rank + 1, 0, other, ctx);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  iters.push_back(utils::IteratorType::reduction);
  auto rankType = RankedTensorType::get(xt.getShape(), i64);
  Value ranks = generic(
      b, loc, ValueRange{x, x},
      ValueRange{fillWith(b, loc, rankType, cst(b, loc, i64, 0), dynamicSizesLike(b, loc, rankType, x))},
      {ownMap, otherMap, ownMap}, iters, [&](OpBuilder &nb, Location l, ValueRange a) -> SmallVector<Value> {
        Value mine = a[0], theirs = a[1];
        Value before, same;
        if (isFloat(elt)) {
          before = nb.create<arith::CmpFOp>(l, largest ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT,
                                            theirs, mine);
          same = nb.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, theirs, mine);
        } else {
          bool u = wasUnsigned(op);
          before = nb.create<arith::CmpIOp>(l, largest ? (u ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt)
                                                       : (u ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt),
                                            theirs, mine);
          same = nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, theirs, mine);
        }
        Value lower = nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, index64(nb, l, rank),
                                               index64(nb, l, axis));
        before = nb.create<arith::OrIOp>(l, before, nb.create<arith::AndIOp>(l, same, lower));
        Value one = nb.create<arith::ExtUIOp>(l, i64, before);
        return {nb.create<arith::AddIOp>(l, a[2], one)};
      })[0];
  // (With run-time sizes k is a constant: the other dims are the input's.)
  auto valType = resultType(op, 0);
  auto idxType = RankedTensorType::get(valType.getShape(), i64);
  SmallVector<Value> outSizes = dynamicSizesLike(b, loc, valType, x);
  if (xt.isDynamicDim(axis)) {
    Value k = b.create<arith::ConstantIndexOp>(loc, valType.getDimSize(axis));
    b.create<CheckOp>(loc,
                      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sle, k,
                                              dimSize(b, loc, x, axis)),
                      describeNode(op) + ": k = " + std::to_string(valType.getDimSize(axis)) +
                          " is larger than the axis at run time",
                      /*fatal=*/true);
  }
  // Second nest: output dims (k along the axis) plus the input's axis.
  SmallVector<Value> r = generic(
      b, loc, ValueRange{x, ranks},
      ValueRange{fillWith(b, loc, valType, cst(b, loc, elt, 0), outSizes),
                 fillWith(b, loc, idxType, cst(b, loc, i64, 0), outSizes)},
      {otherMap, otherMap, ownMap, ownMap}, iters,
      [&](OpBuilder &nb, Location l, ValueRange a) -> SmallVector<Value> {
        Value hit = nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, a[1], index64(nb, l, axis));
        return {nb.create<arith::SelectOp>(l, hit, a[0], a[2]),
                nb.create<arith::SelectOp>(l, hit, index64(nb, l, rank), a[3])};
      });
  return SmallVector<Value>{r[0], r[1]};
}

Results lowerReduce(OpBuilder &b, Operation *op, StringRef kind) {
  Location loc = op->getLoc();
  Value x = op->getOperand(0);
  auto xt = typeOf(x), out = resultType(op);
  Type elt = out.getElementType();
  // Integer LogSum/LogSumExp compute in f64, as ONNX's reference does, and
  // convert back at the end.
  RankedTensorType intOut;
  if ((kind == "LogSum" || kind == "LogSumExp") && !isFloat(elt)) {
    intOut = out;
    elt = b.getF64Type();
    xt = xt.clone(elt);
    out = out.clone(elt);
    x = elementwise(b, loc, xt, ValueRange{x}, [&](OpBuilder &nb, Location l, ValueRange a) {
      return castScalar(nb, l, a[0], elt);
    });
  }
  SmallVector<int64_t> axes;
  if (op->getNumOperands() > 1 && !isNone(op->getOperand(1))) {
    auto got = getConstantInts(op->getOperand(1));
    if (!got)
      return emitNodeError(op) << "axes must be a constant", failure();
    axes = *got;
  }
  bool noop = getIntAttr(op, "noop_with_empty_axes", 0) != 0;
  bool fl = isFloat(elt);
  if (axes.empty() && noop) {
    // Nothing is reduced, but the elementwise part still applies.
    if (kind == "Sum" || kind == "Mean" || kind == "Max" || kind == "Min" || kind == "Prod")
      return SmallVector<Value>{x};
  }
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < xt.getRank(); ++i)
    if ((axes.empty() && !noop) || llvm::is_contained(axes, i) ||
        llvm::is_contained(axes, i - xt.getRank()))
      dims.push_back(i);
  // (Reduced dims of run-time size: the count of a Mean is a run-time value.)
  ElementCount count = elementCount(b, loc, x, dims, elt);
  Value input = x;
  if (kind == "SumSquare" || kind == "L2")
    input = elementwise(b, loc, xt, ValueRange{x}, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
      return fl ? (Value)nb.create<arith::MulFOp>(l, a[0], a[0])
                : (Value)nb.create<arith::MulIOp>(l, a[0], a[0]);
    });
  else if (kind == "L1")
    input = elementwise(b, loc, xt, ValueRange{x}, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
      return fl ? (Value)nb.create<math::AbsFOp>(l, a[0]) : (Value)nb.create<math::AbsIOp>(l, a[0]);
    });
  else if (kind == "LogSumExp")
    input = elementwise(b, loc, xt, ValueRange{x}, [](OpBuilder &nb, Location l, ValueRange a) -> Value {
      return nb.create<math::ExpOp>(l, a[0]);
    });
  // Booleans (and unsigned integers) order as unsigned.
  bool u = elt.isInteger(1) || wasUnsigned(op);
  Value init = kind == "Max"    ? extremum(b, loc, elt, true, u)
               : kind == "Min"  ? extremum(b, loc, elt, false, u)
               : kind == "Prod" ? cst(b, loc, elt, 1.0)
                                : cst(b, loc, elt, 0.0);
  Value r = reduceFrom(b, loc, input, dims, init, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
    if (kind == "Max")
      return fl ? (Value)nb.create<arith::MaximumFOp>(l, a[1], a[0])
             : u ? (Value)nb.create<arith::MaxUIOp>(l, a[1], a[0])
                 : (Value)nb.create<arith::MaxSIOp>(l, a[1], a[0]);
    if (kind == "Min")
      return fl ? (Value)nb.create<arith::MinimumFOp>(l, a[1], a[0])
             : u ? (Value)nb.create<arith::MinUIOp>(l, a[1], a[0])
                 : (Value)nb.create<arith::MinSIOp>(l, a[1], a[0]);
    if (kind == "Prod")
      return fl ? (Value)nb.create<arith::MulFOp>(l, a[1], a[0])
                : (Value)nb.create<arith::MulIOp>(l, a[1], a[0]);
    return fl ? (Value)nb.create<arith::AddFOp>(l, a[1], a[0])
              : (Value)nb.create<arith::AddIOp>(l, a[1], a[0]);
  });
  if (kind == "Mean" || kind == "L2" || kind == "LogSum" || kind == "LogSumExp")
    r = elementwise(b, loc, typeOf(r), ValueRange{r}, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
      if (kind == "L2") {
        if (fl)
          return nb.create<math::SqrtOp>(l, a[0]);
        Value s = nb.create<math::SqrtOp>(l, castScalar(nb, l, a[0], nb.getF64Type()));
        return nb.create<arith::FPToSIOp>(l, elt, s);
      }
      if (kind == "LogSum" || kind == "LogSumExp")
        return nb.create<math::LogOp>(l, a[0]);
      Value c = count.at(nb, l, elt);
      return fl ? (Value)nb.create<arith::DivFOp>(l, a[0], c)
                : (Value)nb.create<arith::DivSIOp>(l, a[0], c);
    });
  r = reshapeTo(b, loc, r, out);
  if (intOut)
    r = elementwise(b, loc, intOut, ValueRange{r}, [&](OpBuilder &nb, Location l, ValueRange a) {
      return castScalar(nb, l, a[0], intOut.getElementType());
    });
  return SmallVector<Value>{r};
}

/// CumSum / CumProd over a constant axis: a running Add or Mul of slices,
/// carried through an scf.for over the axis, each inserted into the result.
/// (kiln-decompose-ops unrolls short axes of float, i32 and i64 data at the
/// graph level first; this takes the rest: RoBERTa's position ids over 512
/// tokens.)
Results lowerScan(OpBuilder &b, Operation *op, bool product) {
  Location loc = op->getLoc();
  Value x = op->getOperand(0);
  auto xt = typeOf(x);
  int64_t rank = xt.getRank(), axis = (*getConstantInts(op->getOperand(1)))[0];
  if (axis < 0)
    axis += rank;
  int64_t n = xt.getDimSize(axis);
  bool exclusive = getIntAttr(op, "exclusive", 0) != 0;
  bool reverse = getIntAttr(op, "reverse", 0) != 0;
  Type elt = xt.getElementType();
  SmallVector<int64_t> sliceShape(xt.getShape());
  sliceShape[axis] = 1;
  auto sliceType = RankedTensorType::get(sliceShape, elt);
  SmallVector<OpFoldResult> sizes, strides(rank, b.getIndexAttr(1));
  for (int64_t d : sliceShape)
    sizes.push_back(b.getIndexAttr(d));
  Value acc = b.create<arith::ConstantOp>(
      loc, DenseElementsAttr::get(sliceType, isFloat(elt) ? (Attribute)b.getFloatAttr(elt, product ? 1.0 : 0.0)
                                                          : (Attribute)b.getIntegerAttr(elt, product ? 1 : 0)));
  Value out = b.create<tensor::EmptyOp>(loc, xt.getShape(), elt);
  auto combine = [&](OpBuilder &nb, Location l, Value a, Value x) -> Value {
    if (isFloat(elt))
      return product ? (Value)nb.create<arith::MulFOp>(l, a, x)
                     : (Value)nb.create<arith::AddFOp>(l, a, x);
    return product ? (Value)nb.create<arith::MulIOp>(l, a, x)
                   : (Value)nb.create<arith::AddIOp>(l, a, x);
  };
  auto idx = [&](int64_t v) {
    return b.create<arith::ConstantIndexOp>(loc, v);
  };
  auto loop = b.create<scf::ForOp>(
      loc, idx(0), idx(n), idx(1), ValueRange{acc, out},
      [&](OpBuilder &nb, Location l, Value step, ValueRange it) {
        Value i =
            reverse ? (Value)nb.create<arith::SubIOp>(
                          l, nb.create<arith::ConstantIndexOp>(l, n - 1), step)
                    : step;
        SmallVector<OpFoldResult> offsets(rank, nb.getIndexAttr(0));
        offsets[axis] = i;
        Value slice = nb.create<tensor::ExtractSliceOp>(
            l, sliceType, x, offsets, sizes, strides);
        // (The running slice updated in place: a loop's yields must be its
        // own buffers, for bufferization.)
        Value o = it[1];
        if (exclusive)
          o = nb.create<tensor::InsertSliceOp>(l, it[0], o, offsets, sizes,
                                               strides);
        AffineMap id = nb.getMultiDimIdentityMap(rank);
        Value next =
            nb.create<linalg::GenericOp>(
                  l, TypeRange{sliceType}, ValueRange{slice}, ValueRange{it[0]},
                  ArrayRef<AffineMap>{id, id},
                  SmallVector<utils::IteratorType>(
                      rank, utils::IteratorType::parallel),
                  [&](OpBuilder &gb, Location gl, ValueRange a) {
                    gb.create<linalg::YieldOp>(gl, combine(gb, gl, a[1], a[0]));
                  })
                .getResult(0);
        if (!exclusive)
          o = nb.create<tensor::InsertSliceOp>(l, next, o, offsets, sizes,
                                               strides);
        nb.create<scf::YieldOp>(l, ValueRange{next, o});
      });
  return SmallVector<Value>{loop.getResult(1)};
}

bool scanAxisOk(Operation *op, std::string &why) {
  auto axis = getConstantInts(op->getOperand(1));
  auto xt = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (!axis || axis->size() != 1 || !xt || xt.getRank() == 0) {
    why = "needs a constant axis input (it is computed at run time)";
    return false;
  }
  int64_t a = (*axis)[0] < 0 ? (*axis)[0] + xt.getRank() : (*axis)[0];
  if (a < 0 || a >= xt.getRank()) {
    why = "the scanned axis is out of range";
    return false;
  }
  return rejectUnsigned(op, why);
}

bool constantAxes(Operation *op, std::string &why) {
  if (op->getNumOperands() > 1 && !isNone(op->getOperand(1)) &&
      !getConstantInts(op->getOperand(1))) {
    why = "needs a constant axes input (it is computed at run time)";
    return false;
  }
  return true;
}

} // namespace

void registerNormalizationOps(LoweringTable &m) {
  m["BatchNormalization"] = {lowerBatchNormAny, true, [](Operation *op, std::string &why) {
                               if (getIntAttr(op, "training_mode", 0))
                                 return true;
                               for (unsigned i = 1; i < op->getNumResults(); ++i)
                                 if (!op->getResult(i).use_empty()) {
                                   why = "running mean/var outputs need training_mode=1";
                                   return false;
                                 }
                               return true;
                             }};
  m["LayerNormalization"] = {lowerLayerNorm};
  m["RMSNormalization"] = {lowerRMSNorm};
  m["InstanceNormalization"] = {lowerInstanceNorm};
  m["GroupNormalization"] = {lowerGroupNorm, true, [](Operation *op, std::string &why) {
                               auto xt = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
                               int64_t groups = getIntAttr(op, "num_groups", 0);
                               if (!xt || !xt.hasStaticShape() || xt.getRank() < 2 || groups <= 0 ||
                                   xt.getDimSize(1) % groups != 0) {
                                 why = "needs a static [N, C, ...] input whose C num_groups divides";
                                 return false;
                               }
                               return true;
                             }};
  m["LRN"] = {lowerLRN, true, [](Operation *op, std::string &why) {
                auto xt = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
                if (!xt || !xt.hasStaticShape() || xt.getRank() < 2 || getIntAttr(op, "size", 0) < 1) {
                  why = "needs a static [N, C, ...] input and size >= 1";
                  return false;
                }
                return true;
              }};
  m["MeanVarianceNormalization"] = {lowerMVN};
  m["LpNormalization"] = {lowerLpNorm};
  m["LpNormalization"].check = [](Operation *op, std::string &why) {
    int64_t p = getIntAttr(op, "p", 2);
    if (p == 1 || p == 2)
      return true;
    why = "p must be 1 or 2";
    return false;
  };
  m["Softmax"] = {[](OpBuilder &b, Operation *op) { return lowerSoftmax(b, op, false); }};
  m["LogSoftmax"] = {[](OpBuilder &b, Operation *op) { return lowerSoftmax(b, op, true); }};
  m["Hardmax"] = {lowerHardmax};
  for (auto [name, kind, ints] :
       {std::tuple{"ReduceSum", "Sum", true}, {"ReduceMean", "Mean", true},
        {"ReduceMax", "Max", true}, {"ReduceMin", "Min", true},
        {"ReduceProd", "Prod", true}, {"ReduceL1", "L1", true},
        {"ReduceL2", "L2", true}, {"ReduceSumSquare", "SumSquare", true},
        {"ReduceLogSum", "LogSum", true}, {"ReduceLogSumExp", "LogSumExp", true}}) {
    std::string k = kind;
    m[name] = {[k](OpBuilder &b, Operation *op) { return lowerReduce(b, op, k); }, !ints,
               [k](Operation *op, std::string &why) {
                 return constantAxes(op, why) &&
                        (k == "Max" || k == "Min" || rejectUnsigned(op, why));
               }};
  }
  m["CumSum"] = {[](OpBuilder &b, Operation *op) { return lowerScan(b, op, false); }, false, scanAxisOk};
  m["CumProd"] = {[](OpBuilder &b, Operation *op) { return lowerScan(b, op, true); }, false, scanAxisOk};
  m["ArgMax"] = {[](OpBuilder &b, Operation *op) { return lowerArg(b, op, true); }, false, rejectUnsigned};
  m["ArgMin"] = {[](OpBuilder &b, Operation *op) { return lowerArg(b, op, false); }, false, rejectUnsigned};
  m["TopK"] = {lowerTopK, false, [](Operation *op, std::string &why) {
                 if (!getConstantInts(op->getOperand(1))) {
                   why = "needs a constant k input (it is computed at run time)";
                   return false;
                 }
                 return true;
               }};
}

} // namespace kiln::cpu
