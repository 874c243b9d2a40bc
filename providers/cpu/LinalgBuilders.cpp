//===- LinalgBuilders.cpp - small builders for onnx -> linalg -------------===//
#include "providers/cpu/LinalgBuilders.h"

#include "dialects/kiln/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

namespace kiln::cpu {

namespace {
thread_local bool builderFailed = false;
} // namespace

std::string &currentNodeLabel() {
  thread_local std::string label;
  return label;
}

bool takeBuilderFailure() {
  bool f = builderFailed;
  builderFailed = false;
  return f;
}

SmallVector<Value> dynamicSizesLike(OpBuilder &b, Location loc, RankedTensorType type,
                                    Value like) {
  SmallVector<Value> sizes;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (type.isDynamicDim(i))
      sizes.push_back(dimSize(b, loc, like, i));
  return sizes;
}

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type, ValueRange dynSizes) {
  if (static_cast<int64_t>(dynSizes.size()) != type.getNumDynamicDims()) {
    // A caller that has no sizes for a dynamic type: the lowering fails
    // (never a buffer of a made-up size).
    builderFailed = true;
    SmallVector<Value> zeros(type.getNumDynamicDims(),
                             b.create<arith::ConstantIndexOp>(loc, 0));
    return b.create<tensor::EmptyOp>(loc, type, zeros);
  }
  return b.create<tensor::EmptyOp>(loc, type, dynSizes);
}

/// divsi rounds toward zero: one step down (floor) or up (ceil) where the
/// remainder is not 0 and the quotient's sign asks for it.
static Value roundedDiv(OpBuilder &b, Location loc, Value a, Value d, bool up) {
  Type t = a.getType();
  Value zero = b.create<arith::ConstantOp>(loc, b.getZeroAttr(t));
  Value one = b.create<arith::ConstantOp>(loc, b.getIntegerAttr(t, 1));
  Value q = b.create<arith::DivSIOp>(loc, a, d);
  Value r = b.create<arith::RemSIOp>(loc, a, d);
  Value inexact = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, r, zero);
  Value sameSign = b.create<arith::CmpIOp>(
      loc, arith::CmpIPredicate::eq,
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, a, zero),
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, d, zero));
  // Floor steps down for a negative quotient, ceil up for a positive one.
  Value step = b.create<arith::AndIOp>(
      loc, inexact, up ? sameSign : b.create<arith::XOrIOp>(
                                       loc, sameSign, b.create<arith::ConstantIntOp>(loc, 1, 1)));
  return up ? (Value)b.create<arith::AddIOp>(loc, q, b.create<arith::SelectOp>(loc, step, one, zero))
            : (Value)b.create<arith::SubIOp>(loc, q, b.create<arith::SelectOp>(loc, step, one, zero));
}

Value floorDivSigned(OpBuilder &b, Location loc, Value a, Value d) {
  return roundedDiv(b, loc, a, d, /*up=*/false);
}

Value ceilDivSigned(OpBuilder &b, Location loc, Value a, Value d) {
  return roundedDiv(b, loc, a, d, /*up=*/true);
}

Value dimSize(OpBuilder &b, Location loc, Value v, int64_t d) {
  auto t = cast<RankedTensorType>(v.getType());
  if (!t.isDynamicDim(d))
    return b.create<arith::ConstantIndexOp>(loc, t.getDimSize(d));
  return b.create<tensor::DimOp>(loc, v, d);
}

/// The loop dim that out dim j is (j itself without a map).
static int64_t loopDimOf(AffineMap outMap, int64_t j) {
  if (!outMap)
    return j;
  auto e = dyn_cast<AffineDimExpr>(outMap.getResult(j));
  return e ? e.getPosition() : -1;
}

SmallVector<Value> loopSizes(OpBuilder &b, Location loc, RankedTensorType type, ValueRange ins,
                             ArrayRef<AffineMap> maps, AffineMap outMap) {
  SmallVector<Value> sizes;
  for (int64_t j = 0; j < type.getRank(); ++j) {
    if (!type.isDynamicDim(j))
      continue;
    int64_t d = loopDimOf(outMap, j);
    Value size;
    for (auto [v, map] : llvm::zip(ins, maps)) {
      auto t = dyn_cast<RankedTensorType>(v.getType());
      for (unsigned j = 0; t && !size && j < map.getNumResults(); ++j)
        if (auto e = dyn_cast<AffineDimExpr>(map.getResult(j)); e && e.getPosition() == d)
          size = dimSize(b, loc, v, j);
      if (size)
        break;
    }
    if (!size) {
      builderFailed = true;
      size = b.create<arith::ConstantIndexOp>(loc, 0);
    }
    sizes.push_back(size);
  }
  return sizes;
}

void checkLoopSizes(OpBuilder &b, Location loc, RankedTensorType type, ValueRange ins,
                    ArrayRef<AffineMap> maps, StringRef what, AffineMap outMap) {
  int64_t numLoops = outMap ? outMap.getNumDims() : type.getRank();
  for (int64_t d = 0; d < numLoops; ++d) {
    // The result's static size at loop dim d, if it has one.
    int64_t fixed = ShapedType::kDynamic;
    for (int64_t j = 0; j < type.getRank(); ++j)
      if (loopDimOf(outMap, j) == d)
        fixed = type.getDimSize(j);
    // The sizes read at loop dim d: (input, its dim).
    SmallVector<std::pair<unsigned, unsigned>> readers;
    for (auto [i, vm] : llvm::enumerate(llvm::zip(ins, maps))) {
      auto [v, map] = vm;
      if (!isa<RankedTensorType>(v.getType()))
        continue;
      for (unsigned j = 0; j < map.getNumResults(); ++j)
        if (auto e = dyn_cast<AffineDimExpr>(map.getResult(j)); e && e.getPosition() == d)
          readers.push_back({static_cast<unsigned>(i), j});
    }
    auto dynamicAt = [&](std::pair<unsigned, unsigned> r) {
      return cast<RankedTensorType>(ins[r.first].getType()).isDynamicDim(r.second);
    };
    if (llvm::none_of(readers, dynamicAt))
      continue;
    std::string msg;
    llvm::raw_string_ostream os(msg);
    Value ref;
    if (!ShapedType::isDynamic(fixed)) {
      ref = b.create<arith::ConstantIndexOp>(loc, fixed);
      os << what << ": a dimension of an input is not " << fixed << " at run time";
    } else {
      ref = dimSize(b, loc, ins[readers.front().first], readers.front().second);
      os << what << ": inputs differ in size at run time (kiln broadcasts only dimensions "
            "that are 1 at compile time)";
    }
    for (auto r : readers) {
      if (!dynamicAt(r) && !ShapedType::isDynamic(fixed))
        continue;
      Value size = dimSize(b, loc, ins[r.first], r.second);
      if (size == ref)
        continue;
      Value ok = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, size, ref);
      b.create<CheckOp>(loc, ok, os.str(), /*fatal=*/true);
    }
  }
}

Value scalarConst(OpBuilder &b, Location loc, Type elt, double value) {
  if (auto ft = dyn_cast<FloatType>(elt))
    return b.create<arith::ConstantOp>(loc, b.getFloatAttr(ft, value));
  return b.create<arith::ConstantOp>(
      loc, b.getIntegerAttr(elt, static_cast<int64_t>(value)));
}

Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                   double value, ValueRange dynSizes) {
  Value init = emptyTensor(b, loc, type, dynSizes);
  Value v = scalarConst(b, loc, type.getElementType(), value);
  return b.create<linalg::FillOp>(loc, v, init).getResult(0);
}

AffineMap broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> outShape,
                       RankedTensorType operand) {
  int64_t outRank = outShape.size(), rank = operand.getRank();
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t outDim = outRank - rank + i;
    if (operand.getDimSize(i) == 1 && outShape[outDim] != 1)
      exprs.push_back(getAffineConstantExpr(0, ctx));
    else
      exprs.push_back(getAffineDimExpr(outDim, ctx));
  }
  return AffineMap::get(outRank, 0, exprs, ctx);
}

Value mapped(OpBuilder &b, Location loc, RankedTensorType outType,
             ValueRange ins, ArrayRef<AffineMap> inMaps, const BodyFn &body,
             ValueRange dynSizes) {
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps(inMaps);
  maps.push_back(AffineMap::getMultiDimIdentityMap(outType.getRank(), ctx));
  SmallVector<utils::IteratorType> iters(outType.getRank(),
                                         utils::IteratorType::parallel);
  Value init = emptyTensor(b, loc, outType,
                           dynSizes.empty() ? ValueRange(loopSizes(b, loc, outType, ins, inMaps))
                                            : dynSizes);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{outType}, ins, ValueRange{init},
      maps, iters, [&](OpBuilder &nb, Location l, ValueRange args) {
        Value v = body(nb, l, args.drop_back());
        nb.create<linalg::YieldOp>(l, v);
      });
  return generic.getResult(0);
}

Value elementwise(OpBuilder &b, Location loc, RankedTensorType outType,
                  ValueRange ins, const BodyFn &body) {
  SmallVector<AffineMap> maps;
  for (Value v : ins)
    maps.push_back(broadcastMap(b.getContext(), outType.getShape(),
                                cast<RankedTensorType>(v.getType())));
  if (!outType.hasStaticShape() ||
      llvm::any_of(ins, [](Value v) { return !cast<ShapedType>(v.getType()).hasStaticShape(); }))
    checkLoopSizes(b, loc, outType, ins, maps, currentNodeLabel());
  return mapped(b, loc, outType, ins, maps, body);
}

AffineMap dropDimsMap(MLIRContext *ctx, int64_t rank, ArrayRef<int64_t> dropped) {
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < rank; ++i)
    if (!llvm::is_contained(dropped, i))
      exprs.push_back(getAffineDimExpr(i, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

Value reduce(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> dims,
             double init, const BodyFn &combine) {
  MLIRContext *ctx = b.getContext();
  auto xt = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> outShape;
  SmallVector<Value> dynSizes;
  SmallVector<utils::IteratorType> iters;
  for (int64_t i = 0; i < xt.getRank(); ++i) {
    bool red = llvm::is_contained(dims, i);
    iters.push_back(red ? utils::IteratorType::reduction
                        : utils::IteratorType::parallel);
    if (!red) {
      outShape.push_back(xt.getDimSize(i));
      if (xt.isDynamicDim(i))
        dynSizes.push_back(dimSize(b, loc, x, i));
    }
  }
  auto outType = RankedTensorType::get(outShape, xt.getElementType());
  Value acc = filledTensor(b, loc, outType, init, dynSizes);
  SmallVector<AffineMap> maps = {
      AffineMap::getMultiDimIdentityMap(xt.getRank(), ctx),
      dropDimsMap(ctx, xt.getRank(), dims)};
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{outType}, ValueRange{x}, ValueRange{acc}, maps, iters,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        nb.create<linalg::YieldOp>(l, combine(nb, l, args));
      });
  return generic.getResult(0);
}

Value reshapeTo(OpBuilder &b, Location loc, Value x, RankedTensorType outType) {
  auto inType = cast<RankedTensorType>(x.getType());
  if (inType == outType)
    return x;
  if (!inType.hasStaticShape() || !outType.hasStaticShape()) {
    SmallVector<Value> inDyn;
    int64_t inStatic = 1, outStatic = 1;
    for (int64_t i = 0; i < inType.getRank(); ++i)
      if (inType.isDynamicDim(i))
        inDyn.push_back(dimSize(b, loc, x, i));
      else
        inStatic *= inType.getDimSize(i);
    for (int64_t d : outType.getShape())
      if (!ShapedType::isDynamic(d))
        outStatic *= d;
    if (static_cast<int64_t>(inDyn.size()) != outType.getNumDynamicDims() ||
        inStatic != outStatic)
      builderFailed = true;
    SmallVector<Value> shape;
    size_t k = 0;
    for (int64_t d : outType.getShape()) {
      if (!ShapedType::isDynamic(d))
        shape.push_back(b.create<arith::ConstantIntOp>(loc, d, 64));
      else
        shape.push_back(b.create<arith::IndexCastOp>(
            loc, b.getI64Type(),
            k < inDyn.size() ? inDyn[k++] : b.create<arith::ConstantIndexOp>(loc, 0)));
    }
    auto shapeType = RankedTensorType::get({outType.getRank()}, b.getI64Type());
    Value shapeTensor = b.create<tensor::FromElementsOp>(loc, shapeType, shape);
    return b.create<tensor::ReshapeOp>(loc, outType, x, shapeTensor);
  }
  Value flat = x;
  if (inType.getRank() == 0 || outType.getRank() == 0) {
    // Only unit-element tensors reach here; the reassociation is empty.
    if (inType.getRank() != 0)
      return b.create<tensor::CollapseShapeOp>(loc, outType, x,
                                               ArrayRef<ReassociationIndices>{});
    return b.create<tensor::ExpandShapeOp>(loc, outType, x,
                                           ArrayRef<ReassociationIndices>{});
  }
  if (inType.getRank() != 1) {
    ReassociationIndices all;
    for (int64_t i = 0; i < inType.getRank(); ++i)
      all.push_back(i);
    auto flatType =
        RankedTensorType::get({inType.getNumElements()}, inType.getElementType());
    flat = b.create<tensor::CollapseShapeOp>(loc, flatType, x,
                                             ArrayRef<ReassociationIndices>{all});
  }
  if (outType.getRank() == 1)
    return flat;
  ReassociationIndices all;
  for (int64_t i = 0; i < outType.getRank(); ++i)
    all.push_back(i);
  return b.create<tensor::ExpandShapeOp>(loc, outType, flat,
                                         ArrayRef<ReassociationIndices>{all});
}

Value padTensor(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> low,
                ArrayRef<int64_t> high, double value) {
  SmallVector<OpFoldResult> lo, hi;
  for (auto [l, h] : llvm::zip(low, high)) {
    lo.push_back(b.getIndexAttr(l));
    hi.push_back(b.getIndexAttr(h));
  }
  return padTensor(b, loc, x, lo, hi, value);
}

Value padTensor(OpBuilder &b, Location loc, Value x, ArrayRef<OpFoldResult> low,
                ArrayRef<OpFoldResult> high, double value) {
  auto xt = cast<RankedTensorType>(x.getType());
  auto constant = [](OpFoldResult p) { return getConstantIntValue(p); };
  bool any = llvm::any_of(llvm::concat<const OpFoldResult>(low, high),
                          [&](OpFoldResult p) { return constant(p) != 0; });
  if (!any)
    return x;
  auto asValue = [&](OpFoldResult p) -> Value {
    if (auto v = dyn_cast<Value>(p))
      return v;
    return b.create<arith::ConstantIndexOp>(loc, *constant(p));
  };
  SmallVector<int64_t> shape;
  SmallVector<Value> dynSizes;
  for (int64_t i = 0; i < xt.getRank(); ++i) {
    auto l = constant(low[i]), h = constant(high[i]);
    if (xt.isDynamicDim(i) || !l || !h) {
      shape.push_back(ShapedType::kDynamic);
      dynSizes.push_back(b.create<arith::AddIOp>(
          loc, dimSize(b, loc, x, i), b.create<arith::AddIOp>(loc, asValue(low[i]), asValue(high[i]))));
      continue;
    }
    shape.push_back(xt.getDimSize(i) + *l + *h);
  }
  auto padded = RankedTensorType::get(shape, xt.getElementType());
  Value filled = filledTensor(b, loc, padded, value, dynSizes);
  SmallVector<OpFoldResult> sizes, strides;
  for (int64_t i = 0; i < xt.getRank(); ++i) {
    sizes.push_back(xt.isDynamicDim(i) ? OpFoldResult(dimSize(b, loc, x, i))
                                       : b.getIndexAttr(xt.getDimSize(i)));
    strides.push_back(b.getIndexAttr(1));
  }
  return b.create<tensor::InsertSliceOp>(loc, x, filled, low, sizes, strides);
}

} // namespace kiln::cpu
