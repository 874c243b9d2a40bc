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
//      with static planes, each channel's plane padded and split into
//      stride phases in per-thread scratch first (no padded copy of the
//      whole input), accumulators started from the bias or fill in
//      registers; f32 max pools (loops n, c, kh, kw, oh, ow) take the same
//      loops;
//   3. tiles, peels, vectorizes and lowers those matmuls with a transform
//      dialect script built from their static shapes (TOOLCHAIN.md §4/§6):
//      optional cache tiles that divide the shape, register tiles
//      [8, 32, 1] ([8, 16, 1] where that leaves a smaller remainder,
//      [1, 128, 1] for one or two rows; [4, 16, 1] and [1, 64, 1] with
//      256-bit vectors), transform.loop.peel for loops
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
//      scalar. Those whose run-time sizes are only outer parallel loops
//      are first split into static blocks of one along them.
//   0. first splits the run-time loops of a contraction into blocks of
//      static size, which the steps above then schedule: rows (batch x
//      sequence against a layer's weights) by 64, then 8; attention's heads
//      by 1 and its sequence dims by 32 (n), 8 (m) and 64 (k). What is
//      left over (fewer than 8 rows, 32 columns, 64 terms) stays naive. A
//      contraction whose only run-time loop is n (a convolution of run-time
//      size, lowered as weights x patches) takes blocks of 256, 128, 64,
//      32 and 16 columns, under blocks of rows that keep the weights in
//      L2; the columns past the last whole 16 run as one static 16-wide
//      block on padded copies (padLastBlock).
// Anything else (other bodies, integer types, other dynamic shapes, device
// ops) is left to the naive loops. Steps 2 and 2b live in VectorizeConv.cpp
// and VectorizeWindows.cpp (shared declarations: Vectorize.h).
//
//===----------------------------------------------------------------------===//
#include "providers/cpu/Vectorize.h"
#include "passes/Passes.h"
#include "providers/Passes.h"

#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Affine/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/TransformOps/DialectExtension.h"
#include "mlir/Dialect/Linalg/Transforms/TilingInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/TransformOps/MemRefTransformOps.h"
#include "mlir/Dialect/SCF/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/TransformOps/SCFTransformOps.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/Dialect/Vector/IR/ValueBoundsOpInterfaceImpl.h"
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

namespace vectorize {

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
bool isF32BufferGeneric(linalg::GenericOp g) {
  if (!g.hasPureBufferSemantics() || g->hasAttr("kiln.device") || g.getNumDpsInputs() != 2 ||
      g.getNumDpsInits() != 1)
    return false;
  return llvm::all_of(g->getOperands(), [](Value v) {
    auto t = dyn_cast<MemRefType>(v.getType());
    return t && t.getElementType().isF32();
  });
}

bool isCandidate(linalg::GenericOp g) {
  return isF32BufferGeneric(g) && llvm::all_of(g->getOperands(), staticF32) && isMulAddBody(g);
}

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
Operation *forEachBatch(
    OpBuilder &b, Location loc, ArrayRef<int64_t> extents,
    llvm::function_ref<void(OpBuilder &, ArrayRef<OpFoldResult>)> body) {
  SmallVector<OpFoldResult> ivs;
  OpBuilder::InsertionGuard guard(b);
  Operation *outer = nullptr;
  for (int64_t e : extents) {
    if (e == 1) {
      ivs.push_back(b.getIndexAttr(0));
      continue;
    }
    Value lb = b.create<arith::ConstantIndexOp>(loc, 0);
    Value ub = b.create<arith::ConstantIndexOp>(loc, e);
    Value st = b.create<arith::ConstantIndexOp>(loc, 1);
    auto loop = b.create<scf::ForOp>(loc, lb, ub, st);
    if (!outer)
      outer = loop;
    b.setInsertionPoint(loop.getBody()->getTerminator());
    ivs.push_back(loop.getInductionVar());
  }
  body(b, ivs);
  return outer;
}

int64_t iterationCost(linalg::LinalgOp op) {
  int64_t cost = 0;
  for (Operation &o : op.getBlock()->without_terminator())
    cost +=
        isa<math::ExpOp, math::Exp2Op, math::ExpM1Op, math::ErfOp, math::TanhOp,
            math::LogOp, math::Log1pOp, math::Log2Op, math::PowFOp, math::SinOp,
            math::CosOp, math::TanOp, math::AtanOp, math::Atan2Op>(o)
            ? 16
            : 1;
  // (A vector reduction along the lanes chains a horizontal reduction per
  // vector: latency, not throughput.)
  if (op.getNumReductionLoops() > 0)
    cost += 4;
  return std::max<int64_t>(cost, 1);
}

bool inDeviceCode(Operation *op) {
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
    if (isa<gpu::LaunchOp, gpu::GPUFuncOp, gpu::GPUModuleOp>(p))
      return true;
  return false;
}

bool inParallelLoop(Operation *op) {
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
    if (p->hasAttr(kParallelAttr))
      return true;
  return false;
}

void markParallel(Operation *loop, int64_t threshold, int64_t perIteration) {
  if (!loop)
    return;
  int64_t grain = std::max<int64_t>(
      1, llvm::divideCeil(threshold, std::max<int64_t>(1, perIteration)));
  loop->setAttr(
      kParallelAttr,
      IntegerAttr::get(IntegerType::get(loop->getContext(), 64), grain));
}

/// `out` collapsed by `groups`, for a matmul's C. C must not be a view:
/// hoisting its tile out of the k loop (hoist_redundant_vector_transfers)
/// refuses view-like sources, and the tile would be stored at every k step.
/// So an allocated output becomes a collapsed allocation that everything
/// else reads through an expand_shape.
Value collapsedOutput(OpBuilder &b, Location loc, Value out, ArrayRef<ReassociationIndices> groups) {
  // An allocation an earlier contraction collapsed the same way (a buffer
  // reused by several convs): that allocation, not a view of it.
  if (auto ex = out.getDefiningOp<memref::ExpandShapeOp>();
      ex && ex.getSrc().getDefiningOp<memref::AllocOp>() &&
      ArrayRef(ex.getReassociationIndices()) == groups)
    return ex.getSrc();
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
/// sizes that divide the shape (0: no tiling of that loop); for a
/// `rowBlock` (kPanelRows) k blocks of at most kRowBlockK only.
void cacheTiles(int64_t M, int64_t N, int64_t K, int64_t &cm, int64_t &cn,
                int64_t &ck, bool rowBlock = false) {
  cm = cn = ck = 0;
  if (M * N * K < (int64_t)1 << 21)
    return;
  // A row block's rows are in L2 and its panel is read once per row tile:
  // blocks of k only keep the panel's slice in L2 too (a 1024 x 1024 x
  // 1024 MatMul 5% faster without the 64-row, 128-deep tiles below,
  // 2048 x 2048 x 2048 7% with k blocks of 1024, 128 KiB of a panel).
  if (rowBlock) {
    if (K > kRowBlockK)
      ck = dividingTile(K, kRowBlockK, 64);
    return;
  }
  // A GEMV's one or two rows on B as it lies (not packed: shared weights,
  // B an input, or a padded last panel with a short k, packedPanelOf): its
  // wide tiles read B's rows whole, a few rows per k block, so that each k
  // step is a few streams along rows, not a short read from another page
  // for every k (GPT-2's 1 x 128 x 50257 logits: 2.1x on one thread,
  // 1.7-2.0x on two). At least 4 rows, and at most 64 blocks: the threads
  // split each block's tiles.
  if (M <= 2) {
    for (int64_t d = std::max<int64_t>(4, llvm::divideCeil(K, 64)); d < K; ++d)
      if (K % d == 0) {
        ck = d;
        break;
      }
    return;
  }
  cm = dividingTile(M, 64, 8);
  // Column blocks of whole 16-wide tiles (784 = 7 x 112, a 28x28 map): a
  // row of register tiles reads the ck x cn B block, 57 KiB in L2, where the
  // whole 128 x 784 was 400 KiB from L3 (a 3x3 128 -> 128 conv on 28x28:
  // 2% faster on one thread, 6% on two, which share L3).
  cn = dividingTile(N, 128, 16);
  // k blocks of 128 at most: the register tiles of a row of tiles read the
  // B block ck x n in turn, and it should stay near (a 7x7 conv's 128 x 49
  // block is 25 KiB). With 256 the 960->160 and 3x3 512->512 convs of 7x7
  // maps ran 10-20% slower; the partial sums' round trips cost less.
  ck = dividingTile(K, 128, 64);
  if (cm == M) cm = 0;
  if (cn == N) cn = 0;
  if (ck == K) ck = 0;
  // Rows in blocks keep nothing in cache unless columns or k are blocked
  // inside them; alone they only cut the row loop threads split into one
  // dispatch per block.
  if (!cn && !ck)
    cm = 0;
}

/// Whether an M x N x K matmul's k loop is split into cache tiles (its
/// partial sums are stored between them).
bool kCacheTiled(int64_t M, int64_t N, int64_t K, bool rowBlock) {
  int64_t cm, cn, ck;
  cacheTiles(M, N, K, cm, cn, ck, rowBlock);
  return ck != 0;
}

/// The rows of the matmul rewriteMatmul makes of `g`: a folded batch
/// multiplies m.
int64_t matmulRows(linalg::GenericOp g, const MatmulMatch &mm) {
  SmallVector<int64_t> r = g.getStaticLoopRanges();
  int64_t m = r[mm.m];
  if (foldsBatch(g, mm))
    for (unsigned bd : mm.batch)
      m *= r[bd];
  return m;
}

/// The panel width rewriteMatmul packs `g`'s B into (packedPanels), or 0
/// when B is read as it lies: for a constant 2-D B shared by every row,
/// as wide as the register tile (its rows then run one after another; the
/// last panel zero-padded when the columns do not fill it: a classifier's
/// 1000, GPT-2's 50257). A GEMV's one or two rows get panels as wide as
/// their wide tile: B as it lies, each k step of a tile read 256 bytes of
/// another page; a panel is one stream, its accumulators stay in registers
/// for the whole k loop, and threads take panels (a 1 x 4096 x 4096 MatMul
/// 1.35x faster on one thread, 1.39x on two).
static int64_t packedPanelOf(linalg::GenericOp g, const MatmulMatch &mm,
                             int64_t vectorBits) {
  // (A transposed A, a small conv's patches, only without a batch:
  // foldsBatch keeps the rows last.)
  if (!mm.batch.empty() && !foldsBatch(g, mm))
    return 0;
  Value bm = g.getDpsInputs()[1];
  auto bType = cast<MemRefType>(bm.getType());
  if (bType.getRank() != 2 || g.getIndexingMapsArray()[1].getNumResults() != 2)
    return 0;
  SmallVector<int64_t> r = g.getStaticLoopRanges();
  int64_t rows = matmulRows(g, mm);
  int64_t panel = registerTile(rows <= 2 ? rows : 8, 1024, vectorBits).second;
  if (!constantGlobal(bm)) {
    // B computed at run time, copied into panels before the products
    // (runTimePanels) where the copy is a small part of the work (64 rows
    // or more: 1/64 at most) and A is past kRowBlockABytes (not tried on
    // smaller ones): read as it lies, a tile's k step reads a line of
    // another page (1024 x 1024 x 1024, B an input: 47% of peak, 1.58x
    // faster in panels, 512^3 1.23x).
    return !mm.transB && bType.hasStaticShape() && unitInnerStride(bType) &&
                   r[mm.n] % panel == 0 && r[mm.n] >= 4 * panel && rows >= 64 &&
                   rows * r[mm.k] * 4 > kRowBlockABytes
               ? panel
               : 0;
  }
  if (r[mm.n] < 4 * panel)
    return 0;
  // A GEMV with a padded last panel and a short k reads B as it lies
  // faster, in k blocks of 4 whole rows (four streams where a panel is
  // one: GPT-2's 1 x 128 x 50257 logits 10% faster on one thread, equal on
  // two); transposed, B as it lies would be read across its rows.
  if (rows <= 2 && r[mm.n] % panel && !mm.transB && r[mm.k] <= 256)
    return 0;
  return panel;
}

int64_t packedPanel(linalg::GenericOp g, const MatmulMatch &mm,
                    int64_t vectorBits) {
  int64_t panel = packedPanelOf(g, mm, vectorBits);
  if (!panel || !constantGlobal(g.getDpsInputs()[1]))
    return panel;
  // Only when every op reading the weights reads the panels: the panels
  // would otherwise be a second copy of them in the library (a run-time
  // row count's last rows, one at a time, keep the GEMV on B as it lies).
  memref::GlobalOp global = constantGlobal(g.getDpsInputs()[1]);
  auto module = global->getParentOfType<ModuleOp>();
  bool shared = false;
  module.walk([&](memref::GetGlobalOp get) {
    if (get.getName() != global.getSymName())
      return;
    SmallVector<Value> reads = {get.getResult()};
    while (!reads.empty() && !shared) {
      Value v = reads.pop_back_val();
      for (Operation *user : v.getUsers()) {
        if (isa<memref::SubViewOp>(user) &&
            constantGlobal(user->getResult(0))) {
          reads.push_back(user->getResult(0));
          continue;
        }
        auto other = dyn_cast<linalg::GenericOp>(user);
        std::optional<MatmulMatch> om =
            other && isCandidate(other) && other.getDpsInputs()[1] == v
                ? matchMatmul(other)
                : std::nullopt;
        if (!om || packedPanelOf(other, *om, vectorBits) != panel)
          shared = true;
      }
    }
  });
  return shared ? 0 : panel;
}

/// Rows per task when threads split the packed-panel matmuls of `g` by
/// rows (each task every panel), or 0 when they take panels.
/// - Where the panels stay in L2 (kPerCoreWeightBytes) and there is work
///   for threads: a LayerNorm after a BERT layer's 128 x 128 x 128 matmul
///   split by panels read half its rows from the other core (4.9 us on one
///   thread of a Xeon VM, 10.9 on two) and the matmul after a row-split op
///   read half its input from there. About kParallelEvenTrips blocks of
///   whole 8-row register tiles (so that up to 8 threads get shares;
///   16-row blocks ran as fast as 32-row ones), dividing the rows where
///   they can.
/// - Larger panels: blocks of rows that stay in L2 (kRowBlockABytes)
///   while every panel passes. Panel by panel, each panel's tiles read all
///   of A, from the last-level cache once A is past L2 (1024 x 1024 x
///   1024: 4 MiB of A read 32 times; with blocks of 128 rows 1.45x as
///   fast, 2048^3 1.25x, 512^3 1.15x). An A that fits in L2 gains too,
///   from the blocks' 14-row tiles without cache tiles or prefetches
///   (128 x 768 x 3072 1.16x / 1.22x at 1 / 2 threads, 128 x 256 x 1024
///   1.13x / 1.15x, 192 x 384 x 1536 1.19x / 1.23x). Only blocks of
///   whole 8-row tiles that divide the rows: rows left over would read
///   all the weights once more on one thread (whisper_enc_lite's 150 x
///   1536 x 384 in blocks of 72: 7-11% slower in its profile), except a
///   few rows over where A outweighs the weights (below). And 64 rows at
///   least: each block reads all the weights from the last-level cache, and 32
///   rows did not pay for it (128 x 3072 x 768 in 4 blocks 5-7% slower).
static int64_t panelRowBlock(linalg::GenericOp g, const MatmulMatch &mm,
                             int64_t panel, int64_t vectorBits) {
  SmallVector<int64_t> r = g.getStaticLoopRanges();
  int64_t m = matmulRows(g, mm), n = r[mm.n], k = r[mm.k];
  int64_t packedBytes = llvm::divideCeil(n, panel) * panel * k * 4;
  if (mm.transA || m < 16 || m * n * k < kParallelMultiplyAdds)
    return 0;
  if (packedBytes > kPerCoreWeightBytes) {
    // (AVX2's tiles stay 4 rows: there an A that fits in L2 gains nothing
    // from blocks, 128 x 768 x 3072 6% slower.)
    if (vectorBits < 512 && m * k * 4 <= kRowBlockABytes)
      return 0;
    // (An even count of blocks, or enough for even shares: three blocks
    // on two threads would leave one idle a third of the time.)
    int64_t cap = std::min<int64_t>(kRowBlockABytes / (k * 4), m / 2) / 8 * 8;
    for (int64_t t = cap; t >= 64; t -= 8)
      if (m % t == 0 && ((m / t) % 2 == 0 || m / t >= kParallelEvenTrips))
        return t;
    // Where A outweighs the weights and no block divides the rows (vit's
    // 197), blocks of whole 14-row tiles that leave fewer than 8 rows
    // over: each thread then reads the rows its producer wrote, where
    // panel by panel each read all of A (half of it from the other
    // core). The rows over read the weights once more, which only pays
    // for a few (vit_tiny's 197 x 768 x 192 in 2 blocks of 98: 7% faster
    // at 2 threads; whisper_enc_lite's 150 rows in 2 of 70, 10 rows
    // over, 5% slower). (AVX-512 only, where it was measured: AVX2's
    // tiles are 4 rows.)
    if (vectorBits >= 512 && m * k * 4 >= packedBytes)
      for (int64_t t =
               std::min<int64_t>(kRowBlockABytes / (k * 4), m / 2) / 14 * 14;
           t >= 64; t -= 14)
        if (m % t < 8 && ((m / t) % 2 == 0 || m / t >= kParallelEvenTrips))
          return t;
    return 0;
  }
  int64_t cap = std::min<int64_t>(
      std::max<int64_t>(8, m / kParallelEvenTrips / 8 * 8), m / 2 / 8 * 8);
  int64_t block = dividingTile(m, cap, 8);
  return block ? block : cap;
}

/// Whether the matmuls rewriteMatmul makes of `g` split their k loop into
/// cache tiles.
bool matmulKCacheTiled(linalg::GenericOp g, const MatmulMatch &mm,
                       int64_t vectorBits) {
  SmallVector<int64_t> r = g.getStaticLoopRanges();
  int64_t panel = packedPanel(g, mm, vectorBits);
  int64_t rows = matmulRows(g, mm);
  int64_t block = panel ? panelRowBlock(g, mm, panel, vectorBits) : 0;
  if (block)
    rows = block;
  return !g->hasAttr(kNoCacheTiles) &&
         kCacheTiled(rows, panel ? panel : r[mm.n], r[mm.k], block != 0);
}

std::optional<AccumulatorInit> markMatmulAccumulatorInit(linalg::GenericOp g,
                                                         const MatmulMatch &mm,
                                                         int64_t vectorBits) {
  if (matmulKCacheTiled(g, mm, vectorBits))
    return std::nullopt;
  Value c = g.getDpsInits()[0];
  auto cType = cast<MemRefType>(c.getType());
  OutputInit init;
  // (Zeros: no scalar yet, as the schedule would fold away an unused
  // constant; startAccumulatorsFromInit makes one.)
  if (std::optional<ZeroInit> zero = zeroInitBefore(g, c)) {
    // C may be the shared zero buffer itself (a later layer's scores):
    // then a marker stands for the init, which stays for the others.
    Operation *op = zero->erase;
    if (!op)
      op = OpBuilder(g).create<memref::AssumeAlignmentOp>(
          g.getLoc(), g.getDpsInputs()[0], 1);
    init = OutputInit{Value(), Value(), op};
  } else if (std::optional<OutputInit> other =
                 matchOutputInit(g, cType.getRank() - 1)) {
    // A fill, or a bias broadcast along C's last dim (a Gemm's, or an
    // Add's that kiln-fuse-epilogues moved into C's init).
    init = *other;
  } else {
    return std::nullopt;
  }
  // (An op nothing folds or moves, that names nothing the rewrite erases.)
  OpBuilder b(g->getContext());
  b.setInsertionPointAfter(g);
  Operation *end =
      b.create<memref::AssumeAlignmentOp>(g.getLoc(), g.getDpsInputs()[0], 1);
  return AccumulatorInit{init, Value(), end, /*alongLanes=*/true};
}

bool besideMultiplyAdds(Operation *op) {
  return llvm::any_of(*op->getBlock(), [](Operation &o) {
    return isa<vector::FMAOp, vector::OuterProductOp, vector::ContractionOp>(o);
  });
}

/// `bm` ([K, N], N a multiple of `panel`) copied into panels of `panel`
/// columns, [N / panel][K][panel], a panel per task.
static Value runTimePanels(OpBuilder &b, Location loc, Value bm,
                           int64_t panel) {
  auto type = cast<MemRefType>(bm.getType());
  int64_t k = type.getDimSize(0), n = type.getDimSize(1);
  Value packed = b.create<memref::AllocOp>(
      loc, MemRefType::get({n / panel, k, panel}, type.getElementType()));
  Operation *loop = forEachBatch(
      b, loc, {n / panel}, [&](OpBuilder &nb, ArrayRef<OpFoldResult> p) {
        Value col = nb.create<arith::MulIOp>(
            loc, getValueOrCreateConstantIndexOp(nb, loc, p[0]),
            nb.create<arith::ConstantIndexOp>(loc, panel));
        Value from = nb.create<memref::SubViewOp>(
            loc, bm, ArrayRef<OpFoldResult>{nb.getIndexAttr(0), col},
            ArrayRef<OpFoldResult>{nb.getIndexAttr(k), nb.getIndexAttr(panel)},
            ArrayRef<OpFoldResult>{nb.getIndexAttr(1), nb.getIndexAttr(1)});
        nb.create<memref::CopyOp>(
            loc, from,
            subMatrix(nb, loc, packed, {p[0], std::nullopt, std::nullopt}));
      });
  markParallel(loop, kParallelMoveElements, k * panel);
  return packed;
}

/// Returns the buffer the matmuls accumulate into.
Value rewriteMatmul(linalg::GenericOp g, const MatmulMatch &mm,
                    int64_t vectorBits, int64_t &nextId) {
  OpBuilder b(g);
  Location loc = g.getLoc();
  SmallVector<int64_t> ranges = g.getStaticLoopRanges();
  SmallVector<int64_t> extents;
  for (unsigned d : mm.batch)
    extents.push_back(ranges[d]);
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  Value a = g.getDpsInputs()[0], bm = g.getDpsInputs()[1], c = g.getDpsInits()[0];
  bool noCacheTiles = g->hasAttr(kNoCacheTiles);
  // A and C with the batch folded into their rows.
  auto foldBatch = [&]() -> std::pair<Value, Value> {
    int64_t rank = cast<MemRefType>(a.getType()).getRank();
    SmallVector<ReassociationIndices> rows(1);
    for (int64_t i = 0; i + 1 < rank; ++i)
      rows[0].push_back(i);
    rows.push_back({rank - 1});
    return {b.create<memref::CollapseShapeOp>(loc, a, rows),
            collapsedOutput(b, loc, c, rows)};
  };
  // (packedPanel decided with matmulKCacheTiled whether the epilogue may
  // go into the tiles: the split must follow it.)
  if (int64_t panel = packedPanel(g, mm, vectorBits)) {
    // One matmul per panel of B (and C's columns); threads take panels.
    Value packed = constantGlobal(bm)
                       ? packedPanels(b, loc, bm, mm.transB, panel)
                       : runTimePanels(b, loc, bm, panel);
    Value a2 = a, c2 = c;
    if (foldsBatch(g, mm))
      std::tie(a2, c2) = foldBatch();
    int64_t m = matmulRows(g, mm), n = ranges[mm.n], k = ranges[mm.k];
    int64_t block = panelRowBlock(g, mm, panel, vectorBits);
    // The matmul of `rows` rows from `row` on and `width` columns of panel
    // `p`.
    auto panelMatmul = [&](OpBuilder &nb, OpFoldResult row, int64_t rows,
                           OpFoldResult p, int64_t width) {
      Value col = nb.create<arith::MulIOp>(
          loc, getValueOrCreateConstantIndexOp(nb, loc, p),
          nb.create<arith::ConstantIndexOp>(loc, panel));
      auto view = [&](Value v, OpFoldResult r0, OpFoldResult c0, int64_t nr,
                      int64_t nc) -> Value {
        return nb.create<memref::SubViewOp>(
            loc, v, ArrayRef<OpFoldResult>{r0, c0},
            ArrayRef<OpFoldResult>{nb.getIndexAttr(nr), nb.getIndexAttr(nc)},
            ArrayRef<OpFoldResult>{nb.getIndexAttr(1), nb.getIndexAttr(1)});
      };
      Value bp = subMatrix(nb, loc, packed, {p, std::nullopt, std::nullopt});
      if (width != panel)
        bp = view(bp, nb.getIndexAttr(0), nb.getIndexAttr(0), k, width);
      // (Row blocks only without transA: A's rows are then its rows.)
      Value ar = rows == m ? a2 : view(a2, row, nb.getIndexAttr(0), rows, k);
      Operation *op =
          emitMatmul(nb, loc, ar, bp, view(c2, row, col, rows, width),
                     mm.transA, false, nextId);
      op->setAttr(kPanelB, nb.getUnitAttr());
      if (block)
        op->setAttr(kPanelRows, nb.getUnitAttr());
      if (noCacheTiles)
        op->setAttr(kNoCacheTiles, nb.getUnitAttr());
    };
    // Every panel's matmul on `rows` rows: a loop over the whole panels,
    // then one on the columns of the last, padded panel.
    auto panels = [&](OpBuilder &nb, OpFoldResult row, int64_t rows) {
      Operation *loop = forEachBatch(
          nb, loc, {n / panel}, [&](OpBuilder &pb, ArrayRef<OpFoldResult> p) {
            panelMatmul(pb, row, rows, p[0], panel);
          });
      if (n % panel)
        panelMatmul(nb, row, rows, nb.getIndexAttr(n / panel), n % panel);
      return loop;
    };
    if (block) {
      // Threads take blocks of rows, each every panel; the rows past the
      // last whole block run after them.
      Operation *loop = forEachBatch(
          b, loc, {m / block}, [&](OpBuilder &nb, ArrayRef<OpFoldResult> r) {
            Value row = nb.create<arith::MulIOp>(
                loc, getValueOrCreateConstantIndexOp(nb, loc, r[0]),
                nb.create<arith::ConstantIndexOp>(loc, block));
            panels(nb, row, block);
          });
      if (m % block)
        panels(b, b.getIndexAttr(m - m % block), m % block);
      markParallel(loop, kParallelMultiplyAdds,
                   block * llvm::divideCeil(n, panel) * panel * k);
    } else {
      // Threads take panels. (A GEMV's cost is reading its weights: split
      // by their size.)
      if (memref::GlobalOp global = constantGlobal(packed))
        global->setAttr(kPanelsStreamed, b.getUnitAttr());
      Operation *loop = panels(b, b.getIndexAttr(0), m);
      bool gemv = m <= 2;
      int64_t threshold = gemv ? kParallelWeights : kParallelMultiplyAdds;
      if ((gemv ? n * k : m * n * k) >= threshold)
        markParallel(loop, threshold, (gemv ? 1 : m) * panel * k);
    }
    g.erase();
    return c2;
  }
  if (foldsBatch(g, mm)) {
    auto [a2, c2] = foldBatch();
    SmallVector<std::optional<OpFoldResult>> at;
    for (AffineExpr e : maps[1].getResults())
      at.push_back(dimOf(e) ? std::optional<OpFoldResult>() : b.getIndexAttr(0));
    Operation *m = emitMatmul(b, loc, a2, subMatrix(b, loc, bm, at), c2, false, mm.transB, nextId);
    if (noCacheTiles)
      m->setAttr(kNoCacheTiles, b.getUnitAttr());
    g.erase();
    return c2;
  }
  // The batch elements are independent (attention's heads): threads take
  // them when the whole has enough work, `grain` at least each.
  Operation *outer = forEachBatch(
      b, loc, extents, [&](OpBuilder &nb, ArrayRef<OpFoldResult> ivs) {
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
        Value bView = view(bm, maps[1]);
        bool transB = mm.transB;
        // A transposed B (attention's scores, Q K^T) is copied into
        // [k, n] first: read transposed, each k step of a register tile
        // gathered its columns a lane at a time (bert_dyn's 128 x 128 x 64
        // scores took 3.4 times the 128 x 64 x 128 product after them).
        // Not for a few rows (a decode step's one query), which read B
        // about once: the copy would double that.
        if (transB && !mm.transA && ranges[mm.m] >= 16) {
          auto bt = cast<MemRefType>(bView.getType());
          if (bt.hasStaticShape()) {
            Value packed = nb.create<memref::AllocOp>(
                loc, MemRefType::get({bt.getDimSize(1), bt.getDimSize(0)},
                                     bt.getElementType()));
            nb.create<linalg::TransposeOp>(loc, bView, packed,
                                           ArrayRef<int64_t>{1, 0});
            bView = packed;
            transB = false;
          }
        }
        Operation *m = emitMatmul(nb, loc, view(a, maps[0]), bView,
                                  view(c, maps[2]), mm.transA, transB, nextId);
        if (noCacheTiles)
          m->setAttr(kNoCacheTiles, nb.getUnitAttr());
      });
  int64_t perBatch = ranges[mm.m] * ranges[mm.n] * ranges[mm.k], batches = 1;
  for (int64_t e : extents)
    batches *= e;
  if (perBatch * batches >= kParallelMultiplyAdds)
    markParallel(outer, kParallelMultiplyAdds, perBatch);
  g.erase();
  return c;
}

/// A matmul-like f32 generic on buffers some of whose loops have run-time
/// extents (rows = batch x sequence; attention's heads and sequence
/// lengths).
std::optional<MatmulMatch> matchRuntimeContraction(linalg::GenericOp g) {
  if (!isF32BufferGeneric(g) || !isMulAddBody(g))
    return std::nullopt;
  auto mm = matchMatmul(g);
  SmallVector<int64_t> ranges = g.getStaticLoopRanges();
  if (!mm || llvm::none_of(ranges, [](int64_t r) { return ShapedType::isDynamic(r); }))
    return std::nullopt;
  return mm;
}

linalg::GenericOp copyAlong(OpBuilder &vb, linalg::GenericOp g, unsigned d,
                            Value at, OpFoldResult extent) {
  Location loc = g.getLoc();
  SmallVector<Value> operands;
  for (auto [v, map] : llvm::zip(g->getOperands(), g.getIndexingMapsArray())) {
    auto t = cast<MemRefType>(v.getType());
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (unsigned j = 0; j < map.getNumResults(); ++j) {
      bool along = dimOf(map.getResult(j)) == d;
      offsets.push_back(along ? OpFoldResult(at) : vb.getIndexAttr(0));
      sizes.push_back(along ? extent
                      : t.isDynamicDim(j)
                          ? OpFoldResult(vb.create<memref::DimOp>(loc, v, j))
                          : vb.getIndexAttr(t.getDimSize(j)));
      strides.push_back(vb.getIndexAttr(1));
    }
    operands.push_back(
        vb.create<memref::SubViewOp>(loc, v, offsets, sizes, strides));
  }
  Operation *copy = vb.clone(*g);
  copy->setOperands(operands);
  return cast<linalg::GenericOp>(copy);
}

/// Loop d's extent in `g` and its largest multiple of `size`.
static std::pair<Value, Value> extentAndFull(OpBuilder &b, linalg::GenericOp g,
                                             unsigned d, int64_t size) {
  Location loc = g.getLoc();
  Value total;
  for (auto [v, map] : llvm::zip(g->getOperands(), g.getIndexingMapsArray()))
    if (auto p = positionOf(map, d); p && !total)
      total = b.create<memref::DimOp>(loc, v, *p);
  Value step = b.create<arith::ConstantIndexOp>(loc, size);
  Value full = size == 1
                   ? total
                   : (Value)b.create<arith::MulIOp>(
                         loc, b.create<arith::DivUIOp>(loc, total, step), step);
  return {total, full};
}

/// Splits loop `d` of `g` into blocks of `size`: a loop over copies of `g`
/// on views that are `size` long along it (returned first), then, for
/// size > 1, one copy on what is left (returned second, of run-time
/// extent), which stays naive loops unless split further. The threads'
/// grain counts each other loop of run-time extent as `runtimeExtent`.
std::pair<linalg::GenericOp, linalg::GenericOp>
blockLoop(linalg::GenericOp g, unsigned d, int64_t size,
          int64_t runtimeExtent = 1) {
  OpBuilder b(g);
  Location loc = g.getLoc();
  auto [total, full] = extentAndFull(b, g, d, size);
  Value step = b.create<arith::ConstantIndexOp>(loc, size);
  auto loop = b.create<scf::ForOp>(loc, b.create<arith::ConstantIndexOp>(loc, 0), full, step);
  // Blocks along a parallel loop are independent: threads take them, at
  // least `grain` blocks each so that a thread's share pays for its
  // dispatch.
  if (g.getIteratorTypesArray()[d] == utils::IteratorType::parallel) {
    int64_t perBlock = size;
    SmallVector<int64_t> ranges = g.getStaticLoopRanges();
    for (auto [i, r] : llvm::enumerate(ranges))
      if (i != d)
        perBlock *= ShapedType::isDynamic(r) ? runtimeExtent : r;
    bool contraction = g.getNumReductionLoops() > 0;
    if (contraction)
      markParallel(loop, kParallelMultiplyAdds, perBlock);
    else
      markParallel(loop, kParallelWork, perBlock * iterationCost(g));
  }
  OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
  linalg::GenericOp inner =
      copyAlong(lb, g, d, loop.getInductionVar(), lb.getIndexAttr(size));
  linalg::GenericOp rest;
  if (size > 1)
    rest = copyAlong(b, g, d, full,
                     b.create<arith::SubIOp>(loc, total, full).getResult());
  g.erase();
  return {inner, rest};
}

/// The last columns of a contraction: `g` with parallel loop d cut at its
/// largest multiple of `size` (the copy on [0, full) returned), the rest,
/// under `size` long, on static buffers `size` long along d: the operands
/// d indexes copied in (inputs zero-filled past the rest), g's copy there
/// on static sizes (the register tiles take it whole, where blocks of 8,
/// 4 and 1 columns left the last one scalar), the output copied back;
/// nothing when the rest is empty. Null (g untouched) unless every other
/// dim of the operands is static and g writes one output.
static linalg::GenericOp padLastBlock(linalg::GenericOp g, unsigned d,
                                      int64_t size) {
  if (g.getNumDpsInits() != 1)
    return {};
  for (auto [v, map] : llvm::zip(g->getOperands(), g.getIndexingMapsArray())) {
    auto t = cast<MemRefType>(v.getType());
    for (unsigned j = 0; j < map.getNumResults(); ++j)
      if (t.isDynamicDim(j) && dimOf(map.getResult(j)) != d)
        return {};
  }
  OpBuilder b(g);
  Location loc = g.getLoc();
  auto [total, full] = extentAndFull(b, g, d, size);
  Value rest = b.create<arith::SubIOp>(loc, total, full);
  linalg::GenericOp head =
      copyAlong(b, g, d, b.create<arith::ConstantIndexOp>(loc, 0), full);
  linalg::GenericOp tail = copyAlong(b, g, d, full, rest);
  auto nonEmpty = b.create<scf::IfOp>(
      loc,
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ugt, rest,
                              b.create<arith::ConstantIndexOp>(loc, 0)),
      /*withElseRegion=*/false);
  OpBuilder ib = nonEmpty.getThenBodyBuilder();
  SmallVector<Value> operands;
  Value outView, out;
  for (OpOperand &o : tail->getOpOperands()) {
    Value v = o.get();
    auto p = positionOf(tail.getMatchingIndexingMap(&o), d);
    if (!p) {
      operands.push_back(v);
      continue;
    }
    auto t = cast<MemRefType>(v.getType());
    SmallVector<int64_t> shape(t.getShape());
    shape[*p] = size;
    Value buf = ib.create<memref::AllocOp>(
        loc, MemRefType::get(shape, t.getElementType()));
    bool isOut = tail.isDpsInit(&o);
    if (!isOut)
      ib.create<linalg::FillOp>(
          loc,
          ib.create<arith::ConstantOp>(loc, ib.getZeroAttr(t.getElementType()))
              .getResult(),
          buf);
    SmallVector<OpFoldResult> offsets(shape.size(), ib.getIndexAttr(0)), sizes,
        strides(shape.size(), ib.getIndexAttr(1));
    for (auto [j, e] : llvm::enumerate(shape))
      sizes.push_back(j == *p ? OpFoldResult(rest) : ib.getIndexAttr(e));
    Value view =
        ib.create<memref::SubViewOp>(loc, buf, offsets, sizes, strides);
    ib.create<memref::CopyOp>(loc, v, view);
    if (isOut) {
      outView = view;
      out = v;
    }
    operands.push_back(buf);
  }
  Operation *padded = ib.clone(*tail);
  padded->setOperands(operands);
  ib.create<memref::CopyOp>(loc, outView, out);
  tail.erase();
  g.erase();
  return head;
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
    // The columns past the last whole 16 as one padded static block.
    bool padded = false;
    if (linalg::GenericOp head = padLastBlock(g, mm.n, 16)) {
      g = head;
      padded = true;
    }
    // A convolution's output positions: wide blocks for the cache tiles,
    // then narrower ones (layer 4 of a ResNet has 49 at batch 1). Each
    // block reads all the weights: in blocks of rows that stay in L2 across
    // the column blocks (16 rows of a 3x3 conv over 512 channels).
    int64_t rows = 64;
    while (rows > 8 && rows * ranges[mm.k] * 4 > (512 << 10))
      rows /= 2;
    if (!ShapedType::isDynamic(ranges[mm.m]) && !ShapedType::isDynamic(ranges[mm.k]) &&
        ranges[mm.m] > rows && ranges[mm.m] % rows == 0) {
      // (A conv's positions counted as 64: at 1, the blocks of a 14x14
      // or 7x7 layer, the only split its one block of columns has, fell
      // under the grain and ran on one thread.)
      auto [inner, rest] = blockLoop(g, mm.m, rows, /*runtimeExtent=*/64);
      rest.erase(); // (no rows left)
      g = inner;
    }
    // Whole k loops where a block's patches stay in L2 (as the static
    // blocks); a longer k loop keeps cache tiles.
    if (!ShapedType::isDynamic(ranges[mm.k]) && ranges[mm.k] <= 1024)
      g->setAttr(kNoCacheTiles, UnitAttr::get(g.getContext()));
    // (Halving down to 16: a wide block reuses each weight tile across more
    // register tiles.)
    static constexpr int64_t kSizes[] = {256, 128, 64, 32, 16, 8, 4, 1};
    linalg::GenericOp left = g;
    for (int64_t size : ArrayRef(kSizes).take_front(padded ? 5 : 8))
      left = blockLoop(left, mm.n, size).second;
    if (padded && left)
      left.erase(); // (a multiple of 16: none left)
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
  // (Values it captures must exist where the matmul stores its tiles.)
  if (!isScalarBodyBefore(body, g))
    return {};
  return placeEpilogueOutput(g, e) ? e : linalg::GenericOp();
}

bool placeEpilogueOutput(linalg::GenericOp g, linalg::GenericOp e) {
  Value c = g.getDpsInits()[0], out = e.getDpsInits()[0];
  // Unless the epilogue writes C in place, nothing else may read C after
  // it (the fused code never stores the values before the epilogue).
  if (out != c)
    for (Operation *user : c.getUsers())
      if (user != g && user != e && !isa<memref::DeallocOp>(user) &&
          !(user->getBlock() == e->getBlock() && user->isBeforeInBlock(g)))
        return false;
  // The tiles are stored where the contraction was: the epilogue's
  // output must exist there (its allocation, placed before the epilogue,
  // moves up).
  if (Operation *def = out.getDefiningOp();
      def && def->getBlock() == g->getBlock() && !def->isBeforeInBlock(g)) {
    if (!(isa<memref::AllocOp>(def) && def->getNumOperands() == 0))
      return false;
    def->moveBefore(g);
  }
  return true;
}

bool isScalarBodyBefore(Block &body, Operation *at) {
  for (Operation &op : body.without_terminator()) {
    StringRef d = op.getDialect() ? op.getDialect()->getNamespace() : "";
    if ((d != "arith" && d != "math") || op.getNumRegions() ||
        op.getNumResults() != 1 || !op.getResult(0).getType().isIntOrFloat())
      return false;
    for (Value v : op.getOperands())
      if (Operation *def = v.getDefiningOp();
          def && def->getBlock() == at->getBlock() && !def->isBeforeInBlock(at))
        return false;
  }
  return true;
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

Value asVectorOf(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> shape) {
  if (shape.empty() || isa<VectorType>(v.getType()))
    return v;
  return b.create<vector::BroadcastOp>(loc, VectorType::get(shape, v.getType()),
                                       v);
}

void widenOp(OpBuilder &b, Location loc, Operation &op, IRMapping &map,
             ArrayRef<int64_t> shape) {
  Type t = op.getResult(0).getType();
  OperationState st(loc, op.getName());
  for (Value v : op.getOperands())
    st.addOperands(asVectorOf(b, loc, map.lookupOrDefault(v), shape));
  st.addAttributes(op.getAttrs());
  st.addTypes(shape.empty() ? t : VectorType::get(shape, t));
  map.map(op.getResult(0), b.create(st)->getResult(0));
}

Value widenBody(
    OpBuilder &b, Location loc, Block &body, IRMapping &map,
    ArrayRef<int64_t> shape,
    function_ref<bool(OpBuilder &, Operation &, IRMapping &)> special) {
  for (Operation &op : body.without_terminator()) {
    // Constants stay scalars (broadcast where used).
    if (isa<arith::ConstantOp>(op)) {
      map.map(op.getResult(0), b.clone(op)->getResult(0));
      continue;
    }
    if (special && special(b, op, map))
      continue;
    widenOp(b, loc, op, map, shape);
  }
  return asVectorOf(
      b, loc, map.lookupOrDefault(body.getTerminator()->getOperand(0)), shape);
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
  bool hoisted =
      !writes.empty() && llvm::all_of(writes, [](vector::TransferWriteOp w) {
        return !besideMultiplyAdds(w);
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
    IRMapping map;
    for (unsigned i = 0; i < e.getNumDpsInputs(); ++i)
      map.map(body.getArgument(i), w.getVector());
    Value y = widenBody(b, l, body, map, vt.getShape());
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

void eraseIfWriteOnly(Value buf) {
  auto alloc = buf.getDefiningOp<memref::AllocOp>();
  if (!alloc || !llvm::all_of(buf.getUsers(), [](Operation *u) {
        return isa<linalg::FillOp, memref::DeallocOp>(u);
      }))
    return;
  for (Operation *u : llvm::make_early_inc_range(buf.getUsers()))
    u->erase();
  alloc->erase();
}

/// Marks the loop of a transform handle kiln.parallel (kParallelAttr):
/// its iterations run on the session's threads (kiln-outline-loops).
std::string annotateParallel(const std::string &handle) {
  return "  transform.annotate " + handle + " \"" + std::string(kParallelAttr) +
         "\" : !transform.any_op\n";
}

/// The same with grain kParallelEvenGrain: the loop splits only into equal
/// shares for the run's thread count (else the loops in it split).
std::string annotateParallelEven(const std::string &handle) {
  std::string p = "%even_" + handle.substr(1);
  std::replace(p.begin(), p.end(), '#', '_');
  return "  " + p + " = transform.param.constant " +
         std::to_string(kParallelEvenGrain) +
         " : i64 -> !transform.param<i64>\n  transform.annotate " + handle +
         " \"" + std::string(kParallelAttr) + "\" = " + p +
         " : !transform.any_op, !transform.param<i64>\n";
}

std::pair<int64_t, int64_t> registerTile(int64_t M, int64_t N,
                                         int64_t vectorBits, bool panelB,
                                         bool rowBlock) {
  // The accumulator tile: 8 x 2 of AVX-512's 32 vector registers; 6 x 2
  // of AVX2's 16, with two for B and one for A's broadcast (8 x 2 would
  // spill every step). 6 rows load 8 vectors per 12 multiply-adds, where
  // 4 rows loaded 6 per 8 and kept just the 8 chains that two FMA units of
  // latency 4 need: a conv's matmul of 128 x 784 x 1152 ran 18% faster,
  // 960 -> 160 and 192 -> 32 1x1 convs 11% and 6%. But on packed panels
  // (A is then the activations, streamed once per panel) 4 rows stayed
  // faster: 6 were 2-10% slower on a BERT-base FFN and on 784 x 1152 x 128.
  bool wide = vectorBits >= 512;
  int64_t tm = std::min<int64_t>(wide ? 8 : (panelB ? 4 : 6), M),
          tn = std::min<int64_t>(wide ? 32 : 16, N);
  // A row block's tiles (kPanelRows: no cache tiles, no prefetches) of 64
  // rows or more take 14 rows, 28 of the 32 registers: 16 FMAs per 10
  // loads became 28 per 16 (1024^3 6-8% faster, 2048^3 10%, 512^3 4-8%,
  // though 128-row blocks leave 2 rows to a tile of their own; 12 rows
  // gained less). Elsewhere 12 or 14 rows ran 1.4-2.9x slower (their cache
  // tiles and prefetches); smaller blocks would leave more rows over.
  // Packed panels' tiles of 64 rows or more take 14 rows too, now that
  // their prefetches come after the loads (before them, LLVM kept all 14
  // broadcasts live and spilled: 1.6-1.9x slower): 150 x 384 x 1536 and
  // 150 x 1536 x 384 MatMuls 9-12% faster, whisper_enc_lite 9%.
  if (wide && (rowBlock || panelB) && M >= 64)
    tm = 14;
  // A 16-wide tile when it leaves a smaller remainder (49 = 3 x 16 + 1):
  // the peeled remainder runs far slower than full tiles.
  if (wide && N > 32 && N % 32 > N % 16)
    tn = 16;
  // One or two rows (a classifier's GEMV): a 32-wide tile is one FMA chain
  // per row, bound by its latency; eight vectors wide keep eight in flight.
  // Two rows of AVX2's eight would take all 16 registers and spill: four
  // each (2 x 4096 x 4096 and 2 x 768 x 3072 MatMuls 1.1-1.9x faster).
  int64_t gemv = wide ? 128 : (M == 2 ? 32 : 64);
  if (M <= 2 && N >= gemv)
    tn = gemv;
  // Whole vectors: a tile between one and two vectors wide that is not a
  // multiple of one (12 of AVX2's 8 lanes) becomes a 12-lane vector that
  // LLVM lowers about ten times slower than 8 + 4 (a 48 x 128 x 12 MatMul,
  // a 12-class classifier: 23 us, 2 us with 8 + a peeled 4).
  int64_t lanes = vectorBits / 32;
  if (tn > lanes && tn % lanes)
    tn -= tn % lanes;
  return {tm, tn};
}

std::string scheduleFor(linalg::LinalgOp op, int64_t id, int64_t vectorBits) {
  if (auto g = dyn_cast<linalg::GenericOp>(op.getOperation()); g && isVectorizableElementwise(g))
    return elementwiseScheduleFor(op, id, vectorBits);
  SmallVector<int64_t> r = op.getStaticLoopRanges(); // m, n, k
  int64_t M = r[0], N = r[1], K = r[2];
  std::string s, i = std::to_string(id);
  std::string any = "!transform.any_op";
  s += "  %m" + i + " = transform.structured.match ops{[\"" +
       op->getName().getStringRef().str() + "\"]} attributes{" + kId.str() + " = " + i +
       " : i64} in %root : (" + any + ") -> " + any + "\n";
  std::string target = "%m" + i;
  // Columns past the last whole vector, where the register tiles would
  // leave a remainder wider than a vector and not a multiple of one (28 =
  // 16 + 12): a 12-lane vector lowers about ten times slower than 8 + 4,
  // and a second tiling inside the k loop would keep C out of registers.
  // Split them off before any tiling: the rest is whole vectors, the
  // split-off part one narrow tile (48 x 128 x 28: 26 -> 4 us).
  int64_t lanes = vectorBits / 32, narrow = 0;
  {
    int64_t rest = N % registerTile(M, N, vectorBits, op->hasAttr(kPanelB),
                                    op->hasAttr(kPanelRows))
                           .second;
    if (rest > lanes && rest % lanes) {
      narrow = N % lanes;
      N -= narrow;
      s += "  %sp" + i + ":2 = transform.structured.split " + target +
           " after " + std::to_string(N) + " { dimension = 1 } : " + any + "\n";
      target = "%sp" + i + "#0";
    }
  }
  // Cache tiles only for large problems, and only sizes that divide the
  // shape, so that the register tiles inside keep static bounds.
  int64_t cm = 0, cn = 0, ck = 0;
  if (!op->hasAttr(kNoCacheTiles))
    cacheTiles(M, N, K, cm, cn, ck, op->hasAttr(kPanelRows));
  // (A matrix-vector product is bound by reading its weights: split, each
  // core streams half of them, from its own L2 where they fit.)
  bool parallel = M * N * K >= kParallelMultiplyAdds || N * K >= kParallelWeights;
  int64_t em = 0, en = cn ? cn : N, tm = 0, tn = 0;
  auto registerTiles = [&] {
    em = cm ? cm : M;
    std::tie(tm, tn) = registerTile(em, en, vectorBits, op->hasAttr(kPanelB),
                                    op->hasAttr(kPanelRows));
  };
  registerTiles();
  // The loops threads may split, outermost first (never k: it would run
  // the partial sums at once), with their trips and the multiply-adds each
  // dispatch covers (an inner loop is dispatched once per iteration of
  // those around it). (The cache loops are m, n, k in order, those with a
  // tile.)
  int64_t ek = ck ? ck : K;
  struct Candidate {
    std::string handle;
    int64_t trips, work;
  };
  auto candidates = [&](int64_t rows) {
    SmallVector<Candidate> loops;
    if (cm)
      loops.push_back({"%cl" + i + "#0", M / cm, M * N * K});
    if (cn)
      loops.push_back(
          {"%cl" + i + "#" + std::to_string(cm ? 1 : 0), N / cn, em * N * K});
    loops.push_back({"%l" + i + "#0", em / rows, em * en * ek});
    loops.push_back({"%l" + i + "#1", en / tn, rows * en * ek});
    return loops;
  };
  // The first with enough ranges that 2 to 8 threads get even shares and
  // enough work per dispatch, else the first with two ranges at least:
  // three blocks on two threads would leave one idle a third of the time.
  auto pickOf = [](ArrayRef<Candidate> loops) -> int64_t {
    const Candidate *pick = llvm::find_if(loops, [](const Candidate &c) {
      return c.trips >= kParallelEvenTrips &&
             c.work >= kParallelDispatchMultiplyAdds;
    });
    if (pick == loops.end())
      pick =
          llvm::find_if(loops, [](const Candidate &c) { return c.trips >= 2; });
    return pick == loops.end() ? -1 : pick - loops.begin();
  };
  // A cache block loop around the split loop that the runtime splits
  // instead when its few blocks divide among the threads.
  auto splitsEvenly = [](const Candidate &c) {
    return c.trips >= 2 && StringRef(c.handle).starts_with("%cl");
  };
  SmallVector<Candidate> loops;
  int64_t pick = -1;
  if (parallel) {
    loops = candidates(tm);
    pick = pickOf(loops);
    // Threads would take a few row blocks of an odd count (no loop inside
    // has the ranges), two threads 2:1: an even count of blocks at most as
    // tall instead (mobilenet_v2's 32 -> 192 1x1 convs on 28x28 maps: 3
    // blocks of 64 rows, now 4 of 48).
    int64_t blocks = cm ? M / cm : 0;
    if (pick == 0 && cm && blocks % 2 && blocks < kParallelEvenTrips) {
      // (Blocks of whole register tiles first: AVX2's 6-row tiles would
      // leave rows of a 40-row block to peel.)
      int64_t even = 0;
      for (int64_t t = cm - 8; t >= 8; t -= 8)
        if (M % t == 0 && (M / t) % 2 == 0 && (!even || t % tm == 0)) {
          even = t;
          if (t % tm == 0)
            break;
        }
      if (even) {
        cm = even;
        registerTiles();
        loops = candidates(tm);
        pick = pickOf(loops);
      }
    }
    // Rows left over from the split row tiles are peeled and run after
    // them on one thread (32 rows in tiles of 6: 3 and 2 tiles, then 2
    // rows); where 4-row tiles divide the rows, those split evenly. (Not
    // under blocks of rows that two threads split instead: each then runs
    // its own block's leftover rows, nor inside a loop threads already
    // split, as a conv's im2col blocks.)
    bool leftoverStaysLocal = false;
    for (Operation *p = op->getParentOp(); p && !leftoverStaysLocal;
         p = p->getParentOp())
      leftoverStaysLocal = p->hasAttr(kParallelAttr);
    for (int64_t c = 0; c < pick; ++c)
      leftoverStaysLocal |= splitsEvenly(loops[c]);
    if (pick >= 0 && loops[pick].handle == "%l" + i + "#0" && em % tm &&
        tm > 4 && em % 4 == 0 && !leftoverStaysLocal) {
      tm = 4;
      loops = candidates(tm);
      pick = pickOf(loops);
    }
  }
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
  s += "  %t" + i + ", %l" + i + ":3 = transform.structured.tile_using_for " +
       target + " tile_sizes [" + std::to_string(tm) + ", " +
       std::to_string(tn) + ", 1] : (" + any + ") -> (" + any + ", " + any +
       ", " + any + ", " + any + ")\n";
  if (pick >= 0) {
    s += annotateParallel(loops[pick].handle);
    // Cache block loops around it with a few trips split instead when
    // those divide among the run's threads (two blocks of rows on two
    // threads): one dispatch, not one per block around the split loop
    // (a BERT-base FFN's second matmul: 144 dispatches; at 2 threads
    // 7-15% faster). The register tile loops stay in their own function.
    for (int64_t c = 0; c < pick; ++c)
      if (splitsEvenly(loops[c]))
        s += annotateParallelEven(loops[c].handle);
  }
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
  if (narrow) {
    std::string h = "%sr" + i;
    s += "  " + h + ", " + h + "l:2 = transform.structured.tile_using_for %sp" +
         i + "#1 tile_sizes [" + std::to_string(tm) + ", 0, 1] : (" + any +
         ") -> (" + any + ", " + any + ", " + any + ")\n";
    if (M % tm) {
      s += "  " + h + "c = transform.cast " + h + "l#0 : " + any +
           " to !transform.op<\"scf.for\">\n";
      s += "  " + h + "a, " + h + "b = transform.loop.peel " + h +
           "c : (!transform.op<\"scf.for\">) -> (" + any + ", " + any + ")\n";
    }
  }
  return s;
}

std::string buildScript(ArrayRef<std::pair<linalg::LinalgOp, int64_t>> ops,
                        int64_t vectorBits) {
  std::string s =
      "module attributes {transform.with_named_sequence} {\n"
      "transform.named_sequence @__transform_main(%root: !transform.any_op "
      "{transform.readonly}) {\n";
  for (auto [op, id] : ops)
    s += scheduleFor(op, id, vectorBits);
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
      std::string script = buildScript(marked, vectorBits);
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
    if (conv && matmul) {
      SmallVector<linalg::GenericOp> convs;
      module.walk([&](linalg::GenericOp g) {
        if (convGroups(g) == 1)
          convs.push_back(g);
      });
      for (linalg::GenericOp g : convs) {
        if (rewriteDirectConv(g, vectorBits))
          ++numDirectConvs;
        else
          numTransposedConvs += transposeSmallConv(g, vectorBits);
      }
    }
    SmallVector<linalg::GenericOp> generics, runtimeDepthwise, pools,
        eightBitDepthwise;
    module.walk([&](linalg::GenericOp g) {
      if (isCandidate(g))
        generics.push_back(g);
      else if (conv && isRuntimeDepthwise(g))
        runtimeDepthwise.push_back(g);
      else if (conv && matchPool(g))
        pools.push_back(g);
      else if (conv && isEightBitDepthwise(g))
        eightBitDepthwise.push_back(g);
    });
    // An elementwise epilogue (the fused activation) found before the
    // rewrite is applied to each C tile before it is stored.
    SmallVector<std::tuple<linalg::GenericOp, Value, Operation *>> epilogues;
    // Convs whose accumulators start from their output's bias or fill.
    SmallVector<AccumulatorInit> accumulatorInits;
    int64_t depthwise = 0;
    for (linalg::GenericOp g : generics) {
      if (auto mm = matchMatmul(g)) {
        if (!matmul)
          continue;
        linalg::GenericOp e = matmulKCacheTiled(g, *mm, vectorBits)
                                  ? linalg::GenericOp()
                                  : findEpilogue(g);
        Operation *before = stableOpBefore(g);
        std::optional<AccumulatorInit> acc =
            markMatmulAccumulatorInit(g, *mm, vectorBits);
        Value c = rewriteMatmul(g, *mm, vectorBits, nextId);
        if (e)
          epilogues.push_back({e, c, before});
        if (acc) {
          acc->c = c;
          accumulatorInits.push_back(*acc);
        }
      } else if (auto dm = conv ? matchDepthwise(g) : std::nullopt) {
        // (No k loop to split: the taps stay in registers.)
        linalg::GenericOp e = findEpilogue(g);
        Value c = g.getDpsInits()[0];
        // (The ops before g that it replaces go: the position comes after.)
        std::optional<Operation *> strided =
            rewriteStridedDepthwise(g, *dm, vectorBits);
        Operation *before =
            strided ? *strided : rewriteDepthwise(g, *dm, vectorBits);
        ++depthwise;
        // Now, while its stores are still transfer_writes.
        if (e)
          applyEpilogue(e, c, before);
      } else if (int64_t groups = conv ? convGroups(g) : 0) {
        linalg::GenericOp e = convKCacheTiled(g, groups) ? linalg::GenericOp() : findEpilogue(g);
        Operation *before = stableOpBefore(g);
        std::optional<AccumulatorInit> acc = markAccumulatorInit(g, groups);
        Value c = rewriteConv(g, groups, nextId);
        if (e)
          epilogues.push_back({e, c, before});
        if (acc) {
          acc->c = c;
          accumulatorInits.push_back(*acc);
        }
      }
    }
    // Depthwise convs of run-time size: the same vector loops, with the
    // rows' shape in registers picked at run time, from the bias and
    // through the fused activation as well.
    for (linalg::GenericOp g : runtimeDepthwise) {
      linalg::GenericOp e = findEpilogue(g);
      Value c = g.getDpsInits()[0];
      Operation *before = rewriteDepthwise(g, *matchDepthwise(g), vectorBits);
      ++depthwise;
      if (e)
        applyEpilogue(e, c, before);
    }
    // 8-bit depthwise convs: the same loops in f32, the requantization
    // (or what else reads the i32 sums first) applied in the store.
    for (linalg::GenericOp g : eightBitDepthwise) {
      std::optional<ConvEpilogue> e = matchConvEpilogue(g, g.getDpsInits()[0]);
      rewriteDepthwise(g, *matchDepthwise(g), vectorBits, /*isPool=*/false,
                       e ? &*e : nullptr);
      if (e)
        e->op.erase();
      ++depthwise;
      ++numEightBitDepthwise;
    }
    // For `kiln compile --report`.
    if (!eightBitDepthwise.empty())
      module->setAttr(
          "kiln.report.int8_depthwise",
          IntegerAttr::get(IntegerType::get(module.getContext(), 64),
                           eightBitDepthwise.size()));
    // Pools: the same loops, a max (or an average pool's add) for the
    // multiply-add.
    for (linalg::GenericOp g : pools) {
      DepthwiseMatch dm = *matchPool(g);
      if (!rewriteStridedMaxPool(g, dm, vectorBits))
        rewriteDepthwise(g, dm, vectorBits, /*isPool=*/true);
      ++depthwise;
    }
    // Buffers nothing reads any more: an 8-bit depthwise conv's i32 sums
    // (its epilogue stores instead), a shared zero or padded buffer that
    // convs started from by copy.
    SmallVector<Value> allocs;
    module.walk([&](memref::AllocOp a) { allocs.push_back(a.getResult()); });
    for (Value a : allocs)
      eraseIfWriteOnly(a);
    if (failed(applyMarked(module, depthwise != 0)))
      return signalPassFailure();
    numPanelPrefetches += prefetchPanels(module);
    // (The inits go after the epilogues: one may be an epilogue's anchor.)
    SmallVector<Operation *> unusedInits;
    for (const AccumulatorInit &a : accumulatorInits)
      if (startAccumulatorsFromInit(a)) {
        unusedInits.push_back(a.init.op);
        ++numAccumulatorsFromInit;
      }
    // Last first: an earlier epilogue may be a later one's position anchor.
    for (auto [e, c, before] : llvm::reverse(epilogues))
      applyEpilogue(e, c, before);
    for (Operation *op : unusedInits)
      op->erase();
    // (A shared zero buffer whose copies all went.)
    if (!unusedInits.empty()) {
      allocs.clear();
      module.walk([&](memref::AllocOp a) { allocs.push_back(a.getResult()); });
      for (Value a : allocs)
        eraseIfWriteOnly(a);
    }
    // Then the elementwise ops that are left (the epilogues are gone), in a
    // second schedule: the first one's position anchors must not move.
    if (elementwise) {
      // Run-time outer loops (LayerNorm or Softmax rows over a run-time
      // batch) become loops around blocks of one, which are static and
      // vectorize below. (Left whole, they stay scalar, and LLVM unrolls
      // their short static inner loops into long chains: 0.35 s of machine
      // scheduling per reduction of a tiny decoder.)
      SmallVector<std::pair<linalg::GenericOp, SmallVector<unsigned>>>
          runtimeRows;
      module.walk([&](linalg::GenericOp g) {
        if (SmallVector<unsigned> loops = runtimeOuterLoops(g); !loops.empty())
          runtimeRows.push_back({g, loops});
      });
      for (auto &[g, loops] : runtimeRows) {
        linalg::GenericOp block = g;
        for (unsigned d : loops)
          block = blockLoop(block, d, 1).first;
      }
      // Short trailing loops folded into one first (7 x 7 planes).
      SmallVector<linalg::GenericOp> shortInner;
      module.walk([&](linalg::GenericOp g) { shortInner.push_back(g); });
      for (linalg::GenericOp g : shortInner)
        collapseTrailingLoops(g);
      SmallVector<linalg::GenericOp> wholeReductions;
      module.walk([&](linalg::GenericOp g) { wholeReductions.push_back(g); });
      for (linalg::GenericOp g : wholeReductions)
        numSplitReductions += splitMinMaxReduction(g);
      SmallVector<linalg::GenericOp> gathers;
      module.walk([&](linalg::GenericOp g) { gathers.push_back(g); });
      for (linalg::GenericOp g : gathers)
        numRowGathers += rewriteRowGather(g);
      module.walk([&](linalg::GenericOp g) {
        if (isVectorizableElementwise(g)) {
          g->setAttr(kMark, UnitAttr::get(g.getContext()));
          g->setAttr(kId, IntegerAttr::get(IntegerType::get(g.getContext(), 64), nextId++));
        }
      });
      if (failed(applyMarked(module, false)))
        return signalPassFailure();
    }
    numVectorAccumulators += vectorAccumulators(module);
    module.walk([](Operation *op) {
      op->removeAttr(kMark);
      op->removeAttr(kId);
      op->removeAttr(kNoCacheTiles);
    });
  }
};

} // namespace vectorize
} // namespace kiln
