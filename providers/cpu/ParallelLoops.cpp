//===- ParallelLoops.cpp - kiln-cpu-parallel-loops ------------------------===//
//
// The host linalg ops that kiln-cpu-vectorize-contractions leaves on naive
// loops (transposes, gathers, reductions over outer dims, integer and
// other bodies) split their outermost parallel loop across threads.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "providers/Passes.h"
#include "providers/cpu/Vectorize.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_CPUPARALLELLOOPS
#include "providers/Passes.h.inc"

namespace {

/// Whether the body only computes and reads: iterations that write
/// through it (or call out) must keep their order and thread.
bool readOnlyBody(linalg::LinalgOp op) {
  for (Operation &o : op.getBlock()->without_terminator()) {
    if (isMemoryEffectFree(&o))
      continue;
    auto effects = dyn_cast<MemoryEffectOpInterface>(o);
    if (!effects || !effects.onlyHasEffect<MemoryEffects::Read>())
      return false;
  }
  return true;
}

/// Whether `v` varies along loop `inner` of `op` (reads linalg.index of it
/// or an operand element indexed by it, directly or through arithmetic in
/// the body).
bool variesAlong(Value v, linalg::LinalgOp op, unsigned inner) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (arg.getOwner() != op.getBlock())
      return false;
    AffineMap map = op.getMatchingIndexingMap(op.getMatchingOpOperand(arg));
    return llvm::any_of(map.getResults(),
                        [&](AffineExpr e) { return e.isFunctionOfDim(inner); });
  }
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != op.getBlock())
    return false;
  if (auto index = dyn_cast<linalg::IndexOp>(def))
    return index.getDim() == inner;
  return llvm::any_of(def->getOperands(),
                      [&](Value o) { return variesAlong(o, op, inner); });
}

/// Whether a memref operand's elements are contiguous along its last
/// dimension (other operands: scalars).
bool unitInnerStride(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return !type || vectorize::unitInnerStride(type);
}

/// Whether LLVM's loop vectorizer will take the innermost loop: arithmetic
/// whose operands and loads read along it contiguously (or not at all).
/// Such a loop's iterations cost vector lanes, not scalar iterations (an
/// LSTM step's gate math, which reads its gates at offsets of one row:
/// counted scalar, its 0.45 us split in two on two threads and took 1.8).
bool vectorizesInner(linalg::LinalgOp op) {
  unsigned inner = op.getNumLoops() - 1;
  // (LLVM leaves loops of a few trips scalar.)
  int64_t trips = op.getStaticLoopRanges()[inner];
  if (op.getIteratorTypesArray()[inner] != utils::IteratorType::parallel ||
      (!ShapedType::isDynamic(trips) && trips < 16))
    return false;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    for (unsigned r = 0; r < map.getNumResults(); ++r)
      if (map.getResult(r).isFunctionOfDim(inner) &&
          (r + 1 != map.getNumResults() ||
           map.getResult(r) != getAffineDimExpr(inner, op.getContext())))
        return false;
    if (map.getNumResults() && !unitInnerStride(operand.get()))
      return false;
  }
  for (Operation &o : op.getBlock()->without_terminator()) {
    if (auto load = dyn_cast<memref::LoadOp>(o)) {
      if (!unitInnerStride(load.getMemref()))
        return false;
      auto indices = load.getIndices();
      for (auto [k, index] : llvm::enumerate(indices)) {
        if (!variesAlong(index, op, inner))
          continue;
        // Only the last index, as the loop's index plus a fixed offset.
        if (k + 1 != indices.size())
          return false;
        Value base = index, offset;
        if (auto add = index.getDefiningOp<arith::AddIOp>()) {
          bool lhs = variesAlong(add.getLhs(), op, inner);
          base = lhs ? add.getLhs() : add.getRhs();
          offset = lhs ? add.getRhs() : add.getLhs();
        }
        if (!base.getDefiningOp<linalg::IndexOp>() ||
            (offset && variesAlong(offset, op, inner)))
          return false;
      }
      continue;
    }
    // Arithmetic, and the math that kiln-approximate-math expands inline
    // (other math ops and remf become scalar libm calls).
    bool inlineMath =
        isa<math::ExpOp, math::TanhOp, math::ErfOp, math::AbsFOp, math::SqrtOp,
            math::RsqrtOp, math::FmaOp, math::FloorOp, math::CeilOp,
            math::RoundEvenOp, math::CopySignOp>(o) &&
        o.getResult(0).getType().isF32();
    bool arith = isa_and_nonnull<arith::ArithDialect>(o.getDialect()) &&
                 !isa<arith::RemFOp>(o);
    if (!isa<linalg::IndexOp>(o) && !inlineMath && !arith)
      return false;
  }
  return true;
}

struct CpuParallelLoopsPass
    : public impl::CpuParallelLoopsBase<CpuParallelLoopsPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && op.getNumLoops() > 0 &&
          !vectorize::inDeviceCode(op) && !vectorize::inParallelLoop(op) &&
          readOnlyBody(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops)
      split(rewriter, op);
  }

  void split(IRRewriter &rewriter, linalg::LinalgOp op) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    auto iterators = op.getIteratorTypesArray();
    // The outermost parallel loop of more than one iteration.
    std::optional<unsigned> d;
    bool reductionBefore = false;
    for (unsigned i = 0; i < ranges.size() && !d; ++i) {
      if (iterators[i] != utils::IteratorType::parallel)
        reductionBefore |= ranges[i] != 1;
      else if (ranges[i] != 1)
        d = i;
    }
    if (!d)
      return;
    // A transpose, copy or fill (its body a yield) moves data: counted in
    // elements against the move threshold. (Other scalar iterations each
    // cost several vector lanes'.)
    bool moves = op.getBlock()->getOperations().size() == 1;
    int64_t threshold =
        moves ? vectorize::kParallelMoveElements : vectorize::kParallelWork;
    int64_t work =
        moves ? 1
              : vectorize::iterationCost(op) * vectorize::kScalarIterationCost;
    bool dynamic = false;
    for (int64_t r : ranges) {
      dynamic |= ShapedType::isDynamic(r);
      work *= ShapedType::isDynamic(r) ? 1 : r;
    }
    if (!dynamic && work < threshold)
      return;
    // One iteration of an outer loop per tile; a loop that is innermost
    // (or inside a reduction) keeps runs of contiguous iterations.
    int64_t extent = ranges[*d], tile = 1;
    if (*d + 1 == ranges.size() || reductionBefore)
      tile = ShapedType::isDynamic(extent)
                 ? 64
                 : std::max<int64_t>(16, llvm::divideCeil(extent, 64));
    // The threads' grain counts the iterations that LLVM vectorizes as
    // lanes. (Such an op is still tiled as a scalar one would be: the LSTM
    // gate loop, left whole, was not vectorized and ran 5 times slower.)
    bool lanes = vectorizesInner(op);
    SmallVector<int64_t> sizes(ranges.size(), 0);
    sizes[*d] = tile;
    // A loop of a few trips (a stem's pad over 3 channels, grain 2: one
    // range) joins the parallel loops inside it, short of the innermost,
    // into one loop over their product.
    int64_t trips = extent;
    unsigned last = *d;
    while (tile == 1 && !dynamic && trips < vectorize::kParallelEvenTrips &&
           last + 2 < ranges.size() &&
           iterators[last + 1] == utils::IteratorType::parallel) {
      trips *= ranges[++last];
      sizes[last] = 1;
    }
    linalg::LinalgTilingOptions options;
    options.setTileSizes(sizes).setLoopType(linalg::LinalgTilingLoopType::Loops);
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::TiledLinalgOp> tiled =
        linalg::tileLinalgOp(rewriter, op, options);
    if (failed(tiled) || tiled->loops.empty())
      return;
    rewriter.eraseOp(op);
    if (last > *d) {
      SmallVector<scf::ForOp> loops;
      for (Operation *loop : tiled->loops)
        loops.push_back(cast<scf::ForOp>(loop));
      if (failed(coalesceLoops(rewriter, loops)))
        return signalPassFailure();
    }
    if (lanes && !moves)
      work /= vectorize::kScalarIterationCost;
    int64_t perTile =
        ShapedType::isDynamic(extent) ? work * tile : work / trips * tile;
    vectorize::markParallel(tiled->loops.front(), threshold, perTile);
    ++numSplit;
  }
};

} // namespace
} // namespace kiln
