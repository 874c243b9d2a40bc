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
      "onnx.Not", "onnx.Round", "onnx.Cos", "onnx.Sin"};
  return ops.contains(op->getName().getStringRef());
}

/// A shape known only downstream (a declared graph output after a Cast or
/// Sqrt) is given back to the producer of a shape-keeping op's operand, so
/// that ops whose shape depends on run-time inputs see their result shape.
bool refineBackwards(func::FuncOp func) {
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) { ops.push_back(op); });
  bool changed = false;
  static const llvm::StringSet<> binary = {"onnx.Add", "onnx.Sub", "onnx.Mul",
                                           "onnx.Div", "onnx.Pow"};
  for (Operation *op : llvm::reverse(ops)) {
    Value in;
    if (keepsShape(op) && op->getNumOperands() > 0) {
      in = op->getOperand(0);
    } else if (binary.contains(op->getName().getStringRef()) && op->getNumOperands() == 2) {
      // With a rank-0 other side, the result has this operand's shape.
      for (unsigned i : {0u, 1u})
        if (auto other = dyn_cast<RankedTensorType>(op->getOperand(1 - i).getType());
            other && other.getRank() == 0)
          in = op->getOperand(i);
    }
    if (!in)
      continue;
    auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
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
