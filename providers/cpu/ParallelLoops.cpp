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

bool inDeviceOrParallelCode(Operation *op) {
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
    if (p->hasAttr(kParallelAttr) ||
        isa<gpu::LaunchOp, gpu::GPUFuncOp, gpu::GPUModuleOp>(p))
      return true;
  return false;
}

struct CpuParallelLoopsPass
    : public impl::CpuParallelLoopsBase<CpuParallelLoopsPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && op.getNumLoops() > 0 &&
          !inDeviceOrParallelCode(op) && readOnlyBody(op))
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
    // (Scalar iterations: each costs several vector lanes'.)
    int64_t work =
        vectorize::iterationCost(op) * vectorize::kScalarIterationCost;
    bool dynamic = false;
    for (int64_t r : ranges) {
      dynamic |= ShapedType::isDynamic(r);
      work *= ShapedType::isDynamic(r) ? 1 : r;
    }
    if (!dynamic && work < vectorize::kParallelWork)
      return;
    // One iteration of an outer loop per tile; a loop that is innermost
    // (or inside a reduction) keeps runs of contiguous iterations.
    int64_t extent = ranges[*d], tile = 1;
    if (*d + 1 == ranges.size() || reductionBefore)
      tile = ShapedType::isDynamic(extent)
                 ? 64
                 : std::max<int64_t>(16, llvm::divideCeil(extent, 64));
    SmallVector<int64_t> sizes(ranges.size(), 0);
    sizes[*d] = tile;
    linalg::LinalgTilingOptions options;
    options.setTileSizes(sizes).setLoopType(linalg::LinalgTilingLoopType::Loops);
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::TiledLinalgOp> tiled =
        linalg::tileLinalgOp(rewriter, op, options);
    if (failed(tiled) || tiled->loops.empty())
      return;
    rewriter.eraseOp(op);
    int64_t perTile =
        ShapedType::isDynamic(extent) ? work * tile : work / extent * tile;
    vectorize::markParallel(tiled->loops.front(), vectorize::kParallelWork,
                            perTile);
    ++numSplit;
  }
};

} // namespace
} // namespace kiln
