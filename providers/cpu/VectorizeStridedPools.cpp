//===- VectorizeStridedPools.cpp - max pools of column stride 2 -----------===//
//
// Part of kiln-cpu-vectorize-contractions: f32 max pools whose columns
// step by 2 (ResNet's 3x3/2 after the stem, SqueezeNet's, 2x2/2), padded
// or not, on 512-bit registers. A max is separable: each source row's max
// over the window's columns is taken once, from its even and odd columns
// de-interleaved in registers, and the output rows whose windows hold
// that row take it from there (a 3x3/2 pool: 2 row maxes an output row,
// not 3 rows of 3 taps each). The source is read as it lies; a pad is
// the pad value in registers (no padded copy, no phase planes).
//
//===----------------------------------------------------------------------===//
#include "providers/cpu/Vectorize.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace kiln::vectorize {

// Output chunks (16 lanes) of a row kept in registers through the rows:
// with a 3x3/2 window, the carried row's maxes, the accumulators and the
// row being reduced, 4 each, beside the loads and shuffles.
static constexpr int64_t kRowChunks = 4;
static constexpr int64_t kLanes = 16;

bool rewriteStridedMaxPool(linalg::GenericOp g, const DepthwiseMatch &dm,
                           int64_t vectorBits) {
  Value x = g.getDpsInputs()[0], out = g.getDpsInits()[0];
  auto xType = cast<MemRefType>(x.getType());
  Type elt = cast<MemRefType>(out.getType()).getElementType();
  if (vectorBits < 512 || !elt.isF32() ||
      !isa_and_nonnull<arith::MaximumFOp>(
          poolReduce(g.getRegion().front(), elt)) ||
      dm.sw != 2 || dm.dw != 1 || dm.dh != 1 || xType.getRank() != 4)
    return false;
  SmallVector<int64_t> r = g.getStaticLoopRanges(); // n c kh kw oh ow
  if (llvm::any_of(ArrayRef(r).drop_front(), ShapedType::isDynamic) ||
      xType.isDynamicDim(2) || xType.isDynamicDim(3))
    return false;
  const int64_t kh = r[2], kw = r[3], oh = r[4], ow = r[5], sh = dm.sh;
  // The accumulators start from the output's fill, in registers.
  std::optional<OutputInit> init = matchOutputInit(g);
  if (!init || !init->scalar)
    return false;
  std::optional<PaddedSource> padded =
      matchPaddedSource(g, /*planesAnyway=*/false);
  Value src = padded ? padded->src : x;
  // Output rows are stored while later source rows are still to be read.
  if ((padded && padded->inPlace) || rootOf(src) == rootOf(out))
    return false;
  auto srcType = cast<MemRefType>(src.getType());
  const int64_t srcH = srcType.getDimSize(2), srcW = srcType.getDimSize(3);
  const int64_t top = padded ? padded->top : 0,
                left = padded ? padded->left : 0;

  OpBuilder b(g);
  Location loc = g.getLoc();
  auto idx = [&](OpBuilder &nb, int64_t v) -> Value {
    return nb.create<arith::ConstantIndexOp>(loc, v);
  };
  auto vec = VectorType::get({kLanes}, elt),
       wide = VectorType::get({2 * kLanes}, elt);
  // Lanes past the source's edges (a pad, or past a row's last output)
  // read as the pad value.
  Value pad = padded ? padded->pad : init->scalar;
  Value padVec = b.create<vector::BroadcastOp>(loc, vec, pad);
  Value initVec = b.create<vector::BroadcastOp>(loc, vec, init->scalar);
  auto max = [&](OpBuilder &nb, Value acc, Value v) -> Value {
    return poolMaxF32(nb, loc, v, acc);
  };
  auto floorDiv = [](int64_t a, int64_t d) {
    return llvm::divideFloorSigned(a, d);
  };

  // The maxes over the window's columns of source row `sr` (in range) for
  // output chunks [j0, j0 + nj): tap t reads column 2 * ow + t - left, in
  // phase p = (t - left) mod 2 at ow + q, q = floor((t - left) / 2); phase
  // chunk k holds lanes 16k.. of a phase, both phases of one 32-wide load.
  auto rowMaxes = [&](OpBuilder &nb, Value n, Value c, Value sr, int64_t j0,
                      int64_t nj) {
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
    SmallVector<Value> maxes;
    for (int64_t j = j0; j < j0 + nj; ++j) {
      Value m;
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
        m = m ? max(nb, m, tap) : tap;
      }
      maxes.push_back(m);
    }
    return maxes;
  };
  // The same for window row `xr` of the padded input (a run-time index):
  // the pad value outside the source's rows.
  auto windowRow = [&](OpBuilder &nb, Value n, Value c, Value xr, int64_t j0,
                       int64_t nj) -> SmallVector<Value> {
    if (!padded)
      return rowMaxes(nb, n, c, xr, j0, nj);
    Value sr = nb.create<arith::SubIOp>(loc, xr, idx(nb, top));
    // (As unsigned, a row above the source is past its end.)
    Value in = nb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, sr,
                                        idx(nb, srcH));
    SmallVector<Type> types(nj, vec);
    auto branch = nb.create<scf::IfOp>(loc, types, in, /*withElseRegion=*/true);
    OpBuilder tb = branch.getThenBodyBuilder();
    tb.create<scf::YieldOp>(loc, rowMaxes(tb, n, c, sr, j0, nj));
    OpBuilder eb = branch.getElseBodyBuilder();
    eb.create<scf::YieldOp>(loc, SmallVector<Value>(nj, padVec));
    return SmallVector<Value>(branch.getResults());
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
        llvm::append_range(inits, windowRow(pb, n, c, idx(pb, row), j0, nj));
      pb.create<scf::ForOp>(
          loc, idx(pb, 0), idx(pb, oh), idx(pb, 1), inits,
          [&](OpBuilder &lb, Location, Value o, ValueRange rows) {
            SmallVector<Value> acc(nj, initVec), window(rows);
            Value base = lb.create<arith::MulIOp>(loc, o, idx(lb, sh));
            for (int64_t row = carried; row < kh; ++row) {
              Value xr = lb.create<arith::AddIOp>(loc, base, idx(lb, row));
              llvm::append_range(window, windowRow(lb, n, c, xr, j0, nj));
            }
            for (int64_t row = 0; row < kh; ++row)
              for (int64_t j = 0; j < nj; ++j)
                acc[j] = max(lb, acc[j], window[row * nj + j]);
            for (int64_t j = 0; j < nj; ++j) {
              int64_t col = kLanes * (j0 + j);
              lb.create<vector::TransferWriteOp>(
                  loc, acc[j], out, ValueRange{n, c, o, idx(lb, col)},
                  ArrayRef<bool>{col + kLanes <= ow});
            }
            lb.create<scf::YieldOp>(
                loc, ArrayRef(window).drop_front((kh - carried) * nj));
          });
    }
  };
  Value batch = ShapedType::isDynamic(r[0])
                    ? (Value)b.create<memref::DimOp>(loc, out, 0)
                    : idx(b, r[0]);
  b.create<scf::ForOp>(
      loc, idx(b, 0), batch, idx(b, 1), ValueRange{},
      [&](OpBuilder &nb, Location, Value n, ValueRange) {
        auto channels = nb.create<scf::ForOp>(
            loc, idx(nb, 0), idx(nb, r[1]), idx(nb, 1), ValueRange{},
            [&](OpBuilder &cb, Location, Value c, ValueRange) {
              plane(cb, n, c);
              cb.create<scf::YieldOp>(loc);
            });
        // Threads take the channels, each writing its own output planes.
        if (r[1] >= 2 && r[1] * oh * ow * kh * kw >= kParallelElements)
          markParallel(channels, 1, 1);
        nb.create<scf::YieldOp>(loc);
      });
  g.erase();
  init->op->erase();
  if (padded) {
    for (Operation *op : padded->ops)
      op->erase();
    for (Operation *u : llvm::make_early_inc_range(x.getUsers()))
      u->erase(); // deallocs
    x.getDefiningOp()->erase();
    if (Value a = padded->filled)
      eraseIfWriteOnly(a);
  }
  return true;
}

} // namespace kiln::vectorize
