//===- ElideSliceCopies.cpp - kiln-elide-slice-copies ---------------------===//
//
// A concat copies each part into its slice of the result. Where a part has
// a buffer of its own that dies at the copy, and the slice is one
// contiguous run of the result's buffer, the part's buffer becomes that
// run itself: its producers write the concat's result in place and the
// copy goes. Both buffers keep identity layouts (views of one byte
// buffer), so the kernels already generated for them stay as they are.
//
//===----------------------------------------------------------------------===//
#include "passes/BufferAliases.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_ELIDESLICECOPIES
#include "passes/Passes.h.inc"

namespace {

/// Marks the byte buffer holding a concat's result and its parts.
constexpr llvm::StringLiteral kSlicedAttr = "kiln.sliced";
/// Parts start on cache lines (as allocations do): kernels tuned on
/// aligned buffers keep their speed.
constexpr int64_t kAlign = 64;

/// A static buffer of whole bytes per element with the identity layout in
/// host memory, with no attribute of a pass on it.
bool isPlainAlloc(memref::AllocOp a, Block &entry) {
  MemRefType t = a.getType();
  return a->getBlock() == &entry && t.hasStaticShape() &&
         t.getLayout().isIdentity() && !t.getMemorySpace() &&
         t.getElementTypeBitWidth() % 8 == 0 &&
         a->getDiscardableAttrDictionary().empty();
}

/// The bytes [first, second) a view of static layout can touch, from its
/// buffer's start.
std::optional<std::pair<int64_t, int64_t>> touchedBytes(MemRefType t) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!t.hasStaticShape() || t.getElementTypeBitWidth() % 8 ||
      failed(getStridesAndOffset(t, strides, offset)) ||
      ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return std::nullopt;
  int64_t last = offset;
  for (auto [size, stride] : llvm::zip(t.getShape(), strides))
    last += (size - 1) * stride;
  int64_t bytes = t.getElementTypeBitWidth() / 8;
  if (t.getNumElements() == 0)
    return std::make_pair(offset * bytes, offset * bytes);
  return std::make_pair(offset * bytes, (last + 1) * bytes);
}

/// The bytes `v`, an alias of the concat's buffer `root` (an allocation,
/// or the byte buffer of earlier elisions), can touch: its layout's range
/// past the byte shift of the memref.view it derives from (none for
/// `root` itself: all of it). Unknown for other aliases (loop results).
std::optional<std::pair<int64_t, int64_t>> aliasBytes(Value v, Value root) {
  MemRefType t = cast<MemRefType>(v.getType());
  if (v == root)
    return std::nullopt;
  Value at = v;
  while (Operation *def = at.getDefiningOp()) {
    if (isa<memref::SubViewOp, memref::CollapseShapeOp, memref::ExpandShapeOp,
            memref::CastOp>(def)) {
      at = def->getOperand(0);
      continue;
    }
    break;
  }
  int64_t shift = 0;
  if (auto view = at.getDefiningOp<memref::ViewOp>()) {
    std::optional<int64_t> s = getConstantIntValue(view.getByteShift());
    if (view.getSource() != root || !s)
      return std::nullopt;
    shift = *s;
  } else if (at != root) {
    return std::nullopt;
  }
  std::optional<std::pair<int64_t, int64_t>> r = touchedBytes(t);
  if (!r)
    return std::nullopt;
  return std::make_pair(shift + r->first, shift + r->second);
}

struct ElideSliceCopiesPass
    : public impl::ElideSliceCopiesBase<ElideSliceCopiesPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isDeclaration())
      return;
    Block &entry = func.getBody().front();
    SmallVector<memref::CopyOp> copies;
    for (Operation &op : entry)
      if (auto copy = dyn_cast<memref::CopyOp>(op))
        copies.push_back(copy);
    for (memref::CopyOp copy : copies)
      if (elide(copy, entry))
        ++numElided;
  }

  bool elide(memref::CopyOp copy, Block &entry) {
    // The part: an allocation of its own, or a reshape of one.
    Value src = copy.getSource();
    while (Operation *def = src.getDefiningOp()) {
      if (!isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(def))
        break;
      src = def->getOperand(0);
    }
    auto part = src.getDefiningOp<memref::AllocOp>();
    auto slice = copy.getTarget().getDefiningOp<memref::SubViewOp>();
    if (!part || !slice || !isPlainAlloc(part, entry) ||
        !memref::isStaticShapeAndContiguousRowMajor(slice.getType()) ||
        slice.getType().getElementType() != part.getType().getElementType())
      return false;
    // The concat's result: an allocation, or the zero-shift view of the
    // byte buffer an earlier part's elision made of it (either maybe
    // reshaped: a channel shuffle's transpose reads it as 5-D).
    Value result = slice.getSource();
    while (Operation *def = result.getDefiningOp()) {
      if (!isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(def))
        break;
      result = def->getOperand(0);
    }
    memref::AllocOp whole = result.getDefiningOp<memref::AllocOp>();
    memref::ViewOp wholeView;
    memref::AllocOp bytes;
    if (whole) {
      if (!isPlainAlloc(whole, entry))
        return false;
    } else {
      wholeView = result.getDefiningOp<memref::ViewOp>();
      if (!wholeView || getConstantIntValue(wholeView.getByteShift()) != 0)
        return false;
      bytes = wholeView.getSource().getDefiningOp<memref::AllocOp>();
      if (!bytes || !bytes->hasAttr(kSlicedAttr) || bytes->getBlock() != &entry)
        return false;
    }
    std::optional<std::pair<int64_t, int64_t>> range =
        touchedBytes(slice.getType());
    if (!range || range->first % kAlign)
      return false;

    // The part dies at the copy: every use of it (or of a view of it)
    // comes before, and none leaves the function or runs on a device.
    auto offLimits = [&](Operation *user, Operation *&anc) {
      anc = entry.findAncestorOpInBlock(*user);
      Dialect *dialect = user->getDialect();
      return !anc || isa<func::ReturnOp>(anc) ||
             (dialect && dialect->getNamespace() == "gpu");
    };
    bool ok = true;
    forEachAliasUse(part.getResult(), [&](OpOperand &use) {
      Operation *anc;
      if (offLimits(use.getOwner(), anc))
        ok = false;
      else if (anc == copy)
        ok &= use.getOperandNumber() == 0;
      else if (!isa<memref::DeallocOp>(anc))
        ok &= anc->isBeforeInBlock(copy);
    });
    if (!ok)
      return false;
    // Nothing touches the slice's bytes of the result while the part is
    // alive (from its allocation to the copy): other parts' copies and
    // producers write elsewhere, readers of an earlier value of the
    // buffer come before.
    Value root = whole ? whole.getResult() : bytes.getResult();
    forEachAliasUse(root, [&](OpOperand &use) {
      Operation *user = use.getOwner(), *anc;
      if (offLimits(user, anc)) {
        ok = false;
        return;
      }
      if (isa<ViewLikeOpInterface>(user) || isa<memref::DeallocOp>(user))
        return;
      if (anc == copy) {
        ok &= use.getOperandNumber() == 1;
        return;
      }
      if (!part->isBeforeInBlock(anc) || !anc->isBeforeInBlock(copy))
        return;
      std::optional<std::pair<int64_t, int64_t>> touched =
          aliasBytes(use.get(), root);
      ok &= touched && (touched->second <= range->first ||
                        touched->first >= range->second);
    });
    if (!ok)
      return false;

    // The result's buffer as bytes, allocated before the part's.
    Location loc = copy.getLoc();
    OpBuilder b(copy);
    if (whole) {
      b.setInsertionPoint(whole->isBeforeInBlock(part) ? whole : part);
      MemRefType t = whole.getType();
      int64_t size = t.getNumElements() * t.getElementTypeBitWidth() / 8;
      bytes = b.create<memref::AllocOp>(
          whole.getLoc(), MemRefType::get({size}, b.getI8Type()),
          b.getI64IntegerAttr(kAlign));
      bytes->setAttr(kSlicedAttr, b.getUnitAttr());
      Value zero = b.create<arith::ConstantIndexOp>(whole.getLoc(), 0);
      Value view = b.create<memref::ViewOp>(whole.getLoc(), t, bytes, zero,
                                            ValueRange{});
      whole.replaceAllUsesWith(view);
      whole.erase();
    } else if (!bytes->isBeforeInBlock(part)) {
      bytes->moveBefore(part);
      wholeView.getByteShift().getDefiningOp()->moveBefore(part);
      wholeView->moveBefore(part);
    }
    b.setInsertionPoint(part);
    Value shift = b.create<arith::ConstantIndexOp>(loc, range->first);
    Value view = b.create<memref::ViewOp>(part.getLoc(), part.getType(), bytes,
                                          shift, ValueRange{});
    for (Operation *user : llvm::make_early_inc_range(part->getUsers()))
      if (isa<memref::DeallocOp>(user))
        user->erase();
    part.replaceAllUsesWith(view);
    part.erase();
    copy.erase();
    if (slice->use_empty())
      slice.erase();
    return true;
  }
};

} // namespace
} // namespace kiln
