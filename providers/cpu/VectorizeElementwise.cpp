//===- VectorizeElementwise.cpp - elementwise ops and reductions ----------===//
//
// Part of kiln-cpu-vectorize-contractions: which elementwise generics and
// reductions over the last dims take the vector schedule (one vector of up
// to 16 lanes along the innermost loop), their transform script, and the
// trailing dims they are collapsed over first when the innermost one is
// short (a 7 x 7 plane is one loop of 49).
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "providers/cpu/Vectorize.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/IRMapping.h"

#include <limits>

using namespace mlir;

namespace kiln::vectorize {

/// A static buffer of f32, or of i32 or i8 (quantized models: an 8-bit
/// product's i32 result rescaled to f32, a float quantized to 8 bits).
static bool staticElementwiseOperand(Value v) {
  auto t = dyn_cast<MemRefType>(v.getType());
  return t && t.hasStaticShape() &&
         (t.getElementType().isF32() || t.getElementType().isInteger(32) ||
          t.getElementType().isInteger(8));
}

/// A host generic on buffers with one output and no linalg.index: what
/// the elementwise schedule and the blocks of run-time rows take.
bool isHostBufferGeneric(linalg::GenericOp g) {
  return g.hasPureBufferSemantics() && !g->hasAttr("kiln.device") &&
         !g.hasIndexSemantics() && g.getNumDpsInits() == 1;
}

/// Whether `g` is an elementwise op or reduction worth vectorizing here:
/// parallel loops, then possibly reduction loops (a sum over the last
/// dims), static f32 (or i32, i8) operands each read along the innermost loop
/// contiguously or broadcast across it, and a body of scalar arith/math.
/// (LLVM's loop vectorizer leaves such loops scalar when their inner trip
/// count is short, and a reduction into a buffer that might alias its
/// input stays a load-add-store chain.)
bool isVectorizableElementwise(linalg::GenericOp g) {
  if (!isHostBufferGeneric(g) || g.getNumLoops() < 1)
    return false;
  // Parallel loops first, then reductions.
  SmallVector<utils::IteratorType> iters = g.getIteratorTypesArray();
  auto firstReduction = llvm::find(iters, utils::IteratorType::reduction);
  if (std::find(firstReduction, iters.end(), utils::IteratorType::parallel) !=
      iters.end())
    return false;
  bool reduces = firstReduction != iters.end();
  SmallVector<int64_t> r = g.getStaticLoopRanges();
  if (llvm::any_of(r, ShapedType::isDynamic) || r.back() < 8)
    return false;
  unsigned last = g.getNumLoops() - 1;
  AffineExpr lastDim = getAffineDimExpr(last, g.getContext());
  for (OpOperand &o : g->getOpOperands()) {
    if (!staticElementwiseOperand(o.get()))
      return false;
    AffineMap m = g.getMatchingIndexingMap(&o);
    // (0 for a broadcast dim of size 1.)
    if (!m.isProjectedPermutation(/*allowZeroInResults=*/true))
      return false;
    if (!m.isFunctionOfDim(last))
      continue;
    if (m.getResults().back() != lastDim ||
        !unitInnerStride(cast<MemRefType>(o.get().getType())))
      return false;
  }
  if (g.getMatchingIndexingMap(g.getDpsInitOperand(0)).isFunctionOfDim(last) ==
      reduces)
    return false;
  for (Operation &op : g.getRegion().front().without_terminator()) {
    StringRef d = op.getDialect() ? op.getDialect()->getNamespace() : "";
    Type r = op.getNumResults() == 1 ? op.getResult(0).getType() : Type();
    if ((d != "arith" && d != "math") || op.getNumRegions() || !r ||
        !(r.isF32() || r.isInteger(1) || r.isInteger(8) || r.isInteger(32)))
      return false;
  }
  // (A reduction's combiner must be one the vectorizer knows.)
  return succeeded(linalg::vectorizeOpPrecondition(g));
}

/// The run-time loops of an elementwise op or reduction that are outer
/// parallel loops (a batch, or batch x sequence rows) over static inner
/// loops, in order; empty when its sizes are static or another loop is of
/// run-time size. Each operand indexes plain loop dims (or a broadcast 0),
/// so a block of one along such a loop is a view of every operand.
SmallVector<unsigned> runtimeOuterLoops(linalg::GenericOp g) {
  if (!isHostBufferGeneric(g) || g.getNumLoops() < 2)
    return {};
  SmallVector<int64_t> r = g.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iters = g.getIteratorTypesArray();
  SmallVector<unsigned> dynamic;
  for (unsigned d = 0; d < r.size(); ++d)
    if (ShapedType::isDynamic(r[d]))
      dynamic.push_back(d);
  if (dynamic.empty() || ShapedType::isDynamic(r.back()) || r.back() < 8)
    return {};
  for (unsigned d : dynamic)
    if (iters[d] != utils::IteratorType::parallel)
      return {};
  for (OpOperand &o : g->getOpOperands()) {
    auto t = dyn_cast<MemRefType>(o.get().getType());
    if (!t || !t.getElementType().isF32() ||
        !g.getMatchingIndexingMap(&o).isProjectedPermutation(
            /*allowZeroInResults=*/true))
      return {};
  }
  return dynamic;
}

/// Reassociation folding the last `k` dims of a rank-`rank` memref.
static SmallVector<ReassociationIndices> trailingGroups(unsigned rank,
                                                        unsigned k) {
  SmallVector<ReassociationIndices> groups;
  for (unsigned i = 0; i + k < rank; ++i)
    groups.push_back({int64_t(i)});
  ReassociationIndices last;
  for (unsigned i = rank - k; i < rank; ++i)
    last.push_back(i);
  groups.push_back(last);
  return groups;
}

/// The number of trailing loops of `g` (2 or more, of one iterator type)
/// that every operand indexes as its own contiguous trailing dims, or not
/// at all (broadcast: those results are 0 over dims of size 1, or absent);
/// 0 when fewer than 2.
static unsigned collapsibleTrailingLoops(linalg::GenericOp g) {
  unsigned n = g.getNumLoops();
  MLIRContext *ctx = g.getContext();
  SmallVector<utils::IteratorType> iters = g.getIteratorTypesArray();
  unsigned best = 0;
  for (unsigned k = 2; k <= n && iters[n - k] == iters[n - 1]; ++k) {
    bool ok = true;
    for (OpOperand &o : g->getOpOperands()) {
      auto t = cast<MemRefType>(o.get().getType());
      AffineMap map = g.getMatchingIndexingMap(&o);
      unsigned rank = map.getNumResults();
      bool uses = false;
      for (unsigned d = n - k; d < n; ++d)
        uses |= map.isFunctionOfDim(d);
      if (!uses &&
          (rank < k || !isa<AffineConstantExpr>(map.getResults().back()))) {
        continue; // does not index the trailing loops at all
      }
      if (rank < k) {
        ok = false;
        break;
      }
      for (unsigned i = 0; i < k && ok; ++i) {
        AffineExpr e = map.getResult(rank - k + i);
        auto c = dyn_cast<AffineConstantExpr>(e);
        ok = uses ? e == getAffineDimExpr(n - k + i, ctx)
                  : c && c.getValue() == 0 && t.getDimSize(rank - k + i) == 1;
      }
      for (unsigned r = 0; r + k < rank && ok; ++r)
        for (unsigned d = n - k; d < n; ++d)
          ok &= !map.getResult(r).isFunctionOfDim(d);
      ok = ok && memref::CollapseShapeOp::isGuaranteedCollapsible(
                     t, trailingGroups(rank, k));
      if (!ok)
        break;
    }
    if (!ok)
      break;
    best = k;
  }
  return best;
}

linalg::GenericOp collapseTrailingLoops(linalg::GenericOp g) {
  if (!isHostBufferGeneric(g) || g.getNumLoops() < 2)
    return g;
  SmallVector<int64_t> r = g.getStaticLoopRanges();
  if (llvm::any_of(r, ShapedType::isDynamic) || r.back() % 16 == 0 ||
      r.back() >= 64)
    return g;
  unsigned k = collapsibleTrailingLoops(g);
  if (k < 2)
    return g;
  unsigned n = g.getNumLoops(), first = n - k;
  MLIRContext *ctx = g.getContext();
  OpBuilder b(g);
  Location loc = g.getLoc();
  // Each operand that indexes the trailing loops (or broadcasts over them
  // with unit dims) with its last k dims as one; the maps over the loops
  // with the folded ones as loop `first`.
  SmallVector<Value> operands;
  SmallVector<AffineMap> maps;
  for (OpOperand &o : g->getOpOperands()) {
    AffineMap map = g.getMatchingIndexingMap(&o);
    unsigned rank = map.getNumResults();
    bool uses = map.isFunctionOfDim(n - 1);
    bool folds =
        uses || (rank >= k && isa<AffineConstantExpr>(map.getResults().back()));
    SmallVector<AffineExpr> exprs(map.getResults().begin(),
                                  map.getResults().end() - (folds ? k : 0));
    Value v = o.get();
    if (uses) {
      exprs.push_back(getAffineDimExpr(first, ctx));
      v = b.create<memref::CollapseShapeOp>(loc, v, trailingGroups(rank, k));
    } else if (folds) {
      // The unit dims go (into the dim before them): a plain broadcast,
      // which vectorizes as one splat.
      SmallVector<ReassociationIndices> groups;
      for (unsigned i = 0; i + k < rank; ++i)
        groups.push_back({int64_t(i)});
      for (unsigned i = rank - k; i < rank && !groups.empty(); ++i)
        groups.back().push_back(i);
      v = b.create<memref::CollapseShapeOp>(loc, v, groups);
    }
    operands.push_back(v);
    maps.push_back(AffineMap::get(first + 1, 0, exprs, ctx));
  }
  SmallVector<utils::IteratorType> iters = g.getIteratorTypesArray();
  iters.resize(first + 1);
  unsigned ins = g.getNumDpsInputs();
  auto collapsed = b.create<linalg::GenericOp>(
      loc, TypeRange{}, ArrayRef<Value>(operands).take_front(ins),
      ArrayRef<Value>(operands).drop_front(ins), maps, iters);
  collapsed.getRegion().takeBody(g.getRegion());
  for (NamedAttribute a : g->getDiscardableAttrs())
    collapsed->setAttr(a.getName(), a.getValue());
  g.erase();
  return collapsed;
}

/// True when `op` reduces with min or max alone: any order gives the same
/// result.
static bool reducesByMinMax(linalg::LinalgOp op) {
  if (op.getNumReductionLoops() == 0 || op.getNumDpsInits() != 1)
    return false;
  Block *body = op.getBlock();
  Value acc = body->getArgument(body->getNumArguments() - 1);
  return llvm::all_of(acc.getUsers(), [](Operation *user) {
    return isa<arith::MinimumFOp, arith::MaximumFOp, arith::MinNumFOp,
               arith::MaxNumFOp>(user);
  });
}

int64_t splitMinMaxReduction(linalg::GenericOp g) {
  // (Chunks of at least this many elements, at most this many chunks.)
  constexpr int64_t kMinChunk = 4096, kMaxChunks = 16;
  // (A body that reads its indices would see the chunks' instead.)
  if (!isHostBufferGeneric(g) || g.getNumDpsInputs() != 1 ||
      g.getNumParallelLoops() != 0 || !reducesByMinMax(g) ||
      !g.getBody()->getOps<linalg::IndexOp>().empty())
    return 0;
  // The one min or max that takes the accumulator and is yielded: the
  // partials are combined by it alone (the body may first compute the
  // input's term, as -x for a max of -x, which the partials already are).
  Block *body = g.getBody();
  Value acc = body->getArguments().back();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  Operation *reduce = yield.getNumOperands() == 1
                          ? yield.getOperand(0).getDefiningOp()
                          : nullptr;
  if (!reduce || !acc.hasOneUse() ||
      acc.getUses().begin()->getOwner() != reduce)
    return 0;
  Value in = g.getDpsInputs()[0], out = g.getDpsInits()[0];
  auto inType = dyn_cast<MemRefType>(in.getType());
  auto outType = dyn_cast<MemRefType>(out.getType());
  if (!inType || !outType || outType.getRank() != 0 ||
      !inType.hasStaticShape() || !inType.getLayout().isIdentity() ||
      !g.getMatchingIndexingMap(g.getDpsInputOperand(0)).isIdentity())
    return 0;
  int64_t n = inType.getNumElements(), chunks = 0;
  for (int64_t c = kMaxChunks; c >= 2; --c)
    if (n % c == 0 && n / c >= kMinChunk && (n / c) % 16 == 0) {
      chunks = c;
      break;
    }
  if (!chunks)
    return 0;
  // Each chunk reduced into a partial of its own (threads take chunks),
  // started from the output's value, then the partials into the output:
  // a min or max is the same in any order.
  OpBuilder b(g);
  Location loc = g.getLoc();
  MLIRContext *ctx = g.getContext();
  SmallVector<ReassociationIndices> all(1);
  for (int64_t d = 0; d < inType.getRank(); ++d)
    all[0].push_back(d);
  Value flat =
      inType.getRank() == 1
          ? in
          : b.create<memref::CollapseShapeOp>(loc, in, all).getResult();
  Value rows = b.create<memref::ExpandShapeOp>(
      loc, MemRefType::get({chunks, n / chunks}, inType.getElementType()), flat,
      ArrayRef<ReassociationIndices>{{0, 1}});
  Value partials = b.create<memref::AllocOp>(
      loc, MemRefType::get({chunks}, outType.getElementType()),
      b.getI64IntegerAttr(64));
  b.create<linalg::FillOp>(loc, b.create<memref::LoadOp>(loc, out).getResult(),
                           partials);
  AffineExpr p = getAffineDimExpr(0, ctx), j = getAffineDimExpr(1, ctx);
  auto chunked = b.create<linalg::GenericOp>(
      loc, TypeRange{}, ValueRange{rows}, ValueRange{partials},
      ArrayRef<AffineMap>{AffineMap::get(2, 0, {p, j}, ctx),
                          AffineMap::get(2, 0, {p}, ctx)},
      ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                    utils::IteratorType::reduction});
  IRMapping map;
  g.getRegion().cloneInto(&chunked.getRegion(), map);
  auto combined = b.create<linalg::GenericOp>(
      loc, TypeRange{}, ValueRange{partials}, ValueRange{out},
      ArrayRef<AffineMap>{AffineMap::get(1, 0, {p}, ctx),
                          AffineMap::get(1, 0, {}, ctx)},
      ArrayRef<utils::IteratorType>{utils::IteratorType::reduction});
  {
    Type t = outType.getElementType();
    OpBuilder cb(ctx);
    Block *cbody =
        cb.createBlock(&combined.getRegion(), {}, {t, t}, {loc, loc});
    Value term = reduce->getOperand(reduce->getOperand(0) == acc ? 1 : 0);
    IRMapping m;
    m.map(term, cbody->getArgument(0));
    m.map(acc, cbody->getArgument(1));
    cb.create<linalg::YieldOp>(loc, cb.clone(*reduce, m)->getResult(0));
  }
  for (NamedAttribute a : g->getDiscardableAttrs()) {
    chunked->setAttr(a.getName(), a.getValue());
    combined->setAttr(a.getName(), a.getValue());
  }
  g.erase();
  return 1;
}

/// The transform script for one marked elementwise generic: one vector of
/// up to 16 lanes along the innermost loop (several for a long chain),
/// the remainder peeled.
std::string elementwiseScheduleFor(linalg::LinalgOp op, int64_t id,
                                   int64_t vectorBits) {
  SmallVector<int64_t> r = op.getStaticLoopRanges();
  auto iters = op.getIteratorTypesArray();
  std::string i = std::to_string(id), any = "!transform.any_op";
  int64_t lanes = std::min<int64_t>(16, r.back());
  // A min or max over the innermost loop takes up to 256 lanes a step:
  // LLVM combines the 16 registers of a step lane-wise and reduces across
  // lanes once (16 at a time, each ended in a reduction across its lanes;
  // a sum keeps its order, one lane after the other, either way).
  if (reducesByMinMax(op))
    for (int64_t wide : {256, 128, 64, 32})
      if (r.back() % wide == 0) {
        lanes = wide;
        break;
      }
  // A long elementwise body (a QDQ GELU: erf and six rounding steps, 60
  // ops) is one dependent chain per vector, longer than the out-of-order
  // window overlaps: 8 registers a step (4 of AVX2's 16) interleave as
  // many chains. QDQ bert_tiny's GELU: 360 -> 185 us per layer (16 lanes
  // -> 128); bodies of cost 24 and more, shorter ones gained nothing.
  // (Not with an operand whose last index is a constant, [n, c, h, 0]: the
  // vectorizer inserts its lanes one by one, and 128 of them spilled:
  // QOperator BERT's softmax input 4x slower.)
  int64_t chains = vectorBits >= 512 ? 8 : 4;
  int64_t chainLanes = chains * vectorBits / 32;
  bool constantIndex = llvm::any_of(op.getIndexingMapsArray(), [](AffineMap m) {
    return m.getNumResults() && isa<AffineConstantExpr>(m.getResults().back());
  });
  if (op.getNumReductionLoops() == 0 && !constantIndex &&
      iterationCost(op) >= 24)
    for (int64_t wide : {chainLanes, chainLanes / 2})
      if (wide > lanes && r.back() % wide == 0) {
        lanes = wide;
        break;
      }
  std::string tiles, results = any;
  for (size_t d = 0; d < r.size(); ++d) {
    tiles += (d ? ", " : "") + std::to_string(d + 1 == r.size() ? lanes : 1);
    results += ", " + any;
  }
  std::string s =
      "  %m" + i +
      " = transform.structured.match ops{[\"linalg.generic\"]} attributes{" +
      kId.str() + " = " + i + " : i64} in %root : (" + any + ") -> " + any +
      "\n";
  s += "  %t" + i + ", %l" + i + ":" + std::to_string(r.size()) +
       " = transform.structured.tile_using_for %m" + i + " tile_sizes [" +
       tiles + "] : (" + any + ") -> (" + results + ")\n";
  // Threads split the outermost loop that has more than one iteration, if
  // it is a parallel one and the op has enough work.
  int64_t work = iterationCost(op);
  for (int64_t n : r)
    work *= n;
  for (size_t d = 0; d < r.size(); ++d) {
    int64_t trips = d + 1 == r.size() ? r[d] / lanes : r[d];
    if (trips < 2)
      continue;
    if (iters[d] == utils::IteratorType::parallel && work >= kParallelWork)
      s += annotateParallel("%l" + i + "#" + std::to_string(d));
    break;
  }
  if (r.back() % lanes) {
    std::string h = "%pe" + i;
    s += "  " + h + " = transform.cast %l" + i + "#" +
         std::to_string(r.size() - 1) + " : " + any +
         " to !transform.op<\"scf.for\">\n";
    s += "  " + h + "a, " + h + "b = transform.loop.peel " + h +
         " : (!transform.op<\"scf.for\">) -> (" + any + ", " + any + ")\n";
  }
  return s;
}

} // namespace kiln::vectorize

namespace kiln::vectorize {

/// A row gather fused with elementwise ops (an embedding lookup and what
/// follows it: BERT's Gather + Add + Add, quantized or not): a static
/// all-parallel generic whose body loads one element of a buffer at
/// indices that do not vary along the innermost loop but for the last
/// one, linalg.index of that loop. The rest of the body is arith/math.
/// Returns the load, or null.
static memref::LoadOp
matchRowGather(linalg::GenericOp g,
               llvm::SmallPtrSetImpl<Operation *> &varying) {
  if (!g.hasPureBufferSemantics() || g->hasAttr("kiln.device") ||
      !g.hasIndexSemantics() || g.getNumDpsInits() != 1 ||
      g.getNumReductionLoops() != 0 || !isa<func::FuncOp>(g->getParentOp()))
    return {};
  SmallVector<int64_t> r = g.getStaticLoopRanges();
  if (llvm::any_of(r, ShapedType::isDynamic) || r.back() % 16)
    return {};
  unsigned last = g.getNumLoops() - 1;
  auto contiguous = [](Value v) {
    auto t = dyn_cast<MemRefType>(v.getType());
    return t && t.hasStaticShape() && unitInnerStride(t);
  };
  if (!g.getMatchingIndexingMap(g.getDpsInitOperand(0)).isIdentity() ||
      !contiguous(g.getDpsInits()[0]) ||
      !staticElementwiseOperand(g.getDpsInits()[0]))
    return {};
  Block &body = g.getRegion().front();
  // (The output's block argument must be unused: written, never read.)
  if (!body.getArguments().back().use_empty())
    return {};
  AffineExpr lastDim = getAffineDimExpr(last, g.getContext());
  for (OpOperand *o : g.getDpsInputOperands()) {
    AffineMap m = g.getMatchingIndexingMap(o);
    if (!m.isProjectedPermutation(/*allowZeroInResults=*/true))
      return {};
    if (!m.isFunctionOfDim(last))
      continue;
    if (m.getResults().back() != lastDim || !contiguous(o->get()) ||
        !staticElementwiseOperand(o->get()))
      return {};
  }
  memref::LoadOp load;
  auto isVarying = [&](Value v) {
    if (auto a = dyn_cast<BlockArgument>(v))
      return a.getOwner() == &body &&
             g.getMatchingIndexingMap(g.getDpsInputOperands()[a.getArgNumber()])
                 .isFunctionOfDim(last);
    return varying.contains(v.getDefiningOp());
  };
  for (Operation &op : body.without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(op)) {
      if (index.getDim() == last) {
        // Only as the load's last index.
        if (!op.hasOneUse() || !isa<memref::LoadOp>(*op.getUsers().begin()))
          return {};
        varying.insert(&op);
      }
      continue;
    }
    if (auto l = dyn_cast<memref::LoadOp>(op)) {
      ValueRange idx = l.getIndices();
      if (load || idx.empty() || !contiguous(l.getMemRef()) ||
          !idx.back().getDefiningOp<linalg::IndexOp>() ||
          idx.back().getDefiningOp<linalg::IndexOp>().getDim() != last ||
          llvm::any_of(idx.drop_back(), isVarying) ||
          !l.getMemRef().getParentRegion()->isProperAncestor(&g.getRegion()) ||
          !(l.getType().isF32() || l.getType().isInteger(32) ||
            l.getType().isInteger(8)))
        return {};
      load = l;
      varying.insert(&op);
      continue;
    }
    StringRef d = op.getDialect() ? op.getDialect()->getNamespace() : "";
    if ((d != "arith" && d != "math") || op.getNumRegions() ||
        op.getNumResults() != 1)
      return {};
    if (llvm::any_of(op.getOperands(), isVarying)) {
      Type t = op.getResult(0).getType();
      if (!(t.isF32() || t.isInteger(1) || t.isInteger(8) || t.isInteger(32)))
        return {};
      varying.insert(&op);
    }
  }
  return load;
}

bool rewriteRowGather(linalg::GenericOp g) {
  llvm::SmallPtrSet<Operation *, 32> varying;
  memref::LoadOp load = matchRowGather(g, varying);
  if (!load)
    return false;
  constexpr int64_t kLanes = 16;
  OpBuilder b(g);
  Location loc = g.getLoc();
  SmallVector<int64_t> r = g.getStaticLoopRanges();
  unsigned last = g.getNumLoops() - 1;
  Block &body = g.getRegion().front();
  // (Constants before the loops.)
  OpBuilder cb(g);
  auto idx = [&](int64_t v) {
    return cb.create<arith::ConstantIndexOp>(loc, v).getResult();
  };
  auto zero = [&](Type t) {
    return cb.create<arith::ConstantOp>(loc, cb.getZeroAttr(t));
  };
  // The outer loops; invariant values once per row, as scalars.
  SmallVector<Value> ivs;
  scf::ForOp outer;
  for (unsigned d = 0; d < last; ++d) {
    auto f = b.create<scf::ForOp>(loc, idx(0), idx(r[d]), idx(1));
    if (!outer) {
      outer = f;
      cb.setInsertionPoint(f);
    }
    b.setInsertionPoint(f.getBody()->getTerminator());
    ivs.push_back(f.getInductionVar());
  }
  auto at = [&](AffineMap m, Value inner) {
    SmallVector<Value> v;
    for (AffineExpr e : m.getResults())
      v.push_back(isa<AffineConstantExpr>(e) ? idx(0)
                  : cast<AffineDimExpr>(e).getPosition() == last
                      ? inner
                      : ivs[cast<AffineDimExpr>(e).getPosition()]);
    return v;
  };
  IRMapping scalar;
  for (OpOperand *o : g.getDpsInputOperands()) {
    AffineMap m = g.getMatchingIndexingMap(o);
    if (!m.isFunctionOfDim(last))
      scalar.map(body.getArgument(o->getOperandNumber()),
                 b.create<memref::LoadOp>(loc, o->get(), at(m, Value())));
  }
  for (Operation &op : body.without_terminator()) {
    if (varying.contains(&op))
      continue;
    if (auto index = dyn_cast<linalg::IndexOp>(op))
      scalar.map(index.getResult(), ivs[index.getDim()]);
    else
      b.clone(op, scalar);
  }
  auto inner = b.create<scf::ForOp>(loc, idx(0), idx(r[last]), idx(kLanes));
  if (!outer)
    cb.setInsertionPoint(inner);
  b.setInsertionPoint(inner.getBody()->getTerminator());
  Value k = inner.getInductionVar();
  IRMapping vec = scalar;
  auto vecOf = [&](Type t) { return VectorType::get({kLanes}, t); };
  const bool inBounds[] = {true};
  for (OpOperand *o : g.getDpsInputOperands()) {
    AffineMap m = g.getMatchingIndexingMap(o);
    if (m.isFunctionOfDim(last)) {
      Type t = getElementTypeOrSelf(o->get().getType());
      vec.map(body.getArgument(o->getOperandNumber()),
              b.create<vector::TransferReadOp>(loc, vecOf(t), o->get(),
                                               at(m, k), zero(t), inBounds));
    }
  }
  for (Operation &op : body.without_terminator()) {
    if (!varying.contains(&op) || isa<linalg::IndexOp>(op))
      continue;
    if (&op == load.getOperation()) {
      SmallVector<Value> i;
      for (Value v : load.getIndices().drop_back())
        i.push_back(scalar.lookupOrDefault(v));
      i.push_back(k);
      Type t = load.getType();
      vec.map(load.getResult(),
              b.create<vector::TransferReadOp>(loc, vecOf(t), load.getMemRef(),
                                               i, zero(t), inBounds));
      continue;
    }
    widenOp(b, loc, op, vec, {kLanes});
  }
  Value y = asVectorOf(b, loc,
                       vec.lookupOrDefault(body.getTerminator()->getOperand(0)),
                       {kLanes});
  SmallVector<Value> outIdx(ivs);
  outIdx.push_back(k);
  b.create<vector::TransferWriteOp>(loc, y, g.getDpsInits()[0], outIdx,
                                    inBounds);
  // Threads take the outermost loop when there is enough work.
  int64_t work = 1;
  for (int64_t e : r)
    work *= e;
  if (outer && r[0] >= 2 && work >= kParallelElements)
    markParallel(outer, kParallelElements, work / r[0]);
  g.erase();
  return true;
}

/// One vector of partial results per reduction loop instead of a
/// horizontal reduction per chunk: the vectorized reduction
///   for (chunks) acc = reduce<add>(chunk, acc)
/// (acc a scalar, perhaps in a vector of one element) becomes
///   for (chunks) part = part + chunk;  acc = reduce<add>(part, acc)
/// with one horizontal reduction per loop, not a dependent one per chunk
/// (the rows' sums of a LayerNorm). Likewise minimumf and maximumf (a
/// DynamicQuantizeLinear's range), from +inf and -inf: exact in any order.
int64_t vectorAccumulators(Operation *root) {
  // One element: a scalar or a vector of one element.
  auto single = [](Type t) {
    auto v = dyn_cast<VectorType>(t);
    return !v ? t.isF32() : v.getNumElements() == 1;
  };
  // The moves of one element (into or out of a vector of one element)
  // that lead from `v` to `to`, each used once.
  auto wrappers = [&](Value v, Value to,
                      SmallVector<Operation *> &chain) -> bool {
    while (v != to) {
      if (!v.hasOneUse())
        return false;
      Operation *u = *v.getUsers().begin();
      if (!isa<vector::InsertElementOp, vector::InsertOp, vector::BroadcastOp,
               vector::ShapeCastOp, vector::SplatOp, vector::ExtractOp,
               vector::ExtractElementOp>(u) ||
          u->getNumResults() != 1 || !single(u->getResult(0).getType()))
        return false;
      chain.push_back(u);
      v = u->getResult(0);
    }
    return true;
  };
  SmallVector<scf::ForOp> loops;
  root->walk([&](scf::ForOp f) { loops.push_back(f); });
  int64_t rewritten = 0;
  IRRewriter rewriter(root->getContext());
  for (scf::ForOp f : loops) {
    for (unsigned i = 0; i < f.getNumRegionIterArgs(); ++i) {
      BlockArgument acc = f.getRegionIterArgs()[i];
      if (!acc.hasOneUse())
        continue;
      // The scalar the reduction adds to: acc, or its one element.
      Operation *unwrap = nullptr;
      Value scalar = acc;
      if (isa<VectorType>(acc.getType())) {
        Operation *ex = *acc.getUsers().begin();
        if (!isa<vector::ExtractOp, vector::ExtractElementOp>(ex) ||
            !single(acc.getType()) || !ex->getResult(0).getType().isF32())
          continue;
        unwrap = ex;
        scalar = ex->getResult(0);
      }
      if (!scalar.hasOneUse())
        continue;
      auto red = dyn_cast<vector::ReductionOp>(*scalar.getUsers().begin());
      if (!red || red.getAcc() != scalar || red->getBlock() != f.getBody())
        continue;
      auto vt = red.getVector().getType();
      vector::CombiningKind kind = red.getKind();
      float start;
      if (kind == vector::CombiningKind::ADD)
        start = 0.0f;
      else if (kind == vector::CombiningKind::MINIMUMF)
        start = std::numeric_limits<float>::infinity();
      else if (kind == vector::CombiningKind::MAXIMUMF)
        start = -std::numeric_limits<float>::infinity();
      else
        continue;
      if (vt.getRank() != 1 || vt.isScalable() || vt.getNumElements() < 2 ||
          !vt.getElementType().isF32())
        continue;
      SmallVector<Operation *> chain;
      Value yielded = f.getBody()->getTerminator()->getOperand(i);
      // (Only the yield may read the sum: it goes from the loop.)
      if (!red.getResult().hasOneUse() || !yielded.hasOneUse() ||
          !wrappers(red.getResult(), yielded, chain))
        continue;
      // (The chain is cloned after the loop: what else it reads must be
      // defined outside it.)
      bool outside = llvm::all_of(chain, [&](Operation *op) {
        return llvm::all_of(op->getOperands(), [&](Value v) {
          return llvm::is_contained(chain, v.getDefiningOp()) ||
                 v == red.getResult() || f.isDefinedOutsideOfLoop(v);
        });
      });
      if (!outside)
        continue;
      Location loc = red.getLoc();
      rewriter.setInsertionPoint(f);
      Value init = rewriter.create<arith::ConstantOp>(
          loc, DenseElementsAttr::get(vt, rewriter.getF32FloatAttr(start)));
      Value chunk = red.getVector();
      DictionaryAttr marks = f->getDiscardableAttrDictionary();
      FailureOr<LoopLikeOpInterface> grown = f.replaceWithAdditionalYields(
          rewriter, init, /*replaceInitOperandUsesInLoop=*/false,
          [&](OpBuilder &b, Location l, ArrayRef<BlockArgument> parts) {
            Value part = parts[0];
            if (kind == vector::CombiningKind::ADD)
              return SmallVector<Value>{
                  b.create<arith::AddFOp>(l, part, chunk)};
            if (kind == vector::CombiningKind::MINIMUMF)
              return SmallVector<Value>{
                  b.create<arith::MinimumFOp>(l, part, chunk)};
            return SmallVector<Value>{
                b.create<arith::MaximumFOp>(l, part, chunk)};
          });
      if (failed(grown))
        continue;
      auto g = cast<scf::ForOp>(grown->getOperation());
      g->setDiscardableAttrs(marks);
      // After the loop, one reduction of the partial results onto acc.
      rewriter.setInsertionPointAfter(g);
      Value result = g.getResult(i);
      Value s = result;
      IRMapping m;
      // (The body now has g's block arguments.)
      Value inLoop = g.getRegionIterArgs()[i];
      Operation *unwrapAfter = nullptr;
      if (unwrap) {
        m.map(inLoop, result);
        unwrapAfter = rewriter.clone(*unwrap, m);
        s = unwrapAfter->getResult(0);
      }
      auto total = rewriter.create<vector::ReductionOp>(
          loc, kind, g.getResults().back(), s);
      m.map(red.getResult(), total.getResult());
      Value wrapped = total.getResult();
      for (Operation *op : chain)
        wrapped = rewriter.clone(*op, m)->getResult(0);
      // (Its one reader left: the unwrapping, or the reduction itself.)
      rewriter.replaceAllUsesExcept(
          result, wrapped, unwrapAfter ? unwrapAfter : total.getOperation());
      // In the loop, acc passes through unchanged.
      Operation *yield = g.getBody()->getTerminator();
      rewriter.modifyOpInPlace(yield, [&] { yield->setOperand(i, inLoop); });
      for (Operation *op : llvm::reverse(chain))
        rewriter.eraseOp(op);
      rewriter.eraseOp(red);
      if (unwrap)
        rewriter.eraseOp(unwrap);
      ++rewritten;
      break; // (f is gone: g holds the rest.)
    }
  }
  return rewritten;
}

} // namespace kiln::vectorize
