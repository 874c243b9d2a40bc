//===- VectorizeStridedWindows.cpp - windows stepping 2 columns -----------===//
//
// Part of kiln-cpu-vectorize-contractions: f32 max pools and depthwise
// convs whose columns step by 2 (ResNet's 3x3/2 pool, MobileNet's and
// EfficientNet's stride-2 depthwise convs), padded or not, on 512-bit
// registers. The source is read as it lies: a row's 32-wide load per 16
// outputs gives its even and odd columns by two shuffles, and each tap is
// one of them, shifted by a lane where the window starts left of the
// column (a pad's lane in registers). No padded copy and no phase planes
// are written. A max is separable: each source row's max over the
// window's columns is taken once and shared by the output rows whose
// windows hold it (a 3x3/2 pool: 2 row maxes an output row, not 3 rows of
// 3 taps). A depthwise conv makes each source row's taps once for a block
// of output rows (about 8 accumulators: independent FMA chains).
//
//===----------------------------------------------------------------------===//
#include "providers/cpu/Vectorize.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace kiln::vectorize {

namespace {

// Output chunks (16 lanes) of a row kept in registers through the rows:
// with a 3x3/2 window, the carried row's maxes, the accumulators and the
// row being reduced, 4 each, beside the loads and shuffles.
constexpr int64_t kRowChunks = 4;
constexpr int64_t kLanes = 16;

/// What the window ops stepping 2 columns share: the source (padded or
/// not), the output's first value, and the code around the planes.
struct StridedWindow {
  linalg::GenericOp g;
  Value x, out, src, pad, padVec;
  OutputInit init;
  std::optional<PaddedSource> padded;
  int64_t srcH = 0, srcW = 0, top = 0, left = 0, kw = 0;
  Location loc;

  /// Null unless `g` (an f32 window stepping 2 columns, undilated, static
  /// but for the batch, its output filled or biased right before it) reads
  /// a source that nothing in `written` is: its rows are read while
  /// earlier output rows are stored.
  static std::optional<StridedWindow> match(linalg::GenericOp g,
                                            const DepthwiseMatch &dm,
                                            int64_t vectorBits, int64_t kw,
                                            ArrayRef<Value> written) {
    Value x = g.getDpsInputs()[0], out = g.getDpsInits()[0];
    auto xType = cast<MemRefType>(x.getType());
    if (vectorBits < 512 || !xType.getElementType().isF32() ||
        !getElementTypeOrSelf(out.getType()).isF32() || dm.sw != 2 ||
        dm.dw != 1 || dm.dh != 1 || xType.getRank() != 4 ||
        llvm::any_of(xType.getShape().drop_front(), ShapedType::isDynamic) ||
        llvm::any_of(ArrayRef(g.getStaticLoopRanges()).drop_front(),
                     ShapedType::isDynamic))
      return std::nullopt;
    std::optional<OutputInit> init = matchOutputInit(g);
    if (!init)
      return std::nullopt;
    StridedWindow sw{g,  x, out, x, {}, {}, *init,
                     {}, 0, 0,   0, 0,  kw, g.getLoc()};
    sw.padded = matchPaddedSource(g, /*planesAnyway=*/false);
    if (sw.padded) {
      if (sw.padded->inPlace)
        return std::nullopt;
      sw.src = sw.padded->src;
      sw.top = sw.padded->top;
      sw.left = sw.padded->left;
    }
    if (writesInto(written, sw.src))
      return std::nullopt;
    auto srcType = cast<MemRefType>(sw.src.getType());
    sw.srcH = srcType.getDimSize(2);
    sw.srcW = srcType.getDimSize(3);
    return sw;
  }

  Value idx(OpBuilder &b, int64_t v) const {
    return b.create<arith::ConstantIndexOp>(loc, v);
  }

  /// The pad value (lanes past the source's edges read as it), created at
  /// `b`: returns the first op created (where the new code starts).
  Operation *setPad(OpBuilder &b, Value fallback) {
    Operation *first = nullptr;
    pad = padded ? padded->pad : fallback;
    if (!pad) {
      pad = b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(0));
      first = pad.getDefiningOp();
    }
    padVec = b.create<vector::BroadcastOp>(
        loc, VectorType::get({kLanes}, b.getF32Type()), pad);
    return first ? first : padVec.getDefiningOp();
  }

  /// The kw taps of each output chunk in [j0, j0 + nj) on source row `sr`
  /// (in range): tap t reads column 2 * ow + t - left, in phase
  /// p = (t - left) mod 2 at ow + q, q = floor((t - left) / 2); phase chunk
  /// k holds lanes 16k.. of a phase, both phases of one 32-wide load.
  SmallVector<SmallVector<Value>> taps(OpBuilder &nb, Value n, Value c,
                                       Value sr, int64_t j0, int64_t nj) const {
    auto floorDiv = [](int64_t a, int64_t d) {
      return llvm::divideFloorSigned(a, d);
    };
    auto wide = VectorType::get({2 * kLanes}, nb.getF32Type());
    DenseMap<int64_t, Value> loads;
    DenseMap<std::pair<int64_t, int64_t>, Value> phases;
    auto phase = [&](int64_t p, int64_t k) -> Value {
      Value &v = phases[{p, k}];
      if (v)
        return v;
      if (k < 0 || 2 * kLanes * k >= srcW)
        return v = padVec;
      Value &w = loads[k];
      if (!w)
        w = nb.create<vector::TransferReadOp>(
            loc, wide, src, ValueRange{n, c, sr, idx(nb, 2 * kLanes * k)}, pad,
            ArrayRef<bool>{2 * kLanes * (k + 1) <= srcW});
      SmallVector<int64_t> lanes;
      for (int64_t l = 0; l < kLanes; ++l)
        lanes.push_back(p + 2 * l);
      return v = nb.create<vector::ShuffleOp>(loc, w, w, lanes);
    };
    SmallVector<SmallVector<Value>> all;
    for (int64_t j = j0; j < j0 + nj; ++j) {
      all.emplace_back();
      for (int64_t t = 0; t < kw; ++t) {
        int64_t off = t - left, p = off - 2 * floorDiv(off, 2);
        int64_t s = kLanes * j + floorDiv(off, 2), k = floorDiv(s, kLanes),
                rem = s - kLanes * k;
        Value tap = phase(p, k);
        if (rem) {
          SmallVector<int64_t> lanes;
          for (int64_t l = 0; l < kLanes; ++l)
            lanes.push_back(rem + l);
          tap = nb.create<vector::ShuffleOp>(loc, tap, phase(p, k + 1), lanes);
        }
        all.back().push_back(tap);
      }
    }
    return all;
  }

  /// `values` updated by `use` with source row `xr` of the padded input
  /// (a run-time index): its taps where it is a source row, none (the pad)
  /// where it is above or below the source.
  SmallVector<Value> withRow(
      OpBuilder &nb, Value n, Value c, Value xr, int64_t j0, int64_t nj,
      ValueRange values,
      function_ref<SmallVector<Value>(OpBuilder &, ArrayRef<SmallVector<Value>>,
                                      ValueRange)>
          use) const {
    if (!padded)
      return use(nb, taps(nb, n, c, xr, j0, nj), values);
    Value sr = nb.create<arith::SubIOp>(loc, xr, idx(nb, top));
    // (As unsigned, a row above the source is past its end.)
    Value in = nb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, sr,
                                        idx(nb, srcH));
    SmallVector<Type> types(values.getTypes());
    auto branch = nb.create<scf::IfOp>(loc, types, in, /*withElseRegion=*/true);
    OpBuilder tb = branch.getThenBodyBuilder();
    tb.create<scf::YieldOp>(loc, use(tb, taps(tb, n, c, sr, j0, nj), values));
    OpBuilder eb = branch.getElseBodyBuilder();
    eb.create<scf::YieldOp>(loc, use(eb, {}, values));
    return SmallVector<Value>(branch.getResults());
  }

  /// Stores chunk j of output row o.
  void store(OpBuilder &b, Value v, Value n, Value c, Value o, int64_t j,
             int64_t ow) const {
    int64_t col = kLanes * j;
    b.create<vector::TransferWriteOp>(loc, v, out,
                                      ValueRange{n, c, o, idx(b, col)},
                                      ArrayRef<bool>{col + kLanes <= ow});
  }

  /// The loops over images and channels around `plane`; threads take the
  /// channels (each writes its own output planes) above the grain.
  void forEachPlane(OpBuilder &b, int64_t batch, int64_t channels,
                    int64_t workPerChannel,
                    function_ref<void(OpBuilder &, Value, Value)> plane) const {
    Value images = ShapedType::isDynamic(batch)
                       ? (Value)b.create<memref::DimOp>(loc, out, 0)
                       : idx(b, batch);
    b.create<scf::ForOp>(
        loc, idx(b, 0), images, idx(b, 1), ValueRange{},
        [&](OpBuilder &nb, Location, Value n, ValueRange) {
          auto loop = nb.create<scf::ForOp>(
              loc, idx(nb, 0), idx(nb, channels), idx(nb, 1), ValueRange{},
              [&](OpBuilder &cb, Location, Value c, ValueRange) {
                plane(cb, n, c);
                cb.create<scf::YieldOp>(loc);
              });
          if (channels >= 2 && channels * workPerChannel >= kParallelElements)
            markParallel(loop, 1, 1);
          nb.create<scf::YieldOp>(loc);
        });
  }

  /// Erases g and what it replaced: its output's first write, and the
  /// padded copy (which g alone read: matchPaddedSource).
  void eraseReplaced() {
    g.erase();
    init.op->erase();
    if (padded)
      erasePaddedSource(*padded, x);
  }
};

} // namespace

bool rewriteStridedMaxPool(linalg::GenericOp g, const DepthwiseMatch &dm,
                           int64_t vectorBits) {
  if (!isa_and_nonnull<arith::MaximumFOp>(poolReduce(
          g.getRegion().front(), getElementTypeOrSelf(g.getDpsInits()[0]))))
    return false;
  SmallVector<int64_t> r = g.getStaticLoopRanges(); // n c kh kw oh ow
  std::optional<StridedWindow> sw =
      StridedWindow::match(g, dm, vectorBits, r[3], {g.getDpsInits()[0]});
  if (!sw || !sw->init.scalar)
    return false;
  const int64_t kh = r[2], kw = r[3], oh = r[4], ow = r[5], sh = dm.sh;
  Location loc = sw->loc;
  OpBuilder b(g);
  sw->setPad(b, sw->init.scalar);
  Value initVec = b.create<vector::BroadcastOp>(
      loc, VectorType::get({kLanes}, b.getF32Type()), sw->init.scalar);
  // Row maxes of window row `xr` for output chunks [j0, j0 + nj): the max
  // of each chunk's taps (the pad outside the source).
  auto windowRow = [&](OpBuilder &nb, Value n, Value c, Value xr, int64_t j0,
                       int64_t nj) {
    return sw->withRow(
        nb, n, c, xr, j0, nj, SmallVector<Value>(nj, sw->padVec),
        [&](OpBuilder &ub, ArrayRef<SmallVector<Value>> taps, ValueRange v) {
          SmallVector<Value> maxes(v);
          for (auto [j, chunk] : llvm::enumerate(taps)) {
            maxes[j] = chunk.front();
            for (Value tap : ArrayRef(chunk).drop_front())
              maxes[j] = poolMaxF32(ub, loc, tap, maxes[j]);
          }
          return maxes;
        });
  };
  // Output rows in order, each window's last kh - sh rows' maxes carried
  // to the next (its first rows).
  const int64_t carried = std::max<int64_t>(0, kh - sh);
  auto plane = [&](OpBuilder &pb, Value n, Value c) {
    for (int64_t j0 = 0; j0 * kLanes < ow; j0 += kRowChunks) {
      int64_t nj =
          std::min<int64_t>(kRowChunks, llvm::divideCeil(ow, kLanes) - j0);
      SmallVector<Value> inits;
      for (int64_t row = 0; row < carried; ++row)
        llvm::append_range(inits,
                           windowRow(pb, n, c, sw->idx(pb, row), j0, nj));
      pb.create<scf::ForOp>(
          loc, sw->idx(pb, 0), sw->idx(pb, oh), sw->idx(pb, 1), inits,
          [&](OpBuilder &lb, Location, Value o, ValueRange rows) {
            SmallVector<Value> acc(nj, initVec), window(rows);
            Value base = lb.create<arith::MulIOp>(loc, o, sw->idx(lb, sh));
            for (int64_t row = carried; row < kh; ++row) {
              Value xr = lb.create<arith::AddIOp>(loc, base, sw->idx(lb, row));
              llvm::append_range(window, windowRow(lb, n, c, xr, j0, nj));
            }
            for (int64_t row = 0; row < kh; ++row)
              for (int64_t j = 0; j < nj; ++j)
                acc[j] = poolMaxF32(lb, loc, window[row * nj + j], acc[j]);
            for (int64_t j = 0; j < nj; ++j)
              sw->store(lb, acc[j], n, c, o, j0 + j, ow);
            lb.create<scf::YieldOp>(
                loc, ArrayRef(window).drop_front((kh - carried) * nj));
          });
    }
  };
  sw->forEachPlane(b, r[0], r[1], oh * ow * kh * kw, plane);
  sw->eraseReplaced();
  return true;
}

std::optional<Operation *> rewriteStridedDepthwise(linalg::GenericOp g,
                                                   const DepthwiseMatch &dm,
                                                   int64_t vectorBits) {
  Value w = g.getDpsInputs()[1];
  if (!getElementTypeOrSelf(w).isF32() || eightBitMulAdd(g))
    return std::nullopt;
  SmallVector<int64_t> r = g.getStaticLoopRanges(); // n m oh kh kw ow
  std::optional<StridedWindow> sw =
      StridedWindow::match(g, dm, vectorBits, r[4], writtenWith(g));
  if (!sw)
    return std::nullopt;
  const int64_t oh = r[2], kh = r[3], kw = r[4], ow = r[5], sh = dm.sh;
  Location loc = sw->loc;
  OpBuilder b(g);
  Operation *first = sw->setPad(b, Value());
  auto vec = VectorType::get({kLanes}, b.getF32Type());
  // acc += tap * w[c, 0, row, t] over the taps (the pad where there are
  // none), in the generic's order.
  auto fmas = [&](OpBuilder &nb, Value c, int64_t row,
                  ArrayRef<SmallVector<Value>> taps, SmallVector<Value> acc) {
    for (int64_t t = 0; t < kw; ++t) {
      Value wv = nb.create<memref::LoadOp>(
          loc, w,
          ValueRange{c, sw->idx(nb, 0), sw->idx(nb, row), sw->idx(nb, t)});
      Value wb = nb.create<vector::BroadcastOp>(loc, vec, wv);
      for (size_t j = 0; j < acc.size(); ++j)
        acc[j] = nb.create<vector::FMAOp>(
            loc, taps.empty() ? sw->padVec : taps[j][t], wb, acc[j]);
    }
    return acc;
  };
  // Output rows [o0, o0 + rows), chunks [j0, j0 + nj): each source row a
  // block reads is tapped once, for each output row whose window holds it
  // (in source row order: each output's taps stay in (kh, kw) order).
  auto block = [&](OpBuilder &lb, Value n, Value c, Value o0, int64_t rows,
                   int64_t j0, int64_t nj, Value start) {
    SmallVector<Value> acc(rows * nj, start);
    Value base = lb.create<arith::MulIOp>(loc, o0, sw->idx(lb, sh));
    for (int64_t t = 0; t < (rows - 1) * sh + kh; ++t) {
      SmallVector<std::pair<int64_t, int64_t>> users; // (output row, kh)
      for (int64_t q = 0; q < rows; ++q)
        if (t - q * sh >= 0 && t - q * sh < kh)
          users.push_back({q, t - q * sh});
      if (users.empty())
        continue;
      Value xr = lb.create<arith::AddIOp>(loc, base, sw->idx(lb, t));
      acc = sw->withRow(
          lb, n, c, xr, j0, nj, acc,
          [&](OpBuilder &ab, ArrayRef<SmallVector<Value>> taps, ValueRange v) {
            SmallVector<Value> a(v);
            for (auto [q, row] : users) {
              SmallVector<Value> part(a.begin() + q * nj,
                                      a.begin() + (q + 1) * nj);
              llvm::copy(fmas(ab, c, row, taps, part), a.begin() + q * nj);
            }
            return a;
          });
    }
    for (int64_t q = 0; q < rows; ++q) {
      Value o =
          q ? (Value)lb.create<arith::AddIOp>(loc, o0, sw->idx(lb, q)) : o0;
      for (int64_t j = 0; j < nj; ++j)
        sw->store(lb, acc[q * nj + j], n, c, o, j0 + j, ow);
    }
  };
  auto plane = [&](OpBuilder &pb, Value n, Value c) {
    Value start = sw->init.bias ? (Value)pb.create<memref::LoadOp>(
                                      loc, sw->init.bias, ValueRange{c})
                                : sw->init.scalar;
    Value startVec = pb.create<vector::BroadcastOp>(loc, vec, start);
    for (int64_t j0 = 0; j0 * kLanes < ow; j0 += kRowChunks) {
      int64_t nj =
          std::min<int64_t>(kRowChunks, llvm::divideCeil(ow, kLanes) - j0);
      // About 8 accumulators.
      int64_t rows = std::max<int64_t>(1, std::min<int64_t>(8 / nj, oh));
      int64_t full = oh - oh % rows;
      pb.create<scf::ForOp>(loc, sw->idx(pb, 0), sw->idx(pb, full),
                            sw->idx(pb, rows), ValueRange{},
                            [&](OpBuilder &lb, Location, Value o0, ValueRange) {
                              block(lb, n, c, o0, rows, j0, nj, startVec);
                              lb.create<scf::YieldOp>(loc);
                            });
      if (oh % rows)
        block(pb, n, c, sw->idx(pb, full), oh % rows, j0, nj, startVec);
    }
  };
  sw->forEachPlane(b, r[0], r[1], oh * ow * kh * kw, plane);
  sw->eraseReplaced();
  return first->getPrevNode();
}

} // namespace kiln::vectorize
