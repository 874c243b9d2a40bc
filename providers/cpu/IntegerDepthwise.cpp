//===- IntegerDepthwise.cpp - 8-bit depthwise convs on VNNI ---------------===//
//
// Part of kiln-cpu-integer-contractions: 2-D depthwise convs of u8 data by
// constant s8 weights into i32 (ConvInteger's form, the data padded with
// its zero point). Widened to f32 (the generic depthwise loops), a tap
// costs a conversion and an FMA per 16 positions, and mobilenet_v2's
// 8-bit depthwise convs ran up to 2x slower than its f32 ones. Here four
// taps of a kernel row go in one vpdpbusd: a 64-byte load of the source
// row and one two-register byte permutation (vpermt2b) with a register of
// the pad value put the four input bytes of each of 16 output positions
// in its i32 lane, against the four weights broadcast. The padded copy is
// never written: taps on the padding pick the pad register's bytes.
//
//===----------------------------------------------------------------------===//
#include "providers/cpu/IntegerKernels.h"
#include "providers/cpu/Vectorize.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace kiln::int8 {

namespace {

// Byte 0 of the second operand of a permutation: the pad register.
constexpr int64_t kPadByte = 64;

/// The conv's geometry on the unpadded source.
struct Shape {
  int64_t oh, ow, kh, kw, sh, sw, dh, dw; // output, window, strides, dilations
  int64_t srcH, srcW, top, left;          // source plane, its padding
  int64_t groups;                         // dwords of taps per kernel row
};

/// Lane j's four bytes (taps 4q .. 4q+3 of kernel row `ky`) as indices
/// into a window holding source row bytes from column `base` on (the
/// pad register past 63), for output positions `pos(j)` (row, column);
/// nothing if a byte lies outside the window.
std::optional<SmallVector<int64_t>> permutation(
    const Shape &s, int64_t q, int64_t base,
    function_ref<std::optional<std::pair<int64_t, int64_t>>(int64_t)> pos,
    function_ref<std::optional<int64_t>(int64_t, int64_t)> at) {
  SmallVector<int64_t> perm(64, kPadByte);
  for (int64_t j = 0; j < kLanes; ++j) {
    std::optional<std::pair<int64_t, int64_t>> p = pos(j);
    for (int64_t t = 0; p && t < 4 && 4 * q + t < s.kw; ++t) {
      int64_t sx = p->second * s.sw + (4 * q + t) * s.dw - s.left;
      if (sx < 0 || sx >= s.srcW)
        continue;
      std::optional<int64_t> i = at(p->first, sx - base);
      if (!i)
        continue;
      if (*i < 0 || *i > 63)
        return std::nullopt;
      perm[4 * j + t] = *i;
    }
  }
  return perm;
}

/// Gives epilogue `e`, which stores into `src` (the buffer the conv reads:
/// bufferization reused it), a new allocation at `b`'s point instead, read
/// by src's readers after e. False, and nothing changed, when src is not
/// an allocation in e's block, or a view of it made before e is read
/// after e.
bool ownOutput(OpBuilder &b, Location loc, linalg::GenericOp e, Value src) {
  auto alloc = src.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != e->getBlock() ||
      !alloc.getType().hasStaticShape())
    return false;
  Block *block = e->getBlock();
  // (A user outside the block's ops counts as after.)
  auto after = [&](Operation *op) {
    Operation *a = block->findAncestorOpInBlock(*op);
    return !a || e->isBeforeInBlock(a);
  };
  std::function<bool(Value)> readAfter = [&](Value v) {
    return llvm::any_of(v.getUsers(), [&](Operation *u) {
      return after(u) || llvm::any_of(u->getResults(), [&](Value r) {
               return isa<MemRefType>(r.getType()) && readAfter(r);
             });
    });
  };
  for (Operation *u : src.getUsers())
    if (u != e && !after(u) && llvm::any_of(u->getResults(), [&](Value r) {
          return isa<MemRefType>(r.getType()) && readAfter(r);
        }))
      return false;
  Value fresh =
      b.create<memref::AllocOp>(loc, alloc.getType(), alloc.getAlignmentAttr());
  src.replaceUsesWithIf(fresh, [&](OpOperand &use) {
    return use.getOwner() == e || after(use.getOwner());
  });
  return true;
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
  std::optional<ZeroInit> zeroInit = zeroInitBefore(g, out);
  if (!get || !w || !zeroInit ||
      !cast<MemRefType>(x.getType()).hasStaticShape())
    return false;
  // The source without its padded copy where x is one.
  std::optional<PaddedSource> padded = matchPaddedSource(g, true);
  if (padded && padded->inPlace)
    padded.reset();
  Value src = padded ? padded->src : x;
  auto srcType = cast<MemRefType>(src.getType());
  const int64_t n = r[0], c = r[1];
  Shape s{r[2],
          r[5],
          r[3],
          r[4],
          dm->sh,
          dm->sw,
          dm->dh,
          dm->dw,
          srcType.getDimSize(2),
          srcType.getDimSize(3),
          padded ? padded->top : 0,
          padded ? padded->left : 0,
          int64_t(llvm::divideCeil(r[4], 4))};
  const int64_t positions = s.oh * s.ow;
  // A plane of at most 64 bytes is one register, and a vector's 16 lanes
  // any 16 positions; else each vector holds up to 16 of one output row,
  // its bytes from one 64-byte load of the source row per tap group.
  const bool wholePlane = s.srcH * s.srcW <= 64;
  const int64_t maxTap = s.dw * std::min<int64_t>(3, s.kw - 1);
  const int64_t cols =
      wholePlane ? kLanes : std::min({kLanes, s.ow, (63 - maxTap) / s.sw + 1});
  // (Kernel rows' weights stay in registers.)
  if (cols < 1 || s.kh * s.groups > 16)
    return false;
  // Output chunks of a row: first column, lanes, and per tap group the
  // first source column loaded and the permutation.
  struct Chunk {
    int64_t x0, lanes;
    SmallVector<int64_t> base;
    SmallVector<SmallVector<int64_t>> perm;
  };
  SmallVector<Chunk> chunks;
  for (int64_t x0 = 0; !wholePlane && x0 < s.ow; x0 += cols) {
    Chunk ch{x0, std::min(cols, s.ow - x0), {}, {}};
    for (int64_t q = 0; q < s.groups; ++q) {
      int64_t base =
          std::clamp<int64_t>(x0 * s.sw + 4 * q * s.dw - s.left, 0, s.srcW - 1);
      auto perm = permutation(
          s, q, base,
          [&](int64_t j) -> std::optional<std::pair<int64_t, int64_t>> {
            if (j >= ch.lanes)
              return std::nullopt;
            return std::make_pair(int64_t(0), x0 + j);
          },
          [](int64_t, int64_t col) -> std::optional<int64_t> { return col; });
      if (!perm)
        return false;
      ch.base.push_back(base);
      ch.perm.push_back(*perm);
    }
    chunks.push_back(ch);
  }
  // The outputs must not land on the source while other threads read it.
  // The epilogue may store into the source itself (bufferization reuses it
  // at stride 1): each channel's outputs then overwrite only that channel
  // (see below).
  if (writesInto(SmallVector<Value>(g.getDpsInits()), src))
    return false;
  epilogue = matchConvEpilogue(g, out);
  Value epilogueOut =
      epilogue ? linalg::GenericOp(epilogue->op).getDpsInits()[0] : Value();
  const bool inPlace = epilogueOut && epilogueOut == src;
  if (epilogueOut && !inPlace && writesInto({epilogueOut}, src)) {
    epilogue.reset();
    return false;
  }

  OpBuilder b(g);
  Location loc = g.getLoc();
  if (epilogue)
    loc = FusedLoc::get(g.getContext(), {loc, epilogue->op.getLoc()});
  // In place, a row's stores would overwrite source rows the next rows'
  // windows still read: the epilogue gets a buffer of its own. (Copying
  // each channel's plane to scratch first cost 38 ns a channel on 14x14
  // planes, against 21.) A plane in one register is read before any store.
  if (inPlace && !wholePlane && !ownOutput(b, loc, epilogue->op, src)) {
    epilogue.reset();
    return false;
  }
  auto idx = [&](OpBuilder &ib, int64_t v) -> Value {
    return ib.create<arith::ConstantIndexOp>(loc, v);
  };
  auto i8 = b.getI8Type(), i32 = b.getI32Type();
  auto bytes64 = VectorType::get({64}, i8);
  auto i32x16 = VectorType::get({kLanes}, i32);
  auto maskOf = [&](OpBuilder &ib, int64_t on, int64_t lanes) -> Value {
    SmallVector<bool> bits(lanes, false);
    std::fill_n(bits.begin(), std::min(on, lanes), true);
    return ib.create<arith::ConstantOp>(
        loc, DenseElementsAttr::get(VectorType::get({lanes}, ib.getI1Type()),
                                    ArrayRef<bool>(bits)));
  };
  // Weights as one dword per channel, kernel row and group of 4 taps
  // (byte t: tap 4 * group + t; zero past the row).
  auto wType = MemRefType::get({c * s.kh * s.groups}, i32);
  Value wTable = derivedGlobal(
      b, loc, g->getParentOfType<ModuleOp>(),
      (get.getName() + "_dw_vnni").str(), wType,
      [&] {
        SmallVector<int32_t> words(c * s.kh * s.groups, 0);
        for (int64_t ch = 0; ch < c; ++ch)
          for (int64_t i = 0; i < s.kh; ++i)
            for (int64_t q = 0; q < s.groups; ++q) {
              uint32_t word = 0;
              for (int64_t t = 0; t < 4 && 4 * q + t < s.kw; ++t)
                word |=
                    uint32_t(uint8_t((*w)[(ch * s.kh + i) * s.kw + 4 * q + t]))
                    << (8 * t);
              words[(ch * s.kh + i) * s.groups + q] = int32_t(word);
            }
        return DenseElementsAttr::get(
            RankedTensorType::get(wType.getShape(), i32),
            ArrayRef<int32_t>(words));
      },
      b.getI64IntegerAttr(64));
  Value pad = padded ? padded->pad
                     : b.create<arith::ConstantIntOp>(loc, 0, 8).getResult();
  // Taps on the padding add pad x weight (the zero-point correction after
  // counts them); with a zero pad they add nothing and are skipped.
  std::optional<int64_t> padConst = getConstantIntValue(pad);
  const bool zeroPad = padConst && *padConst == 0;
  Value zeros = b.create<arith::ConstantOp>(
      loc, DenseElementsAttr::get(i32x16, b.getZeroAttr(i32)));
  auto forLoop = [&](OpBuilder &ib, Value lb, Value ub, int64_t step,
                     function_ref<void(OpBuilder &, Value)> body) {
    return ib.create<scf::ForOp>(
        loc, lb, ub, idx(ib, step), ValueRange{},
        [&](OpBuilder &lb2, Location, Value iv, ValueRange) {
          body(lb2, iv);
          lb2.create<scf::YieldOp>(loc);
        });
  };
  auto dpbusd = [&](OpBuilder &kb, Value acc, Value bytes, Value weight) {
    // (vpdpbusd: the second operand's bytes are unsigned.)
    return kb
        .create<LLVM::CallIntrinsicOp>(
            loc, i32x16, kVpdpbusd,
            ValueRange{acc, kb.create<vector::BitCastOp>(loc, i32x16, bytes),
                       weight})
        .getResult(0);
  };
  forLoop(b, idx(b, 0), idx(b, n), 1, [&](OpBuilder &ib, Value image) {
    Value outN = epilogue
                     ? Value()
                     : rowMajor(ib, loc, out, ib.getIndexAttr(c), positions,
                                ib.create<arith::MulIOp>(loc, image,
                                                         idx(ib, c * positions))
                                    .getResult());
    auto hook = epilogue
                    ? convEpilogueStore(ib, loc, *epilogue, image, c, positions)
                    : nullptr;
    Value padVec = ib.create<vector::BroadcastOp>(loc, bytes64, pad);
    auto channels =
        forLoop(ib, idx(ib, 0), idx(ib, c), 1, [&](OpBuilder &cb, Value ch) {
          SmallVector<Value> weights; // [kh][groups], broadcast
          for (int64_t i = 0; i < s.kh; ++i)
            for (int64_t q = 0; q < s.groups; ++q) {
              Value at = cb.create<arith::AddIOp>(
                  loc,
                  cb.create<arith::MulIOp>(loc, ch, idx(cb, s.kh * s.groups)),
                  idx(cb, i * s.groups + q));
              weights.push_back(cb.create<vector::BroadcastOp>(
                  loc, i32x16,
                  cb.create<memref::LoadOp>(loc, wTable, ValueRange{at})));
            }
          auto store = [&](OpBuilder &kb, Value acc, Value p0, int64_t lanes) {
            Value mask = lanes < kLanes ? maskOf(kb, lanes, kLanes) : Value();
            if (hook)
              hook(kb, loc, acc, ch, p0, mask);
            else if (mask)
              kb.create<vector::MaskedStoreOp>(loc, outN, ValueRange{ch, p0},
                                               mask, acc);
            else
              kb.create<vector::StoreOp>(loc, acc, outN, ValueRange{ch, p0});
          };
          if (wholePlane) {
            // The plane in one register (the pad past it), every vector's
            // bytes a permutation of it and the pad register.
            Value planes = rowMajor(cb, loc, src, cb.getIndexAttr(n * c),
                                    s.srcH * s.srcW, cb.getIndexAttr(0));
            Value plane = cb.create<arith::AddIOp>(
                loc, cb.create<arith::MulIOp>(loc, image, idx(cb, c)), ch);
            Value reg = cb.create<vector::MaskedLoadOp>(
                loc, bytes64, planes, ValueRange{plane, idx(cb, 0)},
                maskOf(cb, s.srcH * s.srcW, 64), padVec);
            for (int64_t p0 = 0; p0 < positions; p0 += kLanes) {
              Value acc = zeros;
              for (int64_t i = 0; i < s.kh; ++i)
                for (int64_t q = 0; q < s.groups; ++q) {
                  auto perm = permutation(
                      s, q, 0,
                      [&](int64_t j)
                          -> std::optional<std::pair<int64_t, int64_t>> {
                        if (p0 + j >= positions)
                          return std::nullopt;
                        return std::make_pair((p0 + j) / s.ow, (p0 + j) % s.ow);
                      },
                      [&](int64_t y, int64_t sx) -> std::optional<int64_t> {
                        int64_t sy = y * s.sh + i * s.dh - s.top;
                        if (sy < 0 || sy >= s.srcH)
                          return std::nullopt;
                        return sy * s.srcW + sx;
                      });
                  if (zeroPad && llvm::all_of(*perm, [](int64_t v) {
                        return v == kPadByte;
                      }))
                    continue;
                  acc = dpbusd(
                      cb, acc,
                      cb.create<vector::ShuffleOp>(loc, reg, padVec, *perm),
                      weights[i * s.groups + q]);
                }
              store(cb, acc, idx(cb, p0), std::min(kLanes, positions - p0));
            }
            return;
          }
          // `count` output rows from `y0` (static: `staticY0`, which may
          // reach the padding rows; else every kernel row is in the source):
          // per kernel row and tap group, all their chunks, then the stores.
          auto rows = [&](OpBuilder &kb, Value y0, int64_t count,
                          std::optional<int64_t> staticY0) {
            SmallVector<Value> accs(count * chunks.size(), zeros);
            for (int64_t i = 0; i < s.kh; ++i)
              for (int64_t u = 0; u < count; ++u) {
                bool inRows = true;
                if (staticY0) {
                  int64_t sy = (*staticY0 + u) * s.sh + i * s.dh - s.top;
                  inRows = sy >= 0 && sy < s.srcH;
                  if (!inRows && zeroPad)
                    continue;
                }
                Value sy;
                if (inRows)
                  sy = kb.create<arith::AddIOp>(
                      loc,
                      kb.create<arith::MulIOp>(
                          loc, kb.create<arith::AddIOp>(loc, y0, idx(kb, u)),
                          idx(kb, s.sh)),
                      idx(kb, i * s.dh - s.top));
                for (auto [k, chunk] : llvm::enumerate(chunks))
                  for (int64_t q = 0; q < s.groups; ++q) {
                    Value &acc = accs[u * chunks.size() + k];
                    Value bytes = padVec;
                    if (inRows) {
                      int64_t base = chunk.base[q];
                      SmallVector<Value> at{image, ch, sy, idx(kb, base)};
                      Value window =
                          base + 64 <= s.srcW
                              ? kb.create<vector::LoadOp>(loc, bytes64, src, at)
                                    .getResult()
                              : kb.create<vector::MaskedLoadOp>(
                                      loc, bytes64, src, at,
                                      maskOf(kb, s.srcW - base, 64), padVec)
                                    .getResult();
                      bytes = kb.create<vector::ShuffleOp>(loc, window, padVec,
                                                           chunk.perm[q]);
                    }
                    acc = dpbusd(kb, acc, bytes, weights[i * s.groups + q]);
                  }
              }
            for (int64_t u = 0; u < count; ++u)
              for (auto [k, chunk] : llvm::enumerate(chunks)) {
                Value p0 = kb.create<arith::AddIOp>(
                    loc,
                    kb.create<arith::MulIOp>(
                        loc, kb.create<arith::AddIOp>(loc, y0, idx(kb, u)),
                        idx(kb, s.ow)),
                    idx(kb, chunk.x0));
                store(kb, accs[u * chunks.size() + k], p0, chunk.lanes);
              }
          };
          // Rows whose every kernel row is in the source: [yLo, yHi).
          int64_t yLo = std::min(s.oh, int64_t(llvm::divideCeil(s.top, s.sh)));
          int64_t yHi = std::clamp<int64_t>(
              llvm::divideFloorSigned(s.srcH - 1 + s.top - (s.kh - 1) * s.dh,
                                      s.sh) +
                  1,
              yLo, s.oh);
          // Up to 8 vectors side by side (vpdpbusd's latency).
          const int64_t perBlock =
              std::max<int64_t>(1, 8 / int64_t(chunks.size()));
          for (int64_t y = 0; y < yLo; y += perBlock)
            rows(cb, idx(cb, y), std::min(perBlock, yLo - y), y);
          int64_t blocks = (yHi - yLo) / perBlock;
          if (blocks)
            forLoop(cb, idx(cb, yLo), idx(cb, yLo + blocks * perBlock),
                    perBlock, [&](OpBuilder &kb, Value y0) {
                      rows(kb, y0, perBlock, std::nullopt);
                    });
          if (int64_t rest = yHi - yLo - blocks * perBlock)
            rows(cb, idx(cb, yLo + blocks * perBlock), rest, std::nullopt);
          for (int64_t y = yHi; y < s.oh; y += perBlock)
            rows(cb, idx(cb, y), std::min(perBlock, s.oh - y), y);
        });
    if (c >= 2 && c * positions * s.kh * s.kw >= kParallelMultiplyAdds)
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
