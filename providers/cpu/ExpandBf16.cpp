//===- ExpandBf16.cpp - kiln-expand-bf16 ----------------------------------===//
//
// bf16 conversions of host code as integer ops (see Passes.td for why).
//
//===----------------------------------------------------------------------===//
#include "providers/Passes.h"
#include "providers/cpu/RewriteOnly.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_EXPANDBF16
#include "providers/Passes.h.inc"

namespace {

bool touchesBf16(Operation *op) {
  return getElementTypeOrSelf(op->getOperand(0).getType()).isBF16() ||
         getElementTypeOrSelf(op->getResult(0).getType()).isBF16();
}

struct ExpandBf16Pass : public impl::ExpandBf16Base<ExpandBf16Pass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<arith::TruncFOp, arith::ExtFOp>(op) && !op->getParentOfType<gpu::GPUModuleOp>() &&
          touchesBf16(op))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    // MLIR's patterns take f32 only: f64 goes through f32 (exact for extf; a
    // truncf rounds twice, which differs from one rounding only for an f64
    // within 2^-24 of a bf16 tie).
    OpBuilder b(&getContext());
    Type f32 = b.getF32Type();
    for (Operation *&op : ops) {
      Value in = op->getOperand(0);
      Type inT = getElementTypeOrSelf(in.getType()), outT = getElementTypeOrSelf(op->getResult(0).getType());
      if (inT.isF32() || outT.isF32())
        continue;
      b.setInsertionPoint(op);
      Type mid = f32;
      if (auto shaped = dyn_cast<ShapedType>(in.getType()))
        mid = shaped.clone(f32);
      Operation *first = isa<arith::TruncFOp>(op)
                             ? (Operation *)b.create<arith::TruncFOp>(op->getLoc(), mid, in)
                             : (Operation *)b.create<arith::ExtFOp>(op->getLoc(), mid, in);
      op->setOperand(0, first->getResult(0));
      // The bf16 side is the one the patterns expand.
      if (isa<arith::ExtFOp>(op))
        std::swap(op, first);
    }
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(cpu::rewriteOnly(ops, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace kiln
