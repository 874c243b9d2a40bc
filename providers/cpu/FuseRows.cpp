//===- FuseRows.cpp - kiln-cpu-fuse-rows ----------------------------------===//
//
// A reduction over the last dims of rows and the host linalg ops after it
// that work row by row (a LayerNorm's mean, centring, variance and scaling;
// a Softmax's max, exp and sum), with the row-wise op that made the
// reduction's input (attention's scale and mask), run as one loop over the
// rows, each row's ops in turn, rather than one pass over the whole tensor
// per op.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "providers/Passes.h"
#include "providers/cpu/Vectorize.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_CPUFUSEROWS
#include "providers/Passes.h.inc"

namespace {

/// Rows as a chain sees them: dim `pos` of its ops' outputs, `rows` long,
/// every dim before it of extent 1 (BERT's [1, 128, 128] and the [1, 128]
/// of its row means: pos 1).
struct Rows {
  unsigned pos;
  int64_t rows;
};

/// Where the rows of `g`'s output are, if they are rows: its first dim
/// of extent above 1.
std::optional<Rows> rowsOf(linalg::GenericOp g) {
  auto t = g.getNumDpsInits() == 1
               ? dyn_cast<MemRefType>(g.getDpsInits()[0].getType())
               : MemRefType();
  if (!t || !t.hasStaticShape())
    return std::nullopt;
  for (unsigned i = 0; i < t.getRank(); ++i)
    if (t.getDimSize(i) != 1)
      return Rows{i, t.getDimSize(i)};
  return std::nullopt;
}

/// A chain of row-local ops: each reads and writes its rows only.
struct Chain {
  Rows rows;
  SmallVector<linalg::GenericOp> ops;
  SmallVector<unsigned> rowLoop;       // per op: its loop over the rows
  SmallVector<Operation *> hoist;      // allocations and inits between them
  llvm::SmallPtrSet<Value, 8> written; // buffers the ops write
  // Buffers an op read other than row for row (a whole row-independent
  // operand, or through a view): no later op of the chain may write them.
  llvm::SmallPtrSet<Value, 8> readAcross;
};

/// The result of `map` (g's operand) that loop `loop` indexes, if one does.
std::optional<unsigned> resultAlong(AffineMap map, unsigned loop) {
  for (unsigned j = 0; j < map.getNumResults(); ++j)
    if (map.getResult(j).isFunctionOfDim(loop))
      return j;
  return std::nullopt;
}

/// The loop of `g` that runs along the chain's rows, if `g` may join:
/// static buffers, one output, a body that only computes, the rows of
/// its output a parallel loop, and every operand either indexed by that
/// loop as a plain dim (at the rows' position, for a buffer the chain
/// writes) or not at all.
std::optional<unsigned> rowLoopOf(linalg::GenericOp g, const Chain &c) {
  // (linalg.index would count from each row's view.)
  if (!g.hasPureBufferSemantics() || g.getNumDpsInits() != 1 ||
      g.hasIndexSemantics())
    return std::nullopt;
  for (Operation &o : g.getBlock()->without_terminator())
    if (!isMemoryEffectFree(&o))
      return std::nullopt;
  std::optional<Rows> r = rowsOf(g);
  if (!r || r->pos != c.rows.pos || r->rows != c.rows.rows)
    return std::nullopt;
  AffineMap outMap = g.getIndexingMapsArray().back();
  auto d = dyn_cast<AffineDimExpr>(outMap.getResult(r->pos));
  if (!d || g.getIteratorTypesArray()[d.getPosition()] !=
                utils::IteratorType::parallel)
    return std::nullopt;
  unsigned loop = d.getPosition();
  Value out = g.getDpsInits()[0];
  for (OpOperand &operand : g->getOpOperands()) {
    auto t = dyn_cast<MemRefType>(operand.get().getType());
    if (!t || !t.hasStaticShape())
      return std::nullopt;
    AffineMap map = g.getMatchingIndexingMap(&operand);
    std::optional<unsigned> at;
    for (unsigned j = 0; j < map.getNumResults(); ++j) {
      AffineExpr e = map.getResult(j);
      if (!e.isFunctionOfDim(loop))
        continue;
      if (e != getAffineDimExpr(loop, g.getContext()) || at)
        return std::nullopt;
      at = j;
    }
    // Buffers the chain writes (and g's own output) are read and written
    // row for row; another view of one is not followed.
    Value root = rootOf(operand.get());
    bool chainBuffer = root == rootOf(out) || c.written.contains(root);
    if (chainBuffer && (root != operand.get() || at != c.rows.pos))
      return std::nullopt;
  }
  // A reduction reads each input element once, along all its loops (not
  // a contraction, whose weights the rows share).
  if (g.getNumReductionLoops() > 0 &&
      llvm::any_of(g.getDpsInputOperands(), [&](OpOperand *in) {
        return !g.getMatchingIndexingMap(in).isIdentity();
      }))
    return std::nullopt;
  // (Its output must be a buffer of its own: an allocation, that no op
  // before it in the chain read across rows.)
  if (rootOf(out) != out || !out.getDefiningOp<memref::AllocOp>() ||
      c.readAcross.contains(out))
    return std::nullopt;
  return loop;
}

/// Adds `g`, whose loop over the rows is `loop`, to `c`.
void join(Chain &c, linalg::GenericOp g, unsigned loop) {
  c.ops.push_back(g);
  c.rowLoop.push_back(loop);
  c.written.insert(g.getDpsInits()[0]);
  for (OpOperand *in : g.getDpsInputOperands())
    if (rootOf(in->get()) != in->get() ||
        resultAlong(g.getMatchingIndexingMap(in), loop) != c.rows.pos)
      c.readAcross.insert(rootOf(in->get()));
}

/// A reduction over the last dims of rows: the chain's first op.
bool isRowReduction(linalg::GenericOp g) {
  auto iters = g.getIteratorTypesArray();
  unsigned n = g.getNumReductionLoops();
  if (n == 0 || n == iters.size())
    return false;
  for (unsigned i = iters.size() - n; i < iters.size(); ++i)
    if (iters[i] != utils::IteratorType::reduction)
      return false;
  return true;
}

/// An op between the chain's ops that can go before all of them: an
/// allocation, or an init (copy or fill) of a buffer no op of the chain
/// has touched yet whose source the chain does not write.
bool hoistable(Operation *op, const Chain &c) {
  if (auto alloc = dyn_cast<memref::AllocOp>(op))
    return alloc->getNumOperands() == 0;
  Value target, source;
  if (auto copy = dyn_cast<memref::CopyOp>(op)) {
    target = copy.getTarget();
    source = copy.getSource();
  } else if (auto fill = dyn_cast<linalg::FillOp>(op)) {
    if (!fill.hasPureBufferSemantics())
      return false;
    target = fill.getDpsInits()[0];
  } else {
    return false;
  }
  auto alloc = target.getDefiningOp<memref::AllocOp>();
  if (!alloc || (source && c.written.contains(rootOf(source))))
    return false;
  // No chain op may have used it, directly or through a view (a buffer
  // bufferization reuses in place: the init moved before the chain would
  // clobber what an earlier op reads). Then its allocation, in this block,
  // comes before the chain's first op or moves with it.
  return llvm::none_of(c.ops, [&](linalg::GenericOp g) {
    return llvm::any_of(g->getOperands(),
                        [&](Value v) { return rootOf(v) == target; });
  });
}

/// Starts `c` with the all-parallel generic before row reduction `g` whose
/// output `g` reduces, where it works row by row too (a Softmax's scale
/// and mask, a LayerNorm's residual Add), the allocations and inits
/// between them moving before it: one pass over the rows where there were
/// two (and on threads one dispatch). Not one that an earlier chain took.
void joinProducer(Chain &c, linalg::GenericOp g,
                  const llvm::SmallPtrSetImpl<Operation *> &chained) {
  SmallVector<Operation *> between;
  Operation *prev = g->getPrevNode();
  for (; prev && !isa<linalg::GenericOp>(prev); prev = prev->getPrevNode())
    between.push_back(prev);
  auto p = dyn_cast_or_null<linalg::GenericOp>(prev);
  // (Only where a row's innermost dim is whole vectors: on its own, an op
  // on contiguous buffers is vectorized flat; on a row's view, along its
  // innermost dim, a remainder element per line: Swin's scale on 49-wide
  // lines ran 9% slower in its row loop.)
  constexpr int64_t kLanes = 16;
  if (!p || p.getNumLoops() == 0 || p.hasDynamicShape() ||
      p.getStaticLoopRanges().back() % kLanes != 0 || chained.contains(p) ||
      p.getNumReductionLoops() > 0 ||
      !llvm::any_of(g.getDpsInputs(), [&](Value v) {
        return rootOf(v) == rootOf(p.getDpsInits()[0]);
      }))
    return;
  std::optional<unsigned> loop = rowLoopOf(p, c);
  if (!loop)
    return;
  join(c, p, *loop);
  for (Operation *op : between)
    if (!hoistable(op, c)) {
      c = Chain{c.rows, {}, {}, {}, {}, {}};
      return;
    }
  c.hoist.append(between.rbegin(), between.rend());
}

struct CpuFuseRowsPass : public impl::CpuFuseRowsBase<CpuFuseRowsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || func->getParentOfType<gpu::GPUModuleOp>())
      return;
    std::vector<Chain> chains;
    llvm::SmallPtrSet<Operation *, 16> chained;
    // Chains in the function's body only (not in loops other passes made).
    Block &body = func.getBody().front();
    for (auto it = body.begin(); it != body.end();) {
      auto g = dyn_cast<linalg::GenericOp>(&*it);
      std::optional<Rows> rows = g ? rowsOf(g) : std::nullopt;
      if (!g || !rows || !isRowReduction(g)) {
        ++it;
        continue;
      }
      Chain c{*rows, {}, {}, {}, {}, {}};
      joinProducer(c, g, chained);
      std::optional<unsigned> loop = rowLoopOf(g, c);
      if (!loop && !c.ops.empty()) {
        c = Chain{*rows, {}, {}, {}, {}, {}};
        loop = rowLoopOf(g, c);
      }
      if (!loop) {
        ++it;
        continue;
      }
      join(c, g, *loop);
      SmallVector<Operation *> pending;
      for (++it; it != body.end(); ++it) {
        if (auto next = dyn_cast<linalg::GenericOp>(&*it)) {
          std::optional<unsigned> l = rowLoopOf(next, c);
          if (!l)
            break;
          c.hoist.append(pending);
          pending.clear();
          join(c, next, *l);
          continue;
        }
        if (!hoistable(&*it, c))
          break;
        pending.push_back(&*it);
      }
      if (c.ops.size() >= 2) {
        chained.insert(c.ops.begin(), c.ops.end());
        chains.push_back(std::move(c));
      }
    }
    for (Chain &c : chains)
      fuse(c);
  }

  /// One loop over the rows, each iteration every op of `c` on its row.
  void fuse(Chain &c) {
    linalg::GenericOp first = c.ops.front();
    for (Operation *op : c.hoist)
      op->moveBefore(first);
    OpBuilder b(first);
    Location loc = first.getLoc();
    auto loop =
        b.create<scf::ForOp>(loc, b.create<arith::ConstantIndexOp>(loc, 0),
                             b.create<arith::ConstantIndexOp>(loc, c.rows.rows),
                             b.create<arith::ConstantIndexOp>(loc, 1));
    OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
    int64_t perRow = 0;
    for (auto [g, d] : llvm::zip(c.ops, c.rowLoop)) {
      int64_t iterations = 1;
      for (int64_t r : g.getStaticLoopRanges())
        iterations *= r;
      perRow += vectorize::iterationCost(g) * (iterations / c.rows.rows);
      vectorize::copyAlong(lb, g, d, loop.getInductionVar(),
                           lb.getIndexAttr(1));
      g.erase();
    }
    // Threads take rows when the whole has enough work.
    if (perRow * c.rows.rows >= vectorize::kParallelWork)
      vectorize::markParallel(loop, vectorize::kParallelWork, perRow);
    ++numChains;
    numOps += c.ops.size();
  }
};

} // namespace
} // namespace kiln
