//===- DynamicShapeOps.cpp - ops whose result shape depends on data -------===//
//
// NonZero, Compress, Unique and NonMaxSuppression: libkiln_rt computes the
// result into a box (a one-element runtime sequence), which sequence ops and
// the model's outputs take as it is. Where the model declares a static
// result shape, the box is unpacked into a tensor of that shape, and the
// runtime checks that the data gave that shape.
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/OnnxDialect.h"
#include "providers/cpu/RuntimeCall.h"

using namespace mlir;
using namespace kiln::onnx;

namespace kiln::cpu {
namespace {

/// Result `i` of `op` from its box: the box itself, or its tensor.
Value boxOrTensor(OpBuilder &b, Operation *op, unsigned i, Value box) {
  auto t = dyn_cast<RankedTensorType>(op->getResult(i).getType());
  if (!t || !t.hasStaticShape())
    return box;
  return Call(b, op)
      .value(box)
      .i64(0)
      .i32(1)
      .describe(t, resultWasUnsigned(op, i))
      .node()
      .filling("kilnSeqAt", i);
}

/// The input's data, dtype, rank and dims.
Call &input(Call &c, Operation *op, unsigned i) {
  Value x = op->getOperand(i);
  return c.value(x).describe(typeOf(x), wasUnsigned(op, i));
}

/// A normalized `axis` attribute and whether there is one.
Call &axis(Call &c, Operation *op) {
  auto a = op->getAttrOfType<IntegerAttr>("axis");
  int64_t rank = typeOf(op->getOperand(0)).getRank();
  if (!a)
    return c.i64(0).i32(0);
  return c.i64(a.getInt() < 0 ? a.getInt() + rank : a.getInt()).i32(1);
}

Results lowerNonZero(OpBuilder &b, Operation *op) {
  Call c(b, op);
  Value box = input(c, op, 0).node().returning("kilnNonZero", handleType(op));
  return SmallVector<Value>{boxOrTensor(b, op, 0, box)};
}

Results lowerCompress(OpBuilder &b, Operation *op) {
  Call c(b, op);
  Value cond = op->getOperand(1);
  input(c, op, 0).value(cond).i64(typeOf(cond).getNumElements());
  Value box = axis(c, op).node().returning("kilnCompress", handleType(op));
  return SmallVector<Value>{boxOrTensor(b, op, 0, box)};
}

/// One runtime call per output used (they are cheap next to a model).
Results lowerUnique(OpBuilder &b, Operation *op) {
  SmallVector<Value> results(op->getNumResults());
  for (unsigned i = 0; i < op->getNumResults(); ++i) {
    if (isa<NoneType>(op->getResult(i).getType()) || (i > 0 && op->getResult(i).use_empty()))
      continue;
    Call c(b, op);
    input(c, op, 0);
    Value box = axis(c, op)
                    .i32(getIntAttr(op, "sorted", 1))
                    .i32(i)
                    .node()
                    .returning("kilnUnique", handleType(op));
    results[i] = boxOrTensor(b, op, i, box);
  }
  return results;
}

/// A scalar input as `type`, or `dflt` when absent.
Value scalarOr(OpBuilder &b, Location l, Value v, Type type, double dflt) {
  if (isNone(v))
    return isa<FloatType>(type) ? b.create<arith::ConstantOp>(l, b.getFloatAttr(type, dflt))
                                      .getResult()
                                : b.create<arith::ConstantIntOp>(l, (int64_t)dflt, type);
  SmallVector<Value> zeros(typeOf(v).getRank(), b.create<arith::ConstantIndexOp>(l, 0));
  return castScalar(b, l, b.create<tensor::ExtractOp>(l, v, zeros), type);
}

Results lowerNonMaxSuppression(OpBuilder &b, Operation *op) {
  Location l = op->getLoc();
  auto boxes = typeOf(op->getOperand(0)), scores = typeOf(op->getOperand(1));
  auto operand = [&](unsigned i) {
    return i < op->getNumOperands() ? op->getOperand(i) : Value();
  };
  Value score = operand(4);
  Value box = Call(b, op)
                  .value(op->getOperand(0))
                  .i64(boxes.getDimSize(0))
                  .i64(boxes.getDimSize(1))
                  .value(op->getOperand(1))
                  .i64(scores.getDimSize(1))
                  .value(scalarOr(b, l, operand(2), b.getI64Type(), 0))
                  .value(scalarOr(b, l, operand(3), b.getF64Type(), 0))
                  .value(scalarOr(b, l, score, b.getF64Type(), 0))
                  .i32(!isNone(score))
                  .i32(getIntAttr(op, "center_point_box", 0))
                  .node()
                  .returning("kilnNonMaxSuppression", handleType(op));
  return SmallVector<Value>{boxOrTensor(b, op, 0, box)};
}

bool checkNonMaxSuppression(Operation *op, std::string &why) {
  auto boxes = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto scores = dyn_cast<RankedTensorType>(op->getOperand(1).getType());
  if (!boxes || !scores || boxes.getRank() != 3 || scores.getRank() != 3 ||
      !boxes.getElementType().isF32() || !scores.getElementType().isF32() ||
      !boxes.hasStaticShape() || !scores.hasStaticShape() || boxes.getDimSize(2) != 4 ||
      scores.getDimSize(0) != boxes.getDimSize(0) || scores.getDimSize(2) != boxes.getDimSize(1)) {
    llvm::raw_string_ostream(why)
        << "needs float boxes [batches, boxes, 4] and scores [batches, classes, boxes], got "
        << op->getOperand(0).getType() << " and " << op->getOperand(1).getType();
    return false;
  }
  return true;
}

bool rejectStrings(Operation *op, std::string &why) {
  auto t = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (t && isa<onnx::StringType>(t.getElementType())) {
    why = "string tensors are not supported";
    return false;
  }
  return true;
}

} // namespace

void registerDynamicShapeOps(LoweringTable &m) {
  m["NonZero"] = {lowerNonZero, false, rejectStrings, true};
  m["Compress"] = {lowerCompress, false, rejectStrings, true};
  m["Unique"] = {lowerUnique, false, rejectStrings, true};
  m["NonMaxSuppression"] = {lowerNonMaxSuppression, false, checkNonMaxSuppression, true};
}

} // namespace kiln::cpu
