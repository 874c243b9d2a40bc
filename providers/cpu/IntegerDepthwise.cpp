//===- IntegerDepthwise.cpp - 8-bit depthwise convs on VNNI ---------------===//
//
// Part of kiln-cpu-integer-contractions: 2-D depthwise convs of u8 data by
// constant s8 weights into i32 (ConvInteger's form, the data padded with
// its zero point). Widened to f32 (the generic depthwise loops), a tap
// costs a conversion and an FMA per 16 positions, and mobilenet_v2's
// 8-bit depthwise convs ran up to 2x slower than its f32 ones. Here four
// taps of a kernel row go in one vpdpbusd: per kernel row, a 64-byte load
// of the channel plane and one byte permutation (vpermb) place the four
// input bytes of each of 16 output positions in its i32 lane, against the
// four weights broadcast.
//
//===----------------------------------------------------------------------===//
#include "providers/cpu/IntegerKernels.h"
#include "providers/cpu/Vectorize.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace kiln::int8 {

namespace {

/// How one channel's output positions map onto 16-lane vectors: `rows`
/// output rows of `cols` positions each (several rows only when one holds
/// the whole width), `chunks` vectors across a row. Lane j reads the bytes
/// at offsets `lane(j) + tap * dw` of the window loaded for its vector.
struct Lanes {
  int64_t rows, cols, chunks;
};

/// The lanes for output width `ow`, `oh` rows, when each vector's bytes
/// (stride `sw`, `rowStep` bytes between output rows, taps up to `maxTap`
/// bytes on) fit in one 64-byte window.
std::optional<Lanes> lanesFor(int64_t oh, int64_t ow, int64_t sw,
                              int64_t rowStep, int64_t maxTap) {
  int64_t cols = std::min({kLanes, ow, (63 - maxTap) / sw + 1});
  if (cols < 1)
    return std::nullopt;
  int64_t rows = 1;
  while (cols == ow && rows < oh && (rows + 1) * ow <= kLanes &&
         rows * rowStep + sw * (ow - 1) + maxTap <= 63)
    ++rows;
  return Lanes{rows, cols, int64_t(llvm::divideCeil(ow, cols))};
}

} // namespace

bool rewriteDepthwise(linalg::GenericOp g,
                      std::optional<vectorize::ConvEpilogue> &epilogue) {
  using namespace vectorize;
  if (!isEightBitDepthwise(g) || !isU8S8MulAdd(g))
    return false;
  std::optional<DepthwiseMatch> dm = matchDepthwise(g);
  SmallVector<int64_t> r = g.getStaticLoopRanges(); // n m oh kh kw ow
  if (!dm || llvm::any_of(r, ShapedType::isDynamic))
    return false;
  Value x = g.getDpsInputs()[0], wv = g.getDpsInputs()[1],
        out = g.getDpsInits()[0];
  auto get = wv.getDefiningOp<memref::GetGlobalOp>();
  std::optional<SmallVector<int8_t>> w = constantBytes(wv);
  auto xt = cast<MemRefType>(x.getType());
  if (!get || !w || !xt.hasStaticShape())
    return false;
  const int64_t n = r[0], c = r[1], oh = r[2], kh = r[3], kw = r[4],
                ow = r[5];
  const int64_t hp = xt.getDimSize(2), wp = xt.getDimSize(3);
  const int64_t groups = llvm::divideCeil(kw, 4), positions = oh * ow;
  const int64_t maxTap = dm->dw * std::min<int64_t>(3, kw - 1);
  std::optional<Lanes> lanes =
      lanesFor(oh, ow, dm->sw, dm->sh * wp, maxTap);
  // (Kernel rows' weights stay in registers.)
  std::optional<ZeroInit> zeroInit = zeroInitBefore(g, out);
  if (!lanes || kh * groups > 16 || !zeroInit)
    return false;
  // Each thread copies a channel's plane (padded, when x is a padded copy)
  // into scratch with room past its end for the last 64-byte loads. The
  // outputs must not land on the source while other threads read it.
  std::optional<PaddedSource> padded = matchPaddedSource(g, true);
  Value src = padded ? padded->src : x;
  if (writesInto(SmallVector<Value>(g.getDpsInits()), src))
    return false;
  // The epilogue may store into the source itself (bufferization reuses
  // it at stride 1): each channel's outputs then overwrite only that
  // channel's plane, which its thread has copied first.
  epilogue = matchConvEpilogue(g, out);
  Value epilogueOut =
      epilogue ? linalg::GenericOp(epilogue->op).getDpsInits()[0] : Value();
  if (epilogueOut && epilogueOut != src && writesInto({epilogueOut}, src)) {
    epilogue.reset();
    return false;
  }

  OpBuilder b(g);
  Location loc = g.getLoc();
  if (epilogue)
    loc = FusedLoc::get(g.getContext(), {loc, epilogue->op.getLoc()});
  auto idx = [&](OpBuilder &ib, int64_t v) -> Value {
    return ib.create<arith::ConstantIndexOp>(loc, v);
  };
  auto i8 = b.getI8Type(), i32 = b.getI32Type();
  auto bytes64 = VectorType::get({64}, i8);
  auto i32x16 = VectorType::get({kLanes}, i32);
  // Weights as one dword per channel, kernel row and group of 4 taps
  // (byte t: tap 4 * group + t; zero past the row).
  auto wType = MemRefType::get({c * kh * groups}, i32);
  Value wTable = derivedGlobal(
      b, loc, g->getParentOfType<ModuleOp>(),
      (get.getName() + "_dw_vnni").str(), wType,
      [&] {
        SmallVector<int32_t> words(c * kh * groups, 0);
        for (int64_t ch = 0; ch < c; ++ch)
          for (int64_t i = 0; i < kh; ++i)
            for (int64_t q = 0; q < groups; ++q) {
              uint32_t word = 0;
              for (int64_t t = 0; t < 4 && 4 * q + t < kw; ++t)
                word |= uint32_t(uint8_t((*w)[(ch * kh + i) * kw + 4 * q + t]))
                        << (8 * t);
              words[(ch * kh + i) * groups + q] = int32_t(word);
            }
        return DenseElementsAttr::get(
            RankedTensorType::get(wType.getShape(), i32),
            ArrayRef<int32_t>(words));
      },
      b.getI64IntegerAttr(64));
  // The byte permutation of group q's window: lane j's four bytes. Taps
  // past the row read tap 0's byte (its weight is 0).
  SmallVector<SmallVector<int64_t>> perms;
  for (int64_t q = 0; q < groups; ++q) {
    SmallVector<int64_t> perm(64, 0);
    for (int64_t j = 0; j < lanes->rows * lanes->cols; ++j)
      for (int64_t t = 0; t < 4; ++t)
        perm[4 * j + t] = (j / lanes->cols) * dm->sh * wp +
                          (j % lanes->cols) * dm->sw +
                          (4 * q + t < kw ? t : 0) * dm->dw;
    perms.push_back(perm);
  }
  // The plane: hp x wp bytes as x lays them out, then room for every
  // window's 64 bytes and the row copies' whole-vector stores.
  const int64_t lastWindow =
      ((oh - 1) * dm->sh + (kh - 1) * dm->dh) * wp +
      (lanes->chunks - 1) * lanes->cols * dm->sw + 4 * (groups - 1) * dm->dw;
  auto srcType = cast<MemRefType>(src.getType());
  const int64_t srcH = srcType.getDimSize(2), srcW = srcType.getDimSize(3);
  const int64_t top = padded ? padded->top : 0,
                left = padded ? padded->left : 0;
  const int64_t copied = llvm::alignTo(srcW, 64);
  const int64_t planeBytes = llvm::alignTo(
      std::max(lastWindow + 64, (hp - 1) * wp + std::max(wp + 64, left + copied)),
      64);
  Value pad = padded ? padded->pad
                     : b.create<arith::ConstantIntOp>(loc, 0, 8).getResult();
  auto forLoop = [&](OpBuilder &ib, Value lb, Value ub, int64_t step,
                     function_ref<void(OpBuilder &, Value)> body) {
    return ib.create<scf::ForOp>(
        loc, lb, ub, idx(ib, step), ValueRange{},
        [&](OpBuilder &lb2, Location, Value iv, ValueRange) {
          body(lb2, iv);
          lb2.create<scf::YieldOp>(loc);
        });
  };
  // Plane (image, ch): row by row, whole 64-byte stores (a row's last one
  // runs into the next row, which is written after it).
  auto buildPlane = [&](OpBuilder &pb, Value image, Value ch) -> Value {
    Value plane = pb.create<memref::AllocOp>(
        loc, MemRefType::get({planeBytes}, i8), pb.getI64IntegerAttr(64));
    Value padVec = pb.create<vector::BroadcastOp>(loc, bytes64, pad);
    auto padRun = [&](OpBuilder &rb, Value rowStart, int64_t from,
                      int64_t to) {
      for (int64_t at = from; at < to; at += 64)
        rb.create<vector::StoreOp>(
            loc, padVec, plane,
            ValueRange{rb.create<arith::AddIOp>(loc, rowStart, idx(rb, at))});
    };
    auto padRows = [&](int64_t from, int64_t to) {
      if (from < to)
        forLoop(pb, idx(pb, from), idx(pb, to), 1, [&](OpBuilder &rb, Value i) {
          padRun(rb, rb.create<arith::MulIOp>(loc, i, idx(rb, wp)), 0, wp);
        });
    };
    padRows(0, top);
    forLoop(pb, idx(pb, 0), idx(pb, srcH), 1, [&](OpBuilder &rb, Value i) {
      Value rowStart = rb.create<arith::MulIOp>(
          loc, rb.create<arith::AddIOp>(loc, i, idx(rb, top)), idx(rb, wp));
      padRun(rb, rowStart, 0, left);
      for (int64_t at = 0; at < srcW; at += 64) {
        Value v = rb.create<vector::TransferReadOp>(
            loc, bytes64, src, ValueRange{image, ch, i, idx(rb, at)}, pad,
            ArrayRef<bool>{at + 64 <= srcW});
        rb.create<vector::StoreOp>(
            loc, v, plane,
            ValueRange{
                rb.create<arith::AddIOp>(loc, rowStart, idx(rb, left + at))});
      }
      padRun(rb, rowStart, left + copied, wp);
    });
    padRows(top + srcH, hp);
    return plane;
  };
  Value zeros = b.create<arith::ConstantOp>(
      loc, DenseElementsAttr::get(i32x16, b.getZeroAttr(i32)));
  // Vectors per block: enough independent sums to hide vpdpbusd's latency.
  const int64_t perBlock =
      std::max<int64_t>(1, 8 / lanes->chunks); // row groups per block
  const int64_t fullGroups = oh / lanes->rows,
                lastRows = oh % lanes->rows;
  forLoop(b, idx(b, 0), idx(b, n), 1, [&](OpBuilder &ib,
                                                           Value image) {
    Value outN = epilogue ? Value()
                          : rowMajor(ib, loc, out, ib.getIndexAttr(c),
                                     positions,
                                     ib.create<arith::MulIOp>(
                                           loc, image, idx(ib, c * positions))
                                         .getResult());
    auto store = epilogue
                     ? convEpilogueStore(ib, loc, *epilogue, image, c, positions)
                     : nullptr;
    auto channels = forLoop(ib, idx(ib, 0), idx(ib, c), 1, [&](OpBuilder &cb,
                                                               Value ch) {
      Value plane = buildPlane(cb, image, ch);
      SmallVector<Value> weights; // [kh][groups], broadcast
      for (int64_t i = 0; i < kh; ++i)
        for (int64_t q = 0; q < groups; ++q) {
          Value at = cb.create<arith::AddIOp>(
              loc, cb.create<arith::MulIOp>(loc, ch, idx(cb, kh * groups)),
              idx(cb, i * groups + q));
          weights.push_back(cb.create<vector::BroadcastOp>(
              loc, i32x16,
              cb.create<memref::LoadOp>(loc, wTable, ValueRange{at})));
        }
      // `count` row groups from output row `row0`, the last one `tailRows`
      // rows when nonzero: every kernel row's taps for all of their
      // vectors, then the stores.
      auto block = [&](OpBuilder &kb, Value row0, int64_t count,
                       int64_t tailRows) {
        struct Vec {
          int64_t rowOff, colOff, lanes;
        };
        SmallVector<Vec> vecs;
        for (int64_t u = 0; u < count; ++u) {
          int64_t rows = u + 1 == count && tailRows ? tailRows : lanes->rows;
          for (int64_t k = 0; k < lanes->chunks; ++k) {
            int64_t x0 = k * lanes->cols;
            vecs.push_back({u * lanes->rows, x0,
                            lanes->rows > 1
                                ? rows * ow
                                : std::min(lanes->cols, ow - x0)});
          }
        }
        Value base = kb.create<arith::MulIOp>(loc, row0, idx(kb, dm->sh * wp));
        SmallVector<Value> accs(vecs.size(), zeros);
        for (int64_t i = 0; i < kh; ++i)
          for (int64_t q = 0; q < groups; ++q)
            for (auto [v, acc] : llvm::zip(vecs, accs)) {
              int64_t off = (v.rowOff * dm->sh + i * dm->dh) * wp +
                            v.colOff * dm->sw + 4 * q * dm->dw;
              Value window = kb.create<vector::LoadOp>(
                  loc, bytes64, plane,
                  ValueRange{kb.create<arith::AddIOp>(loc, base, idx(kb, off))});
              Value quads = kb.create<vector::BitCastOp>(
                  loc, i32x16,
                  kb.create<vector::ShuffleOp>(loc, window, window, perms[q]));
              // (vpdpbusd: the second operand's bytes are unsigned.)
              acc = kb.create<LLVM::CallIntrinsicOp>(
                          loc, i32x16, kVpdpbusd,
                          ValueRange{acc, quads, weights[i * groups + q]})
                        .getResult(0);
            }
        for (auto [v, acc] : llvm::zip(vecs, accs)) {
          Value p0 = kb.create<arith::AddIOp>(
              loc, kb.create<arith::MulIOp>(loc, row0, idx(kb, ow)),
              idx(kb, v.rowOff * ow + v.colOff));
          Value mask;
          if (v.lanes < kLanes) {
            SmallVector<bool> on(kLanes, false);
            std::fill_n(on.begin(), v.lanes, true);
            mask = kb.create<arith::ConstantOp>(
                loc, DenseElementsAttr::get(
                         VectorType::get({kLanes}, kb.getI1Type()),
                         ArrayRef<bool>(on)));
          }
          if (store)
            store(kb, loc, acc, ch, p0, mask);
          else if (mask)
            kb.create<vector::MaskedStoreOp>(loc, outN, ValueRange{ch, p0},
                                             mask, acc);
          else
            kb.create<vector::StoreOp>(loc, acc, outN, ValueRange{ch, p0});
        }
      };
      int64_t loops = fullGroups / perBlock;
      if (loops)
        forLoop(cb, idx(cb, 0), idx(cb, loops * perBlock * lanes->rows),
                perBlock * lanes->rows, [&](OpBuilder &kb, Value row0) {
                  block(kb, row0, perBlock, 0);
                });
      int64_t rest = fullGroups - loops * perBlock + (lastRows ? 1 : 0);
      if (rest)
        block(cb, idx(cb, loops * perBlock * lanes->rows), rest, lastRows);
    });
    if (c >= 2 && c * positions * kh * kw >= kParallelMultiplyAdds)
      markParallel(channels, 1, 1);
  });
  g.erase();
  if (zeroInit->erase)
    zeroInit->erase->erase();
  if (padded)
    erasePaddedSource(*padded, x);
  return true;
}

} // namespace kiln::int8
