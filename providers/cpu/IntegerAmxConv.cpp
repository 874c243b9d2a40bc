//===- IntegerAmxConv.cpp - direct 8-bit convs on AMX tiles ---------------===//
//
// Part of kiln-cpu-integer-contractions. An 8-bit conv whose input
// channels come in whole 64-byte k chunks runs on AMX tiles without packed
// patches: per image the input is relaid once as 4-channel dwords
// ([c / 4][phase][h / sh][w / sw], channels 4q .. 4q + 3 of a position
// side by side, each stride phase a plane of its own), so that a tap's 16
// channel quads at 16 consecutive positions of a phase plane are a tile
// of 16 rows of 64 bytes at a fixed row stride, loaded where it lies. The
// weights, [m][kh][kw][c] at compile time, are the other tile. A padded
// copy of the input is never written: the relayout reads its source and
// puts the pad value on the padding. Positions
// run over the phase plane's whole width (one index for all taps); those
// past an output row's end are computed and dropped in the store, which
// moves each panel's kept lanes together (vpermd through a table). A conv
// of at most 4 input channels (a stem) is relaid as 16 shifted planes
// instead, each B tile row another tap (see ShiftedPlanes).
//
//===----------------------------------------------------------------------===//
#include "providers/cpu/IntegerKernels.h"
#include "providers/cpu/Vectorize.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace kiln::int8 {

namespace {
constexpr int64_t kChunkChannels = 4 * kAmxSteps; // input channels a k chunk
constexpr llvm::StringLiteral kVpermd = "llvm.x86.avx512.permvar.si.512";

/// A conv of few input channels (a network's first, on 3 colour planes)
/// fills no k chunk with one tap's channels. Its input is relaid instead
/// as 16 shifted planes: each a phase plane of its one channel quad, moved by
/// `dx` phase columns and `dy` phase rows, so that the 16 rows of a B tile
/// (one plane each, at a fixed stride) hold 16 different taps of each
/// position, and a k chunk is every tap `chunk` x `rowShifts` phase rows
/// down. Tap (i, j): plane (phase (i % sh, j % sw), dx = j / sw,
/// dy = (i / sh) % rowShifts), chunk (i / sh) / rowShifts.
/// A 7x7 conv of stride 2 on 3 channels takes 4 chunks (147 of 256 bytes
/// used) and no packed patches.
/// Taken for one channel quad (c <= 4), where it was measured: the stems
/// of resnet18_qdq (7x7) and yolo_lite_qdq (6x6) took 20-25% less time.
/// (A 16-channel 3x3 conv ran as fast as on packed patches.)
struct ShiftedPlanes {
  int64_t colShifts, rowShifts, chunks;
};
std::optional<ShiftedPlanes> shiftedPlanes(const ConvSizes &s) {
  int64_t colShifts = llvm::PowerOf2Ceil(llvm::divideCeil(s.kw, s.sw));
  int64_t planes = s.sh * s.sw * colShifts;
  if (s.c > 4 || s.dh != 1 || s.dw != 1 || planes > kAmxSteps ||
      kAmxSteps % planes)
    return std::nullopt;
  int64_t rowShifts = kAmxSteps / planes;
  int64_t chunks = llvm::divideCeil(llvm::divideCeil(s.kh, s.sh), rowShifts);
  return ShiftedPlanes{colShifts, rowShifts, chunks};
}
} // namespace

bool amxDirectConvFits(const ConvSizes &s) {
  return (s.c % kChunkChannels == 0 || shiftedPlanes(s)) &&
         s.m % kAmxTileRows == 0 && s.sh >= 1 && s.sh <= 2 && s.sw >= 1 &&
         s.sw <= 2;
}

void emitAmxDirectConv(
    OpBuilder &b, Location loc, const ConvSizes &s, Value x,
    const vectorize::PaddedSource *padded, Value out, ArrayRef<int8_t> w,
    StringRef weightsName,
    function_ref<StoreHook(OpBuilder &, Location, Value)> store,
    AmxTiles &amx) {
  auto idx = [](OpBuilder &ib, Location l, int64_t v) {
    return ib.create<arith::ConstantIndexOp>(l, v).getResult();
  };
  Type i8 = b.getI8Type(), i32 = b.getI32Type();
  std::optional<ShiftedPlanes> sp =
      s.c % kChunkChannels ? shiftedPlanes(s) : std::nullopt;
  int64_t taps = s.kh * s.kw, quads = sp ? 1 : s.c / 4;
  int64_t k = sp ? sp->chunks * kChunkChannels : taps * s.c;
  // Phase planes: input row y, column x in plane (y % sh, x % sw) at
  // (y / sh, x / sw).
  int64_t hs = llvm::divideCeil(s.h, s.sh), ws = llvm::divideCeil(s.w, s.sw);
  int64_t phases = s.sh * s.sw, plane = hs * ws;
  // Rows of the relaid input: a channel quad's phase planes each, or one
  // shifted plane each (16 of them).
  int64_t relaidRows = sp ? kAmxSteps : quads;
  int64_t rowPlanes = sp ? 1 : phases;
  SmallVector<int32_t> tapOffset(taps);
  // (A 1x1 conv of stride 2 reads one phase plane of four.)
  SmallVector<bool> phaseRead(phases, false);
  for (int64_t i = 0; i < s.kh; ++i)
    for (int64_t j = 0; j < s.kw; ++j) {
      int64_t y = i * s.dh, xx = j * s.dw;
      phaseRead[(y % s.sh) * s.sw + xx % s.sw] = true;
      tapOffset[i * s.kw + j] =
          int32_t(((y % s.sh) * s.sw + xx % s.sw) * plane + (y / s.sh) * ws +
                  xx / s.sw);
    }
  // The farthest a B tile starts from its panel's first position.
  int64_t farthest = sp ? (sp->chunks - 1) * sp->rowShifts * ws
                        : *std::max_element(tapOffset.begin(), tapOffset.end());
  // Output (oy, ox) is position oy * ws + ox; a panel's kept lanes, their
  // count and the first one's output position.
  int64_t positions = s.oh * ws, panels = llvm::divideCeil(positions, kLanes);
  SmallVector<int32_t> perm(panels * kLanes, 0), kept(panels, 0),
      first(panels, 0);
  for (int64_t p = 0; p < panels; ++p)
    for (int64_t j = 0; j < kLanes; ++j) {
      int64_t q = p * kLanes + j, oy = q / ws, ox = q % ws;
      if (oy >= s.oh || ox >= s.ow)
        continue;
      if (!kept[p])
        first[p] = int32_t(oy * s.ow + ox);
      perm[p * kLanes + kept[p]++] = int32_t(j);
    }
  // Where no position is dropped (a plane as wide as the output: 1x1 convs
  // without padding), every panel keeps its lanes in place: no vpermd, a
  // port-5 op of about 25 in a residual QDQ store.
  bool inPlace = true;
  for (int64_t p = 0; p < panels && inPlace; ++p)
    for (int64_t j = 0; j < kept[p] && inPlace; ++j)
      inPlace = perm[p * kLanes + j] == j && first[p] == p * kLanes;
  // A row's dwords: its planes, then what the last panel reads past them
  // at the farthest tap (and the relayout's last 16-dword store). Whole
  // 64-byte lines, so that a B tile's rows are lines of their own
  // (848-byte rows made mobilenet_v2_qdq's 14x14 projections 10% slower).
  int64_t span = llvm::alignTo(
      std::max(rowPlanes * plane + kLanes, panels * kLanes + farthest), kLanes);
  // The relayout reads the source of x's padded copy where x is one:
  // rows and columns on the padding take the pad value.
  Value src = padded ? padded->src : x;
  auto srcType = cast<MemRefType>(src.getType());
  int64_t top = padded ? padded->top : 0, left = padded ? padded->left : 0;
  int64_t srcH = srcType.getDimSize(2), srcW = srcType.getDimSize(3);
  // Weights as rows of k: [m][kh][kw][c] (a k chunk is one tap's 64
  // channels), or [m][chunk][plane][4] for shifted planes (taps past the
  // kernel and channels past c zero). Stored as whole A tiles, each 16
  // rows of a k chunk 1 KB of its own: row-major [m][k], a tile's rows lie
  // k bytes apart, 16 streams for the prefetcher per tile (resnet18_qdq's
  // 3x3 convs of 512 channels, weight-bound, took 30% longer). (A stem's
  // 16 KB took 8% less time row-major.)
  int64_t chunks = sp ? 0 : k / kChunkChannels;
  auto at = [&](int64_t o, int64_t kk) {
    if (!chunks)
      return o * k + kk;
    return (((o / kAmxTileRows) * chunks + kk / kChunkChannels) *
                kAmxTileRows +
            o % kAmxTileRows) *
               kChunkChannels +
           kk % kChunkChannels;
  };
  SmallVector<int8_t> rows(s.m * k, 0);
  SmallVector<int32_t> planeInfo;
  if (sp) {
    for (int64_t v = 0; v < kAmxSteps; ++v) {
      int64_t dy = v % sp->rowShifts, dx = v / sp->rowShifts % sp->colShifts;
      int64_t phase = v / (sp->rowShifts * sp->colShifts);
      int64_t py = phase / s.sw, px = phase % s.sw;
      int64_t syOff = dy * s.sh + py - top, sxOff = dx * s.sw + px - left;
      int64_t lo =
          std::clamp<int64_t>(llvm::divideCeilSigned(-syOff, s.sh), 0, hs);
      int64_t hi = std::clamp<int64_t>(
          llvm::divideCeilSigned(srcH - syOff, s.sh), lo, hs);
      if (dx == 0)
        planeInfo.append({int32_t(syOff), int32_t(sxOff), int32_t(lo),
                          int32_t(hi), int32_t(v)});
      for (int64_t o = 0; o < s.m; ++o)
        for (int64_t chunk = 0; chunk < sp->chunks; ++chunk)
          for (int64_t t = 0; t < 4; ++t) {
            int64_t i = (chunk * sp->rowShifts + dy) * s.sh + py;
            int64_t j = dx * s.sw + px;
            if (i < s.kh && j < s.kw && t < s.c)
              rows[at(o, (chunk * kAmxSteps + v) * 4 + t)] =
                  w[((o * s.c + t) * s.kh + i) * s.kw + j];
          }
    }
  } else {
    for (int64_t o = 0; o < s.m; ++o)
      for (int64_t ci = 0; ci < s.c; ++ci)
        for (int64_t t = 0; t < taps; ++t)
          rows[at(o, t * s.c + ci)] = w[(o * s.c + ci) * taps + t];
  }
  auto module = b.getBlock()->getParentOp()->getParentOfType<ModuleOp>();
  auto rowsType = chunks ? MemRefType::get({s.m * chunks, kChunkChannels}, i8)
                         : MemRefType::get({s.m, k}, i8);
  Value weights = vectorize::derivedGlobal(
      b, loc, module,
      (weightsName + (sp ? "_amx_shifted" : "_amx_tiles")).str(), rowsType,
      [&] {
        return DenseElementsAttr::get(
            RankedTensorType::get(rowsType.getShape(), i8),
            ArrayRef<int8_t>(rows));
      },
      b.getI64IntegerAttr(64));
  std::string shape = s.name(/*output=*/true);
  Value tapTable =
      sp ? Value()
         : i32Table(b, loc, module, "kiln_amx_conv_taps_" + shape, tapOffset);
  Value planeTable =
      sp ? i32Table(b, loc, module, "kiln_amx_conv_planes_" + shape, planeInfo)
         : Value();
  Value permTable =
      inPlace ? Value()
              : i32Table(b, loc, module, "kiln_amx_conv_perm_" + shape, perm);
  Value keptTable =
      i32Table(b, loc, module, "kiln_amx_conv_kept_" + shape, kept);
  Value firstTable =
      i32Table(b, loc, module, "kiln_amx_conv_first_" + shape, first);

  int64_t bytes = s.n * s.c * srcH * srcW;
  Value flat = b.create<memref::ReinterpretCastOp>(
      loc, MemRefType::get({bytes}, i8), src, b.getIndexAttr(0),
      ArrayRef<OpFoldResult>{b.getIndexAttr(bytes)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  auto i8x64 = VectorType::get({4 * kLanes}, i8);
  b.create<scf::ForOp>(
      loc, idx(b, loc, 0), idx(b, loc, s.n), idx(b, loc, 1), ValueRange{},
      [&](OpBuilder &ib, Location l, Value image, ValueRange) {
        Value imageBase =
            ib.create<arith::MulIOp>(l, image, idx(ib, l, s.c * srcH * srcW));
        // The relayout: per row each plane row 16 positions at a time,
        // four channels' bytes (16 or, at stride 2, 32 loaded: every other
        // one kept; lanes off the source masked to the pad value)
        // interleaved, the row's last store masked (after a plane's row
        // comes the next plane's, whose start it would overwrite); rows
        // off the source are the pad value.
        Value relaid = ib.create<memref::AllocOp>(
            l, MemRefType::get({relaidRows, span * 4}, i8),
            ib.getI64IntegerAttr(64));
        // The pad value (0 without a padded copy) in every lane.
        auto padVector = [&](OpBuilder &pb, Location pl,
                             VectorType t) -> Value {
          if (padded)
            return pb.create<vector::BroadcastOp>(pl, t, padded->pad);
          return pb.create<arith::ConstantOp>(
              pl, DenseElementsAttr::get(t, pb.getI8IntegerAttr(0)));
        };
        Value padRow = padVector(ib, l, i8x64);
        int64_t wholeSteps = ws / kLanes * kLanes, lastLanes = ws % kLanes;
        // The four channels of `quad` at source row sy from source column
        // xs * sw + sxOff, interleaved (channels past c: the pad value).
        auto relayStep = [&](OpBuilder &xb, Location xl, Value quad, Value sy,
                             Value xs, Value sxOff) -> Value {
          int64_t loadLanes = kLanes * s.sw;
          auto loadType = VectorType::get({loadLanes}, i8);
          auto maskType = VectorType::get({loadLanes}, xb.getI1Type());
          // Source column of lane 0, and the lanes on the source.
          Value sx = xb.create<arith::AddIOp>(
              xl, xb.create<arith::MulIOp>(xl, xs, idx(xb, xl, s.sw)), sxOff);
          Value mask = xb.create<vector::CreateMaskOp>(
              xl, maskType,
              ValueRange{xb.create<arith::MinSIOp>(
                  xl, idx(xb, xl, loadLanes),
                  xb.create<arith::SubIOp>(xl, idx(xb, xl, srcW), sx))});
          if (left) {
            Value before = xb.create<vector::CreateMaskOp>(
                xl, maskType,
                ValueRange{xb.create<arith::SubIOp>(xl, idx(xb, xl, 0), sx)});
            Value all = xb.create<arith::ConstantOp>(
                xl, DenseElementsAttr::get(maskType, true));
            mask = xb.create<arith::AndIOp>(
                xl, mask, xb.create<arith::XOrIOp>(xl, before, all));
          }
          Value pass = padVector(xb, xl, loadType);
          SmallVector<Value> channels;
          for (int64_t t = 0; t < 4; ++t) {
            // (Channels past c: the pad value, meeting zero weights.)
            if (t >= s.c) {
              channels.push_back(
                  padVector(xb, xl, VectorType::get({kLanes}, i8)));
              continue;
            }
            Value ch = xb.create<arith::AddIOp>(
                xl, xb.create<arith::MulIOp>(xl, quad, idx(xb, xl, 4)),
                idx(xb, xl, t));
            // (At the first row of the first plane, with a left pad, lane
            // 0 lies before the buffer: masked lanes are never read.)
            Value at = xb.create<arith::AddIOp>(
                xl, imageBase,
                xb.create<arith::AddIOp>(
                    xl,
                    xb.create<arith::MulIOp>(xl, ch, idx(xb, xl, srcH * srcW)),
                    xb.create<arith::AddIOp>(
                        xl, xb.create<arith::MulIOp>(xl, sy, idx(xb, xl, srcW)),
                        sx)));
            Value v = xb.create<vector::MaskedLoadOp>(
                xl, loadType, flat, ValueRange{at}, mask, pass);
            if (s.sw == 2) {
              SmallVector<int64_t> even;
              for (int64_t j = 0; j < kLanes; ++j)
                even.push_back(2 * j);
              v = xb.create<vector::ShuffleOp>(xl, v, v, even);
            }
            channels.push_back(v);
          }
          return interleaveSteps(xb, xl, channels);
        };
        // `lanes` positions (16 dwords, or fewer: masked) of relaid row
        // `row` from byte `at`.
        auto storeLanes = [&](OpBuilder &xb, Location xl, Value v, Value row,
                              Value at, int64_t lanes) {
          if (lanes == kLanes) {
            xb.create<vector::StoreOp>(xl, v, relaid, ValueRange{row, at});
            return;
          }
          Value mask = xb.create<vector::CreateMaskOp>(
              xl, VectorType::get({4 * kLanes}, xb.getI1Type()),
              ValueRange{idx(xb, xl, 4 * lanes)});
          xb.create<vector::MaskedStoreOp>(xl, relaid, ValueRange{row, at},
                                           mask, v);
        };
        // One phase row of `quad` from position `rowAt`: from source row sy
        // (`data`) or the pad value.
        auto relayRowSteps = [&](OpBuilder &sb, Location sl, Value quad,
                                 Value rowAt, Value sy, Value sxOff,
                                 bool data) {
          auto step = [&](OpBuilder &xb, Location xl, Value xs, int64_t lanes) {
            Value at = xb.create<arith::MulIOp>(
                xl, xb.create<arith::AddIOp>(xl, rowAt, xs), idx(xb, xl, 4));
            Value v = data ? relayStep(xb, xl, quad, sy, xs, sxOff) : padRow;
            storeLanes(xb, xl, v, quad, at, lanes);
          };
          if (wholeSteps)
            sb.create<scf::ForOp>(
                sl, idx(sb, sl, 0), idx(sb, sl, wholeSteps),
                idx(sb, sl, kLanes), ValueRange{},
                [&](OpBuilder &xb, Location xl, Value xs, ValueRange) {
                  step(xb, xl, xs, kLanes);
                  xb.create<scf::YieldOp>(xl);
                });
          if (lastLanes)
            step(sb, sl, idx(sb, sl, wholeSteps), lastLanes);
        };
        // body(data) for row ys: data (true) when ys is in [lo, hi), the
        // rows on the source, else the pad value (false). `always`: every
        // row is, no branch.
        auto onSource =
            [&](OpBuilder &qb, Location ql, Value ys, Value lo, Value hi,
                bool always,
                function_ref<void(OpBuilder &, Location, bool)> body) {
              if (always) {
                body(qb, ql, true);
                return;
              }
              Value in = qb.create<arith::AndIOp>(
                  ql,
                  qb.create<arith::CmpIOp>(ql, arith::CmpIPredicate::uge, ys,
                                           lo),
                  qb.create<arith::CmpIOp>(ql, arith::CmpIPredicate::ult, ys,
                                           hi));
              emitIfElse(qb, ql, in, body);
            };
        // Row ys of `quad` in every phase plane a tap reads.
        auto relayRows = [&](OpBuilder &qb, Location ql, Value ys, Value quad) {
          for (int64_t py = 0; py < s.sh; ++py)
            for (int64_t px = 0; px < s.sw; ++px) {
              if (!phaseRead[py * s.sw + px])
                continue;
              int64_t lo =
                  std::max<int64_t>(0, llvm::divideCeil(top - py, s.sh));
              int64_t hi = std::clamp<int64_t>(
                  llvm::divideCeil(top + srcH - py, s.sh), lo, hs);
              Value rowAt = qb.create<arith::AddIOp>(
                  ql, idx(qb, ql, (py * s.sw + px) * plane),
                  qb.create<arith::MulIOp>(ql, ys, idx(qb, ql, ws)));
              onSource(
                  qb, ql, ys, idx(qb, ql, lo), idx(qb, ql, hi),
                  lo == 0 && hi == hs,
                  [&](OpBuilder &sb, Location sl, bool data) {
                    Value sy;
                    if (data)
                      sy = sb.create<arith::AddIOp>(
                          sl,
                          sb.create<arith::MulIOp>(sl, ys, idx(sb, sl, s.sh)),
                          idx(sb, sl, py - top));
                    relayRowSteps(sb, sl, quad, rowAt, sy,
                                  idx(sb, sl, px - left), data);
                  });
            }
        };
        auto loop = [&](OpBuilder &lb, Location ll, int64_t n,
                        function_ref<void(OpBuilder &, Location, Value)> body) {
          return lb.create<scf::ForOp>(
              ll, idx(lb, ll, 0), idx(lb, ll, n), idx(lb, ll, 1), ValueRange{},
              [&](OpBuilder &bb, Location bl, Value i, ValueRange) {
                body(bb, bl, i);
                bb.create<scf::YieldOp>(bl);
              });
        };
        // Threads take quads, or shifted planes. (By rows, as the previous
        // conv wrote the source and this conv's threads read it,
        // resnet18_qdq ran 3% slower at 2 threads.)
        scf::ForOp relay;
        if (sp) {
          // Per plane of shift 0, its row's 16-position vectors once each:
          // the planes shifted by dx take dwords dx .. dx + 15 of a vector
          // and the next (valignd), a quarter of the loads and shuffles
          // for a 7x7 stem.
          int64_t basePlanes = kAmxSteps / sp->colShifts;
          relay = loop(
              ib, l, basePlanes, [&](OpBuilder &qb, Location ql, Value bp) {
                auto info = [&](int64_t field) {
                  Value at = qb.create<arith::AddIOp>(
                      ql, qb.create<arith::MulIOp>(ql, bp, idx(qb, ql, 5)),
                      idx(qb, ql, field));
                  return qb
                      .create<arith::IndexCastOp>(
                          ql, qb.getIndexType(),
                          qb.create<memref::LoadOp>(ql, planeTable,
                                                    ValueRange{at}))
                      .getResult();
                };
                Value syOff = info(0), sxOff = info(1), lo = info(2),
                      hi = info(3), row0 = info(4), quad = idx(qb, ql, 0);
                auto i32x16 = VectorType::get({kLanes}, i32);
                // The 16 positions from xs of every shift, from the vectors at
                // xs and xs + 16 of shift 0.
                auto storeShifts = [&](OpBuilder &xb, Location xl, Value rowAt,
                                       Value xs, Value cur, Value next,
                                       int64_t lanes) {
                  Value at = xb.create<arith::MulIOp>(
                      xl, xb.create<arith::AddIOp>(xl, rowAt, xs),
                      idx(xb, xl, 4));
                  Value c32 = xb.create<vector::BitCastOp>(xl, i32x16, cur);
                  Value n32 = xb.create<vector::BitCastOp>(xl, i32x16, next);
                  for (int64_t dx = 0; dx < sp->colShifts; ++dx) {
                    SmallVector<int64_t> take;
                    for (int64_t j = 0; j < kLanes; ++j)
                      take.push_back(dx + j);
                    Value v = dx ? xb.create<vector::BitCastOp>(
                                         xl, i8x64,
                                         xb.create<vector::ShuffleOp>(
                                             xl, c32, n32, take))
                                       .getResult()
                                 : cur;
                    storeLanes(xb, xl, v,
                               xb.create<arith::AddIOp>(
                                   xl, row0, idx(xb, xl, dx * sp->rowShifts)),
                               at, lanes);
                  }
                };
                loop(qb, ql, hs, [&](OpBuilder &rb, Location rl, Value ys) {
                  Value rowAt =
                      rb.create<arith::MulIOp>(rl, ys, idx(rb, rl, ws));
                  auto steps = [&](OpBuilder &sb, Location sl, bool data) {
                    Value sy;
                    if (data)
                      sy = sb.create<arith::AddIOp>(
                          sl,
                          sb.create<arith::MulIOp>(sl, ys, idx(sb, sl, s.sh)),
                          syOff);
                    auto vecAt = [&](OpBuilder &xb, Location xl, Value xs) {
                      return data ? relayStep(xb, xl, quad, sy, xs, sxOff)
                                  : padRow;
                    };
                    Value cur = vecAt(sb, sl, idx(sb, sl, 0));
                    if (wholeSteps)
                      cur = sb.create<scf::ForOp>(
                                  sl, idx(sb, sl, 0), idx(sb, sl, wholeSteps),
                                  idx(sb, sl, kLanes), ValueRange{cur},
                                  [&](OpBuilder &xb, Location xl, Value xs,
                                      ValueRange carried) {
                                    Value next =
                                        vecAt(xb, xl,
                                              xb.create<arith::AddIOp>(
                                                  xl, xs, idx(xb, xl, kLanes)));
                                    storeShifts(xb, xl, rowAt, xs, carried[0],
                                                next, kLanes);
                                    xb.create<scf::YieldOp>(xl, next);
                                  })
                                .getResult(0);
                    if (lastLanes)
                      storeShifts(
                          sb, sl, rowAt, idx(sb, sl, wholeSteps), cur,
                          vecAt(sb, sl, idx(sb, sl, wholeSteps + kLanes)),
                          lastLanes);
                  };
                  onSource(rb, rl, ys, lo, hi, false, steps);
                });
              });
        } else {
          relay =
              loop(ib, l, quads, [&](OpBuilder &qb, Location ql, Value quad) {
                loop(qb, ql, hs, [&](OpBuilder &rb, Location rl, Value ys) {
                  relayRows(rb, rl, ys, quad);
                });
              });
        }
        vectorize::markParallel(relay, vectorize::kParallelElements,
                                sp ? 4 * plane * sp->colShifts
                                   : 4 * plane * llvm::count(phaseRead, true));
        // Past the planes: read only by dropped positions (and, shifted,
        // by taps past the kernel).
        loop(ib, l, relaidRows, [&](OpBuilder &qb, Location ql, Value row) {
          for (int64_t at = rowPlanes * plane; at < span; at += kLanes)
            qb.create<vector::StoreOp>(
                ql, padRow, relaid,
                ValueRange{row, idx(qb, ql, std::min(at, span - kLanes) * 4)});
        });

        Value outN = rowMajor(
            ib, l, out, ib.getIndexAttr(s.m), s.oh * s.ow,
            ib.create<arith::MulIOp>(l, image, idx(ib, l, s.m * s.oh * s.ow))
                .getResult());
        auto storeN = store(ib, l, image);
        Kernel kn{weights, Value(), outN, k / 4, false, true, storeN};
        kn.amx = true;
        kn.zeroTags = &amx.zeroTags;
        kn.bcastTiles = chunks;
        // B: 16 quads of one tap at 16 positions, rows a quad apart; or
        // the 16 shifted planes at 16 positions, `chunk` x rowShifts phase
        // rows down.
        kn.amxB = [&, relaid](OpBuilder &tb, Location tl, Value panel,
                              Value step) -> Value {
          Value chunk =
              tb.create<arith::DivUIOp>(tl, step, idx(tb, tl, kAmxSteps));
          Value first =
              tb.create<arith::MulIOp>(tl, panel, idx(tb, tl, kLanes));
          auto tileType =
              VectorType::get({kAmxSteps, 4 * kLanes}, tb.getI8Type());
          if (sp) {
            Value at = tb.create<arith::MulIOp>(
                tl,
                tb.create<arith::AddIOp>(
                    tl, first,
                    tb.create<arith::MulIOp>(tl, chunk,
                                             idx(tb, tl, sp->rowShifts * ws))),
                idx(tb, tl, 4));
            return tb.create<amx::TileLoadOp>(tl, tileType, relaid,
                                              ValueRange{idx(tb, tl, 0), at});
          }
          int64_t perTap = s.c / kChunkChannels;
          Value tap = tb.create<arith::DivUIOp>(tl, chunk, idx(tb, tl, perTap));
          Value quad0 = tb.create<arith::MulIOp>(
              tl, tb.create<arith::RemUIOp>(tl, chunk, idx(tb, tl, perTap)),
              idx(tb, tl, kAmxSteps));
          Value off = tb.create<arith::IndexCastOp>(
              tl, tb.getIndexType(),
              tb.create<memref::LoadOp>(tl, tapTable, ValueRange{tap}));
          Value at = tb.create<arith::MulIOp>(
              tl, tb.create<arith::AddIOp>(tl, first, off), idx(tb, tl, 4));
          return tb.create<amx::TileLoadOp>(tl, tileType, relaid,
                                            ValueRange{quad0, at});
        };
        kn.remap = [&](OpBuilder &tb, Location tl, Value panel, Value &acc,
                       Value &col, Value &mask) {
          auto i32x16 = VectorType::get({kLanes}, i32);
          if (!inPlace) {
            Value at = tb.create<arith::MulIOp>(tl, panel, idx(tb, tl, kLanes));
            Value order = tb.create<vector::LoadOp>(tl, i32x16, permTable,
                                                    ValueRange{at});
            acc = tb.create<LLVM::CallIntrinsicOp>(tl, i32x16, kVpermd,
                                                   ValueRange{acc, order})
                      .getResult(0);
          }
          auto entry = [&](Value table) {
            return tb.create<arith::IndexCastOp>(
                tl, tb.getIndexType(),
                tb.create<memref::LoadOp>(tl, table, ValueRange{panel}));
          };
          col = entry(firstTable);
          mask = tb.create<vector::CreateMaskOp>(
              tl, VectorType::get({kLanes}, tb.getI1Type()),
              ValueRange{entry(keptTable)});
        };
        // Threads take tiles of up to kPanels panels x blocks of output
        // channels (blocks when the tiles are few).
        int64_t tile = std::min(kPanels, panels);
        ConvUnits u(panels / tile, tile, panels % tile, s.m, kAmxRows);
        // Blocks of channels first also where the weights outweigh the
        // relaid input: each thread then reads half the weights, not half
        // the input (resnet18_qdq's 14x14 convs of 256 channels scaled
        // 1.23-1.5x at 2 threads).
        u.rowsOuter = s.channelsOuter || s.m * k > relaidRows * span * 4;
        forEachConvUnit(ib, l, u, k * tile * kLanes,
                        [&](OpBuilder &tb, Location tl, Value p0, int64_t count,
                            bool, Value rowStart, Value rowEnd) {
                          emitColumns(tb, tl, kn, rowStart, rowEnd, p0, p0,
                                      count, 0, u.rowBlocks == 1 ? s.m : -1);
                        });
        ib.create<scf::YieldOp>(l);
      });
}

} // namespace kiln::int8
