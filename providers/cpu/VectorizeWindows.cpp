//===- VectorizeWindows.cpp - depthwise convs and max pools ---------------===//
//
// Part of kiln-cpu-vectorize-contractions: 2-D depthwise convolutions and
// max pools (f32 or 8-bit), static or of run-time size, as loops over
// output-row chunks kept in registers across the window's taps.
//
//===----------------------------------------------------------------------===//
#include "dialects/kiln/KilnDialect.h"
#include "passes/Passes.h"
#include "providers/cpu/Vectorize.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/AffineExpr.h"

using namespace mlir;

namespace kiln::vectorize {

// max(acc, x) for an f32 max pool: x > acc ? x : acc, or x where x is
// NaN: NaNs propagate as maximumf's do (a NaN acc stays), in four
// instructions (two compares, two masked moves) where LLVM lowers
// maximumf (signed zeros ordered too) in six: a 64x112x112 3x3/2 max
// pool 203 -> 185 us. Of +0 and -0 either may come out.
Value poolMaxF32(OpBuilder &b, Location loc, Value x, Value acc) {
  Value more = b.create<arith::SelectOp>(
      loc, b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, x, acc), x,
      acc);
  return b.create<arith::SelectOp>(
      loc, b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, x, x), x,
      more);
}

/// Output rows in 512-bit chunks (16 f32, 64 bytes), up to 8 chunks (4 with
/// AVX2's 16 registers: a chunk is two there) (of one wide row, or of several
/// short rows: independent FMA chains) kept in registers across the taps: per
/// tap one broadcast weight and, per chunk, a contiguous load of the input row
/// (every sw-th lane of a wider load for stride sw) and an FMA; one store per
/// chunk. A row's last chunk is masked (out-of-bounds transfers). With static
/// sizes, a padded input or a stride, each thread first copies its channel
/// plane into a scratch buffer, padded and split into `sw` phases (columns c
/// with c % sw == p in phase p): every tap then reads contiguous vectors, and
/// no padded copy of the whole input is written (one pass over memory less, and
/// a plane's copy stays in the cache of the thread that reads it). The
/// accumulators start from the output's fill or bias in registers. Returns the
/// op before the new code.
Operation *rewriteDepthwise(linalg::GenericOp g, const DepthwiseMatch &dm,
                            int64_t vectorBits, bool isPool,
                            const ConvEpilogue *epilogue) {
  Value x = g.getDpsInputs()[0], w = g.getDpsInputs()[1],
        out = g.getDpsInits()[0];
  // An 8-bit conv sums in f32 (exact: isEightBitDepthwise) the data and
  // weights converted as they are read, and stores its i32 sums (or the
  // epilogue's values).
  std::optional<std::pair<bool, bool>> eightBit =
      isPool ? std::nullopt : eightBitMulAdd(g);
  // A chunk is 512 bits: 16 f32 or 64 bytes (an 8-bit max pool).
  Type elt = cast<MemRefType>(out.getType()).getElementType();
  Type accElt = eightBit ? Float32Type::get(g.getContext()) : elt;
  Type xElt = cast<MemRefType>(x.getType()).getElementType();
  const int64_t kLanes = 512 / accElt.getIntOrFloatBitWidth();
  const int64_t kChunks = vectorBits >= 512 ? 8 : 4;
  Operation *bodyReduce =
      isPool ? poolReduce(g.getRegion().front(), elt) : nullptr;
  OpBuilder b(g);
  // (With an epilogue, the code is both nodes': the profiler lists the
  // epilogue's among the kernel's fused nodes.)
  Location loc = g.getLoc();
  if (epilogue) {
    linalg::GenericOp e = epilogue->op;
    loc = FusedLoc::get(g.getContext(), {loc, e.getLoc()});
  }
  SmallVector<int64_t> r = g.getStaticLoopRanges(); // n m oh kh kw ow
  // (A pool's loops are n c kh kw oh ow; its second operand only sizes the
  // window.)
  if (isPool)
    r = {r[0], r[1], r[4], r[2], r[3], r[5]};
  auto vec = VectorType::get({kLanes}, accElt),
       outVec = VectorType::get({kLanes}, elt),
       xVec = VectorType::get({kLanes}, xElt),
       wide = VectorType::get({kLanes * dm.sw}, xElt);
  // 8-bit values (scalars or vectors) in f32.
  auto toF32 = [&](OpBuilder &nb, Value v, bool isUnsigned) -> Value {
    Type t =
        getElementTypeOrSelf(v.getType()) == v.getType()
            ? accElt
            : VectorType::get(cast<VectorType>(v.getType()).getShape(), accElt);
    return isUnsigned ? nb.create<arith::UIToFPOp>(loc, t, v).getResult()
                      : nb.create<arith::SIToFPOp>(loc, t, v).getResult();
  };
  auto idx = [&](OpBuilder &nb, int64_t v) -> Value { return nb.create<arith::ConstantIndexOp>(loc, v); };
  // Static but for the batch: the planes are per image.
  bool planeStatic =
      llvm::none_of(ArrayRef(r).drop_front(), ShapedType::isDynamic);
  std::optional<OutputInit> init = matchOutputInit(g);
  // An 8-bit conv's C may start as zeros from further back (a fill
  // bufferization placed earlier, or one shared by several convs).
  std::optional<ZeroInit> zeroInit =
      eightBit && !init ? zeroInitBefore(g, out) : std::nullopt;
  // Stride-1 convs on 512-bit registers read the unpadded source itself:
  // each source row a block needs is loaded once, in aligned chunks, and
  // every tap's vector is a shift of two neighbouring chunks in registers
  // (shiftTaps). No padded copy or plane is written, so nothing is read
  // back from a store still in flight, and a thread reads the channels it
  // wrote itself. (On AVX2 a 16-lane shift takes several shuffles.)
  // Only on narrow rows, where a block has rows enough to share each
  // source row's loads and shifts among several output rows (1 thread:
  // 960 channels 7x7 f32 36 -> 24 us, with a 7x7 window 175 -> 108 us;
  // 7x7 8-bit in mobilenet_v2 52 -> 41 us). On wider rows a block holds
  // one or two rows, and an 8-bit conv converts each source chunk anew in
  // every block: 8-bit 28x28 55 -> 64 us, 56x56 154 -> 206 us.
  // (Also f32 max pools: a YOLO's 5x5 stride-1 pools on 10x10 maps, 24 us
  // each through padded planes, against ONNX Runtime's 7.)
  bool shifts = planeStatic && (!isPool || elt.isF32()) && dm.sw == 1 &&
                vectorBits >= 512 && (r[4] - 1) * dm.dw <= 2 * kLanes &&
                r[5] <= (eightBit ? kLanes : 2 * kLanes);
  std::optional<PaddedSource> padded =
      planeStatic ? matchPaddedSource(g, /*planesAnyway=*/eightBit || shifts)
                  : std::nullopt;
  // Reading the source while storing over it (the output, or the
  // epilogue's, in the source's buffer: bufferization reuses it) is safe
  // when one block covers the channel, as every load of a block comes
  // before its stores; else the channel's plane is copied first. (Planes
  // also beat the padded copy here: mobilenet_v2 f32, 1 thread, 28x28
  // 74 -> 44 us, 14x14 56 -> 40 us, and at 2 threads the copy was serial.)
  auto overwritesSource = [&] {
    SmallVector<Value> written = writtenWith(g);
    if (epilogue)
      written.push_back(linalg::GenericOp(epilogue->op).getDpsInits()[0]);
    return writesInto(written, padded ? padded->src : x);
  };
  bool oneBlock = r[2] * llvm::divideCeil(r[5], kLanes) <= kChunks;
  if (shifts && !oneBlock &&
      ((padded && padded->inPlace) || overwritesSource()))
    shifts = false;
  Value zero = b.create<arith::ConstantOp>(loc, b.getZeroAttr(elt));
  Operation *first = zero.getDefiningOp();
  // (Constant 8-bit weights read as f32, converted at compile time.)
  Value floatW = eightBit ? floatWeights(b, loc, w, eightBit->second) : Value();
  if (floatW)
    w = floatW;
  auto zeroOf = [&](Type t) -> Value {
    return t == elt ? zero : b.create<arith::ConstantOp>(loc, b.getZeroAttr(t));
  };
  Value xZero = zeroOf(xElt);
  // (An 8-bit conv's plane holds its data in f32, converted once per
  // element rather than at each of the taps that read it.)
  // (Not for a pool's stride alone: its taps' every-other-lane reads of
  // the source beat writing the phases first, 1x-2x: 3x3/2 on 64x111x111
  // 111 -> 82 us, 2x2/2 on 64x112x112 80 -> 46 us.)
  bool planes = !shifts && planeStatic &&
                (padded || (dm.sw > 1 && !isPool) || eightBit) &&
                !cast<MemRefType>(x.getType()).isDynamicDim(2) &&
                !cast<MemRefType>(x.getType()).isDynamicDim(3);
  Type planeElt = eightBit ? accElt : xElt;
  auto planeVec = VectorType::get({kLanes}, planeElt);
  Value planeZero = planeElt == xElt ? xZero : zeroOf(planeElt);
  // The plane: `s` phases of ph rows by pw columns, wide enough for every
  // full-width read of the last chunk; the padded row it is built from.
  const int64_t sp = dm.sw;
  Value src = padded ? padded->src : x;
  Value pad = padded ? padded->pad : xZero;
  int64_t top = padded ? padded->top : 0, left = padded ? padded->left : 0;
  auto srcType = cast<MemRefType>(src.getType());
  int64_t ph = cast<MemRefType>(x.getType()).getDimSize(2);
  int64_t srcH = srcType.getDimSize(2), srcW = srcType.getDimSize(3);
  int64_t pw =
      planes
          ? llvm::alignTo(
                std::max<int64_t>(
                    llvm::alignTo(r[5], kLanes) + (r[4] - 1) * dm.dw / sp,
                    llvm::divideCeil(left + llvm::alignTo(srcW, kLanes), sp)),
                kLanes)
          : 0;
  Value plane;   // per (n, m): the phases, read by the taps
  Value accInit; // per (n, m): the accumulators' first value
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
  // A pool's step: that max, an average pool's sum, or the body's own max
  // (unsigned or signed bytes).
  auto reduce = [&](OpBuilder &mb, Value xv, Value acc) -> Value {
    if (isa<arith::AddFOp>(bodyReduce))
      return mb.create<arith::AddFOp>(loc, acc, xv);
    if (elt.isF32())
      return poolMaxF32(mb, loc, xv, acc);
    OperationState st(loc, bodyReduce->getName(), ValueRange{acc, xv},
                      xv.getType());
    return mb.create(st)->getResult(0);
  };
  // The taps of a block of stride-1 columns (`shifts`): output rows
  // [oh0, oh0 + nRows), chunks from static column c0, accumulated onto
  // `accs`. Source row oh * sh + kh * dh - top is loaded once per block as
  // aligned chunks q (columns c0 + q * kLanes on), the pad where they fall
  // outside the source; tap kw's vector of chunk j starts at column
  // c0 + j * kLanes + kw * dw - left, inside chunks q and q + 1. Each
  // accumulator still takes its taps in (kh, kw) order.
  auto shiftTaps = [&](OpBuilder &nb, Value n, Value m, Value oh0,
                       int64_t nRows, int64_t c0, int64_t numChunks,
                       SmallVector<Value> accs) {
    auto startOf = [&](int64_t j, int64_t kw) {
      return j * kLanes + kw * dm.dw - left;
    };
    int64_t qLo = llvm::divideFloorSigned(startOf(0, 0), kLanes),
            qHi = llvm::divideFloorSigned(startOf(numChunks - 1, r[4] - 1),
                                          kLanes) +
                  1;
    Value padVec = nb.create<vector::BroadcastOp>(
        loc, planeVec, eightBit ? toF32(nb, pad, eightBit->first) : pad);
    // The chunks with source columns in them.
    SmallVector<int64_t> inSource;
    for (int64_t q = qLo; q <= qHi; ++q)
      if (c0 + q * kLanes >= 0 && c0 + q * kLanes < srcW)
        inSource.push_back(q);
    SmallVector<int64_t> offsets; // of the source rows from oh0 * sh
    for (int64_t row = 0; row < nRows; ++row)
      for (int64_t kh = 0; kh < r[3]; ++kh)
        offsets.push_back(row * dm.sh + kh * dm.dh - top);
    llvm::sort(offsets);
    offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
    Value ih0 = nb.create<arith::MulIOp>(loc, oh0, idx(nb, dm.sh));
    for (int64_t o : offsets) {
      Value ih = nb.create<arith::AddIOp>(loc, ih0, idx(nb, o));
      Value inRows = nb.create<arith::AndIOp>(
          loc,
          nb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, ih,
                                   idx(nb, 0)),
          nb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, ih,
                                   idx(nb, srcH)));
      auto loaded = nb.create<scf::IfOp>(
          loc, inRows,
          [&](OpBuilder &tb, Location) {
            SmallVector<Value> vs;
            for (int64_t q : inSource) {
              int64_t col = c0 + q * kLanes;
              Value v = tb.create<vector::TransferReadOp>(
                  loc, xVec, src, ValueRange{n, m, ih, idx(tb, col)}, pad,
                  ArrayRef<bool>{col + kLanes <= srcW});
              vs.push_back(eightBit ? toF32(tb, v, eightBit->first) : v);
            }
            tb.create<scf::YieldOp>(loc, vs);
          },
          [&](OpBuilder &eb, Location) {
            eb.create<scf::YieldOp>(
                loc, SmallVector<Value>(inSource.size(), padVec));
          });
      auto chunk = [&](int64_t q) -> Value {
        auto it = llvm::find(inSource, q);
        return it == inSource.end()
                   ? padVec
                   : loaded.getResult(std::distance(inSource.begin(), it));
      };
      // Tap kw's vector of chunk j of this source row.
      auto tapVec = [&](int64_t j, int64_t kw) -> Value {
        int64_t start = startOf(j, kw);
        int64_t q = llvm::divideFloorSigned(start, kLanes),
                rem = start - q * kLanes;
        Value xv = chunk(q);
        if (rem) {
          SmallVector<int64_t> pick;
          for (int64_t l = 0; l < kLanes; ++l)
            pick.push_back(rem + l);
          xv = nb.create<vector::ShuffleOp>(loc, xv, chunk(q + 1), pick);
        }
        return xv;
      };
      // A pool is separable: the row's max (or sum) over its kw taps once,
      // then one more per output row that reads it (a 5x5 pool: 8 maxes an
      // output chunk, not 25).
      SmallVector<Value> rowMax;
      for (int64_t j = 0; isPool && j < numChunks; ++j) {
        Value mx = tapVec(j, 0);
        for (int64_t kw = 1; kw < r[4]; ++kw)
          mx = reduce(nb, tapVec(j, kw), mx);
        rowMax.push_back(mx);
      }
      for (int64_t row = 0; row < nRows; ++row) {
        int64_t khdh = o - row * dm.sh + top;
        if (khdh < 0 || khdh % dm.dh || khdh / dm.dh >= r[3])
          continue;
        int64_t kh = khdh / dm.dh;
        if (isPool) {
          for (int64_t j = 0; j < numChunks; ++j) {
            Value &acc = accs[row * numChunks + j];
            acc = reduce(nb, rowMax[j], acc);
          }
          continue;
        }
        for (int64_t kw = 0; kw < r[4]; ++kw) {
          Value wv = nb.create<memref::LoadOp>(
              loc, w, ValueRange{m, idx(nb, 0), idx(nb, kh), idx(nb, kw)});
          if (eightBit && !floatW)
            wv = toF32(nb, wv, eightBit->second);
          Value wb = nb.create<vector::BroadcastOp>(loc, vec, wv);
          for (int64_t j = 0; j < numChunks; ++j) {
            Value &acc = accs[row * numChunks + j];
            acc = nb.create<vector::FMAOp>(loc, tapVec(j, kw), wb, acc);
          }
        }
      }
    }
    return accs;
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
    for (auto [row, col] : chunks) {
      if (accInit) {
        accs.push_back(accInit);
        continue;
      }
      Value v = nb.create<vector::TransferReadOp>(
          loc, outVec, out, ValueRange{n, m, ohs[row], colAt(nb, col)}, zero);
      accs.push_back(eightBit ? toF32(nb, v, false) : v);
    }
    Value xCol0 = nb.create<arith::MulIOp>(loc, col0, idx(nb, dm.sw));
    SmallVector<Value> sums =
        shifts
            ? shiftTaps(nb, n, m, oh0, nRows, *getConstantIntValue(col0),
                        numChunks, accs)
            : upTo(nb, r[3], accs, [&](OpBuilder &b3, Value kh, ValueRange a3) {
                return upTo(
                    b3, r[4], a3, [&](OpBuilder &b4, Value kw, ValueRange a4) {
                      Value khOff =
                          b4.create<arith::MulIOp>(loc, kh, idx(b4, dm.dh));
                      Value kwOff = b4.create<arith::AddIOp>(
                          loc,
                          b4.create<arith::MulIOp>(loc, kw, idx(b4, dm.dw)),
                          xCol0);
                      Value wb;
                      if (!isPool) {
                        Value wv = b4.create<memref::LoadOp>(
                            loc, w, ValueRange{m, idx(b4, 0), kh, kw});
                        if (eightBit && !floatW)
                          wv = toF32(b4, wv, eightBit->second);
                        wb = b4.create<vector::BroadcastOp>(loc, vec, wv);
                      }
                      // In the plane, tap kw's column c = ow * sw + kw * dw
                      // lies in phase c % sw at ow + (kw * dw) / sw.
                      Value phase, phaseCol;
                      if (planes) {
                        Value tap =
                            b4.create<arith::MulIOp>(loc, kw, idx(b4, dm.dw));
                        phase =
                            b4.create<arith::RemUIOp>(loc, tap, idx(b4, sp));
                        phaseCol = b4.create<arith::AddIOp>(
                            loc, col0,
                            b4.create<arith::DivUIOp>(loc, tap, idx(b4, sp)));
                      }
                      SmallVector<Value> next;
                      for (auto [c, chunk] : llvm::enumerate(chunks)) {
                        auto [row, col] = chunk;
                        Value ih = b4.create<arith::AddIOp>(
                            loc,
                            b4.create<arith::MulIOp>(loc, ohs[row],
                                                     idx(b4, dm.sh)),
                            khOff);
                        Value iw = b4.create<arith::AddIOp>(
                            loc, kwOff, idx(b4, col * dm.sw));
                        Value xv;
                        if (planes) {
                          Value at = col ? (Value)b4.create<arith::AddIOp>(
                                               loc, phaseCol, idx(b4, col))
                                         : phaseCol;
                          xv = b4.create<vector::TransferReadOp>(
                              loc, planeVec, plane, ValueRange{phase, ih, at},
                              planeZero, ArrayRef<bool>{true});
                        } else if (dm.sw == 1) {
                          xv = b4.create<vector::TransferReadOp>(
                              loc, xVec, x, ValueRange{n, m, ih, iw}, xZero);
                        } else {
                          Value xw = b4.create<vector::TransferReadOp>(
                              loc, wide, x, ValueRange{n, m, ih, iw}, xZero);
                          xv = b4.create<vector::ShuffleOp>(loc, xw, xw, lanes);
                        }
                        if (eightBit && !planes)
                          xv = toF32(b4, xv, eightBit->first);
                        if (isPool) {
                          next.push_back(reduce(b4, xv, a4[c]));
                        } else {
                          next.push_back(
                              b4.create<vector::FMAOp>(loc, xv, wb, a4[c]));
                        }
                      }
                      return next;
                    });
              });
    for (auto [c, chunk] : llvm::enumerate(chunks)) {
      SmallVector<Value> at = {n, m, ohs[chunk.first], colAt(nb, chunk.second)};
      Value sum = sums[c];
      if (eightBit)
        sum = nb.create<arith::FPToSIOp>(loc, outVec, sum);
      if (!epilogue) {
        nb.create<vector::TransferWriteOp>(loc, sum, out, at);
        continue;
      }
      // (Inputs of C's shape are read where the chunk lies.)
      linalg::GenericOp e = epilogue->op;
      Value y = convEpilogueValue(
          nb, *epilogue, sum, n, m, [&](unsigned i, Type t) -> Value {
            return nb.create<vector::TransferReadOp>(
                loc, VectorType::get({kLanes}, t), e.getDpsInputs()[i], at,
                nb.create<arith::ConstantOp>(loc, nb.getZeroAttr(t)));
          });
      nb.create<vector::TransferWriteOp>(loc, y, e.getDpsInits()[0], at);
    }
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
  // Channel plane (n, m) of the source, padded and split into phases.
  // Each chunk of a phase is one shuffle of two consecutive wide loads of
  // the source row, shifted by the left pad in registers (a padded row
  // written to memory and read back at another offset stalled every
  // load on store forwarding: an 8-bit pool ran at half its speed).
  auto buildPlane = [&](OpBuilder &nb, Value n, Value m) -> Value {
    Value pl = nb.create<memref::AllocOp>(
        loc, MemRefType::get({sp, ph, pw}, planeElt));
    Value padVec = nb.create<vector::BroadcastOp>(
        loc, planeVec, eightBit ? toF32(nb, pad, eightBit->first) : pad);
    Value padWide = nb.create<vector::BroadcastOp>(loc, wide, pad);
    const bool inBounds[] = {true};
    auto borderRows = [&](int64_t from, int64_t to) {
      if (from < to)
        loop(nb, idx(nb, from), idx(nb, to), 1, {},
             [&](OpBuilder &rb, Value row, ValueRange) {
               for (int64_t p = 0; p < sp; ++p)
                 for (int64_t j = 0; j < pw; j += kLanes)
                   rb.create<vector::TransferWriteOp>(
                       loc, padVec, pl, ValueRange{idx(rb, p), row, idx(rb, j)},
                       inBounds);
               return SmallVector<Value>{};
             });
    };
    // Chunk j of phase p, lane l, is padded column j * W + p + l * sp,
    // source column (j - q - 1) * W + (W - r) + p + l * sp: in the pair
    // of source chunks j - q - 1 and j - q (W-wide; outside the row: pad).
    const int64_t W = kLanes * sp, q = left / W, r = left % W;
    borderRows(0, top);
    loop(nb, idx(nb, 0), idx(nb, srcH), 1, {},
         [&](OpBuilder &rb, Value i, ValueRange) {
           DenseMap<int64_t, Value> chunks;
           auto chunk = [&](int64_t k) -> Value {
             if (k < 0 || k * W >= srcW)
               return padWide;
             Value &v = chunks[k];
             if (!v)
               v = rb.create<vector::TransferReadOp>(
                   loc, wide, src, ValueRange{n, m, i, idx(rb, k * W)}, pad,
                   ArrayRef<bool>{(k + 1) * W <= srcW});
             return v;
           };
           Value row = rb.create<arith::AddIOp>(loc, i, idx(rb, top));
           for (int64_t j = 0; j * kLanes < pw; ++j) {
             // (No shift: chunk j - q alone.)
             Value hi = chunk(j - q), lo = r ? chunk(j - q - 1) : hi;
             for (int64_t p = 0; p < sp; ++p) {
               SmallVector<int64_t> pick;
               for (int64_t l = 0; l < kLanes; ++l)
                 pick.push_back((r ? W - r : 0) + p + l * sp);
               Value pv = rb.create<vector::ShuffleOp>(loc, lo, hi, pick);
               if (eightBit)
                 pv = toF32(rb, pv, eightBit->first);
               rb.create<vector::TransferWriteOp>(
                   loc, pv, pl,
                   ValueRange{idx(rb, p), row, idx(rb, j * kLanes)}, inBounds);
             }
           }
           return SmallVector<Value>{};
         });
    borderRows(top + srcH, ph);
    return pl;
  };
  // Threads take the channels (each writes its own output planes) when
  // there is enough work: a run-time batch counted as 1, run-time rows and
  // columns as 16 each (as 1, a run-time 112x112 pool of 64 channels ran
  // on one thread).
  int64_t work = 1;
  for (auto [i, e] : llvm::enumerate(r))
    work *= !ShapedType::isDynamic(e) ? e : i == 0 ? 1 : 16;
  loop(b, idx(b, 0), extent(b, 0, 0), 1, {},
       [&](OpBuilder &b0, Value n, ValueRange) {
         upTo(b0, r[1], {}, [&](OpBuilder &b1, Value m, ValueRange) {
           if (init) {
             Value v = init->bias ? (Value)b1.create<memref::LoadOp>(
                                        loc, init->bias, ValueRange{m})
                                  : init->scalar;
             if (eightBit)
               v = toF32(b1, v, false);
             accInit = b1.create<vector::BroadcastOp>(loc, vec, v);
           } else if (zeroInit) {
             accInit = b1.create<arith::ConstantOp>(
                 loc, DenseElementsAttr::get(vec, b1.getZeroAttr(accElt)));
           }
           if (planes)
             plane = buildPlane(b1, n, m);
           byWidth(b1, n, m);
           return SmallVector<Value>{};
         });
         if (work >= kParallelElements && r[1] >= 2)
           markParallel(&b0.getInsertionBlock()->back(), 1, 1);
         return SmallVector<Value>{};
       });
  g.erase();
  // What wrote the output's first values, and the padded input (which g
  // alone read: matchPaddedSource), are no longer needed.
  if (init)
    init->op->erase();
  if (zeroInit && zeroInit->erase)
    zeroInit->erase->erase();
  if ((planes || shifts) && padded)
    erasePaddedSource(*padded, x);
  return first->getPrevNode();
}

} // namespace kiln::vectorize
