//===- DataMovementOps.cpp - reshapes, transposes, gathers, constants ---===//
#include "providers/cpu/Lowering.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace kiln::onnx;

namespace kiln::cpu {
namespace {

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

} // namespace

void registerDataMovementOps(LoweringTable &m) {
  for (const char *k : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"})
    m[k] = {lowerReshapeLike, false};
  m["Transpose"] = {lowerTranspose, false};
  m["Concat"] = {lowerConcat, false};
  m["Gather"] = {lowerGather, false};
  m["Constant"] = {lowerConstant, false};
  m["Shape"] = {lowerShape, false};
  m["Identity"] = {forward, false};
  m["Dropout"] = {forward, false};
}

} // namespace kiln::cpu
