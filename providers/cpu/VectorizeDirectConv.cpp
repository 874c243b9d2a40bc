//===- VectorizeDirectConv.cpp - 2-D convolutions without im2col ----------===//
//
// Part of kiln-cpu-vectorize-contractions: a 2-D convolution (no groups,
// static shapes, constant weights, channels in whole 512-bit vectors) as
// register tiles of 8 output positions x 32 output channels (panels of
// two vectors), or of 16 positions x 16 channels where the channels are
// not whole panels of 32. The weights are packed at compile time into
// panels, [M / P][C * KH * KW][P]; each k step loads one panel row and
// broadcasts the positions' input values straight from the (padded)
// input, whatever the stride or dilation: no im2col copy, and positions
// run across output rows. The tile starts from the bias, goes through the
// fused activation in registers and is transposed into vectors of the
// tile's positions, one per channel, stored into the NCHW output.
//
//===----------------------------------------------------------------------===//
#include "providers/cpu/Vectorize.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace kiln::vectorize {

namespace {
constexpr int64_t kLanes = 16;   // f32 lanes of a 512-bit vector
constexpr int64_t kPanel = 32;   // output channels per register tile
constexpr int64_t kTileRows = 8; // output positions per register tile
// A 1x1 conv whose plane's columns past whole vectors, counted a vector
// each, are at most this share of its columns runs as a matmul.
constexpr int64_t kNarrowColumnShare = 64;
// Weights up to this size are read by every tile from L2 (tasks tile by
// tile); larger ones a panel at a time, each panel's pass reading the whole
// input. (256 KiB before: resnet50's 512 -> 256 1x1 conv on 28x28, 512 KiB
// of weights, 950 -> 830 us in the model, its input from L3 per panel.)
constexpr int64_t kTilesOuterWeightBytes = 2 * kPerCoreWeightBytes;
} // namespace

/// Transposes `rows` (8 vectors of 16 lanes, row r = position r) into 16
/// vectors of 8 (lane j = channel j), in three rounds of two-source
/// shuffles: pairs of rows, then pairs of pairs, then halves.
static SmallVector<Value> transpose8x16(OpBuilder &b, Location loc,
                                        ArrayRef<Value> rows) {
  // Level 1: pairs (0,1), (2,3), (4,5), (6,7): for each pair and each half
  // of the lanes (j < 8, j >= 8): [x_j, y_j] for 8 j's = 16 lanes.
  SmallVector<Value> l1; // index pair * 2 + half
  for (int64_t p = 0; p < 4; ++p)
    for (int64_t h = 0; h < 2; ++h) {
      SmallVector<int64_t> m;
      for (int64_t j = 0; j < 8; ++j) {
        m.push_back(h * 8 + j);
        m.push_back(kLanes + h * 8 + j);
      }
      l1.push_back(
          b.create<vector::ShuffleOp>(loc, rows[2 * p], rows[2 * p + 1], m));
    }
  // l1[p*2+h] lane 2*j+t = rows[2p+t][h*8+j].
  // Level 2: quads (pairs 0,1 and 2,3): for each quad, half h and quarter
  // q of the 8 j's (j = q*4 .. q*4+3): lane 4*jj + t = rows[4Q+t][h*8+q*4+jj].
  SmallVector<Value> l2; // index (Q * 2 + h) * 2 + q
  for (int64_t Q = 0; Q < 2; ++Q)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t q = 0; q < 2; ++q) {
        Value x = l1[(2 * Q) * 2 + h], y = l1[(2 * Q + 1) * 2 + h];
        SmallVector<int64_t> m;
        for (int64_t jj = 0; jj < 4; ++jj) {
          int64_t j = q * 4 + jj;
          m.push_back(2 * j);              // rows 4Q+0 from x
          m.push_back(2 * j + 1);          // rows 4Q+1 from x
          m.push_back(kLanes + 2 * j);     // rows 4Q+2 from y
          m.push_back(kLanes + 2 * j + 1); // rows 4Q+3 from y
        }
        l2.push_back(b.create<vector::ShuffleOp>(loc, x, y, m));
      }
  // Level 3: both quads: for half h, quarter q and pair u of its 4 j's:
  // lane 8*v + t = rows[t][h*8+q*4+u*2+v], v = 0, 1 (two channels).
  SmallVector<Value> cols(kLanes);
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t q = 0; q < 2; ++q)
      for (int64_t u = 0; u < 2; ++u) {
        Value x = l2[(0 * 2 + h) * 2 + q], y = l2[(1 * 2 + h) * 2 + q];
        SmallVector<int64_t> m;
        for (int64_t v = 0; v < 2; ++v) {
          int64_t jj = u * 2 + v;
          for (int64_t t = 0; t < 4; ++t)
            m.push_back(4 * jj + t);
          for (int64_t t = 0; t < 4; ++t)
            m.push_back(kLanes + 4 * jj + t);
        }
        Value both = b.create<vector::ShuffleOp>(loc, x, y, m);
        int64_t j0 = h * 8 + q * 4 + u * 2;
        for (int64_t v = 0; v < 2; ++v) {
          SmallVector<int64_t> half;
          for (int64_t t = 0; t < 8; ++t)
            half.push_back(v * 8 + t);
          cols[j0 + v] = b.create<vector::ShuffleOp>(loc, both, both, half);
        }
      }
  return cols;
}

/// Any count of rows up to 8: each channel's vector built lane by lane
/// (the last, partial tile of a plane).
static SmallVector<Value> transposeSmall(OpBuilder &b, Location loc,
                                         ArrayRef<Value> rows) {
  auto vt = VectorType::get(
      {int64_t(rows.size())},
      cast<VectorType>(rows.front().getType()).getElementType());
  SmallVector<Value> cols;
  for (int64_t j = 0; j < kLanes; ++j) {
    SmallVector<Value> lanes;
    for (Value r : rows)
      lanes.push_back(b.create<vector::ExtractOp>(loc, r, j));
    cols.push_back(b.create<vector::FromElementsOp>(loc, vt, lanes));
  }
  return cols;
}

// (Any count of rows: 6 to 8 by the 8x16 transpose, the last row
// repeated, then cut; more than 8 as the first 8 and the rest, joined;
// fewer lane by lane.)
SmallVector<Value> transposeRows(OpBuilder &b, Location loc,
                                 ArrayRef<Value> rows) {
  int64_t n = rows.size();
  SmallVector<Value> cols;
  if (n > kTileRows) {
    SmallVector<Value> lo = transposeRows(b, loc, rows.take_front(kTileRows)),
                       hi = transposeRows(b, loc, rows.drop_front(kTileRows));
    for (int64_t j = 0; j < kLanes; ++j)
      cols.push_back(b.create<vector::ShuffleOp>(
          loc, lo[j], hi[j], llvm::to_vector(llvm::seq<int64_t>(0, n))));
    return cols;
  }
  if (n < kTileRows - 2)
    return transposeSmall(b, loc, rows);
  SmallVector<Value> padded(rows);
  while (padded.size() < kTileRows)
    padded.push_back(padded.back());
  cols = transpose8x16(b, loc, padded);
  if (n < kTileRows)
    for (Value &col : cols)
      col = b.create<vector::ShuffleOp>(
          loc, col, col, llvm::to_vector(llvm::seq<int64_t>(0, n)));
  return cols;
}

/// Static f32 operands, but for the batch of x and the output (a run-time
/// batch: the images are the outer tasks).
static bool staticButBatch(linalg::GenericOp g) {
  if (!isF32BufferGeneric(g) || !isMulAddBody(g))
    return false;
  auto type = [&](Value v) { return cast<MemRefType>(v.getType()); };
  MemRefType xt = type(g.getDpsInputs()[0]), ot = type(g.getDpsInits()[0]);
  return type(g.getDpsInputs()[1]).hasStaticShape() && xt.getRank() == 4 &&
         ot.getRank() == 4 && xt.isDynamicDim(0) == ot.isDynamicDim(0) &&
         llvm::none_of(xt.getShape().drop_front(), ShapedType::isDynamic) &&
         llvm::none_of(ot.getShape().drop_front(), ShapedType::isDynamic);
}

/// The panel width for `m` output channels: 32 (two vectors a position)
/// or 16 (one) where they fill whole panels; else, for a kernel larger
/// than 1x1 (`pointwise` false), channels past whole panels of 32 (a
/// detector's 255) fill a last panel, its weights zero-padded and its
/// extra channels not stored, where that adds at most an eighth to the
/// multiply-adds: a 3x3 conv of 128 -> 255 channels on 20x20 1.20x as fast
/// as through im2col. (Not 16-channel panels: 32 -> 100 channels on 40x40
/// went 0.81x; nor a 1x1 conv's matmul: a classifier's 512 -> 1000 on
/// 13x13 took 794 us in the model, padded panels 916.) 0: none.
static int64_t panelWidth(int64_t m, bool pointwise) {
  for (int64_t pw : {kPanel, kLanes})
    if (m % pw == 0)
      return pw;
  if (!pointwise && static_cast<int64_t>(llvm::alignTo(m, kPanel)) * 8 <= m * 9)
    return kPanel;
  return 0;
}

/// How many of the first `channels` channel planes of `positions` f32 each
/// start in the busiest of the L1's 64 sets of 64-byte lines.
static int64_t planesPerL1Set(int64_t channels, int64_t positions) {
  SmallVector<int64_t> perSet(64, 0);
  int64_t most = 0;
  for (int64_t j = 0; j < channels; ++j)
    most = std::max(most, ++perSet[(j * positions * 4 / 64) % 64]);
  return most;
}

bool directConvShape(int64_t vectorBits, int64_t groups, int64_t m, int64_t c,
                     int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                     int64_t positions) {
  // A 1x1 stride-1 conv is a matmul on x as it lies, and the direct tiles
  // take it only where the matmul's register tiles would take a plane's
  // last columns a lane at a time (7x7, 14x14), or where it has 64 input
  // channels or more in planes that spread over the L1's sets: each k step
  // then broadcasts from another plane, and the tiles' stores need no
  // second pass (resnet50's 256 -> 64 on 56x56: 428 us against 618). Not
  // with fewer channels (mobilenet_v2's 16 -> 96 on 112x112: 474 against
  // 199, its stores' transposes per few multiply-adds), nor on planes a
  // multiple of 4 KiB apart (densenet's 128 -> 128 on 32x32: 181 against
  // 151, every k step's line in one set).
  bool pointwise = kh == 1 && kw == 1 && sh == 1 && sw == 1;
  // (A large plane's last columns are a small share: ssdlite's 16 -> 96 on
  // 150x150, 4 of 22500. There the direct tiles' 32-byte stores into 96
  // planes at once, each line written in two halves, missed with the
  // output not in cache: 815 us in the model against 480 alone.)
  int64_t rest = positions % kLanes;
  if (pointwise && rest * kLanes * kNarrowColumnShare <= positions &&
      (c < 64 || planesPerL1Set(64, positions) > 8))
    return false;
  return vectorBits >= 512 && groups == 1 && panelWidth(m, kh * kw == 1) &&
         positions >= kTileRows;
}

bool rewriteDirectConv(linalg::GenericOp g, int64_t vectorBits) {
  if (!staticButBatch(g))
    return false;
  std::optional<ConvMatch> cm = matchConv(g);
  if (!cm)
    return false;
  SmallVector<int64_t> r = g.getStaticLoopRanges(); // n m c kh kw oh ow
  int64_t n = r[0], m = r[1], c = r[2], kh = r[3], kw = r[4], oh = r[5],
          ow = r[6];
  if (!directConvShape(vectorBits, convGroups(g), m, c, kh, kw, cm->sh, cm->sw,
                       oh * ow))
    return false;
  Value x = g.getDpsInputs()[0], out = g.getDpsInits()[0];
  auto xt = cast<MemRefType>(x.getType());
  int64_t h = xt.getDimSize(2), w = xt.getDimSize(3);
  std::optional<OutputInit> init = matchOutputInit(g);
  if (!init || !constantGlobal(g.getDpsInputs()[1]) ||
      (init->bias && cast<MemRefType>(init->bias.getType()).getRank() != 1))
    return false;
  // x's rows [top, end) hold the source; the rest is zero padding.
  struct PadRows {
    int64_t top, end;
  };
  std::optional<PadRows> padRows;
  if (kh > 1)
    if (std::optional<PaddedSource> ps = matchPaddedSource(g, true);
        ps && matchPattern(ps->pad, m_AnyZeroFloat())) {
      int64_t srcRows = cast<MemRefType>(ps->src.getType()).getDimSize(2);
      if (ps->top > 0 || ps->top + srcRows < h)
        padRows = PadRows{ps->top, ps->top + srcRows};
    }
  linalg::GenericOp epilogue = findEpilogue(g);
  OpBuilder b(g);
  Location loc = g.getLoc();
  Value wT = transposedWeights(b, loc, g.getDpsInputs()[1]);
  if (!wT)
    return false;
  // A 1x1 conv stepping over rows or columns reads its input compacted
  // first (every sh-th row's every sw-th column, a plane of the output's
  // size), then as a stride-1 conv: each panel's pass then reads a quarter
  // of the lines, from L2 where the whole input came from L3 (resnet50's
  // downsample convs 256 -> 512 on 56x56, 512 -> 1024 on 28x28 and 1024 ->
  // 2048 on 14x14: 10-20% faster, the copy included).
  if (kh == 1 && kw == 1 && (cm->sh > 1 || cm->sw > 1)) {
    MLIRContext *ctx = g.getContext();
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    auto ct = MemRefType::get({xt.getDimSize(0), c, oh, ow}, b.getF32Type());
    SmallVector<Value> batch;
    if (ct.isDynamicDim(0))
      batch.push_back(b.create<memref::DimOp>(loc, x, 0));
    Value compact =
        b.create<memref::AllocOp>(loc, ct, batch, b.getI64IntegerAttr(64));
    b.create<linalg::GenericOp>(
        loc, TypeRange{}, ValueRange{x}, ValueRange{compact},
        ArrayRef<AffineMap>{
            AffineMap::get(4, 0, {d(0), d(1), d(2) * cm->sh, d(3) * cm->sw},
                           ctx),
            AffineMap::getMultiDimIdentityMap(4, ctx)},
        SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
        [](OpBuilder &nb, Location l, ValueRange args) {
          nb.create<linalg::YieldOp>(l, args[0]);
        });
    x = compact;
    xt = ct;
    h = oh;
    w = ow;
    cm->sh = cm->sw = 1;
  }
  // Panels of 32 channels (two vectors a position), else of 16 (16, 48,
  // 80 channels: one vector a position, tiles of 16 positions, which the
  // im2col GEMM's 8 x 32 tiles ran at half the rate: a UNet's 16-channel
  // 3x3 convs on 256x256 maps).
  int64_t pw = panelWidth(m, kh * kw == 1), nv = pw / kLanes;
  Value panels = packedPanels(b, loc, wT, /*transB=*/false, pw);
  Type f32 = b.getF32Type();
  auto idx = [&](OpBuilder &ib, int64_t v) -> Value {
    return ib.create<arith::ConstantIndexOp>(loc, v);
  };
  int64_t positions = oh * ow, k = c * kh * kw,
          planes = llvm::divideCeil(m, pw), validInLast = m - (planes - 1) * pw;
  // The images: static, or x's batch at run time.
  bool runtimeBatch = xt.isDynamicDim(0);
  Value images =
      runtimeBatch ? b.create<memref::DimOp>(loc, x, 0).getResult() : idx(b, n);
  // `per` times the images (a constant when they are).
  auto timesImages = [&](int64_t per) -> Value {
    return runtimeBatch
               ? b.create<arith::MulIOp>(loc, images, idx(b, per)).getResult()
               : idx(b, n * per);
  };
  OpFoldResult xSize = runtimeBatch
                           ? OpFoldResult(timesImages(c * h * w))
                           : OpFoldResult(b.getIndexAttr(xt.getNumElements()));
  Value xFlat = b.create<memref::ReinterpretCastOp>(
      loc,
      MemRefType::get(
          {runtimeBatch ? ShapedType::kDynamic : xt.getNumElements()}, f32),
      x, OpFoldResult(b.getIndexAttr(0)), ArrayRef<OpFoldResult>{xSize},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  // The output (the epilogue's, when fused) as [n, m, positions].
  Value dest = epilogue ? epilogue.getDpsInits()[0] : out;
  Value dest3 = b.create<memref::CollapseShapeOp>(
      loc, dest, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  auto vec = VectorType::get({kLanes}, f32);

  int64_t packed = planes * pw * k;
  Value panelsFlat = b.create<memref::ReinterpretCastOp>(
      loc, MemRefType::get({packed}, f32), panels, 0, ArrayRef<int64_t>{packed},
      ArrayRef<int64_t>{1});
  // Tiles of 8 positions, or of 7 or 6 where those fill the plane and 8
  // does not: a 7x7 plane's 49th position alone took a tile of its own,
  // whose two dependent FMA chains ran at half a whole tile's speed.
  int64_t tileRows = kTileRows;
  for (int64_t r : {kTileRows - 1, kTileRows - 2})
    if (positions % kTileRows && positions % r == 0) {
      tileRows = r;
      break;
    }
  // (Panels of 16: 16 positions, a 64-byte line per channel.)
  if (nv == 1 && positions >= 2 * kTileRows)
    tileRows = 2 * kTileRows;
  int64_t tiles = positions / tileRows, left = positions % tileRows;
  // Stores channel `ch`'s vector of the tile's positions (through the
  // fused activation already).
  using StoreFn = function_ref<void(OpBuilder &, Value ch, Value v)>;
  // The tile of `rows` positions from p0 of image `img`, channels of panel
  // `panel`; `tile` its index among the panel's whole tiles (null for the
  // last, partial one).
  auto emitTile = [&](OpBuilder &tb, Value img, Value panel, Value p0,
                      int64_t rows, Value tile, StoreFn store) {
    // Each position's input offset at tap (0, 0) of channel 0.
    Value imgBase = tb.create<arith::MulIOp>(loc, img, idx(tb, c * h * w));
    SmallVector<Value> offsets;
    for (int64_t i = 0; i < rows; ++i) {
      Value p = tb.create<arith::AddIOp>(loc, p0, idx(tb, i));
      Value y = tb.create<arith::DivUIOp>(loc, p, idx(tb, ow));
      Value xcol = tb.create<arith::RemUIOp>(loc, p, idx(tb, ow));
      Value off = tb.create<arith::AddIOp>(
          loc, tb.create<arith::MulIOp>(loc, y, idx(tb, cm->sh * w)),
          tb.create<arith::MulIOp>(loc, xcol, idx(tb, cm->sw)));
      offsets.push_back(tb.create<arith::AddIOp>(loc, off, imgBase));
    }
    // Accumulators from the bias (the same for every position) or fill.
    Value ch0 = tb.create<arith::MulIOp>(loc, panel, idx(tb, pw));
    SmallVector<Value> start;
    for (int64_t half = 0; half < nv; ++half) {
      Value v;
      Value at = tb.create<arith::AddIOp>(loc, ch0, idx(tb, half * kLanes));
      if (init->bias && validInLast < pw) // (past the bias: zeros)
        v = tb.create<vector::TransferReadOp>(
            loc, vec, init->bias, ValueRange{at},
            tb.create<arith::ConstantOp>(loc, tb.getF32FloatAttr(0.0f)),
            ArrayRef<bool>{false});
      else if (init->bias)
        v = tb.create<vector::LoadOp>(loc, vec, init->bias, ValueRange{at});
      else
        v = tb.create<vector::BroadcastOp>(loc, vec, init->scalar);
      start.push_back(v);
    }
    SmallVector<Value> accs;
    for (int64_t i = 0; i < rows; ++i)
      accs.append(start);
    // The multiply-adds of kernel row `y` (a value) at channel `ci`.
    auto emitRow = [&](OpBuilder &lb, Location l, Value ci, Value y,
                       SmallVector<Value> &acc) {
      Value tapRow = lb.create<arith::AddIOp>(
          l, lb.create<arith::MulIOp>(l, ci, idx(lb, h * w)),
          lb.create<arith::MulIOp>(l, y, idx(lb, cm->dh * w)));
      Value kRow = lb.create<arith::AddIOp>(
          l, lb.create<arith::MulIOp>(l, ci, idx(lb, kh * kw)),
          lb.create<arith::MulIOp>(l, y, idx(lb, kw)));
      for (int64_t xk = 0; xk < kw; ++xk) {
        Value kIdx = lb.create<arith::AddIOp>(l, kRow, idx(lb, xk));
        SmallVector<Value> wv;
        for (int64_t half = 0; half < nv; ++half)
          wv.push_back(lb.create<vector::LoadOp>(
              l, vec, panels, ValueRange{panel, kIdx, idx(lb, half * kLanes)}));
        Value tap = lb.create<arith::AddIOp>(l, tapRow, idx(lb, xk * cm->dw));
        for (int64_t i = 0; i < rows; ++i) {
          Value at = lb.create<arith::AddIOp>(l, tap, offsets[i]);
          Value s = lb.create<memref::LoadOp>(l, xFlat, at);
          Value bs = lb.create<vector::BroadcastOp>(l, vec, s);
          for (int64_t half = 0; half < nv; ++half)
            acc[nv * i + half] =
                lb.create<vector::FMAOp>(l, bs, wv[half], acc[nv * i + half]);
        }
      }
    };
    // The next panel's weights, fetched into L2 while this panel's tiles
    // run, each whole tile its share, a few lines per input channel:
    // weights that come from memory (a 512-channel 3x3 conv's 590 KiB
    // panels) otherwise stall every panel's first tile.
    int64_t share = llvm::divideCeil(k * pw, tiles),
            perChannel = llvm::divideCeil(share, c),
            lines = llvm::divideCeil(perChannel, kLanes);
    Value prefetchBase;
    if (tile)
      prefetchBase = tb.create<arith::AddIOp>(
          loc,
          tb.create<arith::MulIOp>(
              loc, tb.create<arith::AddIOp>(loc, panel, idx(tb, 1)),
              idx(tb, k * pw)),
          tb.create<arith::MulIOp>(loc, tile, idx(tb, share)));
    auto emitPrefetch = [&](OpBuilder &lb, Location l, Value ci) {
      if (!prefetchBase)
        return;
      Value from = lb.create<arith::AddIOp>(
          l, prefetchBase,
          lb.create<arith::MulIOp>(l, ci, idx(lb, perChannel)));
      for (int64_t line = 0; line < lines; ++line) {
        Value at = lb.create<arith::MinUIOp>(
            l, lb.create<arith::AddIOp>(l, from, idx(lb, line * kLanes)),
            idx(lb, packed - 1));
        lb.create<memref::PrefetchOp>(l, panelsFlat, ValueRange{at},
                                      /*isWrite=*/false, /*localityHint=*/2,
                                      /*isDataCache=*/true);
      }
    };
    // The multiply-adds of kernel rows [yLo, yHi) over every input
    // channel. Taps unrolled up to 3x3 (`unrolled`, all the rows); a
    // larger kernel's rows are a loop (49 unrolled taps of a 7x7 kernel
    // spilled the accumulators).
    auto channels = [&](OpBuilder &cb, Value yLo, Value yHi,
                        bool unrolled) -> ValueRange {
      auto loop = cb.create<scf::ForOp>(
          loc, idx(cb, 0), idx(cb, c), idx(cb, 1), accs,
          [&](OpBuilder &lb, Location l, Value ci, ValueRange iter) {
            SmallVector<Value> acc(iter.begin(), iter.end());
            emitPrefetch(lb, l, ci);
            if (unrolled) {
              for (int64_t y = 0; y < kh; ++y)
                emitRow(lb, l, ci, idx(lb, y), acc);
              lb.create<scf::YieldOp>(l, acc);
              return;
            }
            auto rowsLoop = lb.create<scf::ForOp>(
                l, yLo, yHi, idx(lb, 1), acc,
                [&](OpBuilder &rb, Location rl, Value y, ValueRange rIter) {
                  SmallVector<Value> racc(rIter.begin(), rIter.end());
                  emitRow(rb, rl, ci, y, racc);
                  rb.create<scf::YieldOp>(rl, racc);
                });
            lb.create<scf::YieldOp>(l, rowsLoop.getResults());
          });
      return loop.getResults();
    };
    bool rowLoop = kh * kw > 9;
    SmallVector<Value> sums;
    if (!padRows) {
      sums = channels(tb, idx(tb, 0), idx(tb, kh), !rowLoop);
    } else {
      // Kernel rows that read only the zero padding for every position of
      // the tile (output rows r0..r1) are skipped, as ONNX Runtime's
      // kernels do: a 3x3 conv on 6 rows does 8/9 of the multiply-adds.
      Value r0 = tb.create<arith::DivUIOp>(loc, p0, idx(tb, ow));
      Value r1 = tb.create<arith::DivUIOp>(
          loc, tb.create<arith::AddIOp>(loc, p0, idx(tb, rows - 1)),
          idx(tb, ow));
      // Row y reads x's row r * sh + y * dh: the first row r1 needs to
      // reach top, the last row r0 must stay below end. In kernel rows,
      // clamped at 0 before the (unsigned) division rounds.
      auto rowsOf = [&](Value r, int64_t bound) -> Value {
        Value d = tb.create<arith::SubIOp>(
            loc, idx(tb, bound),
            tb.create<arith::MulIOp>(loc, r, idx(tb, cm->sh)));
        return tb.create<arith::DivUIOp>(
            loc, tb.create<arith::MaxSIOp>(loc, d, idx(tb, 0)),
            idx(tb, cm->dh));
      };
      Value yLo = rowsOf(r1, padRows->top + cm->dh - 1);
      Value yHi = tb.create<arith::MinSIOp>(
          loc, rowsOf(r0, padRows->end - 1 + cm->dh), idx(tb, kh));
      // Inner tiles keep the unrolled taps (or a row loop of constant
      // trips: a 6x6 stem conv 1% slower on bounds known only at run
      // time); border tiles loop over the rows they need.
      Value inner = tb.create<arith::AndIOp>(
          loc,
          tb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, yLo,
                                   idx(tb, 0)),
          tb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, yHi,
                                   idx(tb, kh)));
      auto branch = tb.create<scf::IfOp>(loc, ValueRange(accs).getTypes(),
                                         inner, /*withElse=*/true);
      OpBuilder ib = branch.getThenBodyBuilder();
      ib.create<scf::YieldOp>(loc,
                              channels(ib, idx(ib, 0), idx(ib, kh), !rowLoop));
      OpBuilder eb = branch.getElseBodyBuilder();
      eb.create<scf::YieldOp>(loc, channels(eb, yLo, yHi, false));
      sums = branch.getResults();
    }
    // Through the fused activation (elementwise, the same for every
    // channel) on the accumulators, whole vectors of 16 channels: after
    // the transpose it took twice the instructions on vectors of 8
    // positions (a SiLU's exp: a stride-2 3x3 conv of 16 -> 32 channels
    // 25% slower than with a Relu). Then transposed: per channel, the
    // tile's positions, into the NCHW output.
    if (epilogue) {
      Block &body = epilogue.getRegion().front();
      for (Value &acc : sums) {
        IRMapping map;
        for (BlockArgument arg : body.getArguments().drop_back())
          map.map(arg, acc);
        acc = widenBody(tb, loc, body, map, {kLanes});
      }
    }
    for (int64_t half = 0; half < nv; ++half) {
      SmallVector<Value> rowsOfHalf;
      for (int64_t i = 0; i < rows; ++i)
        rowsOfHalf.push_back(sums[nv * i + half]);
      SmallVector<Value> cols = transposeRows(tb, loc, rowsOfHalf);
      for (int64_t j = 0; j < kLanes; ++j) {
        int64_t ch = half * kLanes + j;
        if (ch < validInLast) {
          store(tb, idx(tb, ch), cols[j]);
          continue;
        }
        // A channel past m in the last panel: stored in the others only.
        Value notLast = tb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult,
                                                 panel, idx(tb, planes - 1));
        auto ifOp = tb.create<scf::IfOp>(loc, notLast, /*withElse=*/false);
        OpBuilder ib = ifOp.getThenBodyBuilder();
        store(ib, idx(ib, ch), cols[j]);
      }
    }
  };

  // Threads take (image, panel, tile) tasks, a panel's tiles in a row
  // (its weights stay in L2). Weights that all fit in L2
  // (kTilesOuterWeightBytes) take
  // (image, tile, panel) instead: a thread's tasks then read only its
  // share of the input positions, much of which the other threads wrote
  // (mobilenet_v2's 1x1 convs on 14x14 planes, 576 -> 96 channels, after
  // a depthwise conv split by channels: 137 us on one thread, 158 on two
  // of a Xeon VM, each thread reading the whole input).
  bool tilesOuter = m * k * 4 <= kTilesOuterWeightBytes;
  // The plane's last positions, a narrower tile, are each panel's last
  // task: a loop of their own after the whole tiles read every panel
  // again, from memory where the weights do not fit in L2 (resnet18's
  // 256 -> 512 stride-2 conv on a 7x7 map: 303 us for its 49th position,
  // on one thread, of 1220 us).
  // Tiles of 8 go in pairs: the first one's channel vectors wait in a
  // scratch until the second's complete them, and each channel's 16
  // positions are stored as one 64-byte line. A tile stored alone writes
  // 32 half lines, whose other halves the next tile writes: where the
  // channel planes are a multiple of 4 KiB apart, all 32 lines fall in one
  // L1 set and are evicted half-written (a 3 -> 32 channel 3x3 conv on a
  // 48x320 map: 433 us against 137 on a 48x316 one).
  // (Only there: elsewhere the scratch's round trip cost 8%.) The L1's
  // 64 sets of 64-byte lines: how many of the tile's 32 channel lines
  // share one.
  int64_t crowded = planesPerL1Set(kPanel, positions);
  bool pairs = nv == 2 && tileRows == kTileRows && tiles >= 2 && crowded > 8;
  int64_t units = pairs ? tiles / 2 : tiles, odd = pairs ? tiles % 2 : 0;
  int64_t perPlane = units + odd + (left ? 1 : 0);
  auto tasks = b.create<scf::ForOp>(loc, idx(b, 0),
                                    timesImages(planes * perPlane), idx(b, 1));
  {
    OpBuilder tb = OpBuilder::atBlockBegin(tasks.getBody());
    Value t = tasks.getInductionVar();
    Value img = tb.create<arith::DivUIOp>(loc, t, idx(tb, planes * perPlane));
    Value rest = tb.create<arith::RemUIOp>(loc, t, idx(tb, planes * perPlane));
    int64_t inner = tilesOuter ? planes : perPlane;
    Value outer = tb.create<arith::DivUIOp>(loc, rest, idx(tb, inner));
    Value within = tb.create<arith::RemUIOp>(loc, rest, idx(tb, inner));
    Value panel = tilesOuter ? within : outer,
          unit = tilesOuter ? outer : within;
    Value ch0 = tb.create<arith::MulIOp>(loc, panel, idx(tb, pw));
    // Stores straight into the output, at position p0.
    auto storeAt = [&](Value p0) {
      return [&, p0](OpBuilder &sb, Value ch, Value v) {
        sb.create<vector::StoreOp>(
            loc, v, dest3,
            ValueRange{img, sb.create<arith::AddIOp>(loc, ch0, ch), p0});
      };
    };
    // Whole tile `tile` (an index among the plane's whole tiles).
    // (The next panel's prefetch is for panel-major tasks' whole tiles.)
    auto single = [&](OpBuilder &wb, Value tile) {
      Value p0 = wb.create<arith::MulIOp>(loc, tile, idx(wb, tileRows));
      emitTile(wb, img, panel, p0, tileRows, tilesOuter ? Value() : tile,
               storeAt(p0));
    };
    auto whole = [&](OpBuilder &wb) {
      if (!pairs)
        return single(wb, unit);
      Value first = wb.create<arith::MulIOp>(loc, unit, idx(wb, 2));
      Value second = wb.create<arith::AddIOp>(loc, first, idx(wb, 1));
      Value p0 = wb.create<arith::MulIOp>(loc, first, idx(wb, kTileRows));
      Value p1 = wb.create<arith::AddIOp>(loc, p0, idx(wb, kTileRows));
      // (Allocated in the parallel loop's body: the thread's own.)
      Value halves = wb.create<memref::AllocOp>(
          loc, MemRefType::get({kPanel, kTileRows}, f32),
          wb.getI64IntegerAttr(64));
      emitTile(wb, img, panel, p0, kTileRows, tilesOuter ? Value() : first,
               [&](OpBuilder &sb, Value ch, Value v) {
                 sb.create<vector::StoreOp>(loc, v, halves,
                                            ValueRange{ch, idx(sb, 0)});
               });
      auto half = VectorType::get({kTileRows}, f32);
      SmallVector<int64_t> both =
          llvm::to_vector(llvm::seq<int64_t>(0, 2 * kTileRows));
      emitTile(
          wb, img, panel, p1, kTileRows, tilesOuter ? Value() : second,
          [&](OpBuilder &sb, Value ch, Value v) {
            Value low = sb.create<vector::LoadOp>(loc, half, halves,
                                                  ValueRange{ch, idx(sb, 0)});
            Value line = sb.create<vector::ShuffleOp>(loc, low, v, both);
            sb.create<vector::StoreOp>(
                loc, line, dest3,
                ValueRange{img, sb.create<arith::AddIOp>(loc, ch0, ch), p0});
          });
    };
    // The units past the whole ones: an odd last whole tile, then the
    // plane's last positions.
    auto lastTile = [&](OpBuilder &nb) {
      Value p0 = idx(nb, tiles * tileRows);
      emitTile(nb, img, panel, p0, left, Value(), storeAt(p0));
    };
    auto afterWhole = [&](OpBuilder &nb) {
      if (!odd)
        return lastTile(nb);
      if (!left)
        return single(nb, idx(nb, tiles - 1));
      Value isOdd = nb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                             unit, idx(nb, units));
      auto branch = nb.create<scf::IfOp>(loc, isOdd, /*withElse=*/true);
      OpBuilder ob = branch.getThenBodyBuilder();
      single(ob, idx(ob, tiles - 1));
      OpBuilder lb = branch.getElseBodyBuilder();
      lastTile(lb);
    };
    if (!left && !odd) {
      whole(tb);
    } else {
      Value isWhole = tb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult,
                                               unit, idx(tb, units));
      auto branch = tb.create<scf::IfOp>(loc, isWhole, /*withElse=*/true);
      OpBuilder wb = branch.getThenBodyBuilder();
      whole(wb);
      OpBuilder nb = branch.getElseBodyBuilder();
      afterWhole(nb);
    }
  }
  markParallel(tasks, kParallelMultiplyAdds,
               (pairs ? 2 : 1) * tileRows * pw * k);
  init->op->erase();
  if (epilogue)
    epilogue.erase();
  g.erase();
  return true;
}

} // namespace kiln::vectorize
