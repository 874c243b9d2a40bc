//===- UnshareFills.cpp - kiln-cpu-unshare-fills --------------------------===//
//
// A fill that several ops write into (CSE merged identical ones) becomes
// one fill per writer, so that bufferization fills each buffer in place
// instead of copying one filled buffer for every writer.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "providers/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_CPUUNSHAREFILLS
#include "providers/Passes.h.inc"

namespace {

/// Whether `use` writes into its value: a destination-style op's init or
/// an insert_slice's dest.
bool writesInto(OpOperand &use) {
  Operation *user = use.getOwner();
  if (auto ins = dyn_cast<tensor::InsertSliceOp>(user))
    return use.get() == ins.getDest() && use.getOperandNumber() == 1;
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(user))
    return dps.isDpsInit(&use);
  return false;
}

struct CpuUnshareFillsPass
    : public impl::CpuUnshareFillsBase<CpuUnshareFillsPass> {
  void runOnOperation() override {
    SmallVector<linalg::FillOp> fills;
    getOperation().walk([&](linalg::FillOp fill) {
      if (fill.hasPureTensorSemantics() &&
          fill.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>())
        fills.push_back(fill);
    });
    for (linalg::FillOp fill : fills) {
      SmallVector<OpOperand *> writers;
      for (OpOperand &use : fill.getResult(0).getUses())
        if (writesInto(use))
          writers.push_back(&use);
      if (writers.size() < 2)
        continue;
      auto empty = fill.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>();
      // Each writer's right before it (where the kernels look for the
      // fill their accumulators start from); the original only if read.
      for (OpOperand *use : writers) {
        OpBuilder b(use->getOwner());
        IRMapping map;
        b.clone(*empty, map);
        use->set(b.clone(*fill, map)->getResult(0));
        ++numCloned;
      }
      if (fill->use_empty()) {
        fill.erase();
        if (empty->use_empty())
          empty.erase();
      }
    }
  }
};

} // namespace
} // namespace kiln
