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
// moves each panel's kept lanes together (vpermd through a table).
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
} // namespace

bool amxDirectConvFits(const ConvSizes &s) {
  return s.c % kChunkChannels == 0 && s.m % kAmxTileRows == 0 && s.sh >= 1 &&
         s.sh <= 2 && s.sw >= 1 && s.sw <= 2;
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
  int64_t taps = s.kh * s.kw, quads = s.c / 4, k = taps * s.c;
  // Phase planes: input row y, column x in plane (y % sh, x % sw) at
  // (y / sh, x / sw).
  int64_t hs = llvm::divideCeil(s.h, s.sh), ws = llvm::divideCeil(s.w, s.sw);
  int64_t phases = s.sh * s.sw, plane = hs * ws;
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
  // A quad's dwords: the phase planes, then what the last panel reads
  // past them at the farthest tap (and the relayout's last 16-dword store).
  // Whole 64-byte lines, so that a B tile's rows are lines of their own
  // (848-byte rows made mobilenet_v2_qdq's 14x14 projections 10% slower).
  int64_t span = llvm::alignTo(
      std::max(phases * plane + kLanes,
               panels * kLanes +
                   *std::max_element(tapOffset.begin(), tapOffset.end())),
      kLanes);
  // Weights as rows [m][kh][kw][c]: a k chunk is one tap's 64 channels.
  SmallVector<int8_t> rows(s.m * k);
  for (int64_t o = 0; o < s.m; ++o)
    for (int64_t ci = 0; ci < s.c; ++ci)
      for (int64_t t = 0; t < taps; ++t)
        rows[o * k + t * s.c + ci] = w[(o * s.c + ci) * taps + t];
  auto module = b.getBlock()->getParentOp()->getParentOfType<ModuleOp>();
  auto rowsType = MemRefType::get({s.m, k}, i8);
  Value weights = vectorize::derivedGlobal(
      b, loc, module, (weightsName + "_amx_taps").str(), rowsType,
      [&] {
        return DenseElementsAttr::get(RankedTensorType::get({s.m, k}, i8),
                                      ArrayRef<int8_t>(rows));
      },
      b.getI64IntegerAttr(64));
  std::string shape = s.name(/*output=*/true);
  Value tapTable =
      i32Table(b, loc, module, "kiln_amx_conv_taps_" + shape, tapOffset);
  Value permTable =
      i32Table(b, loc, module, "kiln_amx_conv_perm_" + shape, perm);
  Value keptTable =
      i32Table(b, loc, module, "kiln_amx_conv_kept_" + shape, kept);
  Value firstTable =
      i32Table(b, loc, module, "kiln_amx_conv_first_" + shape, first);

  // The relayout reads the source of x's padded copy where x is one:
  // rows and columns on the padding take the pad value.
  Value src = padded ? padded->src : x;
  auto srcType = cast<MemRefType>(src.getType());
  int64_t top = padded ? padded->top : 0, left = padded ? padded->left : 0;
  int64_t srcH = srcType.getDimSize(2), srcW = srcType.getDimSize(3);
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
        // The relayout: per quad each phase row 16 positions at a time,
        // four channels' bytes (16 or, at stride 2, 32 loaded: every other
        // one kept; lanes off the source masked to the pad value)
        // interleaved, the row's last store masked (after a phase's row
        // comes the next phase's, whose start it would overwrite); rows
        // off the source are the pad value.
        Value relaid = ib.create<memref::AllocOp>(
            l, MemRefType::get({quads, span * 4}, i8),
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
        // The four channels of `quad` at source row sy from padded column
        // xs * sw + px, interleaved.
        auto relayStep = [&](OpBuilder &xb, Location xl, Value quad, Value sy,
                             Value xs, int64_t px) -> Value {
          int64_t loadLanes = kLanes * s.sw;
          auto loadType = VectorType::get({loadLanes}, i8);
          auto maskType = VectorType::get({loadLanes}, xb.getI1Type());
          // Source column of lane 0, and the lanes on the source.
          Value sx = xb.create<arith::AddIOp>(
              xl, xb.create<arith::MulIOp>(xl, xs, idx(xb, xl, s.sw)),
              idx(xb, xl, px - left));
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
        // Phase row ys of plane (py, px) of `quad`.
        auto relayRow = [&](OpBuilder &qb, Location ql, Value ys, Value quad,
                            int64_t py, int64_t px) {
          // The phase rows on the source: [lo, hi).
          int64_t lo = std::max<int64_t>(0, llvm::divideCeil(top - py, s.sh));
          int64_t hi = std::clamp<int64_t>(
              llvm::divideCeil(top + srcH - py, s.sh), lo, hs);
          Value rowAt = qb.create<arith::AddIOp>(
              ql, idx(qb, ql, (py * s.sw + px) * plane),
              qb.create<arith::MulIOp>(ql, ys, idx(qb, ql, ws)));
          auto steps = [&](OpBuilder &sb, Location sl, bool data) {
            Value sy;
            if (data)
              sy = sb.create<arith::AddIOp>(
                  sl, sb.create<arith::MulIOp>(sl, ys, idx(sb, sl, s.sh)),
                  idx(sb, sl, py - top));
            auto step = [&](OpBuilder &xb, Location xl, Value xs,
                            int64_t lanes) {
              Value at = xb.create<arith::MulIOp>(
                  xl, xb.create<arith::AddIOp>(xl, rowAt, xs), idx(xb, xl, 4));
              Value v = data ? relayStep(xb, xl, quad, sy, xs, px) : padRow;
              if (lanes == kLanes) {
                xb.create<vector::StoreOp>(xl, v, relaid, ValueRange{quad, at});
                return;
              }
              Value mask = xb.create<vector::CreateMaskOp>(
                  xl, VectorType::get({4 * kLanes}, xb.getI1Type()),
                  ValueRange{idx(xb, xl, 4 * lanes)});
              xb.create<vector::MaskedStoreOp>(xl, relaid, ValueRange{quad, at},
                                               mask, v);
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
          if (lo == 0 && hi == hs) {
            steps(qb, ql, true);
            return;
          }
          Value in = qb.create<arith::AndIOp>(
              ql,
              qb.create<arith::CmpIOp>(ql, arith::CmpIPredicate::uge, ys,
                                       idx(qb, ql, lo)),
              qb.create<arith::CmpIOp>(ql, arith::CmpIPredicate::ult, ys,
                                       idx(qb, ql, hi)));
          qb.create<scf::IfOp>(
              ql, in,
              [&](OpBuilder &tb, Location tl) {
                steps(tb, tl, true);
                tb.create<scf::YieldOp>(tl);
              },
              [&](OpBuilder &eb, Location el) {
                steps(eb, el, false);
                eb.create<scf::YieldOp>(el);
              });
        };
        // Row ys of `quad` in every phase plane a tap reads.
        auto relayRows = [&](OpBuilder &qb, Location ql, Value ys, Value quad) {
          for (int64_t py = 0; py < s.sh; ++py)
            for (int64_t px = 0; px < s.sw; ++px)
              if (phaseRead[py * s.sw + px])
                relayRow(qb, ql, ys, quad, py, px);
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
        // Threads take quads. (By rows, as the previous conv wrote the
        // source and this conv's threads read it, resnet18_qdq ran 3%
        // slower at 2 threads.)
        auto relay =
            loop(ib, l, quads, [&](OpBuilder &qb, Location ql, Value quad) {
              loop(qb, ql, hs, [&](OpBuilder &rb, Location rl, Value ys) {
                relayRows(rb, rl, ys, quad);
              });
            });
        vectorize::markParallel(relay, vectorize::kParallelElements,
                                4 * plane * llvm::count(phaseRead, true));
        // Past the planes: read only by dropped positions.
        loop(ib, l, quads, [&](OpBuilder &qb, Location ql, Value quad) {
          for (int64_t at = phases * plane; at < span; at += kLanes)
            qb.create<vector::StoreOp>(
                ql, padRow, relaid,
                ValueRange{quad, idx(qb, ql, std::min(at, span - kLanes) * 4)});
        });

        Value outN = rowMajor(
            ib, l, out, ib.getIndexAttr(s.m), s.oh * s.ow,
            ib.create<arith::MulIOp>(l, image, idx(ib, l, s.m * s.oh * s.ow))
                .getResult());
        auto storeN = store(ib, l, image);
        Kernel kn{weights, Value(), outN, k / 4, false, true, storeN};
        kn.amx = true;
        kn.zeroTags = &amx.zeroTags;
        // B: 16 quads of one tap at 16 positions, rows a quad apart.
        kn.amxB = [&, relaid](OpBuilder &tb, Location tl, Value panel,
                              Value step) -> Value {
          Value chunk =
              tb.create<arith::DivUIOp>(tl, step, idx(tb, tl, kAmxSteps));
          int64_t perTap = s.c / kChunkChannels;
          Value tap = tb.create<arith::DivUIOp>(tl, chunk, idx(tb, tl, perTap));
          Value quad0 = tb.create<arith::MulIOp>(
              tl, tb.create<arith::RemUIOp>(tl, chunk, idx(tb, tl, perTap)),
              idx(tb, tl, kAmxSteps));
          Value off = tb.create<arith::IndexCastOp>(
              tl, tb.getIndexType(),
              tb.create<memref::LoadOp>(tl, tapTable, ValueRange{tap}));
          Value at = tb.create<arith::MulIOp>(
              tl,
              tb.create<arith::AddIOp>(
                  tl, tb.create<arith::MulIOp>(tl, panel, idx(tb, tl, kLanes)),
                  off),
              idx(tb, tl, 4));
          return tb.create<amx::TileLoadOp>(
              tl, VectorType::get({kAmxSteps, 4 * kLanes}, tb.getI8Type()),
              relaid, ValueRange{quad0, at});
        };
        kn.remap = [&](OpBuilder &tb, Location tl, Value panel, Value &acc,
                       Value &col, Value &mask) {
          auto i32x16 = VectorType::get({kLanes}, i32);
          Value at = tb.create<arith::MulIOp>(tl, panel, idx(tb, tl, kLanes));
          Value order =
              tb.create<vector::LoadOp>(tl, i32x16, permTable, ValueRange{at});
          acc = tb.create<LLVM::CallIntrinsicOp>(tl, i32x16, kVpermd,
                                                 ValueRange{acc, order})
                    .getResult(0);
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
        u.rowsOuter = s.channelsOuter;
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
