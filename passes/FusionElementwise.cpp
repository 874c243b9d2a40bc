//===- FusionElementwise.cpp - producer-consumer fusion of linalg ops -----===//
//
// After the partitions are lowered, chains of elementwise linalg.generic ops
// (including a contraction's epilogue and the ops that consume it) are fused
// into one generic with MLIR's ElementwiseOpsFusion patterns. A producer is
// fused only into its single consumer, through a permutation indexing map,
// so no value is computed more than once, and only if it reads along its
// innermost loop by that loop's index (the consumer's vectors stay whole),
// and not when it narrows a contraction's result into a join that a later
// contraction's chain also reads. Ops of different providers
// (`kiln.device`) are not fused, and a fused op keeps its provider.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "passes/Passes.h.inc"

namespace {

constexpr const char *kDeviceAttr = "kiln.device";
/// A fused body holds at most this many ops: each fusion copies both
/// bodies, so an unbounded chain of n ops would cost n^2 (a 20,000-node
/// chain took minutes). Real chains are far shorter.
constexpr size_t kMaxFusedBodyOps = 256;

size_t bodySize(Operation *op) {
  return op->getNumRegions() ? op->getRegion(0).front().getOperations().size() : 0;
}

bool isElementwise(linalg::GenericOp g) {
  return llvm::all_of(g.getIteratorTypesArray(), linalg::isParallelIterator);
}

/// g's inputs read whole, each element once (a permutation map).
SmallVector<OpOperand *> wholeInputs(linalg::GenericOp g) {
  SmallVector<OpOperand *> ins;
  for (OpOperand *in : g.getDpsInputOperands())
    if (g.getMatchingIndexingMap(in).isPermutation())
      ins.push_back(in);
  return ins;
}

unsigned elementBits(Value v) {
  Type t = getElementTypeOrSelf(v.getType());
  return t.isIntOrFloat() ? t.getIntOrFloatBitWidth() : 0;
}

/// The contractions (linalg ops with a reduction loop) that `v` is computed
/// from through elementwise generics reading whole operands (at most
/// `budget` ops looked at).
void contractionRoots(Value v, SmallPtrSetImpl<Operation *> &roots,
                      int &budget) {
  auto op = v.getDefiningOp<linalg::LinalgOp>();
  if (!op || --budget < 0)
    return;
  auto g = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!g || !isElementwise(g)) {
    if (op.getNumReductionLoops() > 0)
      roots.insert(op);
    return;
  }
  for (OpOperand *in : wholeInputs(g))
    contractionRoots(in->get(), roots, budget);
}

/// Whether `producer` narrows the elements of a contraction's result (an
/// 8-bit requantization of a conv's i32 sums) while the chain it would
/// join downstream also takes a later contraction's result. Only one
/// contraction can run the joined chain as its store's epilogue, the
/// latest; fused, this one's wide sums would be stored whole and read
/// back (resnet50_lite_qdq: a downsample's 3.2 MB of i32 read by the
/// residual Add in a 1x1 conv's store: 860 us, 190 without). Left alone,
/// the producer becomes its
/// own contraction's epilogue and the join reads its narrow result.
bool narrowsIntoLaterJoin(linalg::GenericOp producer,
                          linalg::GenericOp consumer) {
  if (producer->getNumResults() != 1 || !isElementwise(producer))
    return false;
  unsigned resultBits = elementBits(producer->getResult(0)), wideBits = 0;
  for (OpOperand *in : wholeInputs(producer))
    wideBits = std::max(wideBits, elementBits(in->get()));
  if (!resultBits || resultBits >= wideBits)
    return false;
  SmallPtrSet<Operation *, 4> own, others;
  int budget = 64;
  for (OpOperand *in : wholeInputs(producer))
    contractionRoots(in->get(), own, budget);
  if (own.empty())
    return false;
  // The single-use elementwise chain from the consumer on, and the roots
  // of the other operands it reads whole.
  Value path = producer->getResult(0);
  linalg::GenericOp op = consumer;
  for (int steps = 0; op && steps < 32; ++steps) {
    if (!isElementwise(op))
      break;
    for (OpOperand *in : wholeInputs(op))
      if (in->get() != path)
        contractionRoots(in->get(), others, budget);
    if (op->getNumResults() != 1 || !op->getResult(0).hasOneUse())
      break;
    path = op->getResult(0);
    auto next = dyn_cast<linalg::GenericOp>(*path.getUsers().begin());
    if (!next ||
        !llvm::is_contained(wholeInputs(next), &*path.getUses().begin()))
      break;
    op = next;
  }
  return llvm::any_of(others, [&](Operation *later) {
    return llvm::all_of(own, [&](Operation *r) {
      return r != later && r->getBlock() == later->getBlock() &&
             r->isBeforeInBlock(later);
    });
  });
}

/// The fused op is built right before the consumer it replaces: it
/// inherits the consumer's provider, and the locations of both (the
/// profiler lists the producer's node among the kernel's fused nodes).
struct KeepDevice : public RewriterBase::Listener {
  /// The consumer the fusion control last accepted, and the locations of
  /// it and its producer; cleared once used or when the consumer goes.
  Operation *consumer = nullptr;
  SmallVector<Location, 2> locs;

  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    Operation *next = op->getNextNode();
    if (!isa<linalg::LinalgOp>(op) || !next || !isa<linalg::LinalgOp>(next))
      return;
    if (Attribute device = next->getAttr(kDeviceAttr))
      op->setAttr(kDeviceAttr, device);
    if (next == consumer) {
      op->setLoc(FusedLoc::get(op->getContext(), locs));
      consumer = nullptr;
    }
  }
  void notifyOperationErased(Operation *op) override {
    if (op == consumer)
      consumer = nullptr;
  }
};

struct FuseElementwisePass
    : public impl::FuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    int64_t before = 0, after = 0;
    getOperation().walk([&](linalg::GenericOp) { ++before; });
    KeepDevice keepDevice;
    linalg::ControlFusionFn control = [&keepDevice](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      auto consumer = dyn_cast<linalg::GenericOp>(fused->getOwner());
      if (!producer || !consumer || !producer->hasOneUse() ||
          producer->getAttr(kDeviceAttr) != consumer->getAttr(kDeviceAttr))
        return false;
      // A broadcast map would recompute the producer per broadcast element.
      if (!consumer.getMatchingIndexingMap(fused).isPermutation())
        return false;
      if (bodySize(producer) + bodySize(consumer) > kMaxFusedBodyOps)
        return false;
      if (auto g = dyn_cast<linalg::GenericOp>(producer);
          g && narrowsIntoLaterJoin(g, consumer))
        return false;
      // Nor a producer that reads along its innermost loop through other
      // than that loop's index (a nearest upsampling's floordiv): fused, its
      // consumer's vectors would load an element at a time, where alone it
      // runs as shuffled rows and the consumer on whole vectors (an FPN's
      // Add of a 2x upsampling: 95 us, 35 apart).
      if (auto g = dyn_cast<linalg::GenericOp>(producer)) {
        unsigned inner = g.getNumLoops() - 1;
        for (OpOperand *in : g.getDpsInputOperands())
          for (AffineExpr e : g.getMatchingIndexingMap(in).getResults())
            if (e.isFunctionOfDim(inner) && !isa<AffineDimExpr>(e))
              return false;
      }
      keepDevice.consumer = consumer;
      keepDevice.locs = {consumer->getLoc(), producer->getLoc()};
      return true;
    };
    RewritePatternSet patterns(ctx);
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    FrozenRewritePatternSet frozen(std::move(patterns));
    GreedyRewriteConfig config;
    config.listener = &keepDevice;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(applyPatternsAndFoldGreedily(func, frozen, config)))
        return signalPassFailure();
    getOperation().walk([&](linalg::GenericOp) { ++after; });
    if (before == after)
      return;
    Builder b(ctx);
    std::string key = "kiln.report.fuse_elementwise";
    int64_t prev = 0;
    if (auto a = getOperation()->getAttrOfType<IntegerAttr>(key))
      prev = a.getInt();
    getOperation()->setAttr(key, b.getI64IntegerAttr(prev + before - after));
  }
};

} // namespace
} // namespace kiln
