//===- VectorizeWinograd.cpp - 3x3 blocked convs as Winograd tiles --------===//
//
// Part of kiln-cpu-vectorize-blocked. A 3x3 conv at stride 1 runs as
// Winograd F(2x2, 3x3) tiles (Lavin and Gray, 2015): each 2x2 output block
// comes from its 4x4 input block through 16 products per input and output
// channel instead of 36, a 2.25x cut in multiply-adds. The input and output
// transforms take only adds (B and A hold 0 and +-1); the weights' G g G^T
// is computed at compile time. Per task (an image's pair of output rows):
// the input transform of the row's tiles into thread scratch [16][tiles]
// [c], one matmul per transform element e on the blocked kernel's register
// tiles (a broadcast of V[e][t][c] per tile, a vector of U[e][c] per 16
// output channels) into scratch [16][tiles][m], then the output transform,
// the bias and the conv's epilogue in the store. Small planes with large
// weights run the three steps each over the whole image; a dilated conv's
// tiles take rows and columns d apart.
//
//===----------------------------------------------------------------------===//
#include "passes/FusionUtils.h"
#include "providers/cpu/BlockedKernels.h"
#include "providers/cpu/Vectorize.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace kiln::blocked {

namespace {

/// What a core's L2 holds (2 MiB on Sapphire Rapids, 1 MiB on Zen 4 and
/// 5): the fused tasks' U must fit to be read from there by every task.
constexpr int64_t kL2Bytes = 1 << 20;
constexpr int64_t kPhasedMinPositions = 128;

/// The weights [m, c, 3, 3] as G g G^T, a constant [16][m / 16 / nb][c]
/// [nb x 16]: per transform element, each input channel's nb blocks of
/// output channels one run of lines, in the order the matmuls read them.
Value winogradWeights(OpBuilder &b, Location loc, Value w, int64_t nb) {
  memref::GlobalOp global = vectorize::constantGlobal(w);
  if (!global)
    return Value();
  MemRefType type = global.getType();
  int64_t m = type.getDimSize(0), c = type.getDimSize(1);
  int64_t groups = m / kLanes / nb;
  return packedWeights(
      b, loc, global, "_winograd" + std::to_string(nb),
      {16, groups, c, nb * kLanes},
      [&](ArrayRef<float> v, MutableArrayRef<float> packed) {
        static const double g[4][3] = {
            {1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
        for (int64_t o = 0; o < m; ++o)
          for (int64_t i = 0; i < c; ++i) {
            const float *k = v.data() + (o * c + i) * 9;
            // G k (4 x 3), then (G k) G^T (4 x 4), in double.
            double gk[4][3], u[4][4];
            for (int r = 0; r < 4; ++r)
              for (int s = 0; s < 3; ++s)
                gk[r][s] =
                    g[r][0] * k[s] + g[r][1] * k[3 + s] + g[r][2] * k[6 + s];
            for (int r = 0; r < 4; ++r)
              for (int s = 0; s < 4; ++s)
                u[r][s] = gk[r][0] * g[s][0] + gk[r][1] * g[s][1] +
                          gk[r][2] * g[s][2];
            int64_t group = o / (nb * kLanes), lane = o % (nb * kLanes);
            for (int e = 0; e < 16; ++e)
              packed[((e * groups + group) * c + i) * nb * kLanes + lane] =
                  float(u[e / 4][e % 4]);
          }
      });
}

} // namespace

bool rewriteWinogradConv(linalg::GenericOp g, int64_t &fused) {
  if (!g.hasPureBufferSemantics() || g.getNumDpsInputs() != 2 ||
      g.getNumLoops() != 9)
    return false;
  Value x = g.getDpsInputs()[0], out = g.getDpsInits()[0];
  if (!staticBuffer(x) || !staticBuffer(out))
    return false;
  SmallVector<int64_t> r = g.getStaticLoopRanges();
  // n, mb, oh, ow, mi, cb, kh, kw, ci.
  int64_t n = r[0], mb = r[1], oh = r[2], ow = r[3], cb = r[5];
  AffineMap xm = g.getIndexingMapsArray()[0];
  int64_t dh = coefficient(xm, 6, 2), dw = coefficient(xm, 7, 3);
  if (r[6] != 3 || r[7] != 3 || coefficient(xm, 2, 2) != 1 ||
      coefficient(xm, 3, 3) != 1 || dh < 1 || dw < 1)
    return false;
  // Two blocks of input and of output channels at least, or the
  // transforms cost more than the products they save.
  auto xt = cast<MemRefType>(x.getType());
  int64_t xh = xt.getDimSize(2), xw = xt.getDimSize(3);
  if (oh < 2 || ow < 3 || cb < 2 || mb < 2 || xh < oh + 2 * dh ||
      xw < ow + 2 * dw)
    return false;
  // A tile's rows are y and y + dh (dilated: rows 2 dh apart in one tile
  // each, dh tiles a band of 2 dh rows), its columns alike. Where the
  // plane does not end on a whole band, the last band's tiles may lack
  // their second row: their 4th input row lies past x, read as zeros (it
  // feeds only that row, which is not stored).
  auto pairsOf = [](int64_t size, int64_t d) {
    return size / (2 * d) * d + std::min(size % (2 * d), d);
  };
  int64_t rowPairs = pairsOf(oh, dh), tiles = pairsOf(ow, dw), c = cb * kLanes,
          m = mb * kLanes;
  bool rowsEnd = oh % (2 * dh), colsEnd = ow % (2 * dw);
  // Against the direct tiles, which skip kernel rows that read only
  // padding rows (x's rows outside [top, end)): a tile costs 16 products
  // (4 an output) and about a fifth more in transforms, and a last band
  // cut short computes rows and columns it does not store. At a large
  // dilation on a small plane (an ASPP's rate 36 on 40 rows) most kernel
  // rows read padding: the direct tiles win.
  auto [top, end] = sourceRows(g);
  int64_t directRows = 0;
  for (int64_t y = 0; y < oh; ++y)
    for (int64_t k = 0; k < 3; ++k)
      directRows += y + k * dh >= top && y + k * dh < end;
  if (5 * (2 * rowPairs) * (2 * tiles) >= directRows * 3 * ow)
    return false;
  // Fused: a task per pair of output rows runs the three steps through
  // thread scratch, every task reading all of U (16/9 of the weights):
  // from L2 when U fits there, else it must be spread over enough tiles
  // (8: a VGG-style 512-channel conv on 28 x 28, its 16 MiB U streamed
  // by each of its 14 tasks, still ran 1.7x faster than direct).
  // Phased: a small plane whose U would come from memory for each of its
  // few row pairs runs each step over the whole image (a task per input
  // block, per transform element and block pair, per output block), U
  // read once, V and M in buffers of the image.
  int64_t uBytes = 16 * c * m * 4, planeTiles = rowPairs * tiles,
          vmBytes = n * 16 * planeTiles * (c + m) * 4;
  bool phased = uBytes > kL2Bytes && vmBytes <= 4 * kL2Bytes;
  if (!phased && uBytes > kL2Bytes && tiles < 8)
    return false;
  // (Phased, U streams from memory once: 64 bytes per input x output
  // channel, against 9 direct products per output position. Under
  // kPhasedMinPositions of them, streaming costs more than it saves where
  // memory is slow: resnet50's 512-channel 7 x 7 conv took 1.6x the
  // direct time on an Intel Xeon VM, though 0.8x on an AMD EPYC one.)
  if (phased && n * oh * ow < kPhasedMinPositions)
    return false;
  // (A fused task's V and M, a row's tiles on all channels, past twice L2
  // would stream from L3 between the steps.)
  if (!phased && 16 * tiles * (c + m) * 4 > 2 * kL2Bytes)
    return false;
  std::optional<BlockedInit> init = matchBlockedInit(g);
  if (!init)
    return false;
  OpBuilder b(g);
  Location loc = g.getLoc();
  int64_t nb = mb % 2 == 0 ? 2 : 1, groups = mb / nb;
  Value u = winogradWeights(b, loc, g.getDpsInputs()[1], nb);
  if (!u)
    return false;
  linalg::GenericOp epilogue = findBlockedEpilogue(g);
  Value dest = epilogue ? epilogue.getDpsInits()[0] : out;
  Type f32 = b.getF32Type();
  auto vec = VectorType::get({kLanes}, f32);
  int64_t gemmTiles = phased ? planeTiles : tiles;
  auto forLoop = [&](OpBuilder &ob, int64_t hi,
                     function_ref<void(OpBuilder &, Value)> body) {
    auto loop = ob.create<scf::ForOp>(loc, idx(ob, loc, 0), idx(ob, loc, hi),
                                      idx(ob, loc, 1));
    OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
    body(lb, loop.getInductionVar());
  };
  auto add = [&](OpBuilder &ob, Value p, Value q) -> Value {
    return ob.create<arith::AddFOp>(loc, p, q);
  };
  auto sub = [&](OpBuilder &ob, Value p, Value q) -> Value {
    return ob.create<arith::SubFOp>(loc, p, q);
  };

  // V [16][tiles][c] and M [16][tiles][m] of a task (fused) or
  // [n * 16][planeTiles][...] of the images (phased): the index of
  // element `e` of image `img`, of tile `t` of row pair `rp`.
  auto eAt = [&](OpBuilder &ob, Value img, Value e) -> Value {
    if (!phased)
      return e;
    return ob.create<arith::AddIOp>(
        loc, ob.create<arith::MulIOp>(loc, img, idx(ob, loc, 16)), e);
  };
  auto tileAt = [&](OpBuilder &ob, Value rp, Value t) -> Value {
    if (!phased)
      return t;
    return ob.create<arith::AddIOp>(
        loc, ob.create<arith::MulIOp>(loc, rp, idx(ob, loc, tiles)), t);
  };

  // The first row of pair `p` (column of tile `p`) at dilation `d`.
  auto firstOf = [&](OpBuilder &ob, Value p, int64_t d) -> Value {
    Value two = ob.create<arith::MulIOp>(loc, p, idx(ob, loc, 2));
    if (d == 1)
      return two;
    // 2 d (p / d) + p % d = 2 p - p % d.
    return ob.create<arith::SubIOp>(
        loc, two, ob.create<arith::RemUIOp>(loc, p, idx(ob, loc, d)));
  };

  // Input transform V = B^T d B of the 4x4 blocks of row pair `rp`'s
  // tiles in input block `blk`, at block `vBlk` of V's channels.
  auto inputTransform = [&](OpBuilder &ib, Value vs, Value img, Value rp,
                            Value blk, Value vBlk) {
    Value row0 = firstOf(ib, rp, dh);
    Value ch = ib.create<arith::MulIOp>(loc, vBlk, idx(ib, loc, kLanes));
    Value zero =
        ib.create<arith::ConstantOp>(loc, DenseElementsAttr::get(vec, 0.0f));
    forLoop(ib, tiles, [&](OpBuilder &pb, Value t) {
      Value col0 = firstOf(pb, t, dw);
      // Index `at` + `i` d of a dim of `size`: clamped into x, and whether
      // it lies inside (only a last band's 4th row or column may not).
      auto inside = [&](Value at, int64_t i, int64_t d, int64_t size,
                        bool end) -> std::pair<Value, Value> {
        Value v = pb.create<arith::AddIOp>(loc, at, idx(pb, loc, i * d));
        if (!end || i < 3)
          return {v, Value()};
        Value in = pb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, v,
                                            idx(pb, loc, size));
        return {pb.create<arith::MinSIOp>(loc, v, idx(pb, loc, size - 1)), in};
      };
      Value d[4][4];
      for (int i = 0; i < 4; ++i) {
        auto [row, rowIn] = inside(row0, i, dh, xh, rowsEnd);
        for (int j = 0; j < 4; ++j) {
          auto [col, colIn] = inside(col0, j, dw, xw, colsEnd);
          d[i][j] = pb.create<vector::LoadOp>(
              loc, vec, x, ValueRange{img, blk, row, col, idx(pb, loc, 0)});
          for (Value in : {rowIn, colIn})
            if (in)
              d[i][j] = pb.create<arith::SelectOp>(loc, in, d[i][j], zero);
        }
      }
      Value s[4][4];
      for (int j = 0; j < 4; ++j) {
        s[0][j] = sub(pb, d[0][j], d[2][j]);
        s[1][j] = add(pb, d[1][j], d[2][j]);
        s[2][j] = sub(pb, d[2][j], d[1][j]);
        s[3][j] = sub(pb, d[1][j], d[3][j]);
      }
      Value at = tileAt(pb, rp, t);
      for (int i = 0; i < 4; ++i) {
        Value v[4] = {sub(pb, s[i][0], s[i][2]), add(pb, s[i][1], s[i][2]),
                      sub(pb, s[i][2], s[i][1]), sub(pb, s[i][1], s[i][3])};
        for (int j = 0; j < 4; ++j)
          pb.create<vector::StoreOp>(
              loc, v[j], vs,
              ValueRange{eAt(pb, img, idx(pb, loc, i * 4 + j)), at, ch});
      }
    });
  };

  // M[e] = V[e] U[e] for block pair `grp` (one block if odd): register
  // tiles of up to 9 tiles x 2 blocks (14 x 1) as the direct kernel's,
  // their widths balanced.
  int64_t most = nb == 2 ? 9 : 14;
  int64_t rowTiles = llvm::divideCeil(gemmTiles, most);
  int64_t width = llvm::divideCeil(gemmTiles, rowTiles),
          wide = gemmTiles - (width - 1) * rowTiles;
  // Input channels [k0, k1) (V's from 0), from zero or (`more` true)
  // adding to M.
  auto product = [&](OpBuilder &gb, Value vs, Value ms, Value img, Value e,
                     Value grp, Value k0, Value k1, Value more) {
    Value ve = eAt(gb, img, e);
    Value ch0 = gb.create<arith::MulIOp>(loc, grp, idx(gb, loc, nb * kLanes));
    auto tile = [&](OpBuilder &kb, Value t0, int64_t w) {
      Value zero =
          kb.create<arith::ConstantOp>(loc, DenseElementsAttr::get(vec, 0.0f));
      SmallVector<Value> ts;
      for (int64_t p = 0; p < w; ++p)
        ts.push_back(kb.create<arith::AddIOp>(loc, t0, idx(kb, loc, p)));
      SmallVector<Value> acc(w * nb, zero);
      if (more)
        for (int64_t p = 0; p < w; ++p)
          for (int64_t j = 0; j < nb; ++j)
            acc[p * nb + j] = kb.create<arith::SelectOp>(
                loc, more,
                kb.create<vector::LoadOp>(
                    loc, vec, ms,
                    ValueRange{ve, ts[p],
                               kb.create<arith::AddIOp>(
                                   loc, ch0, idx(kb, loc, j * kLanes))}),
                zero);
      auto k = kb.create<scf::ForOp>(
          loc, k0, k1, idx(kb, loc, 1), acc,
          [&](OpBuilder &cb2, Location l, Value ci, ValueRange iter) {
            SmallVector<Value> a(iter.begin(), iter.end());
            SmallVector<Value> wv;
            for (int64_t j = 0; j < nb; ++j)
              wv.push_back(cb2.create<vector::LoadOp>(
                  l, vec, u, ValueRange{e, grp, ci, idx(cb2, l, j * kLanes)}));
            for (int64_t p = 0; p < w; ++p) {
              Value s = cb2.create<memref::LoadOp>(
                  l, vs,
                  ValueRange{ve, ts[p], cb2.create<arith::SubIOp>(l, ci, k0)});
              Value bs = cb2.create<vector::BroadcastOp>(l, vec, s);
              for (int64_t j = 0; j < nb; ++j)
                a[p * nb + j] =
                    cb2.create<vector::FMAOp>(l, bs, wv[j], a[p * nb + j]);
            }
            cb2.create<scf::YieldOp>(l, a);
          });
      for (int64_t p = 0; p < w; ++p)
        for (int64_t j = 0; j < nb; ++j)
          kb.create<vector::StoreOp>(
              loc, k.getResult(p * nb + j), ms,
              ValueRange{ve, ts[p],
                         kb.create<arith::AddIOp>(loc, ch0,
                                                  idx(kb, loc, j * kLanes))});
    };
    auto loop = gb.create<scf::ForOp>(
        loc, idx(gb, loc, 0), idx(gb, loc, wide * width), idx(gb, loc, width));
    OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
    tile(lb, loop.getInductionVar(), width);
    if (wide < rowTiles) {
      auto rest = gb.create<scf::ForOp>(loc, idx(gb, loc, wide * width),
                                        idx(gb, loc, gemmTiles),
                                        idx(gb, loc, width - 1));
      OpBuilder rb = OpBuilder::atBlockBegin(rest.getBody());
      tile(rb, rest.getInductionVar(), width - 1);
    }
  };

  // Output transform Y = A^T M A of row pair `rp`'s tiles in output block
  // `blk`, the bias, the epilogue, the store.
  auto outputTransform = [&](OpBuilder &ob, Value ms, Value img, Value rp,
                             Value blk) {
    Value row0 = firstOf(ob, rp, dh);
    Value bias =
        init->bias ? ob.create<vector::LoadOp>(loc, vec, init->bias,
                                               ValueRange{blk, idx(ob, loc, 0)})
                         .getResult()
                   : ob.create<vector::BroadcastOp>(loc, vec, init->scalar)
                         .getResult();
    Value ch = ob.create<arith::MulIOp>(loc, blk, idx(ob, loc, kLanes));
    forLoop(ob, tiles, [&](OpBuilder &pb, Value t) {
      Value at = tileAt(pb, rp, t);
      Value mv[4][4];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          mv[i][j] = pb.create<vector::LoadOp>(
              loc, vec, ms,
              ValueRange{eAt(pb, img, idx(pb, loc, i * 4 + j)), at, ch});
      Value s[2][4];
      for (int j = 0; j < 4; ++j) {
        s[0][j] = add(pb, add(pb, mv[0][j], mv[1][j]), mv[2][j]);
        s[1][j] = sub(pb, sub(pb, mv[1][j], mv[2][j]), mv[3][j]);
      }
      Value col0 = firstOf(pb, t, dw);
      for (int i = 0; i < 2; ++i) {
        Value y[2] = {add(pb, add(pb, s[i][0], s[i][1]), s[i][2]),
                      sub(pb, sub(pb, s[i][1], s[i][2]), s[i][3])};
        Value row = pb.create<arith::AddIOp>(loc, row0, idx(pb, loc, i * dh));
        for (int j = 0; j < 2; ++j) {
          Value col = pb.create<arith::AddIOp>(loc, col0, idx(pb, loc, j * dw));
          // (Second rows and columns past the plane's end: not stored.)
          Value in;
          if (i == 1 && rowsEnd)
            in = pb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, row,
                                          idx(pb, loc, oh));
          if (j == 1 && colsEnd) {
            Value colIn = pb.create<arith::CmpIOp>(
                loc, arith::CmpIPredicate::slt, col, idx(pb, loc, ow));
            in = in ? pb.create<arith::AndIOp>(loc, in, colIn).getResult()
                    : colIn;
          }
          OpBuilder sb = pb;
          if (in) {
            auto branch = pb.create<scf::IfOp>(loc, in, /*withElse=*/false);
            sb = branch.getThenBodyBuilder();
          }
          Value v = add(sb, y[j], bias);
          SmallVector<Value> pos = {img, blk, row, col, idx(sb, loc, 0)};
          if (epilogue)
            v = applyEpilogue(sb, loc, epilogue, out, v, pos, blk);
          sb.create<vector::StoreOp>(loc, v, dest, pos);
        }
      }
    });
  };

  int64_t products = 16 * tiles * c * m;
  if (phased) {
    Value vAll = b.create<memref::AllocOp>(
        loc, MemRefType::get({n * 16, planeTiles, c}, f32),
        b.getI64IntegerAttr(64));
    Value mAll = b.create<memref::AllocOp>(
        loc, MemRefType::get({n * 16, planeTiles, m}, f32),
        b.getI64IntegerAttr(64));
    scf::ForOp in = taskLoop(b, loc, n * cb * rowPairs,
                             vectorize::kParallelElements, 16 * tiles * kLanes);
    OpBuilder ib = OpBuilder::atBlockBegin(in.getBody());
    SmallVector<Value> at = taskDigits(ib, loc, in.getInductionVar(), n, cb,
                                       rowPairs, /*rowsOuter=*/true);
    inputTransform(ib, vAll, at[0], at[2], at[1], at[1]);
    scf::ForOp mm =
        taskLoop(b, loc, n * 16 * groups, vectorize::kParallelMultiplyAdds,
                 planeTiles * c * nb * kLanes);
    OpBuilder pb = OpBuilder::atBlockBegin(mm.getBody());
    at = digits(pb, loc, mm.getInductionVar(), {n, 16, groups});
    product(pb, vAll, mAll, at[0], at[1], at[2], idx(pb, loc, 0),
            idx(pb, loc, c), Value());
    scf::ForOp outs =
        taskLoop(b, loc, n * mb * rowPairs, vectorize::kParallelElements,
                 16 * tiles * kLanes);
    OpBuilder ob = OpBuilder::atBlockBegin(outs.getBody());
    at = taskDigits(ob, loc, outs.getInductionVar(), n, mb, rowPairs,
                    /*rowsOuter=*/true);
    outputTransform(ob, mAll, at[0], at[2], at[1]);
  } else {
    scf::ForOp tasks = taskLoop(b, loc, n * rowPairs,
                                vectorize::kParallelMultiplyAdds, products);
    OpBuilder tb = OpBuilder::atBlockBegin(tasks.getBody());
    SmallVector<Value> at =
        digits(tb, loc, tasks.getInductionVar(), {n, rowPairs});
    // A row's V on many input channels (ocr_det's head: 256 on 40 tiles,
    // 655 KiB) and its U together past L2 evicted each other (its products
    // at 63% of peak): then the input blocks in chunks of at most 128 KiB
    // of V, M adding each chunk's products (the sums in the same order).
    // Each chunk rereads M: only for a small M (few output channels;
    // deeplab's 176 -> 128 decoder conv ran 5% slower chunked).
    int64_t vBlockBytes = 16 * tiles * kLanes * 4, cbChunk = cb;
    if (cb * vBlockBytes > kL2Bytes / 4 && 16 * tiles * m * 4 <= kL2Bytes / 4) {
      int64_t chunks = llvm::divideCeil(
          cb, std::max<int64_t>(1, kL2Bytes / 8 / vBlockBytes));
      cbChunk = llvm::divideCeil(cb, chunks);
    }
    int64_t chunks = llvm::divideCeil(cb, cbChunk);
    // (In a parallel loop's body: per-thread scratch.)
    Value vs = tb.create<memref::AllocOp>(
        loc, MemRefType::get({16, tiles, cbChunk * kLanes}, f32),
        tb.getI64IntegerAttr(64));
    Value ms = tb.create<memref::AllocOp>(
        loc, MemRefType::get({16, tiles, m}, f32), tb.getI64IntegerAttr(64));
    forLoop(tb, chunks, [&](OpBuilder &kb, Value ck) {
      Value lo = kb.create<arith::MulIOp>(loc, ck, idx(kb, loc, cbChunk));
      Value hi = kb.create<arith::MinUIOp>(
          loc, kb.create<arith::AddIOp>(loc, lo, idx(kb, loc, cbChunk)),
          idx(kb, loc, cb));
      auto blocks = kb.create<scf::ForOp>(loc, lo, hi, idx(kb, loc, 1));
      OpBuilder ib = OpBuilder::atBlockBegin(blocks.getBody());
      Value blk = blocks.getInductionVar();
      inputTransform(ib, vs, at[0], at[1], blk,
                     ib.create<arith::SubIOp>(loc, blk, lo));
      Value k0 = kb.create<arith::MulIOp>(loc, lo, idx(kb, loc, kLanes));
      Value k1 = kb.create<arith::MulIOp>(loc, hi, idx(kb, loc, kLanes));
      Value more = chunks > 1
                       ? kb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne,
                                                  ck, idx(kb, loc, 0))
                       : Value();
      forLoop(kb, 16, [&](OpBuilder &eb, Value e) {
        forLoop(eb, groups, [&](OpBuilder &gb, Value grp) {
          product(gb, vs, ms, at[0], e, grp, k0, k1, more);
        });
      });
    });
    forLoop(tb, mb, [&](OpBuilder &ob, Value blk) {
      outputTransform(ob, ms, at[0], at[1], blk);
    });
  }
  eraseRewritten(g, init->op, epilogue, fused);
  return true;
}

} // namespace kiln::blocked
