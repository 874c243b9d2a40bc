//===- DecomposeLosses.cpp - NLL and softmax cross-entropy as onnx ops ----===//
//
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss become the gathers,
// masks and reductions of their ONNX function bodies, which every provider
// lowers.
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/OnnxOps.h"
#include "passes/GraphBuilder.h"
#include "passes/NodeName.h"
#include "passes/Passes.h"

using namespace mlir;
using namespace kiln::onnx;

namespace kiln {
#define GEN_PASS_DEF_DECOMPOSELOSSES
#include "passes/Passes.h.inc"

namespace {

bool isStatic(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape();
}

/// loss[n, d..] = -input[n, target[n, d..], d..] * weight[target], with
/// ignored targets contributing 0 (and 0 weight to the mean).
FailureOr<Value> nllLoss(GraphBuilder &g, Operation *op, Value input, Value target,
                         Value weight) {
  StringRef reduction = getStrAttr(op, "reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return emitNodeError(op) << "reduction \"" << reduction << "\" is not valid", failure();
  bool hasIgnore = op->hasAttr("ignore_index");
  int64_t ignore = getIntAttr(op, "ignore_index", 0);
  auto targetType = cast<RankedTensorType>(target.getType());
  Type targetElt = targetType.getElementType();
  Value ignored;
  if (hasIgnore) {
    Value ii = g.constant(DenseElementsAttr::get(
        RankedTensorType::get({}, targetElt), g.b.getIntegerAttr(targetElt, ignore)));
    ignored = g.op("Equal", {target, ii});
    // Ignored targets may be out of range: gather class 0 instead.
    Value zero = g.constant(DenseElementsAttr::get(
        RankedTensorType::get({}, targetElt), g.b.getIntegerAttr(targetElt, 0)));
    target = g.op("Where", {ignored, zero, target});
  }
  Value picked = g.op("GatherElements", {input, g.op("Unsqueeze", {target, g.ints({1})})},
                      {g.attr("axis", (int64_t)1)});
  Value loss = g.op("Neg", {g.op("Squeeze", {picked, g.ints({1})})});
  Value w;
  if (weight)
    w = g.op("Gather", {weight, target}, {g.attr("axis", (int64_t)0)});
  if (ignored) {
    Value zeros = g.zeros(cast<RankedTensorType>(loss.getType()).getShape());
    if (!w)
      w = g.op("Where", {ignored, zeros, g.op("Add", {zeros, g.scalar(1.0)})});
    else
      w = g.op("Where", {ignored, zeros, w});
  }
  if (w)
    loss = g.op("Mul", {loss, w});
  if (reduction == "none")
    return loss;
  Value sum = g.op("ReduceSum", {loss, g.b.create<NoValueOp>(g.loc).getResult()},
                   {g.attr("keepdims", (int64_t)0)});
  if (reduction == "sum")
    return sum;
  if (!w)
    return g.op("ReduceMean", {loss, g.b.create<NoValueOp>(g.loc).getResult()},
                {g.attr("keepdims", (int64_t)0)});
  Value total = g.op("ReduceSum", {w, g.b.create<NoValueOp>(g.loc).getResult()},
                     {g.attr("keepdims", (int64_t)0)});
  return g.op("Div", {sum, total});
}

LogicalResult decompose(Operation *op) {
  StringRef name = op->getName().getStringRef();
  for (Value v : op->getOperands())
    if (!isNone(v) && !isStatic(v))
      return success(); // left for the partitioner to report
  Type elt = cast<ShapedType>(op->getOperand(0).getType()).getElementType();
  if (!isa<FloatType>(elt))
    return success();
  OpBuilder b(op);
  GraphBuilder g(b, op->getLoc(), elt);
  Value weight = op->getNumOperands() > 2 && !isNone(op->getOperand(2)) ? op->getOperand(2) : Value();
  Value input = op->getOperand(0), logProb;
  if (name == "onnx.SoftmaxCrossEntropyLoss") {
    logProb = g.op("LogSoftmax", {input}, {g.attr("axis", (int64_t)1)});
    input = logProb;
  }
  auto loss = nllLoss(g, op, input, op->getOperand(1), weight);
  if (failed(loss))
    return failure();
  op->getResult(0).replaceAllUsesWith(*loss);
  if (logProb && op->getNumResults() > 1)
    op->getResult(1).replaceAllUsesWith(logProb);
  op->erase();
  return success();
}

struct DecomposeLossesPass : public impl::DecomposeLossesBase<DecomposeLossesPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      StringRef n = op->getName().getStringRef();
      if (n == "onnx.NegativeLogLikelihoodLoss" || n == "onnx.SoftmaxCrossEntropyLoss")
        ops.push_back(op);
    });
    for (Operation *op : ops)
      if (failed(decompose(op)))
        return signalPassFailure();
    func::FuncOp func = getOperation();
    if (!ops.empty())
      func.setFunctionType(FunctionType::get(
          func.getContext(), func.getArgumentTypes(),
          func.getBody().front().getTerminator()->getOperandTypes()));
  }
};

} // namespace
} // namespace kiln
