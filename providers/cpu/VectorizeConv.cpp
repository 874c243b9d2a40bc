//===- VectorizeConv.cpp - 2-D convolutions as im2col and matmuls ---------===//
//
// Part of kiln-cpu-vectorize-contractions: 2-D convolutions (group 1 or
// grouped, static shapes) as an im2col copy (vector row loads where x is
// read along its rows) and one matmul per image, or per block of output
// rows whose im2col stays in L2; a 1x1 stride-1 conv reads x as it lies.
//
//===----------------------------------------------------------------------===//
#include "passes/FusionUtils.h"
#include "passes/Passes.h"
#include "providers/cpu/Vectorize.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;

namespace kiln::vectorize {

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

/// The strides and dilations of a 2-D conv generic (loops n, m, c, kh, kw,
/// oh, ow, as the CPU lowers Conv and ConvInteger without groups), read off
/// its input map.
std::optional<ConvMatch> matchConv(linalg::GenericOp g) {
  using utils::IteratorType;
  if (g.getNumLoops() != 7 ||
      g.getIteratorTypesArray() !=
          SmallVector<IteratorType>{
              IteratorType::parallel, IteratorType::parallel,
              IteratorType::reduction, IteratorType::reduction,
              IteratorType::reduction, IteratorType::parallel,
              IteratorType::parallel})
    return std::nullopt;
  MLIRContext *ctx = g.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  if (maps[0].getNumResults() != 4 || maps[0].getNumSymbols() ||
      maps[1] != AffineMap::get(7, 0, {d(1), d(2), d(3), d(4)}, ctx) ||
      maps[2] != AffineMap::get(7, 0, {d(0), d(1), d(5), d(6)}, ctx))
    return std::nullopt;
  auto at = [&](unsigned loop, unsigned result) {
    SmallVector<int64_t> v(7, 0);
    v[loop] = 1;
    return maps[0].compose(v)[result];
  };
  ConvMatch cm{at(5, 2), at(6, 3), at(3, 2), at(4, 3)};
  AffineMap expect = AffineMap::get(
      7, 0,
      {d(0), d(2), d(5) * cm.sh + d(3) * cm.dh, d(6) * cm.sw + d(4) * cm.dw},
      ctx);
  if (maps[0] != expect)
    return std::nullopt;
  return cm;
}

/// The coefficient of dim `d` in the linear expression `e`; nullopt when
/// `e` is not linear in it.
static std::optional<int64_t> coefficientOf(AffineExpr e, unsigned d, unsigned numDims) {
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
static std::optional<int64_t> im2colRowStride(Value x, AffineMap xMap) {
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
static bool emitIm2colRows(OpBuilder &b, Location loc, Value x, Value col, AffineMap xMap,
                    ArrayRef<int64_t> r, ArrayRef<Value> xShift = {}) {
  constexpr int64_t kLanes = 16;
  std::optional<int64_t> sw = im2colRowStride(x, xMap);
  if (!sw)
    return false;
  Type f32 = b.getF32Type();
  // Threads take the rows of col (each writes its own) when there are
  // enough: the outermost loop below, marked kiln.parallel.
  int64_t work = r[0];
  for (int64_t e : r.drop_front(2))
    work *= e;
  Operation *outer = forEachBatch(
      b, loc, {r[0], r[2], r[3], r[4], r[5]},
      [&](OpBuilder &nb, ArrayRef<OpFoldResult> ivs) {
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
          at.push_back(nb.create<affine::AffineApplyOp>(
              loc, xMap.getSubMap({i}), xDims));
        auto rowMap = [&](int64_t rank) {
          return AffineMapAttr::get(
              AffineMap::getMinorIdentityMap(rank, 1, nb.getContext()));
        };
        auto inBounds = nb.getBoolArrayAttr({true});
        Value zero = nb.create<arith::ConstantOp>(loc, nb.getF32FloatAttr(0.0));
        // Loads and stores of power-of-two widths, else of whole 16-lane
        // vectors masked past the row's end: LLVM splits a 31- or 14-lane
        // vector into pieces of 8, 4, 2 and 1 lanes (a 7x7 stride-2 stem
        // conv's im2col: 9% of the conv).
        auto mask = [&](int64_t lanes, int64_t on) {
          return nb.create<vector::ConstantMaskOp>(
              loc, VectorType::get({lanes}, nb.getI1Type()),
              nb.getI64ArrayAttr({on}));
        };
        for (int64_t ow0 = 0; ow0 < r[6]; ow0 += kLanes) {
          int64_t len = std::min(kLanes, r[6] - ow0),
                  width = (len - 1) * *sw + 1;
          bool exact = llvm::isPowerOf2_64(width) && llvm::isPowerOf2_64(len);
          int64_t loaded = exact ? width : llvm::alignTo(width, kLanes);
          SmallVector<Value> from = at;
          from[3] = nb.create<arith::AddIOp>(
              loc, at[3], nb.create<arith::ConstantIndexOp>(loc, ow0 * *sw));
          auto loadedType = VectorType::get({loaded}, f32);
          Value v =
              exact ? nb.create<vector::TransferReadOp>(loc, loadedType, x,
                                                        from, rowMap(4), zero,
                                                        Value(), inBounds)
                          .getResult()
                    : nb.create<vector::MaskedLoadOp>(
                            loc, loadedType, x, from, mask(loaded, width),
                            nb.create<arith::ConstantOp>(
                                loc, DenseElementsAttr::get(loadedType, 0.0f)))
                          .getResult();
          int64_t stored = exact ? len : kLanes;
          SmallVector<int64_t> lanes;
          for (int64_t i = 0; i < stored; ++i)
            lanes.push_back(std::min(i * *sw, loaded - 1));
          if (loaded != stored || *sw > 1)
            v = nb.create<vector::ShuffleOp>(loc, v, v, lanes);
          SmallVector<Value> to(dims.begin(), dims.end() - 1);
          to.push_back(nb.create<arith::ConstantIndexOp>(loc, ow0));
          if (stored == len)
            nb.create<vector::TransferWriteOp>(loc, v, col, to, rowMap(6),
                                               Value(), inBounds);
          else
            nb.create<vector::MaskedStoreOp>(loc, col, to, mask(kLanes, len),
                                             v);
        }
      });
  if (work >= kParallelElements)
    markParallel(outer, 1, 1);
  return true;
}

/// A conv's x map over the im2col dims (n c kh kw oh ow): m taken as 0,
/// which for a grouped conv is the first group's channels.
static AffineMap im2colMap(linalg::GenericOp g) {
  MLIRContext *ctx = g.getContext();
  auto e = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  return simplifyAffineMap(g.getIndexingMapsArray()[0].replaceDimsAndSymbols(
      {e(0), getAffineConstantExpr(0, ctx), e(1), e(2), e(3), e(4), e(5)}, {}, 6, 0));
}

/// A 1x1 kernel with stride 1 reads x[n, c, oh, ow] as it lies: x is the
/// matrix already, no im2col copy.
static bool isDirectConv(linalg::GenericOp g) {
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

/// Output rows per im2col block of a large conv: the whole im2col matrix
/// (megabytes for a 56x56 output) would be written, then read by the
/// matmul a page per k step; a block of rows that stays in L2 is written
/// and read while hot. 0: one matrix for the whole output. (A block is
/// read once per 4 or 8 rows of weights: at up to half of a 512 KiB L2 it
/// stays there beside them; at 600 KiB it was streamed from L3, which two
/// cores share: resnet18 at 2 threads 4% slower.)
static int64_t im2colBlockRows(int64_t k, int64_t oh, int64_t ow) {
  constexpr int64_t kWholeMax = 1 << 20, kBlockMax = 300 << 10;
  if (k * oh * ow * 4 <= kWholeMax)
    return 0;
  // Blocks of whole 16-column register tiles where possible: a peeled
  // remainder column runs far slower; and an even count of them: threads
  // take blocks, and with an odd count the last is split in two, each
  // half im2col-ing it (a 224x224 stem conv: 8 blocks of 14 rows ran 10%
  // faster on one thread than 7 of 16 and the split).
  int64_t best = 0, whole = 0;
  for (int64_t rows = oh - 1; rows >= 1; --rows)
    if (oh % rows == 0 && k * rows * ow * 4 <= kBlockMax && rows * ow >= 64) {
      if (rows * ow % 16 == 0) {
        if ((oh / rows) % 2 == 0)
          return rows;
        if (!whole)
          whole = rows;
      }
      if (!best)
        best = rows;
    }
  return whole ? whole : best;
}


/// The output rows per im2col block that rewriteConv uses for `g` (0: no
/// blocks).
static int64_t convBlockRows(linalg::GenericOp g, int64_t groups) {
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
    // The blocks are independent: threads take them in parallel
    // (kiln.parallel on the outer loop), each im2col-ing into its own
    // buffer (kiln-plan-memory gives an allocation in a parallel loop
    // per-thread memory).
    SmallVector<int64_t> cr = {1, r[1], r[2], r[3], r[4], blockRows, r[6]};
    Value w2 = b.create<memref::CollapseShapeOp>(loc, w, SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
    int64_t cols = blockRows * r[6], perImage = r[5] / blockRows,
            blocks = r[0] * perImage;
    // An odd count of blocks would leave a thread idle for a block's time:
    // the last block's matmul then runs as two tasks on halves of the
    // output channels, each im2col-ing the block (a few % of its time).
    bool splitLast = blocks % 2 && r[1] % 8 == 0;
    auto idx = [&](OpBuilder &nb, int64_t v) -> Value {
      return nb.create<arith::ConstantIndexOp>(loc, v);
    };
    auto loop = b.create<scf::ForOp>(loc, idx(b, 0), idx(b, blocks + splitLast),
                                     idx(b, 1));
    OpBuilder nb = OpBuilder::atBlockBegin(loop.getBody());
    Value task = loop.getInductionVar();
    Value flat = splitLast
                     ? nb.create<arith::MinUIOp>(loc, task, idx(nb, blocks - 1))
                     : task;
    Value image = nb.create<arith::DivUIOp>(loc, flat, idx(nb, perImage));
    Value block = nb.create<arith::RemUIOp>(loc, flat, idx(nb, perImage));
    col = nb.create<memref::AllocOp>(
        loc, MemRefType::get({1, r[2], r[3], r[4], blockRows, r[6]}, f32));
    col3 = nb.create<memref::CollapseShapeOp>(
        loc, col, SmallVector<ReassociationIndices>{{0}, {1, 2, 3}, {4, 5}});
    Value firstRow = nb.create<arith::MulIOp>(loc, block, idx(nb, blockRows));
    emitIm2colRows(nb, loc, x, col, xMap, cr,
                   {image, Value(), Value(), Value(), firstRow, Value()});
    Value firstCol = nb.create<arith::MulIOp>(loc, block, idx(nb, cols));
    Value outImage = matrixView(nb, loc, out3, {OpFoldResult(image)});
    Value colMatrix = matrixView(nb, loc, col3, {nb.getIndexAttr(0)});
    // The matmul into rows [m0, m0 + rows) of the block's output columns.
    auto matmul = [&](OpBuilder &mb, OpFoldResult m0, int64_t rows) {
      auto view = [&](Value v, OpFoldResult c0, int64_t width) -> Value {
        SmallVector<OpFoldResult> offsets = {m0, c0},
                                  sizes = {mb.getIndexAttr(rows),
                                           mb.getIndexAttr(width)},
                                  strides = {mb.getIndexAttr(1),
                                             mb.getIndexAttr(1)};
        return mb.create<memref::SubViewOp>(loc, v, offsets, sizes, strides);
      };
      Value a =
          rows == r[1] ? w2 : view(w2, mb.getIndexAttr(0), r[2] * r[3] * r[4]);
      emitMatmul(mb, loc, a, colMatrix, view(outImage, firstCol, cols), false,
                 false, nextId)
          ->setAttr(kNoCacheTiles, mb.getUnitAttr());
    };
    if (!splitLast) {
      matmul(nb, nb.getIndexAttr(0), r[1]);
    } else {
      Value whole = nb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult,
                                             task, idx(nb, blocks - 1));
      auto branch = nb.create<scf::IfOp>(loc, whole, /*withElseRegion=*/true);
      OpBuilder tb = branch.getThenBodyBuilder();
      matmul(tb, tb.getIndexAttr(0), r[1]);
      OpBuilder eb = branch.getElseBodyBuilder();
      Value half = eb.create<arith::SubIOp>(loc, task, idx(eb, blocks - 1));
      matmul(
          eb,
          OpFoldResult(eb.create<arith::MulIOp>(loc, half, idx(eb, r[1] / 2))),
          r[1] / 2);
    }
    // (A block is an L2-sized GEMM: one is worth a thread.)
    markParallel(loop, 1, 1);
    g.erase();
    return out3;
  }
  // The patches of one group (one conv's, ungrouped).
  auto allocCol = [&](OpBuilder &ab) {
    col = ab.create<memref::AllocOp>(
        loc, MemRefType::get({r[0], r[2], r[3], r[4], r[5], r[6]}, f32));
    col3 = ab.create<memref::CollapseShapeOp>(
        loc, col, SmallVector<ReassociationIndices>{{0}, {1, 2, 3}, {4, 5}});
  };
  if (direct)
    col3 = b.create<memref::CollapseShapeOp>(loc, x, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  else if (groups == 1)
    allocCol(b);
  Operation *groupLoop = forEachBatch(b, loc, {groups}, [&](OpBuilder &gb, ArrayRef<OpFoldResult> group) {
    // (Grouped: each group's patches in the task's own buffer.)
    if (!direct && groups > 1)
      allocCol(gb);
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
  // Threads take groups: each group's matmul is small (ResNeXt's 4 or 8
  // channels a group), and split across threads group by group a 3x3 of
  // 32 groups of 4 on 56x56 ran 362 -> 316 us on 2 threads.
  if (groups > 1)
    markParallel(groupLoop, kParallelMultiplyAdds,
                 r[0] * ocg * r[2] * r[3] * r[4] * r[5] * r[6]);
  g.erase();
  return out3;
}

/// The conv's weights transposed at compile time, a constant
/// [c * kh * kw, m] matrix (a second global), or null when they are not a
/// constant: the B of patches^T x weights^T, which is then packed into
/// panels without a transposed read.
Value transposedWeights(OpBuilder &b, Location loc, Value w) {
  memref::GlobalOp global = constantGlobal(w);
  if (!global)
    return {};
  MemRefType type = global.getType();
  int64_t m = type.getDimSize(0), k = type.getNumElements() / m;
  auto matrixType = MemRefType::get({k, m}, type.getElementType());
  std::string name = (global.getSymName() + "_kxm").str();
  auto module = global->getParentOfType<ModuleOp>();
  return derivedGlobal(
      b, loc, module, name, matrixType,
      [&] {
        // (Readable: constantGlobal checked.)
        std::optional<SmallVector<float>> v = fusion::elementsFloats(
            cast<ElementsAttr>(*global.getInitialValue()));
        SmallVector<float> t(k * m);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < k; ++j)
            t[j * m + i] = (*v)[i * k + j];
        return DenseElementsAttr::get(
            RankedTensorType::get({k, m}, type.getElementType()),
            ArrayRef<float>(t));
      },
      global.getAlignmentAttr());
}

bool transposeSmallConv(linalg::GenericOp g, int64_t vectorBits) {
  if (!isCandidate(g) || convGroups(g) != 1 || convBlockRows(g, 1))
    return false;
  SmallVector<int64_t> r = g.getStaticLoopRanges(); // n m c kh kw oh ow
  int64_t lanes = vectorBits / 32, positions = r[5] * r[6],
          rest = positions % lanes;
  int64_t k = r[2] * r[3] * r[4];
  // Worth it where the scalar columns' multiply-adds (about 1.5 a cycle)
  // outweigh the two transposed copies (about 2 cycles an element): 7x7
  // convs of 512 x 4608 and 1280 x 320 gained 10-15%, one of 160 x 960
  // nothing and one of 64 x 288 lost 17%.
  if (!rest || 2 * rest >= lanes || r[1] % lanes ||
      rest * r[1] * k < 4 * positions * (k + r[1]))
    return false;
  OpBuilder b(g);
  Location loc = g.getLoc();
  MLIRContext *ctx = g.getContext();
  if (!constantGlobal(g.getDpsInputs()[1]))
    return false;
  Value x = g.getDpsInputs()[0], out = g.getDpsInits()[0];
  // (Before anything is inserted next to g.)
  std::optional<OutputInit> init = matchOutputInit(g);
  linalg::GenericOp epilogue = findEpilogue(g);
  Value wT = transposedWeights(b, loc, g.getDpsInputs()[1]);
  if (!wT)
    return false;
  Type f32 = b.getF32Type();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  auto par = [](unsigned n) {
    return SmallVector<utils::IteratorType>(n, utils::IteratorType::parallel);
  };
  // The patches k-major, col[c, kh, kw, n, oh, ow], copied a row of ow at
  // a time; the matmul reads them transposed (its A[position, k], each a
  // broadcast), the images' positions one run of rows. Position-major
  // patches were copied an element at a time: 15% of a 256-channel 14x14
  // conv.
  auto col = b.create<memref::AllocOp>(
      loc, MemRefType::get({r[2], r[3], r[4], r[0], r[5], r[6]}, f32));
  // (Its [n, c, kh, kw, oh, ow] view, in im2colMap's order.)
  Value colView = b.create<memref::TransposeOp>(
      loc, col,
      AffineMapAttr::get(AffineMap::getPermutationMap(
          ArrayRef<unsigned>{3, 0, 1, 2, 4, 5}, ctx)));
  AffineMap xMap = im2colMap(g);
  if (!emitIm2colRows(b, loc, x, colView, xMap, r))
    b.create<linalg::GenericOp>(
        loc, TypeRange{}, ValueRange{x}, ValueRange{colView},
        ArrayRef<AffineMap>{xMap, AffineMap::getMultiDimIdentityMap(6, ctx)},
        par(6), [](OpBuilder &nb, Location l, ValueRange args) {
          nb.create<linalg::YieldOp>(l, args[0]);
        });
  Value col2 = b.create<memref::CollapseShapeOp>(
      loc, col, SmallVector<ReassociationIndices>{{0, 1, 2}, {3, 4, 5}});
  // cT[n * position, m] = its init + sum over c, kh, kw of the patches *
  // w. The init is the conv's own (its bias or fill, whose pass over the
  // output then goes), else the output transposed. (An allocation, not a
  // view: the matmul's C tile is then hoisted out of the k loop.)
  auto cT = b.create<memref::AllocOp>(
      loc, MemRefType::get({r[0] * positions, r[1]}, f32));
  Value cT4 = b.create<memref::ExpandShapeOp>(
      loc, SmallVector<int64_t>{r[0], r[5], r[6], r[1]}, cT,
      SmallVector<ReassociationIndices>{{0, 1, 2}, {3}});
  auto copy = [](OpBuilder &nb, Location l, ValueRange args) {
    nb.create<linalg::YieldOp>(l, args[0]);
  };
  if (init && init->bias) {
    b.create<linalg::GenericOp>(
        loc, TypeRange{}, ValueRange{init->bias}, ValueRange{cT},
        ArrayRef<AffineMap>{AffineMap::get(2, 0, {d(1)}, ctx),
                            AffineMap::getMultiDimIdentityMap(2, ctx)},
        par(2), copy);
  } else if (init) {
    b.create<linalg::FillOp>(loc, init->scalar, Value(cT));
  } else {
    // Loops n, oh, ow, m.
    b.create<linalg::GenericOp>(
        loc, TypeRange{}, ValueRange{out}, ValueRange{cT4},
        ArrayRef<AffineMap>{AffineMap::get(4, 0, {d(0), d(3), d(1), d(2)}, ctx),
                            AffineMap::getMultiDimIdentityMap(4, ctx)},
        par(4), copy);
  }
  if (init)
    init->op->erase();
  // Loops n * position, m, k.
  b.create<linalg::GenericOp>(
      loc, TypeRange{}, ValueRange{col2, wT}, ValueRange{cT},
      ArrayRef<AffineMap>{AffineMap::get(3, 0, {d(2), d(0)}, ctx),
                          AffineMap::get(3, 0, {d(2), d(1)}, ctx),
                          AffineMap::get(3, 0, {d(0), d(1)}, ctx)},
      SmallVector<utils::IteratorType>{utils::IteratorType::parallel,
                                       utils::IteratorType::parallel,
                                       utils::IteratorType::reduction},
      [](OpBuilder &nb, Location l, ValueRange args) {
        Value mul = nb.create<arith::MulFOp>(l, args[0], args[1]);
        nb.create<linalg::YieldOp>(
            l, nb.create<arith::AddFOp>(l, args[2], mul).getResult());
      });
  // out[n, m, oh, ow] = cT[n, oh, ow, m], through the fused activation
  // (the epilogue's body on the transposed value, into its output).
  Value dest = epilogue ? epilogue.getDpsInits()[0] : out;
  b.create<linalg::GenericOp>(
      loc, TypeRange{}, ValueRange{cT4}, ValueRange{dest},
      ArrayRef<AffineMap>{AffineMap::get(4, 0, {d(0), d(2), d(3), d(1)}, ctx),
                          AffineMap::getMultiDimIdentityMap(4, ctx)},
      par(4), [&](OpBuilder &nb, Location l, ValueRange args) {
        if (!epilogue) {
          nb.create<linalg::YieldOp>(l, args[0]);
          return;
        }
        Block &body = epilogue.getRegion().front();
        IRMapping map;
        for (BlockArgument arg : body.getArguments().drop_back())
          map.map(arg, args[0]);
        for (Operation &op : body.without_terminator())
          nb.clone(op, map);
        nb.create<linalg::YieldOp>(
            l, map.lookupOrDefault(body.getTerminator()->getOperand(0)));
      });
  if (epilogue)
    epilogue.erase();
  g.erase();
  return true;
}

std::optional<AccumulatorInit> markAccumulatorInit(linalg::GenericOp g,
                                                   int64_t groups) {
  // Not with im2col blocks: a block's tile rows are a few cache lines each,
  // too short for the prefetchers, and the stores that then miss cost more
  // than the pass that wrote the bias (resnet18 56x56 convs, 2 threads: 5%
  // slower); nor with k blocks, whose partial sums must not restart from
  // the bias.
  std::optional<OutputInit> init = matchOutputInit(g);
  if (!init || convBlockRows(g, groups) || convKCacheTiled(g, groups))
    return std::nullopt;
  // (An op nothing folds or moves, that names nothing the rewrite erases.)
  OpBuilder b(g->getContext());
  b.setInsertionPointAfter(g);
  Operation *end =
      b.create<memref::AssumeAlignmentOp>(g.getLoc(), g.getDpsInputs()[0], 1);
  return AccumulatorInit{*init, Value(), end};
}

bool startAccumulatorsFromInit(const AccumulatorInit &a) {
  Operation *end = a.end;
  auto done = [&](bool ok) {
    end->erase();
    return ok;
  };
  if (end->getBlock() != a.init.op->getBlock() ||
      !a.init.op->isBeforeInBlock(end))
    return done(false);
  // The matmuls' reads of C: each a C tile row's first value, read once
  // before its k loop (not next to the FMAs: that would be a partial sum).
  struct Read {
    vector::TransferReadOp op;
    SmallVector<memref::SubViewOp> views; // from the read to C
  };
  auto cType = cast<MemRefType>(a.c.getType());
  int64_t rank = cType.getRank();
  if (rank != 3 && !(a.alongLanes && rank >= 1))
    return done(false);
  // The dim the bias runs along: a conv's channels, a matmul's columns.
  int64_t biasDim = a.alongLanes ? rank - 1 : 1;
  SmallVector<Read> reads;
  bool ok = true;
  for (Operation *op = a.init.op->getNextNode(); op != end;
       op = op->getNextNode())
    op->walk([&](vector::TransferReadOp r) {
      Read read{r, {}};
      Value base = r.getSource();
      while (auto sv = base.getDefiningOp<memref::SubViewOp>()) {
        read.views.push_back(sv);
        base = sv.getSource();
      }
      if (base != a.c)
        return;
      // Which of C's dims the read's vector runs along: with a conv's
      // bias, the positions (dim 2), where the bias is the same for every
      // lane; with a matmul's, the columns it runs along.
      SmallVector<int64_t> dims = llvm::to_vector(llvm::seq<int64_t>(0, rank));
      for (memref::SubViewOp sv : llvm::reverse(read.views)) {
        llvm::SmallBitVector dropped = sv.getDroppedDims();
        SmallVector<int64_t> kept;
        for (auto [i, d] : llvm::enumerate(dims))
          if (!dropped.test(i))
            kept.push_back(d);
        dims = kept;
      }
      ok &= (!a.init.bias ||
             (!dims.empty() && dims.back() == (a.alongLanes ? biasDim : 2))) &&
            r.getVectorType().getRank() == 1 && !r.getMask() &&
            r.getPermutationMap().isMinorIdentity() &&
            llvm::all_of(r.getInBoundsValues(), [](bool v) { return v; }) &&
            !besideMultiplyAdds(r);
      reads.push_back(std::move(read));
    });
  // (A matmul's C: nothing else between the init and the marker may read
  // it, a load or an op the walk above does not see, or it would read C
  // without the init.)
  if (a.alongLanes)
    for (Operation *op = a.init.op->getNextNode(); op != end && ok;
         op = op->getNextNode())
      op->walk([&](Operation *o) {
        if (isa<vector::TransferWriteOp, ViewLikeOpInterface>(o))
          return;
        // (The reads above reach C through subviews alone.)
        if (auto r = dyn_cast<vector::TransferReadOp>(o)) {
          Value base = r.getSource();
          while (auto sv = base.getDefiningOp<memref::SubViewOp>())
            base = sv.getSource();
          if (base == a.c)
            return;
        }
        for (Value v : o->getOperands()) {
          while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
            v = view.getViewSource();
          ok &= v != a.c;
        }
      });
  if (!ok || reads.empty())
    return done(false);
  // The bias as C's shape: biasDim step 1, the rest broadcast.
  Value biasView;
  if (a.init.bias) {
    OpBuilder b(a.init.op->getNextNode());
    SmallVector<int64_t> strides(rank, 0);
    strides[biasDim] = 1;
    biasView = b.create<memref::ReinterpretCastOp>(
        a.init.op->getLoc(),
        MemRefType::get(cType.getShape(), cType.getElementType(),
                        StridedLayoutAttr::get(b.getContext(), 0, strides)),
        a.init.bias, 0, cType.getShape(), strides);
  }
  // (A zero init: no scalar was kept across the schedule.)
  Value zero;
  if (!a.init.scalar && !a.init.bias)
    zero = OpBuilder(a.init.op).create<arith::ConstantOp>(
        a.init.op->getLoc(), FloatAttr::get(cType.getElementType(), 0.0));
  for (Read &read : reads) {
    vector::TransferReadOp r = read.op;
    OpBuilder b(r);
    Location loc = r.getLoc();
    Value first = zero ? zero : a.init.scalar;
    if (a.init.bias) {
      // The same element of the bias view, through the same subviews.
      Value v = biasView;
      for (memref::SubViewOp sv : llvm::reverse(read.views)) {
        auto src = cast<MemRefType>(v.getType());
        auto type =
            cast<MemRefType>(memref::SubViewOp::inferRankReducedResultType(
                sv.getType().getShape(), src, sv.getStaticOffsets(),
                sv.getStaticSizes(), sv.getStaticStrides()));
        v = b.create<memref::SubViewOp>(loc, type, v, sv.getMixedOffsets(),
                                        sv.getMixedSizes(),
                                        sv.getMixedStrides());
      }
      // (Along the lanes: the bias's own vector, as the read's.)
      if (a.alongLanes) {
        r.replaceAllUsesWith(b.create<vector::TransferReadOp>(
                                  loc, r.getVectorType(), v, r.getIndices(),
                                  r.getPermutationMapAttr(), r.getPadding(),
                                  Value(), r.getInBoundsAttr())
                                 .getResult());
        r.erase();
        continue;
      }
      first = b.create<memref::LoadOp>(loc, v, r.getIndices());
    }
    r.replaceAllUsesWith(
        b.create<vector::BroadcastOp>(loc, r.getVectorType(), first)
            .getResult());
    r.erase();
  }
  return done(true);
}

} // namespace kiln::vectorize
