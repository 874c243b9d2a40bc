//===- ShapeInferencePass.cpp - propagate static shapes -------------------===//
#include "dialects/onnx/ShapeInference.h"
#include "passes/Passes.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_SHAPEINFERENCE
#include "passes/Passes.h.inc"

namespace {

/// Ops whose result has their first operand's shape.
bool keepsShape(Operation *op) {
  static const llvm::StringSet<> ops = {
      "onnx.Cast", "onnx.CastLike", "onnx.Identity", "onnx.Relu", "onnx.Sigmoid",
      "onnx.Tanh", "onnx.Abs", "onnx.Neg", "onnx.Exp", "onnx.Log", "onnx.Sqrt",
      "onnx.Reciprocal", "onnx.Floor", "onnx.Ceil", "onnx.Erf", "onnx.Sign",
      "onnx.Not", "onnx.Round"};
  return ops.contains(op->getName().getStringRef());
}

/// A shape known only downstream (a declared graph output after a Cast or
/// Sqrt) is given back to the producer of a shape-keeping op's operand, so
/// that ops whose shape depends on run-time inputs see their result shape.
bool refineBackwards(func::FuncOp func) {
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) { ops.push_back(op); });
  bool changed = false;
  for (Operation *op : llvm::reverse(ops)) {
    if (!keepsShape(op) || op->getNumOperands() == 0)
      continue;
    auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    Value in = op->getOperand(0);
    auto inType = dyn_cast<TensorType>(in.getType());
    if (!out || !out.hasStaticShape() || !inType || !isa<OpResult>(in) ||
        (inType.hasRank() && (inType.hasStaticShape() || inType.getRank() != out.getRank())))
      continue;
    in.setType(RankedTensorType::get(out.getShape(), inType.getElementType()));
    changed = true;
  }
  return changed;
}

struct ShapeInferencePass : public impl::ShapeInferenceBase<ShapeInferencePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    auto infer = [&] {
      return !func.walk([](Operation *op) {
                    return failed(onnx::inferShapesFor(op)) ? WalkResult::interrupt()
                                                            : WalkResult::advance();
                  }).wasInterrupted();
    };
    if (!infer() || (refineBackwards(func) && !infer()))
      return signalPassFailure();
    Operation *ret = func.getBody().front().getTerminator();
    func.setFunctionType(FunctionType::get(
        func.getContext(), func.getArgumentTypes(), ret->getOperandTypes()));
  }
};
} // namespace
} // namespace kiln
