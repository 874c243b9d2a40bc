//===- FillPadBorders.cpp - kiln-cpu-fill-pad-borders ---------------------===//
//
// A padded copy is a fill of the whole buffer, then a copy of the source
// into its interior: the interior is written twice. The fill becomes fills
// of the borders only.
//
//===----------------------------------------------------------------------===//
#include "passes/BufferAliases.h"
#include "passes/Passes.h"
#include "providers/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_CPUFILLPADBORDERS
#include "providers/Passes.h.inc"

namespace {

/// The copy into a static, unit-stride view of `fill`'s buffer that comes
/// after the fill in its block with nothing touching the buffer between
/// them, with that view; else nulls.
std::pair<memref::SubViewOp, memref::CopyOp> interiorCopy(linalg::FillOp fill) {
  Value buffer = fill.getDpsInits()[0];
  Block *block = fill->getBlock();
  memref::SubViewOp view;
  memref::CopyOp copy;
  for (Operation *user : buffer.getUsers()) {
    auto sv = dyn_cast<memref::SubViewOp>(user);
    if (!sv || sv->getBlock() != block || !fill->isBeforeInBlock(sv) ||
        !sv->hasOneUse() || !sv.hasUnitStride() ||
        ShapedType::isDynamicShape(sv.getStaticOffsets()) ||
        ShapedType::isDynamicShape(sv.getStaticSizes()))
      continue;
    auto c = dyn_cast<memref::CopyOp>(*sv->getUsers().begin());
    if (!c || c.getTarget() != sv || c->getBlock() != block)
      continue;
    if (!copy || c->isBeforeInBlock(copy))
      view = sv, copy = c;
  }
  if (!copy)
    return {};
  // Nothing else may read or write the buffer between the fill and the
  // copy (the interior would read the fill), nor the copy read it.
  bool touched = false;
  forEachAliasUse(buffer, [&](OpOperand &use) {
    Operation *owner = use.getOwner();
    if (owner == fill || owner == view)
      return;
    if (owner == copy) {
      touched |= use.get() != view;
      return;
    }
    Operation *at = block->findAncestorOpInBlock(*owner);
    touched |= !at || (fill->isBeforeInBlock(at) && at->isBeforeInBlock(copy));
  });
  if (touched)
    return {};
  return {view, copy};
}

struct CpuFillPadBordersPass
    : public impl::CpuFillPadBordersBase<CpuFillPadBordersPass> {
  void runOnOperation() override {
    SmallVector<linalg::FillOp> fills;
    getOperation().walk([&](linalg::FillOp fill) {
      auto type = dyn_cast<MemRefType>(fill.getDpsInits()[0].getType());
      if (fill.hasPureBufferSemantics() && type && type.hasStaticShape())
        fills.push_back(fill);
    });
    for (linalg::FillOp fill : fills) {
      auto [view, copy] = interiorCopy(fill);
      if (!view)
        continue;
      // Slabs along each dim in turn: before and after the interior along
      // it, within the interior along the dims before it, whole along
      // those after (a pad of H and W: the rows above and below, then the
      // columns left and right of the interior's rows).
      Value buffer = fill.getDpsInits()[0];
      ArrayRef<int64_t> shape = cast<MemRefType>(buffer.getType()).getShape();
      ArrayRef<int64_t> at = view.getStaticOffsets();
      ArrayRef<int64_t> size = view.getStaticSizes();
      OpBuilder b(fill);
      Location loc = fill.getLoc();
      SmallVector<int64_t> ones(shape.size(), 1);
      for (size_t d = 0; d < shape.size(); ++d) {
        for (auto [lo, hi] : {std::pair(int64_t(0), at[d]),
                              std::pair(at[d] + size[d], shape[d])}) {
          if (lo >= hi)
            continue;
          SmallVector<int64_t> offsets, sizes;
          for (size_t e = 0; e < shape.size(); ++e) {
            offsets.push_back(e < d ? at[e] : e == d ? lo : 0);
            sizes.push_back(e < d ? size[e] : e == d ? hi - lo : shape[e]);
          }
          Value slab =
              b.create<memref::SubViewOp>(loc, buffer, offsets, sizes, ones);
          b.create<linalg::FillOp>(loc, fill.getInputs()[0], slab);
          ++numSlabs;
        }
      }
      fill.erase();
      ++numNarrowed;
    }
  }
};

} // namespace
} // namespace kiln
