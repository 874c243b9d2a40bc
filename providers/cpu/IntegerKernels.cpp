//===- IntegerKernels.cpp - 8-bit register and tile kernels ---------------===//
//
// Part of kiln-cpu-integer-contractions (see IntegerKernels.h).
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

/// B [K][N] as panels of `lanes` columns, each k step `group` k values of
/// a column side by side, [N/lanes][K/group][lanes][group] of T (B's s8
/// widened), zero-padded; named after B with `suffix`.
template <typename T>
static Value packPanels(OpBuilder &b, Location loc, memref::GetGlobalOp get,
                        ArrayRef<int8_t> w, int64_t k, int64_t n, int64_t lanes,
                        int64_t group, Type elt, StringRef suffix) {
  int64_t panels = llvm::divideCeil(n, lanes),
          steps = llvm::divideCeil(k, group);
  auto type = MemRefType::get({panels, steps, group * lanes}, elt);
  return vectorize::derivedGlobal(
      b, loc, get->getParentOfType<ModuleOp>(), (get.getName() + suffix).str(),
      type,
      [&] {
        SmallVector<T> packed(panels * steps * group * lanes, 0);
        for (int64_t p = 0; p < panels; ++p)
          for (int64_t q = 0; q < steps; ++q)
            for (int64_t j = 0; j < lanes && p * lanes + j < n; ++j)
              for (int64_t t = 0; t < group && group * q + t < k; ++t)
                packed[((p * steps + q) * lanes + j) * group + t] =
                    w[(group * q + t) * n + p * lanes + j];
        return DenseElementsAttr::get(
            RankedTensorType::get(type.getShape(), elt), ArrayRef<T>(packed));
      },
      b.getI64IntegerAttr(64));
}

Value packedWeights(OpBuilder &b, Location loc, memref::GetGlobalOp get,
                    ArrayRef<int8_t> w, int64_t k, int64_t n) {
  return packPanels<int8_t>(b, loc, get, w, k, n, kLanes, 4, b.getI8Type(),
                            "_vnni");
}

Value packedWeights16(OpBuilder &b, Location loc, memref::GetGlobalOp get,
                      ArrayRef<int8_t> w, int64_t k, int64_t n) {
  return packPanels<int16_t>(b, loc, get, w, k, n, kLanes8, 2, b.getI16Type(),
                             "_pmaddwd");
}

namespace {

/// Stores accumulator vector `acc` of C's row `row` and panel column
/// `col`: through the kernel's epilogue, or into C (masked: `mask`).
void storeAccumulator(OpBuilder &b, Location loc, const Kernel &kn, Value acc,
                      Value row, Value col, Value mask) {
  if (kn.store)
    kn.store(b, loc, acc, row, col, mask);
  else if (mask)
    b.create<vector::MaskedStoreOp>(loc, kn.c, ValueRange{row, col}, mask, acc);
  else
    b.create<vector::StoreOp>(loc, acc, kn.c, ValueRange{row, col});
}

/// A register tile's rows and first columns in C, its accumulators'
/// first values (0 when C starts at 0, else C's, the last panel's lanes
/// past the end masked: `mask`, null if whole) and its stores.
struct TileFrame {
  SmallVector<Value> rows, cols, init;
  Value mask;
  int64_t lastLanes;

  void store(OpBuilder &b, Location loc, const Kernel &kn,
             ValueRange accs) const {
    int64_t panels = cols.size();
    for (size_t r = 0; r < rows.size(); ++r)
      for (int64_t j = 0; j < panels; ++j)
        storeAccumulator(b, loc, kn, accs[r * panels + j], rows[r], cols[j],
                         lastLanes && j == panels - 1 ? mask : Value());
  }
};

TileFrame tileFrame(OpBuilder &b, Location loc, const Kernel &kn, Value m,
                    Value cP0, int64_t rows, int64_t panels, int64_t lastLanes,
                    int64_t lanes) {
  auto idx = [&](int64_t v) {
    return b.create<arith::ConstantIndexOp>(loc, v).getResult();
  };
  auto type = VectorType::get({lanes}, b.getI32Type());
  TileFrame f;
  f.lastLanes = lastLanes;
  Value zeros = b.create<arith::ConstantOp>(
      loc, DenseElementsAttr::get(type, int32_t(0)));
  if (lastLanes)
    f.mask = b.create<vector::CreateMaskOp>(
        loc, VectorType::get({lanes}, b.getI1Type()),
        ValueRange{idx(lastLanes)});
  for (int64_t r = 0; r < rows; ++r)
    f.rows.push_back(r ? b.create<arith::AddIOp>(loc, m, idx(r)).getResult()
                       : m);
  for (int64_t j = 0; j < panels; ++j)
    f.cols.push_back(b.create<arith::MulIOp>(
        loc, j ? b.create<arith::AddIOp>(loc, cP0, idx(j)).getResult() : cP0,
        idx(lanes)));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < panels; ++j) {
      SmallVector<Value, 2> at{f.rows[r], f.cols[j]};
      f.init.push_back(
          kn.zeroInit ? zeros
          : lastLanes && j == panels - 1
              ? b.create<vector::MaskedLoadOp>(loc, type, kn.c, at, f.mask,
                                               zeros)
                    .getResult()
              : b.create<vector::LoadOp>(loc, type, kn.c, at).getResult());
    }
  return f;
}

void emitTile8(OpBuilder &b, Location loc, const Kernel &kn, Value m, Value vP0,
               Value cP0, int64_t rows, int64_t panels, int64_t lastLanes);

/// C[m .. m+rows, panels cP0 .. cP0+panels] += bcast x vec[vP0 ..]: the
/// accumulators start from C and stay in registers over the k steps; the
/// last panel of the matrix keeps its lanes past the end out of memory
/// (`lastLanes`, 0 if whole).

void emitTile(OpBuilder &b, Location loc, const Kernel &kn, Value m, Value vP0,
              Value cP0, int64_t rows, int64_t panels, int64_t lastLanes) {
  if (kn.avx2)
    return emitTile8(b, loc, kn, m, vP0, cP0, rows, panels, lastLanes);
  auto i32x16 = VectorType::get({kLanes}, b.getI32Type());
  auto idx = [&](int64_t v) {
    return b.create<arith::ConstantIndexOp>(loc, v).getResult();
  };
  TileFrame f = tileFrame(b, loc, kn, m, cP0, rows, panels, lastLanes, kLanes);
  SmallVector<Value> &rowIdx = f.rows;
  auto loop = b.create<scf::ForOp>(
      loc, idx(0), idx(kn.steps), idx(1), f.init,
      [&](OpBuilder &nb, Location l, Value q, ValueRange accs) {
        auto cst = [&](int64_t v) {
          return nb.create<arith::ConstantIndexOp>(l, v).getResult();
        };
        SmallVector<Value> bv, next;
        for (int64_t j = 0; j < panels; ++j) {
          Value p =
              j ? nb.create<arith::AddIOp>(l, vP0, cst(j)).getResult() : vP0;
          Value v = nb.create<vector::LoadOp>(
              l, VectorType::get({4 * kLanes}, nb.getI8Type()), kn.vec,
              ValueRange{p, q, cst(0)});
          bv.push_back(nb.create<vector::BitCastOp>(l, i32x16, v));
        }
        Value k4 = nb.create<arith::MulIOp>(l, q, cst(4));
        for (int64_t r = 0; r < rows; ++r) {
          // Four bytes of the row, broadcast as one i32 to every lane.
          Value b4 =
              nb.create<vector::LoadOp>(l, VectorType::get({4}, nb.getI8Type()),
                                        kn.bcast, ValueRange{rowIdx[r], k4});
          Value word = nb.create<vector::ExtractOp>(
              l,
              nb.create<vector::BitCastOp>(
                  l, VectorType::get({1}, nb.getI32Type()), b4),
              ArrayRef<int64_t>{0});
          Value bcast = nb.create<vector::BroadcastOp>(l, i32x16, word);
          for (int64_t j = 0; j < panels; ++j) {
            // (vpdpbusd: the second operand's bytes are unsigned.)
            Value u = kn.bcastUnsigned ? bcast : bv[j],
                  s = kn.bcastUnsigned ? bv[j] : bcast;
            next.push_back(nb.create<LLVM::CallIntrinsicOp>(
                                 l, i32x16, kVpdpbusd,
                                 ValueRange{accs[r * panels + j], u, s})
                               .getResult(0));
          }
        }
        nb.create<scf::YieldOp>(l, next);
      });
  f.store(b, loc, kn, loop.getResults());
}

/// emitTile on AVX2: C[m .. m+rows, 8-column panels cP0 ..] += A x B, A's
/// rows widened to s16 into kn.wide first (16 bytes a load; zeros past K),
/// then per k pair each row's two s16 broadcast as one i32 against each
/// panel's 8 x 2 s16 (vpmaddwd), summed into i32 accumulators in registers.
void emitTile8(OpBuilder &b, Location loc, const Kernel &kn, Value m, Value vP0,
               Value cP0, int64_t rows, int64_t panels, int64_t lastLanes) {
  auto idx = [&](OpBuilder &ib, Location l, int64_t v) {
    return ib.create<arith::ConstantIndexOp>(l, v).getResult();
  };
  Type i8 = b.getI8Type(), i16 = b.getI16Type(), i32 = b.getI32Type();
  auto i32x8 = VectorType::get({kLanes8}, i32);
  auto i16x16 = VectorType::get({2 * kLanes8}, i16);
  auto i8x16 = VectorType::get({2 * kLanes8}, i8);
  int64_t k = cast<MemRefType>(kn.bcast.getType()).getDimSize(1);
  int64_t wideK = cast<MemRefType>(kn.wide.getType()).getDimSize(1);
  // (Whole 16-byte chunks unmasked: AVX2 has no byte-masked load, LLVM
  // would load a masked one byte by byte.)
  int64_t whole = k / 16 * 16;
  for (int64_t r = 0; r < rows; ++r) {
    Value row = b.create<arith::AddIOp>(loc, m, idx(b, loc, r));
    auto widen = [&](OpBuilder &wb, Location l, Value k0, Value bytes) {
      wb.create<vector::StoreOp>(l, wb.create<arith::ExtUIOp>(l, i16x16, bytes),
                                 kn.wide, ValueRange{idx(wb, l, r), k0});
    };
    b.create<scf::ForOp>(loc, idx(b, loc, 0), idx(b, loc, whole),
                         idx(b, loc, 16), ValueRange{},
                         [&](OpBuilder &wb, Location l, Value k0, ValueRange) {
                           widen(wb, l, k0,
                                 wb.create<vector::LoadOp>(
                                     l, i8x16, kn.bcast, ValueRange{row, k0}));
                           wb.create<scf::YieldOp>(l);
                         });
    if (whole < wideK) {
      Value mask = b.create<vector::CreateMaskOp>(
          loc, VectorType::get({16}, b.getI1Type()),
          ValueRange{idx(b, loc, k - whole)});
      Value zeros = b.create<arith::ConstantOp>(
          loc, DenseElementsAttr::get(i8x16, b.getI8IntegerAttr(0)));
      widen(b, loc, idx(b, loc, whole),
            b.create<vector::MaskedLoadOp>(loc, i8x16, kn.bcast,
                                           ValueRange{row, idx(b, loc, whole)},
                                           mask, zeros));
    }
  }
  TileFrame f = tileFrame(b, loc, kn, m, cP0, rows, panels, lastLanes, kLanes8);
  auto loop = b.create<scf::ForOp>(
      loc, idx(b, loc, 0), idx(b, loc, kn.steps), idx(b, loc, 1), f.init,
      [&](OpBuilder &nb, Location l, Value q, ValueRange accs) {
        SmallVector<Value> bv, next;
        for (int64_t j = 0; j < panels; ++j)
          bv.push_back(nb.create<vector::LoadOp>(
              l, i16x16, kn.vec,
              ValueRange{nb.create<arith::AddIOp>(l, vP0, idx(nb, l, j)), q,
                         idx(nb, l, 0)}));
        Value k2 = nb.create<arith::MulIOp>(l, q, idx(nb, l, 2));
        for (int64_t r = 0; r < rows; ++r) {
          Value pair =
              nb.create<vector::LoadOp>(l, VectorType::get({2}, i16), kn.wide,
                                        ValueRange{idx(nb, l, r), k2});
          Value word = nb.create<vector::ExtractOp>(
              l,
              nb.create<vector::BitCastOp>(l, VectorType::get({1}, i32), pair),
              ArrayRef<int64_t>{0});
          Value bcast = nb.create<vector::BitCastOp>(
              l, i16x16, nb.create<vector::BroadcastOp>(l, i32x8, word));
          for (int64_t j = 0; j < panels; ++j)
            next.push_back(nb.create<arith::AddIOp>(
                l, accs[r * panels + j],
                nb.create<LLVM::CallIntrinsicOp>(l, i32x8, kVpmaddwd,
                                                 ValueRange{bcast, bv[j]})
                    .getResult(0)));
        }
        nb.create<scf::YieldOp>(l, next);
      });
  f.store(b, loc, kn, loop.getResults());
}

/// C[m .. m+rows, panels cP0 ..] = bcast x vec on AMX tiles (rows 16 or
/// 32, C starting at 0): per pair of panels, up to 2 x 2 accumulator tiles
/// over the k chunks (through `acc` [32][32] i32 between blocks of
/// them), then each row's vectors stored as emitTile stores them (the
/// columns past C's end are computed, not stored). Every tile is 16 rows
/// of 64 bytes: LLVM 19 gives each tile register one shape per function,
/// so tiles of a second shape would need registers of their own (the
/// 8 are taken). The last k chunk reads up to 15 steps (60 bytes) past
/// kn.steps: the caller pads them (zero weights on one side).
void emitAmxTile(OpBuilder &b, Location loc, const Kernel &kn, Value m,
                 Value vP0, Value cP0, int64_t rows, int64_t panels,
                 int64_t lastLanes, Value acc) {
  auto idx = [&](OpBuilder &ib, Location l, int64_t v) {
    return ib.create<arith::ConstantIndexOp>(l, v).getResult();
  };
  assert(kn.zeroInit && "AMX tiles start at 0: C would be overwritten");
  Type i8 = b.getI8Type(), i32 = b.getI32Type();
  int64_t rowTiles = rows / kAmxTileRows;
  auto cType = VectorType::get({kAmxTileRows, kLanes}, i32);
  int64_t chunks = llvm::divideCeil(kn.steps, kAmxSteps);
  for (int64_t j0 = 0; j0 < panels; j0 += 2) {
    int64_t cols = std::min<int64_t>(2, panels - j0);
    // A loop over the pair's rows: `body(r, C's row, j, C's column)` for
    // each of its panels j.
    auto overRows = [&](function_ref<void(OpBuilder &, Location, Value, Value,
                                          int64_t, Value)>
                            body) {
      b.create<scf::ForOp>(
          loc, idx(b, loc, 0), idx(b, loc, rows), idx(b, loc, 1), ValueRange{},
          [&](OpBuilder &rb, Location l, Value r, ValueRange) {
            Value row = rb.create<arith::AddIOp>(l, m, r);
            for (int64_t j = 0; j < cols; ++j)
              body(rb, l, r, row, j,
                   rb.create<arith::MulIOp>(
                       l, rb.create<arith::AddIOp>(l, cP0, idx(rb, l, j0 + j)),
                       idx(rb, l, kLanes)));
            rb.create<scf::YieldOp>(l);
          });
    };
    // C's lines for writing first: the stores that miss (lines another
    // core read last: the worker's took 6x the caller's time) hold back
    // every later store, the tiles' into `acc` among them, and the loads
    // from `acc` wait for those.
    if (!kn.store && !kn.remap)
      overRows(
          [&](OpBuilder &pb, Location l, Value, Value row, int64_t, Value col) {
            pb.create<memref::PrefetchOp>(l, kn.c, ValueRange{row, col},
                                          /*isWrite=*/true, 3, true);
          });
    // `count` chunks from step q0, the accumulators from 0 or from `acc`,
    // into `acc`. (Each amx.tile_zero tagged apart: CSE would make them
    // one value, which every product then overwrites in place: LLVM would
    // copy it through memory per use, and runs out of tile registers.)
    auto segment = [&](OpBuilder &sb, Location sl, Value q0, int64_t count,
                       bool fromZero) {
      SmallVector<Value> c;
      for (int64_t i = 0; i < rowTiles; ++i)
        for (int64_t j = 0; j < cols; ++j) {
          if (fromZero) {
            auto zero = sb.create<amx::TileZeroOp>(sl, cType);
            zero->setAttr("kiln.tile", sb.getI64IntegerAttr((*kn.zeroTags)++));
            c.push_back(zero);
            continue;
          }
          c.push_back(sb.create<amx::TileLoadOp>(
              sl, cType, acc,
              ValueRange{idx(sb, sl, i * kAmxTileRows),
                         idx(sb, sl, j * kLanes)}));
        }
      auto chunk = [&](int64_t first) {
        Value q = sb.create<arith::AddIOp>(sl, q0, idx(sb, sl, first));
        Value k4 = sb.create<arith::MulIOp>(sl, q, idx(sb, sl, 4));
        SmallVector<Value> as, bs;
        for (int64_t i = 0; i < rowTiles; ++i) {
          Value row =
              sb.create<arith::AddIOp>(sl, m, idx(sb, sl, i * kAmxTileRows));
          Value col = k4;
          if (kn.bcastTiles) {
            // Tile (row / 16, chunk q / 16): row ((row / 16) * chunks +
            // q / 16) * 16 of the [.., 64] view.
            Value tile = sb.create<arith::AddIOp>(
                sl,
                sb.create<arith::MulIOp>(
                    sl,
                    sb.create<arith::DivUIOp>(sl, row,
                                              idx(sb, sl, kAmxTileRows)),
                    idx(sb, sl, kn.bcastTiles)),
                sb.create<arith::DivUIOp>(sl, q, idx(sb, sl, kAmxSteps)));
            row = sb.create<arith::MulIOp>(sl, tile, idx(sb, sl, kAmxTileRows));
            col = idx(sb, sl, 0);
          }
          as.push_back(sb.create<amx::TileLoadOp>(
              sl, VectorType::get({kAmxTileRows, 4 * kAmxSteps}, i8), kn.bcast,
              ValueRange{row, col}));
        }
        for (int64_t j = 0; j < cols; ++j) {
          Value panel = sb.create<arith::AddIOp>(sl, vP0, idx(sb, sl, j0 + j));
          bs.push_back(
              kn.amxB ? kn.amxB(sb, sl, panel, q)
                      : sb.create<amx::TileLoadOp>(
                            sl, VectorType::get({kAmxSteps, 4 * kLanes}, i8),
                            kn.vec, ValueRange{panel, q, idx(sb, sl, 0)}));
        }
        for (int64_t i = 0; i < rowTiles; ++i)
          for (int64_t j = 0; j < cols; ++j) {
            Value &cij = c[i * cols + j];
            auto mul = sb.create<amx::TileMulIOp>(sl, cij.getType(), as[i],
                                                  bs[j], cij);
            // (u8 x s8: the unsigned side zero-extends.)
            mul.setIsZextLhs(kn.bcastUnsigned);
            mul.setIsZextRhs(!kn.bcastUnsigned);
            cij = mul;
          }
      };
      for (int64_t t = 0; t < count; ++t)
        chunk(t * kAmxSteps);
      for (int64_t i = 0; i < rowTiles; ++i)
        for (int64_t j = 0; j < cols; ++j)
          sb.create<amx::TileStoreOp>(sl, acc,
                                      ValueRange{idx(sb, sl, i * kAmxTileRows),
                                                 idx(sb, sl, j * kLanes)},
                                      c[i * cols + j]);
    };
    // The first segment starts from tile_zero, which is pure: loop-invariant
    // code motion (kiln-cpu-vectorize-contractions) would hoist it out of
    // the loops, keeping a tile register live through them. Under an
    // scf.if on the row index (always true) it stays.
    auto firstSegment = [&](int64_t count) {
      Value rowOk = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, m,
                                            idx(b, loc, 0));
      b.create<scf::IfOp>(loc, rowOk, [&](OpBuilder &ib, Location l) {
        segment(ib, l, idx(ib, l, 0), count, true);
        ib.create<scf::YieldOp>(l);
      });
    };
    int64_t blocks = chunks / kAmxChunksPerBlock;
    if (blocks <= 1) {
      firstSegment(chunks);
    } else {
      int64_t block = kAmxChunksPerBlock * kAmxSteps;
      firstSegment(kAmxChunksPerBlock);
      b.create<scf::ForOp>(
          loc, idx(b, loc, block), idx(b, loc, blocks * block),
          idx(b, loc, block), ValueRange{},
          [&](OpBuilder &nb, Location l, Value q0, ValueRange) {
            segment(nb, l, q0, kAmxChunksPerBlock, false);
            nb.create<scf::YieldOp>(l);
          });
      if (int64_t left = chunks - blocks * kAmxChunksPerBlock)
        segment(b, loc, idx(b, loc, blocks * block), left, false);
    }
    // Each row's vectors, as emitTile stores its accumulators.
    overRows([&](OpBuilder &rb, Location l, Value r, Value row, int64_t j,
                 Value col) {
      Value v =
          rb.create<vector::LoadOp>(l, VectorType::get({kLanes}, i32), acc,
                                    ValueRange{r, idx(rb, l, j * kLanes)});
      Value mask;
      if (lastLanes && j0 + j == panels - 1)
        mask = rb.create<vector::CreateMaskOp>(
            l, VectorType::get({kLanes}, rb.getI1Type()),
            ValueRange{idx(rb, l, lastLanes)});
      if (kn.remap)
        kn.remap(rb, l, rb.create<arith::AddIOp>(l, cP0, idx(rb, l, j0 + j)), v,
                 col, mask);
      storeAccumulator(rb, l, kn, v, row, col, mask);
    });
  }
}

/// A loop over the whole tiles of `rows` rows in [from, end), `tile(m)`
/// each; returns where the rows left begin.
Value wholeTiles(OpBuilder &b, Location loc, Value from, Value end,
                 int64_t rows,
                 function_ref<void(OpBuilder &, Location, Value)> tile) {
  Value step = b.create<arith::ConstantIndexOp>(loc, rows);
  Value count = b.create<arith::SubIOp>(loc, end, from);
  Value whole = b.create<arith::AddIOp>(
      loc, from,
      b.create<arith::MulIOp>(loc, b.create<arith::DivUIOp>(loc, count, step),
                              step));
  b.create<scf::ForOp>(loc, from, whole, step, ValueRange{},
                       [&](OpBuilder &nb, Location l, Value m, ValueRange) {
                         tile(nb, l, m);
                         nb.create<scf::YieldOp>(l);
                       });
  return whole;
}

} // namespace

std::string ConvSizes::name(bool output) const {
  auto two = [](int64_t a, int64_t b) {
    return std::to_string(a) + "x" + std::to_string(b);
  };
  std::string s = std::to_string(c) + "x" + two(h, w) + "_k" + two(kh, kw) +
                  "_s" + two(sh, sw) + "_d" + two(dh, dw);
  return output ? s + "_o" + two(oh, ow) : s;
}

ConvUnits::ConvUnits(int64_t tiles, int64_t tile, int64_t rest, int64_t rows,
                     int64_t rowAlign)
    : tiles(tiles), tile(tile), rest(rest), rows(rows) {
  rowBlocks = std::clamp<int64_t>(llvm::divideCeil(8, units()), 1,
                                  std::max<int64_t>(1, rows / (8 * kRows)));
  blockRows = llvm::alignTo(llvm::divideCeil(rows, rowBlocks), rowAlign);
  rowBlocks = llvm::divideCeil(rows, blockRows);
}

void forEachConvUnit(OpBuilder &b, Location loc, const ConvUnits &u,
                     int64_t perUnit,
                     function_ref<void(OpBuilder &, Location, Value, int64_t,
                                       bool, Value, Value)>
                         unit) {
  auto idx = [](OpBuilder &ib, Location l, int64_t v) {
    return ib.create<arith::ConstantIndexOp>(l, v).getResult();
  };
  auto loop = b.create<scf::ForOp>(
      loc, idx(b, loc, 0), idx(b, loc, u.units() * u.rowBlocks), idx(b, loc, 1),
      ValueRange{}, [&](OpBuilder &tb, Location tl, Value it, ValueRange) {
        Value t, block;
        if (u.rowsOuter) {
          t = tb.create<arith::RemUIOp>(tl, it, idx(tb, tl, u.units()));
          block = tb.create<arith::DivUIOp>(tl, it, idx(tb, tl, u.units()));
        } else {
          t = tb.create<arith::DivUIOp>(tl, it, idx(tb, tl, u.rowBlocks));
          block = tb.create<arith::RemUIOp>(tl, it, idx(tb, tl, u.rowBlocks));
        }
        Value rowStart =
            tb.create<arith::MulIOp>(tl, block, idx(tb, tl, u.blockRows));
        Value rowEnd = tb.create<arith::MinUIOp>(
            tl,
            tb.create<arith::AddIOp>(tl, rowStart, idx(tb, tl, u.blockRows)),
            idx(tb, tl, u.rows));
        Value p0 = tb.create<arith::MulIOp>(tl, t, idx(tb, tl, u.tile));
        if (!u.rest) {
          unit(tb, tl, p0, u.tile, false, rowStart, rowEnd);
        } else if (!u.tiles) {
          unit(tb, tl, p0, u.rest, true, rowStart, rowEnd);
        } else {
          Value whole = tb.create<arith::CmpIOp>(tl, arith::CmpIPredicate::ult,
                                                 t, idx(tb, tl, u.tiles));
          tb.create<scf::IfOp>(
              tl, whole,
              [&](OpBuilder &wb, Location wl) {
                unit(wb, wl, p0, u.tile, false, rowStart, rowEnd);
                wb.create<scf::YieldOp>(wl);
              },
              [&](OpBuilder &wb, Location wl) {
                unit(wb, wl, p0, u.rest, true, rowStart, rowEnd);
                wb.create<scf::YieldOp>(wl);
              });
        }
        tb.create<scf::YieldOp>(tl);
      });
  vectorize::markParallel(loop, vectorize::kParallelMultiplyAdds,
                          u.blockRows * perUnit);
}

void emitColumns(OpBuilder &b, Location loc, const Kernel &kn, Value rowStart,
                 Value rowEnd, Value vP0, Value cP0, int64_t panels,
                 int64_t lastLanes, int64_t staticRows) {
  auto idx = [&](int64_t v) {
    return b.create<arith::ConstantIndexOp>(loc, v).getResult();
  };
  if (kn.avx2 && !kn.wide) {
    Kernel wide = kn;
    int64_t k = cast<MemRefType>(kn.bcast.getType()).getDimSize(1);
    wide.wide = b.create<memref::AllocOp>(
        loc,
        MemRefType::get({kRows, int64_t(llvm::alignTo(k, 16))}, b.getI16Type()),
        b.getI64IntegerAttr(64));
    return emitColumns(b, loc, wide, rowStart, rowEnd, vP0, cP0, panels,
                       lastLanes, staticRows);
  }
  if (kn.amx) {
    // Tiles of 32 rows, then of 16, then the rest on the vector kernel.
    // The accumulators between k blocks and for the stores.
    Value acc = b.create<memref::AllocOp>(
        loc, MemRefType::get({kAmxRows, kAmxRows}, b.getI32Type()),
        b.getI64IntegerAttr(64));
    auto tiles = [&](Value from, int64_t rows) {
      return wholeTiles(
          b, loc, from, rowEnd, rows, [&](OpBuilder &nb, Location l, Value m) {
            emitAmxTile(nb, l, kn, m, vP0, cP0, rows, panels, lastLanes, acc);
          });
    };
    Value whole = tiles(tiles(rowStart, kAmxRows), kAmxTileRows);
    // (B read in place has no packed panels for the vector kernel: its
    // callers give whole tiles of rows.)
    if (kn.amxB || (staticRows > 0 && staticRows % kAmxTileRows == 0))
      return;
    Kernel vector = kn;
    vector.amx = false;
    emitColumns(b, loc, vector, whole, rowEnd, vP0, cP0, panels, lastLanes,
                staticRows > 0 ? staticRows % kAmxTileRows : -1);
    return;
  }
  int64_t rows = staticRows > 0 ? std::min(kRows, staticRows) : kRows;
  Value whole = wholeTiles(
      b, loc, rowStart, rowEnd, rows, [&](OpBuilder &nb, Location l, Value m) {
        emitTile(nb, l, kn, m, vP0, cP0, rows, panels, lastLanes);
      });
  if (staticRows > 0 && staticRows % rows == 0)
    return;
  // A known remainder as one tile: single rows load a panel vector per
  // product (64 = 10 x 6 + 4 channels: 4 single rows were 10% of a
  // 64-channel conv).
  if (staticRows > 0) {
    emitTile(b, loc, kn, whole, vP0, cP0, staticRows % rows, panels, lastLanes);
    return;
  }
  b.create<scf::ForOp>(loc, whole, rowEnd, idx(1), ValueRange{},
                       [&](OpBuilder &nb, Location l, Value m, ValueRange) {
                         emitTile(nb, l, kn, m, vP0, cP0, 1, panels, lastLanes);
                         nb.create<scf::YieldOp>(l);
                       });
}

void forEachColumnTile(
    OpBuilder &b, Location loc, int64_t columns, int64_t perTile,
    function_ref<void(OpBuilder &, Location, Value, int64_t, int64_t)> body,
    int64_t lanes, int64_t maxPanels) {
  int64_t panels = llvm::divideCeil(columns, lanes),
          lastLanes = columns % lanes;
  int64_t tile = std::min(maxPanels, panels);
  int64_t tiles = (columns / lanes) / tile, rest = panels - tiles * tile;
  auto idx = [&](int64_t v) {
    return b.create<arith::ConstantIndexOp>(loc, v).getResult();
  };
  if (tiles > 0) {
    auto loop = b.create<scf::ForOp>(
        loc, idx(0), idx(tiles), idx(1), ValueRange{},
        [&](OpBuilder &nb, Location l, Value t, ValueRange) {
          Value p0 = nb.create<arith::MulIOp>(
              l, t, nb.create<arith::ConstantIndexOp>(l, tile));
          body(nb, l, p0, tile, 0);
          nb.create<scf::YieldOp>(l);
        });
    vectorize::markParallel(loop, vectorize::kParallelMultiplyAdds, perTile);
  }
  if (rest > 0)
    body(b, loc, idx(tiles * tile), rest, lastLanes);
}

} // namespace kiln::int8
