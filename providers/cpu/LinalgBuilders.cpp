//===- LinalgBuilders.cpp - small builders for onnx -> linalg -------------===//
#include "providers/cpu/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

using namespace mlir;

namespace kiln::cpu {

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type) {
  return b.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType());
}

Value scalarConst(OpBuilder &b, Location loc, Type elt, double value) {
  if (auto ft = dyn_cast<FloatType>(elt))
    return b.create<arith::ConstantOp>(loc, b.getFloatAttr(ft, value));
  return b.create<arith::ConstantOp>(
      loc, b.getIntegerAttr(elt, static_cast<int64_t>(value)));
}

Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                   double value) {
  Value init = emptyTensor(b, loc, type);
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
             ValueRange ins, ArrayRef<AffineMap> inMaps, const BodyFn &body) {
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps(inMaps);
  maps.push_back(AffineMap::getMultiDimIdentityMap(outType.getRank(), ctx));
  SmallVector<utils::IteratorType> iters(outType.getRank(),
                                         utils::IteratorType::parallel);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{outType}, ins, ValueRange{emptyTensor(b, loc, outType)},
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
  SmallVector<utils::IteratorType> iters;
  for (int64_t i = 0; i < xt.getRank(); ++i) {
    bool red = llvm::is_contained(dims, i);
    iters.push_back(red ? utils::IteratorType::reduction
                        : utils::IteratorType::parallel);
    if (!red)
      outShape.push_back(xt.getDimSize(i));
  }
  auto outType = RankedTensorType::get(outShape, xt.getElementType());
  Value acc = filledTensor(b, loc, outType, init);
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
  auto xt = cast<RankedTensorType>(x.getType());
  bool any = llvm::any_of(low, [](int64_t p) { return p != 0; }) ||
             llvm::any_of(high, [](int64_t p) { return p != 0; });
  if (!any)
    return x;
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < xt.getRank(); ++i)
    shape.push_back(xt.getDimSize(i) + low[i] + high[i]);
  auto padded = RankedTensorType::get(shape, xt.getElementType());
  Value filled = filledTensor(b, loc, padded, value);
  SmallVector<OpFoldResult> offsets, sizes, strides;
  for (int64_t i = 0; i < xt.getRank(); ++i) {
    offsets.push_back(b.getIndexAttr(low[i]));
    sizes.push_back(b.getIndexAttr(xt.getDimSize(i)));
    strides.push_back(b.getIndexAttr(1));
  }
  return b.create<tensor::InsertSliceOp>(loc, x, filled, offsets, sizes, strides);
}

} // namespace kiln::cpu
