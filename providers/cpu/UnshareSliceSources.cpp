//===- UnshareSliceSources.cpp - kiln-cpu-unshare-slice-sources -----------===//
//
// A tensor inserted into a concat's result gets a buffer of its own: the
// tensor.empty its producer chain writes into is cloned for it when CSE
// merged it with others (equal-shaped convs share one), so that
// kiln-elide-slice-copies can later place that buffer inside the concat's.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "providers/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_CPUUNSHARESLICESOURCES
#include "providers/Passes.h.inc"

namespace {

/// Whether the slice of `sizes` (unit strides) is one contiguous run of
/// `shape`'s row-major elements: unit dims, then one partial dim, then
/// whole ones (a concat's part along channels of one image).
bool contiguousSlice(ArrayRef<int64_t> sizes, ArrayRef<int64_t> shape) {
  size_t i = 0;
  while (i < sizes.size() && sizes[i] == 1)
    ++i;
  for (size_t j = i + 1; j < sizes.size(); ++j)
    if (sizes[j] != shape[j])
      return false;
  return true;
}

struct CpuUnshareSliceSourcesPass
    : public impl::CpuUnshareSliceSourcesBase<CpuUnshareSliceSourcesPass> {
  void runOnOperation() override {
    SmallVector<tensor::InsertSliceOp> inserts;
    getOperation().walk([&](tensor::InsertSliceOp ins) {
      // A concat's: the chain of inserts starts from a tensor.empty (a
      // pad's from its fill), one contiguous static slice each.
      Value dest = ins.getDest();
      while (auto prev = dest.getDefiningOp<tensor::InsertSliceOp>())
        dest = prev.getDest();
      auto type = dyn_cast<RankedTensorType>(ins.getDest().getType());
      if (dest.getDefiningOp<tensor::EmptyOp>() && type &&
          type.hasStaticShape() && ins.hasUnitStride() &&
          !ShapedType::isDynamicShape(ins.getStaticSizes()) &&
          contiguousSlice(ins.getStaticSizes(), type.getShape()))
        inserts.push_back(ins);
    });
    for (tensor::InsertSliceOp ins : inserts) {
      // Back from the inserted value through the inits its producers write
      // in place, to the tensor.empty they start from.
      Value v = ins.getSource();
      while (auto dps = v.getDefiningOp<DestinationStyleOpInterface>()) {
        if (!dps.hasPureTensorSemantics())
          break;
        OpOperand *init = dps.getTiedOpOperand(cast<OpResult>(v));
        auto empty = init->get().getDefiningOp<tensor::EmptyOp>();
        if (!empty) {
          v = init->get();
          continue;
        }
        if (!empty->hasOneUse()) {
          OpBuilder b(dps);
          init->set(b.clone(*empty)->getResult(0));
          ++numCloned;
        }
        break;
      }
    }
  }
};

} // namespace
} // namespace kiln
