//===- Vectorize.cpp - kiln-cpu-vectorize-contractions --------------------===//
//
// The CPU provider emits MatMul/Gemm/Conv as linalg.generic ops with a
// multiply-add body and loop orders chosen for readable naive loops. After
// bufferization this pass
//   1. recognizes the f32 matmul-like generics (any loop order, A or B
//      transposed, batch dims possibly broadcast) and rewrites each into
//      2-D linalg.matmul / matmul_transpose_a / matmul_transpose_b ops on
//      rank-reduced subviews (an scf.for per batch dim), accumulating into
//      the same output buffer as before;
//   2. turns 2-D convolutions (loops n, m, c, kh, kw, oh, ow, group 1) into
//      an im2col copy into a new scratch buffer plus one such matmul per
//      image (the pass runs before kiln-plan-memory, which places the
//      scratch buffer in the arena); when that matrix would pass 1 MiB, per
//      block of output rows whose im2col stays in L2 (copied, then
//      multiplied while hot, with no cache tiles: the k loop stays whole);
//   2b. turns 2-D depthwise convolutions (loops n, m, oh, kh, kw, ow) into
//      vector loops: output-row chunks in registers across the taps; with
//      a run-time batch, height or width too (the rows x chunks kept in
//      registers picked at run time from the width, masked last chunks);
//      f32 max pools (loops n, c, kh, kw, oh, ow) take the same loops;
//   3. tiles, peels, vectorizes and lowers those matmuls with a transform
//      dialect script built from their static shapes (TOOLCHAIN.md §4/§6):
//      optional cache tiles that divide the shape, register tiles
//      [8, 32, 1] ([8, 16, 1] where that leaves a smaller remainder,
//      [1, 128, 1] for one or two rows), transform.loop.peel for loops
//      with a remainder only,
//      vector.contract lowered to outer products (FMAs), the C tile hoisted
//      out of the k loop.
//   4. applies an elementwise epilogue that reads only the contraction's
//      result right after it (the fused activation: Relu, GELU, ...) to
//      each C tile (or depthwise accumulator) in registers before it is
//      stored, and drops the epilogue's own loop; only where the k loop is
//      not split into cache tiles (partial sums must not see it).
//   5. then, in a second schedule (the first one's epilogue anchors must not
//      move), tiles elementwise generics and reductions over the last dims
//      to one vector of up to 16 lanes along the innermost loop and
//      vectorizes them: LLVM's loop vectorizer leaves short inner loops
//      scalar.
//   0. first splits the run-time loops of a contraction into blocks of
//      static size, which the steps above then schedule: rows (batch x
//      sequence against a layer's weights) by 64, then 8; attention's heads
//      by 1 and its sequence dims by 32 (n), 8 (m) and 64 (k). What is
//      left over (fewer than 8 rows, 32 columns, 64 terms) stays naive. A
//      contraction whose only run-time loop is n (a convolution of run-time
//      size, lowered as weights x patches) takes blocks of 256, 128, 64,
//      32, 8, 4, then 1 columns, under blocks of rows that keep the weights
//      in L2.
// Anything else (other bodies, integer types, other dynamic shapes, device
// ops) is left to the naive loops.
//
//===----------------------------------------------------------------------===//
#include "providers/Passes.h"

#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Affine/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Vector/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/TilingInterfaceImpl.h"
#include "mlir/Dialect/Linalg/TransformOps/DialectExtension.h"
#include "mlir/Dialect/MemRef/TransformOps/MemRefTransformOps.h"
#include "mlir/Dialect/SCF/TransformOps/SCFTransformOps.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/TransformOps/VectorTransformOps.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include <optional>

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_CPUVECTORIZECONTRACTIONS
#include "providers/Passes.h.inc"

namespace {

constexpr StringLiteral kMark = "kiln.cv";
constexpr StringLiteral kId = "kiln.cv_id";
// A matmul sized to stay in L2 (a conv's im2col block): no cache tiles.
constexpr StringLiteral kNoCacheTiles = "kiln.cv_no_cache_tiles";

/// True when the body is `yield(out + a * b)` on f32 (operands of the
/// add/mul in either order).
bool isMulAddBody(linalg::GenericOp g) {
  Block &body = g.getRegion().front();
  if (body.getNumArguments() != 3 || !llvm::hasNItems(body.getOperations(), 3))
    return false;
  for (BlockArgument a : body.getArguments())
    if (!a.getType().isF32())
      return false;
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value acc = body.getArgument(2);
  Value other;
  if (add.getLhs() == acc)
    other = add.getRhs();
  else if (add.getRhs() == acc)
    other = add.getLhs();
  else
    return false;
  auto mul = other.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return false;
  Value x = body.getArgument(0), y = body.getArgument(1);
  return (mul.getLhs() == x && mul.getRhs() == y) ||
         (mul.getLhs() == y && mul.getRhs() == x);
}

bool staticF32(Value v) {
  auto t = dyn_cast<MemRefType>(v.getType());
  return t && t.hasStaticShape() && t.getElementType().isF32();
}

bool hasIdentityLayout(Value v) {
  return cast<MemRefType>(v.getType()).getLayout().isIdentity();
}

/// Common preconditions of the generics we rewrite.
bool isCandidate(linalg::GenericOp g) {
  if (!g.hasPureBufferSemantics() || g->hasAttr("kiln.device") ||
      g.getNumDpsInputs() != 2 || g.getNumDpsInits() != 1)
    return false;
  for (Value v : g->getOperands())
    if (!staticF32(v))
      return false;
  return isMulAddBody(g);
}

struct MatmulMatch {
  unsigned m, n, k;
  SmallVector<unsigned> batch; // out batch dims, in output order
  bool transA, transB;
};

std::optional<unsigned> dimOf(AffineExpr e) {
  if (auto d = dyn_cast<AffineDimExpr>(e))
    return d.getPosition();
  return std::nullopt;
}

/// Position of loop dim `d` among the results of `map`, if it is one.
std::optional<unsigned> positionOf(AffineMap map, unsigned d) {
  for (unsigned i = 0; i < map.getNumResults(); ++i)
    if (dimOf(map.getResult(i)) == d)
      return i;
  return std::nullopt;
}

/// The loops of a matmul-like generic: k the one reduction, m the parallel
/// loop of A and C only, n that of B and C only, every other loop a batch
/// loop indexing C (and A/B, or broadcast there as the constant 0). The
/// matrix dims may sit at any position of each operand (heads of an
/// attention block: A[b, i, h, d]), with the other dims as batch.
std::optional<MatmulMatch> matchMatmul(linalg::GenericOp g) {
  auto iters = g.getIteratorTypesArray();
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  AffineMap aMap = maps[0], bMap = maps[1], oMap = maps[2];
  unsigned nLoops = g.getNumLoops();
  if (oMap.getNumResults() < 2 || aMap.getNumResults() < 2 ||
      bMap.getNumResults() < 2 || !oMap.isProjectedPermutation() ||
      oMap.getNumResults() != nLoops - 1)
    return std::nullopt;
  // Operand results are loop dims or the constant 0 (broadcast).
  for (AffineMap map : {aMap, bMap})
    for (AffineExpr e : map.getResults()) {
      auto c = dyn_cast<AffineConstantExpr>(e);
      if (!dimOf(e) && !(c && c.getValue() == 0))
        return std::nullopt;
    }
  // A batch dim broadcast in B also indexes only A and C: of several such
  // loops, m is the innermost in C (likewise n).
  std::optional<unsigned> k, m, n;
  auto innermost = [&](std::optional<unsigned> &slot, unsigned d) {
    if (!slot || *positionOf(oMap, d) > *positionOf(oMap, *slot))
      slot = d;
  };
  for (unsigned d = 0; d < nLoops; ++d) {
    bool inA = positionOf(aMap, d).has_value(), inB = positionOf(bMap, d).has_value();
    if (iters[d] == utils::IteratorType::reduction) {
      if (k || !inA || !inB)
        return std::nullopt;
      k = d;
    } else if (inA && !inB) {
      innermost(m, d);
    } else if (inB && !inA) {
      innermost(n, d);
    }
  }
  if (!k || !m || !n)
    return std::nullopt;
  MatmulMatch mm;
  mm.m = *m, mm.n = *n, mm.k = *k;
  for (AffineExpr e : oMap.getResults())
    if (unsigned d = *dimOf(e); d != *m && d != *n)
      mm.batch.push_back(d);
  // C must hold (m, n) in that order: there is no transposed-output matmul.
  if (*positionOf(oMap, *m) > *positionOf(oMap, *n))
    return std::nullopt;
  mm.transA = *positionOf(aMap, *m) > *positionOf(aMap, *k);
  mm.transB = *positionOf(bMap, *k) > *positionOf(bMap, *n);
  if (mm.transA && mm.transB)
    return std::nullopt;
  return mm;
}

/// A rank-reduced 2-D view of `src`: dims with an offset in `at` are taken
/// at that one element, the two without (std::nullopt) whole.
Value subMatrix(OpBuilder &b, Location loc, Value src,
                ArrayRef<std::optional<OpFoldResult>> at) {
  auto t = cast<MemRefType>(src.getType());
  SmallVector<OpFoldResult> offsets, sizes, strides(t.getRank(), b.getIndexAttr(1));
  SmallVector<int64_t> kept;
  bool identity = true;
  for (int64_t i = 0; i < t.getRank(); ++i) {
    offsets.push_back(at[i] ? *at[i] : b.getIndexAttr(0));
    sizes.push_back(b.getIndexAttr(at[i] ? 1 : t.getDimSize(i)));
    if (!at[i])
      kept.push_back(t.getDimSize(i));
    identity &= !at[i];
  }
  if (identity)
    return src;
  auto rt = cast<MemRefType>(memref::SubViewOp::inferRankReducedResultType(
      kept, t, offsets, sizes, strides));
  return b.create<memref::SubViewOp>(loc, rt, src, offsets, sizes, strides);
}

/// The view of `src` with its leading dims at `lead`, the last two whole.
Value matrixView(OpBuilder &b, Location loc, Value src, ArrayRef<OpFoldResult> lead) {
  SmallVector<std::optional<OpFoldResult>> at(lead.begin(), lead.end());
  at.append(2, std::nullopt);
  return subMatrix(b, loc, src, at);
}

/// Emits the 2-D named matmul C += op(A) op(B) and marks it for the schedule.
Operation *emitMatmul(OpBuilder &b, Location loc, Value a, Value bm, Value c, bool transA,
                      bool transB, int64_t &nextId) {
  Operation *op;
  if (transA)
    op = b.create<linalg::MatmulTransposeAOp>(loc, ValueRange{a, bm}, ValueRange{c});
  else if (transB)
    op = b.create<linalg::MatmulTransposeBOp>(loc, ValueRange{a, bm}, ValueRange{c});
  else
    op = b.create<linalg::MatmulOp>(loc, ValueRange{a, bm}, ValueRange{c});
  op->setAttr(kMark, b.getUnitAttr());
  op->setAttr(kId, b.getI64IntegerAttr(nextId++));
  return op;
}

/// Opens an scf.for per batch extent > 1; `body` gets the induction
/// variables (constant 0 for unit extents) in the order of `extents`.
void forEachBatch(OpBuilder &b, Location loc, ArrayRef<int64_t> extents,
                  function_ref<void(OpBuilder &, ArrayRef<OpFoldResult>)> body) {
  SmallVector<OpFoldResult> ivs;
  OpBuilder::InsertionGuard guard(b);
  for (int64_t e : extents) {
    if (e == 1) {
      ivs.push_back(b.getIndexAttr(0));
      continue;
    }
    Value lb = b.create<arith::ConstantIndexOp>(loc, 0);
    Value ub = b.create<arith::ConstantIndexOp>(loc, e);
    Value st = b.create<arith::ConstantIndexOp>(loc, 1);
    auto loop = b.create<scf::ForOp>(loc, lb, ub, st);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    ivs.push_back(loop.getInductionVar());
  }
  body(b, ivs);
}

/// `out` collapsed by `groups`, for a matmul's C. C must not be a view:
/// hoisting its tile out of the k loop (hoist_redundant_vector_transfers)
/// refuses view-like sources, and the tile would be stored at every k step.
/// So an allocated output becomes a collapsed allocation that everything
/// else reads through an expand_shape.
Value collapsedOutput(OpBuilder &b, Location loc, Value out, ArrayRef<ReassociationIndices> groups) {
  auto alloc = out.getDefiningOp<memref::AllocOp>();
  if (!alloc || !hasIdentityLayout(out))
    return b.create<memref::CollapseShapeOp>(loc, out, groups);
  auto type = cast<MemRefType>(out.getType());
  SmallVector<int64_t> shape;
  for (const ReassociationIndices &g : groups) {
    int64_t n = 1;
    for (int64_t i : g)
      n *= type.getDimSize(i);
    shape.push_back(n);
  }
  OpBuilder ab(alloc);
  Value flat = ab.create<memref::AllocOp>(alloc.getLoc(), MemRefType::get(shape, type.getElementType()),
                                          alloc.getAlignmentAttr());
  Value shaped = ab.create<memref::ExpandShapeOp>(alloc.getLoc(), type, flat, groups);
  alloc.getResult().replaceAllUsesWith(shaped);
  alloc.erase();
  return flat;
}

/// Whether the batch of matmul `g` folds into m: B shared by every batch
/// element, A = [batch..., m, k] and C = [batch..., m, n] contiguous, so
/// one matmul reads B once (a [197, 1, 768] x [768, 2304] MatMul is not
/// 197 GEMVs).
bool foldsBatch(linalg::GenericOp g, const MatmulMatch &mm) {
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, g.getContext()); };
  SmallVector<AffineExpr> aRows, cRows;
  for (unsigned bd : mm.batch) {
    aRows.push_back(d(bd));
    cRows.push_back(d(bd));
  }
  aRows.append({d(mm.m), d(mm.k)});
  cRows.append({d(mm.m), d(mm.n)});
  bool bShared = llvm::all_of(maps[1].getResults(), [&](AffineExpr e) {
    auto bd = dimOf(e);
    return !bd || *bd == mm.k || *bd == mm.n;
  });
  return !mm.batch.empty() && !mm.transA && bShared && maps[0].getResults() == ArrayRef(aRows) &&
         maps[2].getResults() == ArrayRef(cRows) && hasIdentityLayout(g.getDpsInputs()[0]) &&
         hasIdentityLayout(g.getDpsInits()[0]);
}

/// Largest multiple of `step` not above `cap` that divides `n`; 0 if none.
int64_t dividingTile(int64_t n, int64_t cap, int64_t step) {
  for (int64_t t = cap; t >= step; t -= step)
    if (n % t == 0)
      return t;
  return 0;
}

/// Cache tiles for an M x N x K matmul, only for large problems and only
/// sizes that divide the shape (0: no tiling of that loop).
void cacheTiles(int64_t M, int64_t N, int64_t K, int64_t &cm, int64_t &cn, int64_t &ck) {
  cm = cn = ck = 0;
  if (M * N * K < (int64_t)1 << 21)
    return;
  cm = dividingTile(M, 64, 8);
  cn = dividingTile(N, 128, 32);
  ck = dividingTile(K, 256, 64);
  if (cm == M) cm = 0;
  if (cn == N) cn = 0;
  if (ck == K) ck = 0;
}

/// Whether an M x N x K matmul's k loop is split into cache tiles (its
/// partial sums are stored between them).
bool kCacheTiled(int64_t M, int64_t N, int64_t K) {
  int64_t cm, cn, ck;
  cacheTiles(M, N, K, cm, cn, ck);
  return ck != 0;
}

/// Whether the matmuls rewriteMatmul makes of `g` split their k loop into
/// cache tiles: a folded batch multiplies m.
bool matmulKCacheTiled(linalg::GenericOp g, const MatmulMatch &mm) {
  SmallVector<int64_t> r = g.getStaticLoopRanges();
  int64_t m = r[mm.m];
  if (foldsBatch(g, mm))
    for (unsigned bd : mm.batch)
      m *= r[bd];
  return !g->hasAttr(kNoCacheTiles) && kCacheTiled(m, r[mm.n], r[mm.k]);
}

/// Returns the buffer the matmuls accumulate into.
Value rewriteMatmul(linalg::GenericOp g, const MatmulMatch &mm, int64_t &nextId) {
  OpBuilder b(g);
  Location loc = g.getLoc();
  SmallVector<int64_t> ranges = g.getStaticLoopRanges();
  SmallVector<int64_t> extents;
  for (unsigned d : mm.batch)
    extents.push_back(ranges[d]);
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  Value a = g.getDpsInputs()[0], bm = g.getDpsInputs()[1], c = g.getDpsInits()[0];
  bool noCacheTiles = g->hasAttr(kNoCacheTiles);
  if (foldsBatch(g, mm)) {
    int64_t rank = cast<MemRefType>(a.getType()).getRank();
    SmallVector<ReassociationIndices> rows(1);
    for (int64_t i = 0; i + 1 < rank; ++i)
      rows[0].push_back(i);
    rows.push_back({rank - 1});
    Value a2 = b.create<memref::CollapseShapeOp>(loc, a, rows);
    Value c2 = collapsedOutput(b, loc, c, rows);
    SmallVector<std::optional<OpFoldResult>> at;
    for (AffineExpr e : maps[1].getResults())
      at.push_back(dimOf(e) ? std::optional<OpFoldResult>() : b.getIndexAttr(0));
    Operation *m = emitMatmul(b, loc, a2, subMatrix(b, loc, bm, at), c2, false, mm.transB, nextId);
    if (noCacheTiles)
      m->setAttr(kNoCacheTiles, b.getUnitAttr());
    g.erase();
    return c2;
  }
  forEachBatch(b, loc, extents, [&](OpBuilder &nb, ArrayRef<OpFoldResult> ivs) {
    // Each operand at the current batch element, its matrix dims whole.
    auto view = [&](Value src, AffineMap map) {
      SmallVector<std::optional<OpFoldResult>> at;
      for (AffineExpr e : map.getResults()) {
        auto d = dimOf(e);
        if (d && (*d == mm.m || *d == mm.n || *d == mm.k))
          at.push_back(std::nullopt);
        else
          at.push_back(d ? ivs[llvm::find(mm.batch, *d) - mm.batch.begin()]
                         : nb.getIndexAttr(0));
      }
      return subMatrix(nb, loc, src, at);
    };
    Operation *m = emitMatmul(nb, loc, view(a, maps[0]), view(bm, maps[1]), view(c, maps[2]),
                              mm.transA, mm.transB, nextId);
    if (noCacheTiles)
      m->setAttr(kNoCacheTiles, nb.getUnitAttr());
  });
  g.erase();
  return c;
}

/// A matmul-like f32 generic on buffers some of whose loops have run-time
/// extents (rows = batch x sequence; attention's heads and sequence
/// lengths).
std::optional<MatmulMatch> matchRuntimeContraction(linalg::GenericOp g) {
  if (!g.hasPureBufferSemantics() || g->hasAttr("kiln.device") || g.getNumDpsInputs() != 2 ||
      g.getNumDpsInits() != 1)
    return std::nullopt;
  for (Value v : g->getOperands()) {
    auto t = dyn_cast<MemRefType>(v.getType());
    if (!t || !t.getElementType().isF32())
      return std::nullopt;
  }
  if (!isMulAddBody(g))
    return std::nullopt;
  auto mm = matchMatmul(g);
  SmallVector<int64_t> ranges = g.getStaticLoopRanges();
  if (!mm || llvm::none_of(ranges, [](int64_t r) { return ShapedType::isDynamic(r); }))
    return std::nullopt;
  return mm;
}

/// Splits loop `d` of `g` into blocks of `size`: a loop over copies of `g`
/// on views that are `size` long along it (returned first), then, for
/// size > 1, one copy on what is left (returned second, of run-time
/// extent), which stays naive loops unless split further.
std::pair<linalg::GenericOp, linalg::GenericOp> blockLoop(linalg::GenericOp g, unsigned d,
                                                          int64_t size) {
  OpBuilder b(g);
  Location loc = g.getLoc();
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  Value total;
  for (auto [v, map] : llvm::zip(g->getOperands(), maps))
    if (auto p = positionOf(map, d); p && !total)
      total = b.create<memref::DimOp>(loc, v, *p);
  Value step = b.create<arith::ConstantIndexOp>(loc, size);
  Value full = size == 1 ? total
                         : (Value)b.create<arith::MulIOp>(
                               loc, b.create<arith::DivUIOp>(loc, total, step), step);
  // A copy of `g` on each operand's view at [at, at + extent) along d.
  auto copyAt = [&](OpBuilder &vb, Value at, OpFoldResult extent) {
    SmallVector<Value> operands;
    for (auto [v, map] : llvm::zip(g->getOperands(), maps)) {
      auto t = cast<MemRefType>(v.getType());
      SmallVector<OpFoldResult> offsets, sizes, strides;
      for (unsigned j = 0; j < map.getNumResults(); ++j) {
        bool along = dimOf(map.getResult(j)) == d;
        offsets.push_back(along ? OpFoldResult(at) : vb.getIndexAttr(0));
        sizes.push_back(along                ? extent
                        : t.isDynamicDim(j) ? OpFoldResult(vb.create<memref::DimOp>(loc, v, j))
                                            : vb.getIndexAttr(t.getDimSize(j)));
        strides.push_back(vb.getIndexAttr(1));
      }
      operands.push_back(vb.create<memref::SubViewOp>(loc, v, offsets, sizes, strides));
    }
    Operation *copy = vb.clone(*g);
    copy->setOperands(operands);
    return cast<linalg::GenericOp>(copy);
  };
  auto loop = b.create<scf::ForOp>(loc, b.create<arith::ConstantIndexOp>(loc, 0), full, step);
  OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
  linalg::GenericOp inner = copyAt(lb, loop.getInductionVar(), lb.getIndexAttr(size));
  linalg::GenericOp rest;
  if (size > 1)
    rest = copyAt(b, full, OpFoldResult(b.create<arith::SubIOp>(loc, total, full).getResult()));
  g.erase();
  return {inner, rest};
}

/// Blocks every run-time loop of a contraction to a static size, batch
/// loops by 1, then n by 32 and m by 8 (one register tile of the schedule)
/// and k by 64;
/// a contraction whose only run-time loop is m (a layer's weights against
/// batch x sequence rows) by 64 rows (for the cache tiles), then 8, then 1.
void blockRuntimeContraction(linalg::GenericOp g, const MatmulMatch &mm) {
  SmallVector<int64_t> ranges = g.getStaticLoopRanges();
  SmallVector<unsigned> dynamic;
  for (unsigned d = 0; d < ranges.size(); ++d)
    if (ShapedType::isDynamic(ranges[d]))
      dynamic.push_back(d);
  if (dynamic.empty())
    return;
  if (dynamic.size() == 1 && dynamic[0] == mm.n) {
    // A convolution's output positions: wide blocks for the cache tiles,
    // then narrower ones (layer 4 of a ResNet has 49 at batch 1). Each
    // block reads all the weights: in blocks of rows that stay in L2 across
    // the column blocks (16 rows of a 3x3 conv over 512 channels).
    int64_t rows = 64;
    while (rows > 8 && rows * ranges[mm.k] * 4 > (512 << 10))
      rows /= 2;
    if (!ShapedType::isDynamic(ranges[mm.m]) && !ShapedType::isDynamic(ranges[mm.k]) &&
        ranges[mm.m] > rows && ranges[mm.m] % rows == 0) {
      auto [inner, rest] = blockLoop(g, mm.m, rows);
      rest.erase(); // (no rows left)
      g = inner;
    }
    // Whole k loops where a block's patches stay in L2 (as the static
    // blocks); a longer k loop keeps cache tiles.
    if (!ShapedType::isDynamic(ranges[mm.k]) && ranges[mm.k] <= 1024)
      g->setAttr(kNoCacheTiles, UnitAttr::get(g.getContext()));
    // (Halving down to 32: a wide block reuses each weight tile across more
    // register tiles.)
    linalg::GenericOp left = g;
    for (int64_t size : {256, 128, 64, 32, 8, 4, 1})
      if (left)
        left = blockLoop(left, mm.n, size).second;
    return;
  }
  if (dynamic.size() == 1 && dynamic[0] == mm.m) {
    // (The last rows one by one: a decode step's single row against the
    // LM head is the largest contraction of its run.)
    auto [big, left] = blockLoop(g, mm.m, 64);
    blockLoop(blockLoop(left, mm.m, 8).second, mm.m, 1);
    return;
  }
  // Batch loops first, then n, m and k (the reduction: each block adds
  // its part to C, as the naive loop does).
  auto batchLoop = llvm::find_if(
      dynamic, [&](unsigned x) { return x != mm.m && x != mm.n && x != mm.k; });
  unsigned d = batchLoop != dynamic.end()              ? *batchLoop
               : llvm::is_contained(dynamic, mm.n) ? mm.n
               : llvm::is_contained(dynamic, mm.m) ? mm.m
                                                     : mm.k;
  int64_t size = d == mm.m ? 8 : d == mm.n ? 32 : d == mm.k ? 64 : 1;
  blockRuntimeContraction(blockLoop(g, d, size).first, mm);
}

/// The number of groups of a 2-D convolution as the CPU provider emits it,
/// 0 when `g` is not one: loops (n, m, c, kh, kw, oh, ow), maps
/// x: (d0, c', f(d5, d3), g(d6, d4)), w: (d1, d2, d3, d4), out: (d0, d1, d5, d6),
/// with x's channel c' = d2, or (d1 floordiv ocg) * icg + d2 when grouped.
int64_t convGroups(linalg::GenericOp g) {
  if (g.getNumLoops() != 7 || !isa<func::FuncOp>(g->getParentOp()))
    return 0;
  auto iters = g.getIteratorTypesArray();
  for (unsigned i = 0; i < 7; ++i)
    if ((iters[i] == utils::IteratorType::reduction) != (i >= 2 && i <= 4))
      return 0;
  MLIRContext *ctx = g.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  if (maps[1] != AffineMap::get(7, 0, {d(1), d(2), d(3), d(4)}, ctx) ||
      maps[2] != AffineMap::get(7, 0, {d(0), d(1), d(5), d(6)}, ctx))
    return 0;
  AffineMap x = maps[0];
  if (x.getNumResults() != 4 || x.getResult(0) != d(0))
    return 0;
  SmallVector<int64_t> r = g.getStaticLoopRanges();
  int64_t groups = 0;
  if (x.getResult(1) == d(2)) {
    groups = 1;
  } else {
    // (m floordiv ocg) * icg + c
    for (int64_t ocg = 1; ocg < r[1] && !groups; ++ocg)
      if (r[1] % ocg == 0 && x.getResult(1) == d(1).floorDiv(ocg) * r[2] + d(2))
        groups = r[1] / ocg;
    if (!groups)
      return 0;
  }
  // The spatial indices must not depend on n, m or c.
  for (unsigned i = 2; i < 4; ++i)
    for (unsigned dim : {0u, 1u, 2u})
      if (x.getResult(i).isFunctionOfDim(dim))
        return 0;
  Value w = g.getDpsInputs()[1], out = g.getDpsInits()[0], xin = g.getDpsInputs()[0];
  if (!hasIdentityLayout(w) || !hasIdentityLayout(out) || !hasIdentityLayout(xin))
    return 0;
  return groups;
}

/// A 2-D depthwise convolution as the CPU provider emits it: loops
/// (n, m, oh, kh, kw, ow), maps x: (d0, d1, d2*sh + d3*dh, d5*sw + d4*dw),
/// w: (d1, 0, d3, d4), out: (d0, d1, d2, d5).
struct DepthwiseMatch {
  int64_t sh, dh, sw, dw;
};

/// The strides and dilations of a window read x[n, c, oh * sh + kh * dh,
/// ow * sw + kw * dw] over 6 loops (the positions of oh, kh, ow, kw
/// given): the coefficients, read off at unit points, must rebuild the map.
std::optional<DepthwiseMatch> matchWindowMap(AffineMap xMap, unsigned oh, unsigned kh,
                                             unsigned ow, unsigned kw) {
  MLIRContext *ctx = xMap.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  auto at = [&](unsigned dim, unsigned result) {
    SmallVector<int64_t> point(6, 0);
    point[dim] = 1;
    return xMap.compose(point)[result];
  };
  DepthwiseMatch dm{at(oh, 2), at(kh, 2), at(ow, 3), at(kw, 3)};
  if (xMap != AffineMap::get(6, 0,
                             {d(0), d(1), d(oh) * dm.sh + d(kh) * dm.dh,
                              d(ow) * dm.sw + d(kw) * dm.dw},
                             ctx) ||
      dm.sw < 1 || dm.sw > 4)
    return std::nullopt;
  return dm;
}

std::optional<DepthwiseMatch> matchDepthwise(linalg::GenericOp g) {
  if (g.getNumLoops() != 6 || !isa<func::FuncOp>(g->getParentOp()))
    return std::nullopt;
  auto iters = g.getIteratorTypesArray();
  for (unsigned i = 0; i < 6; ++i)
    if ((iters[i] == utils::IteratorType::reduction) != (i == 3 || i == 4))
      return std::nullopt;
  MLIRContext *ctx = g.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  if (maps[1] != AffineMap::get(6, 0, {d(1), getAffineConstantExpr(0, ctx), d(3), d(4)}, ctx) ||
      maps[2] != AffineMap::get(6, 0, {d(0), d(1), d(2), d(5)}, ctx) ||
      maps[0].getNumResults() != 4)
    return std::nullopt;
  auto dm = matchWindowMap(maps[0], /*oh=*/2, /*kh=*/3, /*ow=*/5, /*kw=*/4);
  if (!dm)
    return std::nullopt;
  for (Value v : g->getOperands())
    if (!hasIdentityLayout(v))
      return std::nullopt;
  return dm;
}

/// An f32 max pool as the CPU provider emits it (loops n, c, kh, kw, oh,
/// ow; x read at (n, c, oh * sh + kh * dh, ow * sw + kw * dw), the second
/// operand the window, the body max(acc, x)), on buffers of identity
/// layout with static channels and window; its strides and dilations.
std::optional<DepthwiseMatch> matchMaxPool(linalg::GenericOp g) {
  if (!g.hasPureBufferSemantics() || g->hasAttr("kiln.device") || g.getNumDpsInputs() != 2 ||
      g.getNumDpsInits() != 1 || g.getNumLoops() != 6 || !isa<func::FuncOp>(g->getParentOp()))
    return std::nullopt;
  for (Value v : g->getOperands()) {
    auto t = dyn_cast<MemRefType>(v.getType());
    if (!t || !t.getElementType().isF32() || !t.getLayout().isIdentity())
      return std::nullopt;
  }
  Block &body = g.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto max = yield.getOperand(0).getDefiningOp<arith::MaximumFOp>();
  Value xArg = body.getArgument(0), acc = body.getArgument(2);
  if (!llvm::hasNItems(body.getOperations(), 2) || !max ||
      !((max.getLhs() == acc && max.getRhs() == xArg) ||
        (max.getLhs() == xArg && max.getRhs() == acc)))
    return std::nullopt;
  auto iters = g.getIteratorTypesArray();
  for (unsigned i = 0; i < 6; ++i)
    if ((iters[i] == utils::IteratorType::reduction) != (i == 2 || i == 3))
      return std::nullopt;
  SmallVector<int64_t> r = g.getStaticLoopRanges();
  if (ShapedType::isDynamic(r[1]) || ShapedType::isDynamic(r[2]) || ShapedType::isDynamic(r[3]))
    return std::nullopt;
  MLIRContext *ctx = g.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  if (maps[1] != AffineMap::get(6, 0, {d(2), d(3)}, ctx) ||
      maps[2] != AffineMap::get(6, 0, {d(0), d(1), d(4), d(5)}, ctx) ||
      maps[0].getNumResults() != 4)
    return std::nullopt;
  return matchWindowMap(maps[0], /*oh=*/4, /*kh=*/2, /*ow=*/5, /*kw=*/3);
}

/// A depthwise conv with run-time batch, output rows or columns (the
/// channels and taps static), on f32 buffers of identity layout.
bool isRuntimeDepthwise(linalg::GenericOp g) {
  if (!g.hasPureBufferSemantics() || g->hasAttr("kiln.device") || g.getNumDpsInputs() != 2 ||
      g.getNumDpsInits() != 1 || !isMulAddBody(g))
    return false;
  for (Value v : g->getOperands()) {
    auto t = dyn_cast<MemRefType>(v.getType());
    if (!t || !t.getElementType().isF32())
      return false;
  }
  SmallVector<int64_t> r = g.getStaticLoopRanges(); // n m oh kh kw ow
  if (r.size() != 6 || llvm::all_of(r, [](int64_t e) { return !ShapedType::isDynamic(e); }) ||
      ShapedType::isDynamic(r[1]) || ShapedType::isDynamic(r[3]) || ShapedType::isDynamic(r[4]))
    return false;
  return matchDepthwise(g).has_value();
}

/// Output rows in 16-wide chunks, up to 8 chunks (of one wide row, or of
/// several short rows: independent FMA chains) kept in registers across the
/// taps: per tap one broadcast weight and, per chunk, a contiguous load of
/// the input row (every sw-th lane of a wider load for stride sw) and an
/// FMA; one store per chunk. A row's last chunk is masked (out-of-bounds
/// transfers).
void rewriteDepthwise(linalg::GenericOp g, const DepthwiseMatch &dm, bool isMaxPool = false) {
  constexpr int64_t kLanes = 16, kChunks = 8;
  OpBuilder b(g);
  Location loc = g.getLoc();
  SmallVector<int64_t> r = g.getStaticLoopRanges(); // n m oh kh kw ow
  // (A max pool's loops are n c kh kw oh ow; its second operand only sizes
  // the window.)
  if (isMaxPool)
    r = {r[0], r[1], r[4], r[2], r[3], r[5]};
  Value x = g.getDpsInputs()[0], w = g.getDpsInputs()[1], out = g.getDpsInits()[0];
  Type f32 = b.getF32Type();
  auto vec = VectorType::get({kLanes}, f32), wide = VectorType::get({kLanes * dm.sw}, f32);
  auto idx = [&](OpBuilder &nb, int64_t v) -> Value { return nb.create<arith::ConstantIndexOp>(loc, v); };
  Value zero = b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(0.0));
  SmallVector<int64_t> lanes;
  for (int64_t i = 0; i < kLanes; ++i)
    lanes.push_back(i * dm.sw);
  auto loop = [&](OpBuilder &nb, Value lb, Value ub, int64_t step, ValueRange inits,
                  function_ref<SmallVector<Value>(OpBuilder &, Value, ValueRange)> body) {
    auto f = nb.create<scf::ForOp>(loc, lb, ub, idx(nb, step), inits,
                                   [&](OpBuilder &lb, Location, Value iv, ValueRange args) {
                                     lb.create<scf::YieldOp>(loc, body(lb, iv, args));
                                   });
    return SmallVector<Value>(f.getResults());
  };
  auto upTo = [&](OpBuilder &nb, int64_t n, ValueRange inits,
                  function_ref<SmallVector<Value>(OpBuilder &, Value, ValueRange)> body) {
    return loop(nb, idx(nb, 0), idx(nb, n), 1, inits, body);
  };
  // Run-time extents (batch, output rows and columns) from the output.
  auto extent = [&](OpBuilder &nb, unsigned loop, unsigned dim) -> Value {
    return ShapedType::isDynamic(r[loop]) ? (Value)nb.create<memref::DimOp>(loc, out, dim)
                                          : idx(nb, r[loop]);
  };
  // One block: `nRows` rows from `oh0`, `numChunks` chunks of each from
  // column `col0`.
  auto block = [&](OpBuilder &nb, Value n, Value m, Value oh0, int64_t nRows, Value col0,
                   int64_t numChunks) {
    SmallVector<std::pair<int64_t, int64_t>> chunks; // (row offset, column offset)
    for (int64_t row = 0; row < nRows; ++row)
      for (int64_t j = 0; j < numChunks; ++j)
        chunks.push_back({row, j * kLanes});
    SmallVector<Value> ohs;
    for (int64_t row = 0; row < nRows; ++row)
      ohs.push_back(row ? (Value)nb.create<arith::AddIOp>(loc, oh0, idx(nb, row)) : oh0);
    auto colAt = [&](OpBuilder &cb, int64_t offset) -> Value {
      return offset ? (Value)cb.create<arith::AddIOp>(loc, col0, idx(cb, offset)) : col0;
    };
    SmallVector<Value> accs;
    for (auto [row, col] : chunks)
      accs.push_back(nb.create<vector::TransferReadOp>(
          loc, vec, out, ValueRange{n, m, ohs[row], colAt(nb, col)}, zero));
    Value xCol0 = nb.create<arith::MulIOp>(loc, col0, idx(nb, dm.sw));
    SmallVector<Value> sums = upTo(nb, r[3], accs, [&](OpBuilder &b3, Value kh, ValueRange a3) {
      return upTo(b3, r[4], a3, [&](OpBuilder &b4, Value kw, ValueRange a4) {
        Value khOff = b4.create<arith::MulIOp>(loc, kh, idx(b4, dm.dh));
        Value kwOff = b4.create<arith::AddIOp>(
            loc, b4.create<arith::MulIOp>(loc, kw, idx(b4, dm.dw)), xCol0);
        Value wb;
        if (!isMaxPool)
          wb = b4.create<vector::BroadcastOp>(
              loc, vec, b4.create<memref::LoadOp>(loc, w, ValueRange{m, idx(b4, 0), kh, kw}));
        SmallVector<Value> next;
        for (auto [c, chunk] : llvm::enumerate(chunks)) {
          auto [row, col] = chunk;
          Value ih = b4.create<arith::AddIOp>(loc, b4.create<arith::MulIOp>(loc, ohs[row], idx(b4, dm.sh)),
                                              khOff);
          Value iw = b4.create<arith::AddIOp>(loc, kwOff, idx(b4, col * dm.sw));
          Value xv;
          if (dm.sw == 1) {
            xv = b4.create<vector::TransferReadOp>(loc, vec, x, ValueRange{n, m, ih, iw}, zero);
          } else {
            Value xw = b4.create<vector::TransferReadOp>(loc, wide, x, ValueRange{n, m, ih, iw}, zero);
            xv = b4.create<vector::ShuffleOp>(loc, xw, xw, lanes);
          }
          next.push_back(isMaxPool ? (Value)b4.create<arith::MaximumFOp>(loc, a4[c], xv)
                                   : (Value)b4.create<vector::FMAOp>(loc, xv, wb, a4[c]));
        }
        return next;
      });
    });
    for (auto [c, chunk] : llvm::enumerate(chunks))
      nb.create<vector::TransferWriteOp>(loc, sums[c], out,
                                         ValueRange{n, m, ohs[chunk.first], colAt(nb, chunk.second)});
  };
  // Rows [oh0, oh0 + nRows), all columns: blocks of `numChunks` chunks.
  auto rowBlocks = [&](OpBuilder &nb, Value n, Value m, Value oh0, int64_t nRows,
                       int64_t numChunks) {
    if (!ShapedType::isDynamic(r[5])) {
      for (int64_t start = 0; start < r[5]; start += kLanes * numChunks)
        block(nb, n, m, oh0, nRows, idx(nb, start),
              std::min(numChunks, (r[5] - start + kLanes - 1) / kLanes));
      return;
    }
    loop(nb, idx(nb, 0), extent(nb, 5, 3), kLanes * numChunks, {},
         [&](OpBuilder &cb, Value col0, ValueRange) {
           block(cb, n, m, oh0, nRows, col0, numChunks);
           return SmallVector<Value>{};
         });
  };
  // Every output row of (n, m): blocks of `rows` rows, then one at a time.
  auto allRows = [&](OpBuilder &nb, Value n, Value m, int64_t rows, int64_t numChunks) {
    Value oh = extent(nb, 2, 2);
    Value full = ShapedType::isDynamic(r[2])
                     ? (Value)nb.create<arith::SubIOp>(
                           loc, oh, nb.create<arith::RemUIOp>(loc, oh, idx(nb, rows)))
                     : idx(nb, r[2] - r[2] % rows);
    loop(nb, idx(nb, 0), full, rows, {}, [&](OpBuilder &b2, Value oh0, ValueRange) {
      rowBlocks(b2, n, m, oh0, rows, numChunks);
      return SmallVector<Value>{};
    });
    if (!ShapedType::isDynamic(r[2]) && r[2] % rows)
      rowBlocks(nb, n, m, full, r[2] % rows, numChunks);
    else if (ShapedType::isDynamic(r[2]))
      loop(nb, full, oh, 1, {}, [&](OpBuilder &b2, Value oh0, ValueRange) {
        rowBlocks(b2, n, m, oh0, 1, numChunks);
        return SmallVector<Value>{};
      });
  };
  // Rows x chunks kept in registers: several short rows or one wide row;
  // for rows of run-time width the shape is picked at run time.
  auto byWidth = [&](OpBuilder &nb, Value n, Value m) {
    if (!ShapedType::isDynamic(r[5])) {
      int64_t perRow = (r[5] + kLanes - 1) / kLanes;
      int64_t rows = std::max<int64_t>(1, std::min(r[2], kChunks / perRow));
      allRows(nb, n, m, rows, std::min(perRow, kChunks));
      return;
    }
    Value ow = extent(nb, 5, 3);
    std::function<void(OpBuilder &, int64_t)> pick = [&](OpBuilder &pb, int64_t perRow) {
      if (perRow == kChunks) {
        allRows(pb, n, m, 1, kChunks);
        return;
      }
      Value fits = pb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ule, ow,
                                            idx(pb, perRow * kLanes));
      pb.create<scf::IfOp>(
          loc, fits,
          [&](OpBuilder &tb, Location) {
            allRows(tb, n, m, kChunks / perRow, perRow);
            tb.create<scf::YieldOp>(loc);
          },
          [&](OpBuilder &eb, Location) {
            pick(eb, perRow * 2);
            eb.create<scf::YieldOp>(loc);
          });
    };
    pick(nb, 1);
  };
  loop(b, idx(b, 0), extent(b, 0, 0), 1, {}, [&](OpBuilder &b0, Value n, ValueRange) {
    upTo(b0, r[1], {}, [&](OpBuilder &b1, Value m, ValueRange) {
      byWidth(b1, n, m);
      return SmallVector<Value>{};
    });
    return SmallVector<Value>{};
  });
  g.erase();
}

/// The coefficient of dim `d` in the linear expression `e`; nullopt when
/// `e` is not linear in it.
std::optional<int64_t> coefficientOf(AffineExpr e, unsigned d, unsigned numDims) {
  MLIRContext *ctx = e.getContext();
  auto at = [&](int64_t v) -> std::optional<int64_t> {
    SmallVector<AffineExpr> dims(numDims, getAffineConstantExpr(0, ctx));
    dims[d] = getAffineConstantExpr(v, ctx);
    auto c = dyn_cast<AffineConstantExpr>(
        simplifyAffineExpr(e.replaceDimsAndSymbols(dims, {}), numDims, 0));
    return c ? std::optional<int64_t>(c.getValue()) : std::nullopt;
  };
  auto a = at(0), b1 = at(1), b2 = at(2);
  if (!a || !b1 || !b2 || *b2 - *b1 != *b1 - *a)
    return std::nullopt;
  return *b1 - *a;
}

/// The stride along ow at which a conv reads x's rows, if im2col can copy
/// them with vector loads (x contiguous along its last dim, read there by
/// a plain stride of 1 to 4 that no other index of x depends on).
std::optional<int64_t> im2colRowStride(Value x, AffineMap xMap) {
  SmallVector<int64_t> xStrides;
  int64_t xOffset;
  if (xMap.getNumResults() != 4 ||
      failed(getStridesAndOffset(cast<MemRefType>(x.getType()), xStrides, xOffset)) ||
      xStrides.back() != 1)
    return std::nullopt;
  for (unsigned i = 0; i < 3; ++i)
    if (coefficientOf(xMap.getResult(i), 5, 6) != 0)
      return std::nullopt;
  std::optional<int64_t> sw = coefficientOf(xMap.getResult(3), 5, 6);
  if (!sw || *sw < 1 || *sw > 4)
    return std::nullopt;
  return sw;
}

/// im2col one output row at a time: 16 columns of col[n, c, kh, kw, oh, :]
/// from one vector load of x's row (a wider one and a shuffle for a
/// strided conv), where the loop vectorizer would gather each element.
/// `r` gives col's extents (n c kh kw oh ow after m); `xShift`, if given,
/// is added to the (n c kh kw oh ow) position of each column when reading x
/// (col holds a block of x's images and output rows). False (nothing
/// emitted) when x is not read along ow by a plain stride.
bool emitIm2colRows(OpBuilder &b, Location loc, Value x, Value col, AffineMap xMap,
                    ArrayRef<int64_t> r, ArrayRef<Value> xShift = {}) {
  constexpr int64_t kLanes = 16;
  std::optional<int64_t> sw = im2colRowStride(x, xMap);
  if (!sw)
    return false;
  Type f32 = b.getF32Type();
  forEachBatch(b, loc, {r[0], r[2], r[3], r[4], r[5]}, [&](OpBuilder &nb, ArrayRef<OpFoldResult> ivs) {
    SmallVector<Value> dims;
    for (OpFoldResult iv : ivs)
      dims.push_back(getValueOrCreateConstantIndexOp(nb, loc, iv));
    dims.push_back(nb.create<arith::ConstantIndexOp>(loc, 0)); // ow = 0
    SmallVector<Value> xDims = dims;
    for (auto [i, shift] : llvm::enumerate(xShift))
      if (shift)
        xDims[i] = nb.create<arith::AddIOp>(loc, xDims[i], shift);
    SmallVector<Value> at;
    for (unsigned i = 0; i < 4; ++i)
      at.push_back(nb.create<affine::AffineApplyOp>(loc, xMap.getSubMap({i}), xDims));
    auto rowMap = [&](int64_t rank) {
      return AffineMapAttr::get(AffineMap::getMinorIdentityMap(rank, 1, nb.getContext()));
    };
    auto inBounds = nb.getBoolArrayAttr({true});
    Value zero = nb.create<arith::ConstantOp>(loc, nb.getF32FloatAttr(0.0));
    for (int64_t ow0 = 0; ow0 < r[6]; ow0 += kLanes) {
      int64_t len = std::min(kLanes, r[6] - ow0), width = (len - 1) * *sw + 1;
      SmallVector<Value> from = at;
      from[3] = nb.create<arith::AddIOp>(loc, at[3],
                                         nb.create<arith::ConstantIndexOp>(loc, ow0 * *sw));
      Value v = nb.create<vector::TransferReadOp>(loc, VectorType::get({width}, f32), x, from,
                                                  rowMap(4), zero, Value(), inBounds);
      if (*sw > 1) {
        SmallVector<int64_t> lanes;
        for (int64_t i = 0; i < len; ++i)
          lanes.push_back(i * *sw);
        v = nb.create<vector::ShuffleOp>(loc, v, v, lanes);
      }
      SmallVector<Value> to(dims.begin(), dims.end() - 1);
      to.push_back(nb.create<arith::ConstantIndexOp>(loc, ow0));
      nb.create<vector::TransferWriteOp>(loc, v, col, to, rowMap(6), Value(), inBounds);
    }
  });
  return true;
}

/// A conv's x map over the im2col dims (n c kh kw oh ow): m taken as 0,
/// which for a grouped conv is the first group's channels.
AffineMap im2colMap(linalg::GenericOp g) {
  MLIRContext *ctx = g.getContext();
  auto e = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  return simplifyAffineMap(g.getIndexingMapsArray()[0].replaceDimsAndSymbols(
      {e(0), getAffineConstantExpr(0, ctx), e(1), e(2), e(3), e(4), e(5)}, {}, 6, 0));
}

/// A 1x1 kernel with stride 1 reads x[n, c, oh, ow] as it lies: x is the
/// matrix already, no im2col copy.
bool isDirectConv(linalg::GenericOp g) {
  SmallVector<int64_t> r = g.getStaticLoopRanges(); // n m c kh kw oh ow
  MLIRContext *ctx = g.getContext();
  auto e = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  Value x = g.getDpsInputs()[0];
  auto xt = cast<MemRefType>(x.getType());
  AffineExpr zero = getAffineConstantExpr(0, ctx);
  AffineMap atTap0 = simplifyAffineMap(
      im2colMap(g).replaceDimsAndSymbols({e(0), e(1), zero, zero, e(4), e(5)}, {}, 6, 0));
  return r[3] == 1 && r[4] == 1 && xt.getDimSize(2) == r[5] && xt.getDimSize(3) == r[6] &&
         atTap0 == AffineMap::get(6, 0, {e(0), e(1), e(4), e(5)}, ctx) && hasIdentityLayout(x);
}

/// Whether `g` is an elementwise op or reduction worth vectorizing here:
/// parallel loops, then possibly reduction loops (a sum over the last
/// dims), static f32 operands each read along the innermost loop
/// contiguously or broadcast across it, and a body of scalar arith/math.
/// (LLVM's loop vectorizer leaves such loops scalar when their inner trip
/// count is short, and a reduction into a buffer that might alias its
/// input stays a load-add-store chain.)
bool isVectorizableElementwise(linalg::GenericOp g) {
  if (!g.hasPureBufferSemantics() || g->hasAttr("kiln.device") || g.hasIndexSemantics() ||
      g.getNumDpsInits() != 1 || g.getNumLoops() < 1)
    return false;
  // Parallel loops first, then reductions.
  SmallVector<utils::IteratorType> iters = g.getIteratorTypesArray();
  auto firstReduction = llvm::find(iters, utils::IteratorType::reduction);
  if (std::find(firstReduction, iters.end(), utils::IteratorType::parallel) != iters.end())
    return false;
  bool reduces = firstReduction != iters.end();
  SmallVector<int64_t> r = g.getStaticLoopRanges();
  if (llvm::any_of(r, ShapedType::isDynamic) || r.back() < 8)
    return false;
  unsigned last = g.getNumLoops() - 1;
  AffineExpr lastDim = getAffineDimExpr(last, g.getContext());
  for (OpOperand &o : g->getOpOperands()) {
    if (!staticF32(o.get()))
      return false;
    AffineMap m = g.getMatchingIndexingMap(&o);
    // (0 for a broadcast dim of size 1.)
    if (!m.isProjectedPermutation(/*allowZeroInResults=*/true))
      return false;
    if (!m.isFunctionOfDim(last))
      continue;
    SmallVector<int64_t> strides;
    int64_t offset;
    if (m.getResults().back() != lastDim ||
        failed(getStridesAndOffset(cast<MemRefType>(o.get().getType()), strides, offset)) ||
        strides.back() != 1)
      return false;
  }
  if (g.getMatchingIndexingMap(g.getDpsInitOperand(0)).isFunctionOfDim(last) == reduces)
    return false;
  for (Operation &op : g.getRegion().front().without_terminator()) {
    StringRef d = op.getDialect() ? op.getDialect()->getNamespace() : "";
    if ((d != "arith" && d != "math") || op.getNumRegions() || op.getNumResults() != 1 ||
        !(op.getResult(0).getType().isF32() || op.getResult(0).getType().isInteger(1)))
      return false;
  }
  // (A reduction's combiner must be one the vectorizer knows.)
  return succeeded(linalg::vectorizeOpPrecondition(g));
}

/// Output rows per im2col block of a large conv: the whole im2col matrix
/// (megabytes for a 56x56 output) would be written, then read by the
/// matmul a page per k step; a block of rows that stays in L2 is written
/// and read while hot. 0: one matrix for the whole output.
int64_t im2colBlockRows(int64_t k, int64_t oh, int64_t ow) {
  constexpr int64_t kWholeMax = 1 << 20, kBlockMax = 600 << 10;
  if (k * oh * ow * 4 <= kWholeMax)
    return 0;
  // Blocks of whole 16-column register tiles where possible: a peeled
  // remainder column runs far slower.
  int64_t best = 0;
  for (int64_t rows = oh - 1; rows >= 1; --rows)
    if (oh % rows == 0 && k * rows * ow * 4 <= kBlockMax && rows * ow >= 64) {
      if (rows * ow % 16 == 0)
        return rows;
      if (!best)
        best = rows;
    }
  return best;
}


/// The output rows per im2col block that rewriteConv uses for `g` (0: no
/// blocks).
int64_t convBlockRows(linalg::GenericOp g, int64_t groups) {
  SmallVector<int64_t> r = g.getStaticLoopRanges(); // n m c kh kw oh ow
  if (groups != 1 || isDirectConv(g) || !im2colRowStride(g.getDpsInputs()[0], im2colMap(g)))
    return 0;
  return im2colBlockRows(r[2] * r[3] * r[4], r[5], r[6]);
}


/// Whether the matmuls rewriteConv makes of `g` split their k loop into
/// cache tiles (blocks never do).
bool convKCacheTiled(linalg::GenericOp g, int64_t groups) {
  SmallVector<int64_t> r = g.getStaticLoopRanges(); // n m c kh kw oh ow
  return !convBlockRows(g, groups) && kCacheTiled(r[1] / groups, r[5] * r[6], r[2] * r[3] * r[4]);
}

/// Returns the flat buffer the matmuls accumulate into.
Value rewriteConv(linalg::GenericOp g, int64_t groups, int64_t &nextId) {
  OpBuilder b(g);
  Location loc = g.getLoc();
  MLIRContext *ctx = g.getContext();
  SmallVector<int64_t> r = g.getStaticLoopRanges(); // n m c kh kw oh ow
  Value x = g.getDpsInputs()[0], w = g.getDpsInputs()[1], out = g.getDpsInits()[0];
  Type f32 = b.getF32Type();
  AffineMap xMap = im2colMap(g);
  Value out3 = collapsedOutput(b, loc, out, {{0}, {1}, {2, 3}});
  // B per group of channels (a grouped conv is one conv per group on
  // channel slices): x itself for a direct conv, else
  // col[n, c, kh, kw, oh, ow] = x[n, c, ih(oh, kh), iw(ow, kw)].
  bool direct = groups == 1 && isDirectConv(g);
  int64_t ocg = r[1] / groups;
  Value col, col3;
  if (int64_t blockRows = convBlockRows(g, groups)) {
    // Per image and block of output rows: im2col the block, then one
    // matmul into the block's columns of the output.
    SmallVector<int64_t> cr = {1, r[1], r[2], r[3], r[4], blockRows, r[6]};
    col = b.create<memref::AllocOp>(loc, MemRefType::get({1, r[2], r[3], r[4], blockRows, r[6]}, f32));
    col3 = b.create<memref::CollapseShapeOp>(
        loc, col, SmallVector<ReassociationIndices>{{0}, {1, 2, 3}, {4, 5}});
    Value w2 = b.create<memref::CollapseShapeOp>(loc, w, SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
    int64_t cols = blockRows * r[6];
    forEachBatch(b, loc, {r[0], r[5] / blockRows}, [&](OpBuilder &nb, ArrayRef<OpFoldResult> ivs) {
      Value image = getValueOrCreateConstantIndexOp(nb, loc, ivs[0]);
      Value block = getValueOrCreateConstantIndexOp(nb, loc, ivs[1]);
      Value firstRow = nb.create<arith::MulIOp>(loc, block, nb.create<arith::ConstantIndexOp>(loc, blockRows));
      emitIm2colRows(nb, loc, x, col, xMap, cr, {image, Value(), Value(), Value(), firstRow, Value()});
      Value firstCol = nb.create<arith::MulIOp>(loc, block, nb.create<arith::ConstantIndexOp>(loc, cols));
      Value outImage = matrixView(nb, loc, out3, ivs.take_front());
      SmallVector<OpFoldResult> offsets = {nb.getIndexAttr(0), firstCol},
                                sizes = {nb.getIndexAttr(r[1]), nb.getIndexAttr(cols)},
                                strides = {nb.getIndexAttr(1), nb.getIndexAttr(1)};
      Value outBlock = nb.create<memref::SubViewOp>(loc, outImage, offsets, sizes, strides);
      emitMatmul(nb, loc, w2, matrixView(nb, loc, col3, {nb.getIndexAttr(0)}), outBlock, false,
                 false, nextId)
          ->setAttr(kNoCacheTiles, nb.getUnitAttr());
    });
    g.erase();
    return out3;
  }
  if (direct) {
    col3 = b.create<memref::CollapseShapeOp>(loc, x, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  } else {
    col = b.create<memref::AllocOp>(loc, MemRefType::get({r[0], r[2], r[3], r[4], r[5], r[6]}, f32));
    col3 = b.create<memref::CollapseShapeOp>(
        loc, col, SmallVector<ReassociationIndices>{{0}, {1, 2, 3}, {4, 5}});
  }
  forEachBatch(b, loc, {groups}, [&](OpBuilder &gb, ArrayRef<OpFoldResult> group) {
    auto slice = [&](Value v, int64_t dim, int64_t size) -> Value {
      if (groups == 1)
        return v;
      auto t = cast<MemRefType>(v.getType());
      Value start = gb.create<arith::MulIOp>(loc, getValueOrCreateConstantIndexOp(gb, loc, group[0]),
                                             gb.create<arith::ConstantIndexOp>(loc, size));
      SmallVector<OpFoldResult> offsets(t.getRank(), gb.getIndexAttr(0)), sizes,
          strides(t.getRank(), gb.getIndexAttr(1));
      for (int64_t i = 0; i < t.getRank(); ++i)
        sizes.push_back(gb.getIndexAttr(i == dim ? size : t.getDimSize(i)));
      offsets[dim] = start;
      return gb.create<memref::SubViewOp>(loc, v, offsets, sizes, strides);
    };
    if (!direct) {
      Value xg = slice(x, 1, r[2]);
      if (!emitIm2colRows(gb, loc, xg, col, xMap, r))
        gb.create<linalg::GenericOp>(
            loc, TypeRange{}, ValueRange{xg}, ValueRange{col},
            ArrayRef<AffineMap>{xMap, AffineMap::getMultiDimIdentityMap(6, ctx)},
            SmallVector<utils::IteratorType>(6, utils::IteratorType::parallel),
            [](OpBuilder &nb, Location l, ValueRange args) {
              nb.create<linalg::YieldOp>(l, args[0]);
            });
    }
    Value w2 = gb.create<memref::CollapseShapeOp>(
        loc, slice(w, 0, ocg), SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
    Value outg = slice(out3, 1, ocg);
    forEachBatch(gb, loc, {r[0]}, [&](OpBuilder &nb, ArrayRef<OpFoldResult> ivs) {
      emitMatmul(nb, loc, w2, matrixView(nb, loc, col3, ivs), matrixView(nb, loc, outg, ivs),
                 false, false, nextId);
    });
  });
  g.erase();
  return out3;
}

/// The elementwise generic right after contraction `g` that reads its
/// result alone (a fused activation) and is the last reader of it; null
/// otherwise. The caller rules out k loops split into cache tiles (partial
/// sums must not see the epilogue).
linalg::GenericOp findEpilogue(linalg::GenericOp g) {
  Value c = g.getDpsInits()[0];
  // (Skipping the allocation of the epilogue's output.)
  Operation *next = g->getNextNode();
  while (next && isa<memref::AllocOp, memref::AllocaOp>(next))
    next = next->getNextNode();
  auto e = dyn_cast_or_null<linalg::GenericOp>(next);
  // Its inputs are all C (fused elementwise chains may read it twice).
  if (!e || e.getNumDpsInits() != 1 ||
      !llvm::all_of(e.getDpsInputs(), [&](Value v) { return v == c; }) || !hasIdentityLayout(c) ||
      !hasIdentityLayout(e.getDpsInits()[0]) ||
      e.getDpsInits()[0].getType() != c.getType() ||
      !llvm::all_of(e.getIndexingMapsArray(), [](AffineMap m) { return m.isIdentity(); }) ||
      !llvm::all_of(e.getIteratorTypesArray(),
                    [](utils::IteratorType t) { return t == utils::IteratorType::parallel; })) {
    return {};
  }
  // The tiles are stored where the matmul was: the epilogue's output must
  // exist there (its allocation, placed before the epilogue, moves up).
  Value out = e.getDpsInits()[0];
  if (Operation *def = out.getDefiningOp();
      def && def->getBlock() == g->getBlock() && !def->isBeforeInBlock(g) &&
      !(isa<memref::AllocOp>(def) && def->getNumOperands() == 0))
    return {};
  Block &body = e.getRegion().front();
  // Scalar arith/math only, and the output's old value unused.
  if (!body.getArguments().back().use_empty())
    return {};
  for (Operation &op : body.without_terminator()) {
    StringRef d = op.getDialect() ? op.getDialect()->getNamespace() : "";
    if ((d != "arith" && d != "math") || op.getNumRegions() || op.getNumResults() != 1 ||
        !op.getResult(0).getType().isIntOrFloat())
      return {};
    // Values it captures must exist where the matmul stores its tiles.
    for (Value v : op.getOperands())
      if (Operation *def = v.getDefiningOp();
          def && def->getBlock() == g->getBlock() && !def->isBeforeInBlock(g))
        return {};
  }
  // Unless the epilogue writes C in place, nothing else may read C after
  // it (the fused code never stores the values before the epilogue).
  if (out != c)
    for (Operation *user : c.getUsers())
      if (user != g && user != e && !isa<memref::DeallocOp>(user) &&
          !(user->getBlock() == e->getBlock() && user->isBeforeInBlock(g)))
        return {};
  if (Operation *def = out.getDefiningOp();
      def && def->getBlock() == g->getBlock() && !def->isBeforeInBlock(g))
    def->moveBefore(g);
  return e;
}

/// The nearest linalg op before `op` that the schedule leaves in place (not
/// a marked matmul; views and constants may be folded away): a position
/// that survives the transform.
Operation *stableOpBefore(Operation *op) {
  for (Operation *p = op->getPrevNode(); p; p = p->getPrevNode())
    if (isa<linalg::LinalgOp>(p) && !p->hasAttr(kMark))
      return p;
  return nullptr;
}

/// Applies epilogue `e` to every vector the matmuls (the code between
/// `before` and `e`) store into `c`, storing the result where `e` wrote
/// (the same element of its output), and erases `e`.
void applyEpilogue(linalg::GenericOp e, Value c, Operation *before) {
  Value out = e.getDpsInits()[0];
  auto cType = cast<MemRefType>(c.getType());
  SmallVector<vector::TransferWriteOp> writes;
  Block *block = e->getBlock();
  e->getParentOp()->walk([&](vector::TransferWriteOp w) {
    Value base = w.getSource();
    while (auto sv = base.getDefiningOp<memref::SubViewOp>())
      base = sv.getSource();
    // Buffers may be shared by several contractions: only this one's.
    Operation *at = block->findAncestorOpInBlock(*w);
    if (base == c && at && at->isBeforeInBlock(e) && (!before || before->isBeforeInBlock(at)))
      writes.push_back(w);
  });
  // Only stores hoisted out of the k loop hold finished sums: a store next
  // to the FMAs (not hoisted) would see the epilogue at every k step.
  bool hoisted = !writes.empty() && llvm::all_of(writes, [](vector::TransferWriteOp w) {
    return llvm::none_of(*w->getBlock(), [](Operation &op) {
      return isa<vector::FMAOp, vector::OuterProductOp, vector::ContractionOp>(op);
    });
  });
  if (!hoisted)
    return;
  // e's output viewed as C: the same buffer, or collapsed like C was.
  auto expand = e.getDpsInputs()[0].getDefiningOp<memref::ExpandShapeOp>();
  bool reshaped = cast<MemRefType>(out.getType()).getShape() != cType.getShape();
  if (reshaped && !expand)
    return;
  Block &body = e.getRegion().front();
  for (vector::TransferWriteOp w : writes) {
    auto vt = cast<VectorType>(w.getVector().getType());
    OpBuilder b(w);
    Location l = w.getLoc();
    auto asVector = [&](Value v) -> Value {
      if (isa<VectorType>(v.getType()))
        return v;
      return b.create<vector::BroadcastOp>(l, VectorType::get(vt.getShape(), v.getType()), v);
    };
    IRMapping map;
    for (unsigned i = 0; i < e.getNumDpsInputs(); ++i)
      map.map(body.getArgument(i), w.getVector());
    for (Operation &op : body.without_terminator()) {
      // Constants stay scalars (broadcast where used).
      if (isa<arith::ConstantOp>(op)) {
        map.map(op.getResult(0), b.clone(op)->getResult(0));
        continue;
      }
      OperationState st(l, op.getName());
      for (Value v : op.getOperands())
        st.addOperands(asVector(map.lookupOrDefault(v)));
      st.addAttributes(op.getAttrs());
      st.addTypes(VectorType::get(vt.getShape(), op.getResult(0).getType()));
      map.map(op.getResult(0), b.create(st)->getResult(0));
    }
    Value y = asVector(map.lookupOrDefault(body.getTerminator()->getOperand(0)));
    // The same element of e's output: its buffer viewed as C (flat for a
    // conv) through the same subviews.
    Value dest = out;
    if (reshaped)
      dest = b.create<memref::CollapseShapeOp>(l, out, expand.getReassociationIndices());
    SmallVector<memref::SubViewOp> views;
    for (Value v = w.getSource(); auto sv = v.getDefiningOp<memref::SubViewOp>(); v = sv.getSource())
      views.push_back(sv);
    for (memref::SubViewOp sv : llvm::reverse(views))
      dest = b.create<memref::SubViewOp>(l, sv.getType(), dest, sv.getMixedOffsets(),
                                         sv.getMixedSizes(), sv.getMixedStrides());
    b.create<vector::TransferWriteOp>(l, y, dest, w.getIndices(), w.getPermutationMapAttr(),
                                      w.getMask(), w.getInBoundsAttr());
    w.erase();
  }
  e.erase();
}

/// The transform script for one marked matmul (handles named by `id`).
/// The transform script for one marked elementwise generic: one vector of
/// up to 16 lanes along the innermost loop, the remainder peeled.
std::string elementwiseScheduleFor(linalg::LinalgOp op, int64_t id) {
  SmallVector<int64_t> r = op.getStaticLoopRanges();
  std::string i = std::to_string(id), any = "!transform.any_op";
  int64_t lanes = std::min<int64_t>(16, r.back());
  std::string tiles, results = any;
  for (size_t d = 0; d < r.size(); ++d) {
    tiles += (d ? ", " : "") + std::to_string(d + 1 == r.size() ? lanes : 1);
    results += ", " + any;
  }
  std::string s = "  %m" + i + " = transform.structured.match ops{[\"linalg.generic\"]} attributes{" +
                  kId.str() + " = " + i + " : i64} in %root : (" + any + ") -> " + any + "\n";
  s += "  %t" + i + ", %l" + i + ":" + std::to_string(r.size()) +
       " = transform.structured.tile_using_for %m" + i + " tile_sizes [" + tiles + "] : (" + any +
       ") -> (" + results + ")\n";
  if (r.back() % lanes) {
    std::string h = "%pe" + i;
    s += "  " + h + " = transform.cast %l" + i + "#" + std::to_string(r.size() - 1) + " : " + any +
         " to !transform.op<\"scf.for\">\n";
    s += "  " + h + "a, " + h + "b = transform.loop.peel " + h +
         " : (!transform.op<\"scf.for\">) -> (" + any + ", " + any + ")\n";
  }
  return s;
}

std::string scheduleFor(linalg::LinalgOp op, int64_t id) {
  if (auto g = dyn_cast<linalg::GenericOp>(op.getOperation()); g && isVectorizableElementwise(g))
    return elementwiseScheduleFor(op, id);
  SmallVector<int64_t> r = op.getStaticLoopRanges(); // m, n, k
  int64_t M = r[0], N = r[1], K = r[2];
  std::string s, i = std::to_string(id);
  std::string any = "!transform.any_op";
  s += "  %m" + i + " = transform.structured.match ops{[\"" +
       op->getName().getStringRef().str() + "\"]} attributes{" + kId.str() + " = " + i +
       " : i64} in %root : (" + any + ") -> " + any + "\n";
  std::string target = "%m" + i;
  // Cache tiles only for large problems, and only sizes that divide the
  // shape, so that the register tiles inside keep static bounds.
  int64_t cm = 0, cn = 0, ck = 0;
  if (!op->hasAttr(kNoCacheTiles))
    cacheTiles(M, N, K, cm, cn, ck);
  if (cm || cn || ck) {
    int nl = (cm != 0) + (cn != 0) + (ck != 0);
    s += "  %c" + i + ", %cl" + i + ":" + std::to_string(nl) +
         " = transform.structured.tile_using_for " + target + " tile_sizes [" +
         std::to_string(cm) + ", " + std::to_string(cn) + ", " + std::to_string(ck) +
         "] : (" + any + ") -> (" + any;
    for (int j = 0; j < nl; ++j)
      s += ", " + any;
    s += ")\n";
    target = "%c" + i;
  }
  int64_t em = cm ? cm : M, en = cn ? cn : N;
  int64_t tm = std::min<int64_t>(8, em), tn = std::min<int64_t>(32, en);
  // A 16-wide tile when it leaves a smaller remainder (49 = 3 x 16 + 1):
  // the peeled remainder runs far slower than full tiles.
  if (en > 32 && en % 32 > en % 16)
    tn = 16;
  // One or two rows (a classifier's GEMV): a 32-wide tile is one FMA chain
  // per row, bound by its latency; 128 wide keeps eight in flight.
  if (em <= 2 && en >= 128)
    tn = 128;
  s += "  %t" + i + ", %l" + i + ":3 = transform.structured.tile_using_for " + target +
       " tile_sizes [" + std::to_string(tm) + ", " + std::to_string(tn) + ", 1] : (" +
       any + ") -> (" + any + ", " + any + ", " + any + ", " + any + ")\n";
  // Peel the inner (n) loop first: peeling consumes the loop handle and
  // everything nested in it.
  auto peel = [&](int which, const char *tag) {
    std::string h = "%p" + std::string(tag) + i;
    s += "  " + h + " = transform.cast %l" + i + "#" + std::to_string(which) + " : " +
         any + " to !transform.op<\"scf.for\">\n";
    s += "  " + h + "a, " + h + "b = transform.loop.peel " + h +
         " : (!transform.op<\"scf.for\">) -> (" + any + ", " + any + ")\n";
  };
  if (en % tn)
    peel(1, "n");
  if (em % tm)
    peel(0, "m");
  return s;
}

std::string buildScript(ArrayRef<std::pair<linalg::LinalgOp, int64_t>> ops) {
  std::string s =
      "module attributes {transform.with_named_sequence} {\n"
      "transform.named_sequence @__transform_main(%root: !transform.any_op "
      "{transform.readonly}) {\n";
  for (auto [op, id] : ops)
    s += scheduleFor(op, id);
  // Canonicalization between peeling and vectorization makes the peeled
  // subviews static. The last pattern set runs without canonicalization:
  // together with the lowering patterns it rewrites forever on some shapes.
  s += R"(
  %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
  transform.apply_patterns to %f { transform.apply_patterns.canonicalization } : !transform.any_op
  %all = transform.structured.match attributes{kiln.cv} in %root : (!transform.any_op) -> !transform.any_op
  transform.structured.vectorize %all : !transform.any_op
  transform.apply_patterns to %f {
    transform.apply_patterns.vector.reduction_to_contract
    transform.apply_patterns.vector.transfer_permutation_patterns
    transform.apply_patterns.memref.fold_memref_alias_ops
    transform.apply_patterns.canonicalization } : !transform.any_op
  transform.apply_cse to %f : !transform.any_op
  %fh = transform.structured.hoist_redundant_vector_transfers %f : (!transform.any_op) -> !transform.any_op
  transform.apply_patterns to %fh {
    transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
    transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = "innerreduction"
    transform.apply_patterns.vector.transfer_permutation_patterns
    transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
    transform.apply_patterns.vector.lower_outerproduct
    transform.apply_patterns.vector.lower_broadcast
    transform.apply_patterns.vector.lower_shape_cast
    transform.apply_patterns.vector.lower_transpose } : !transform.any_op
  transform.apply_patterns to %fh { transform.apply_patterns.canonicalization } : !transform.any_op
  transform.apply_cse to %fh : !transform.any_op
  transform.yield
}
}
)";
  return s;
}

struct CpuVectorizeContractionsPass
    : public impl::CpuVectorizeContractionsBase<CpuVectorizeContractionsPass> {
  using Base::Base;
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, linalg::LinalgDialect, memref::MemRefDialect,
                    scf::SCFDialect, vector::VectorDialect,
                    transform::TransformDialect>();
    linalg::registerTransformDialectExtension(registry);
    vector::registerTransformDialectExtension(registry);
    memref::registerTransformDialectExtension(registry);
    scf::registerTransformDialectExtension(registry);
    linalg::registerTilingInterfaceExternalModels(registry);
    affine::registerValueBoundsOpInterfaceExternalModels(registry);
    arith::registerValueBoundsOpInterfaceExternalModels(registry);
    linalg::registerValueBoundsOpInterfaceExternalModels(registry);
    memref::registerValueBoundsOpInterfaceExternalModels(registry);
    scf::registerValueBoundsOpInterfaceExternalModels(registry);
    vector::registerValueBoundsOpInterfaceExternalModels(registry);
  }

  /// Runs the schedule of the ops marked (and not yet scheduled), then
  /// lowers N-d transfers to 1-d ones, fully unrolled (vector-to-llvm does
  /// the rest); the lowering also runs for `lowerAnyway` (depthwise loops).
  LogicalResult applyMarked(ModuleOp module, bool lowerAnyway) {
    SmallVector<std::pair<linalg::LinalgOp, int64_t>> marked;
    module.walk([&](linalg::LinalgOp op) {
      if (auto id = op->getAttrOfType<IntegerAttr>(kId))
        marked.push_back({op, id.getInt()});
    });
    if (marked.empty() && !lowerAnyway)
      return success();
    if (!marked.empty()) {
      std::string script = buildScript(marked);
      ParserConfig config(&getContext());
      OwningOpRef<ModuleOp> lib = parseSourceString<ModuleOp>(script, config);
      if (!lib)
        return module.emitError("kiln-cpu-vectorize-contractions: bad schedule:\n") << script;
      Operation *entry =
          transform::detail::findTransformEntryPoint(module, *lib, "__transform_main");
      if (!entry ||
          failed(transform::applyTransformNamedSequence(module, entry, *lib,
                                                        transform::TransformOptions())))
        return failure();
      // Scheduled: the tiled ops keep the marks, which a later round skips.
      module.walk([](Operation *op) { op->removeAttr(kId); });
    }
    OpPassManager pm(ModuleOp::getOperationName());
    VectorTransferToSCFOptions toScf;
    toScf.enableFullUnroll();
    OpPassManager &fpm = pm.nest<func::FuncOp>();
    fpm.addPass(createConvertVectorToSCFPass(toScf));
    fpm.addPass(createCanonicalizerPass());
    fpm.addPass(createCSEPass());
    return runPipeline(pm, module);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t nextId = 0;
    // Contractions over a run-time number of rows: blocks of 64 rows, then
    // of 8, of static size; the last rows stay naive loops.
    if (matmul) {
      SmallVector<std::pair<linalg::GenericOp, MatmulMatch>> runtime;
      module.walk([&](linalg::GenericOp g) {
        if (auto mm = matchRuntimeContraction(g))
          runtime.push_back({g, *mm});
      });
      for (auto [g, mm] : runtime)
        blockRuntimeContraction(g, mm);
    }
    SmallVector<linalg::GenericOp> generics, runtimeDepthwise, maxPools;
    module.walk([&](linalg::GenericOp g) {
      if (isCandidate(g))
        generics.push_back(g);
      else if (conv && isRuntimeDepthwise(g))
        runtimeDepthwise.push_back(g);
      else if (conv && matchMaxPool(g))
        maxPools.push_back(g);
    });
    // An elementwise epilogue (the fused activation) found before the
    // rewrite is applied to each C tile before it is stored.
    SmallVector<std::tuple<linalg::GenericOp, Value, Operation *>> epilogues;
    int64_t depthwise = 0;
    for (linalg::GenericOp g : generics) {
      if (auto mm = matchMatmul(g)) {
        if (!matmul)
          continue;
        linalg::GenericOp e = matmulKCacheTiled(g, *mm) ? linalg::GenericOp() : findEpilogue(g);
        Operation *before = stableOpBefore(g);
        Value c = rewriteMatmul(g, *mm, nextId);
        if (e)
          epilogues.push_back({e, c, before});
      } else if (auto dm = conv ? matchDepthwise(g) : std::nullopt) {
        // (No k loop to split: the taps stay in registers.)
        linalg::GenericOp e = findEpilogue(g);
        Operation *before = stableOpBefore(g);
        Value c = g.getDpsInits()[0];
        rewriteDepthwise(g, *dm);
        ++depthwise;
        // Now, while its stores are still transfer_writes.
        if (e)
          applyEpilogue(e, c, before);
      } else if (int64_t groups = conv ? convGroups(g) : 0) {
        linalg::GenericOp e = convKCacheTiled(g, groups) ? linalg::GenericOp() : findEpilogue(g);
        Operation *before = stableOpBefore(g);
        Value c = rewriteConv(g, groups, nextId);
        if (e)
          epilogues.push_back({e, c, before});
      }
    }
    // Depthwise convs of run-time size: the same vector loops, with the
    // rows' shape in registers picked at run time (no epilogue).
    for (linalg::GenericOp g : runtimeDepthwise) {
      rewriteDepthwise(g, *matchDepthwise(g));
      ++depthwise;
    }
    // Max pools: the same loops, max for the multiply-add.
    for (linalg::GenericOp g : maxPools) {
      rewriteDepthwise(g, *matchMaxPool(g), /*isMaxPool=*/true);
      ++depthwise;
    }
    if (failed(applyMarked(module, depthwise != 0)))
      return signalPassFailure();
    // Last first: an earlier epilogue may be a later one's position anchor.
    for (auto [e, c, before] : llvm::reverse(epilogues))
      applyEpilogue(e, c, before);
    // Then the elementwise ops that are left (the epilogues are gone), in a
    // second schedule: the first one's position anchors must not move.
    if (elementwise) {
      module.walk([&](linalg::GenericOp g) {
        if (isVectorizableElementwise(g)) {
          g->setAttr(kMark, UnitAttr::get(g.getContext()));
          g->setAttr(kId, IntegerAttr::get(IntegerType::get(g.getContext(), 64), nextId++));
        }
      });
      if (failed(applyMarked(module, false)))
        return signalPassFailure();
    }
    module.walk([](Operation *op) {
      op->removeAttr(kMark);
      op->removeAttr(kId);
      op->removeAttr(kNoCacheTiles);
    });
  }
};

} // namespace
} // namespace kiln
