//===- ShapeInferencePass.cpp - propagate static shapes -------------------===//
#include "dialects/onnx/ShapeInference.h"
#include "passes/Passes.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_SHAPEINFERENCE
#include "passes/Passes.h.inc"

namespace {
struct ShapeInferencePass : public impl::ShapeInferenceBase<ShapeInferencePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    WalkResult result = func.walk([](Operation *op) {
      return failed(onnx::inferShapesFor(op)) ? WalkResult::interrupt()
                                              : WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    Operation *ret = func.getBody().front().getTerminator();
    func.setFunctionType(FunctionType::get(
        func.getContext(), func.getArgumentTypes(), ret->getOperandTypes()));
  }
};
} // namespace
} // namespace kiln
