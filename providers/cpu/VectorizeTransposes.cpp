//===- VectorizeTransposes.cpp - kiln-cpu-vectorize-transposes ------------===//
//
// A transpose that moves the innermost dim (NCHW to NHWC, a detector
// head's [A, 85, H, W] to [A, H, W, 85], a ViT's channels to tokens) as
// tiles of 16 x 16 elements transposed in registers: contiguous loads
// along the input's inner dim, shuffles, contiguous stores along the
// output's. The naive loops read or write one element a stride apart.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "providers/Passes.h"
#include "providers/cpu/Vectorize.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <numeric>

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_CPUVECTORIZETRANSPOSES
#include "providers/Passes.h.inc"

namespace {

constexpr int64_t kTile = 16; // 32-bit lanes of a 512-bit vector

/// `op` with each run of input dims that stays together and in order in
/// the output (a detector head's H and W) collapsed into one dim, where
/// both buffers allow it: fewer, longer rows, fewer partial tiles.
linalg::TransposeOp collapseRuns(linalg::TransposeOp op) {
  auto inType = dyn_cast<MemRefType>(op.getInput().getType());
  auto outType = dyn_cast<MemRefType>(op.getInit().getType());
  if (!inType || !outType)
    return op;
  ArrayRef<int64_t> perm = op.getPermutation();
  SmallVector<ReassociationIndices> outGroups;
  for (int64_t d = 0; d < int64_t(perm.size()); ++d)
    if (d > 0 && perm[d] == perm[d - 1] + 1)
      outGroups.back().push_back(d);
    else
      outGroups.push_back({d});
  if (outGroups.size() == perm.size())
    return op;
  // The groups in input order: the new permutation sorts their first dims.
  SmallVector<int64_t> order(outGroups.size());
  std::iota(order.begin(), order.end(), 0);
  llvm::sort(order, [&](int64_t x, int64_t y) {
    return perm[outGroups[x].front()] < perm[outGroups[y].front()];
  });
  SmallVector<ReassociationIndices> inGroups;
  SmallVector<int64_t> newPerm(outGroups.size());
  for (auto [i, g] : llvm::enumerate(order)) {
    ReassociationIndices dims;
    for (int64_t d : outGroups[g])
      dims.push_back(perm[d]);
    inGroups.push_back(dims);
    newPerm[g] = i;
  }
  if (!memref::CollapseShapeOp::isGuaranteedCollapsible(inType, inGroups) ||
      !memref::CollapseShapeOp::isGuaranteedCollapsible(outType, outGroups))
    return op;
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value in = b.create<memref::CollapseShapeOp>(loc, op.getInput(), inGroups);
  Value out = b.create<memref::CollapseShapeOp>(loc, op.getInit(), outGroups);
  auto collapsed = b.create<linalg::TransposeOp>(loc, in, out, newPerm);
  op.erase();
  return collapsed;
}

/// What a transpose moves: the output's last dim is input dim `in`; the
/// input's last dim is output dim `out`.
struct InnerSwap {
  int64_t in, out;
};

std::optional<InnerSwap> matchTranspose(linalg::TransposeOp op) {
  auto inType = dyn_cast<MemRefType>(op.getInput().getType());
  auto outType = dyn_cast<MemRefType>(op.getInit().getType());
  if (!inType || !outType || !inType.hasStaticShape() ||
      !outType.hasStaticShape() || !inType.getElementType().isIntOrFloat() ||
      inType.getElementType().getIntOrFloatBitWidth() != 32 ||
      !vectorize::unitInnerStride(inType) ||
      !vectorize::unitInnerStride(outType) || vectorize::inDeviceCode(op))
    return std::nullopt;
  ArrayRef<int64_t> perm = op.getPermutation();
  int64_t last = perm.size() - 1;
  if (last < 1 || perm[last] == last)
    return std::nullopt;
  InnerSwap s{perm[last], llvm::find(perm, last) - perm.begin()};
  // (Shorter rows or columns leave most lanes of a tile idle.)
  if (outType.getDimSize(last) < 4 || outType.getDimSize(s.out) < 4)
    return std::nullopt;
  return s;
}

/// Emits `then` under `cond`, `otherwise` else (or `then` alone when the
/// branch is not needed: `cond` null).
void branch(OpBuilder &b, Location loc, Value cond,
            llvm::function_ref<void(OpBuilder &)> then,
            llvm::function_ref<void(OpBuilder &)> otherwise) {
  if (!cond)
    return then(b);
  auto ifOp = b.create<scf::IfOp>(loc, cond, /*withElseRegion=*/true);
  OpBuilder tb = ifOp.getThenBodyBuilder();
  then(tb);
  OpBuilder eb = ifOp.getElseBodyBuilder();
  otherwise(eb);
}

void rewrite(linalg::TransposeOp op, InnerSwap s) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value in = op.getInput(), out = op.getInit();
  auto outType = cast<MemRefType>(out.getType());
  Type elem = outType.getElementType();
  ArrayRef<int64_t> perm = op.getPermutation();
  int64_t rank = perm.size(), last = rank - 1;
  int64_t rowsExtent = outType.getDimSize(last);  // input dim s.in
  int64_t colsExtent = outType.getDimSize(s.out); // input dim `last`
  // Loops: every output dim but the two, then chunks of a few blocks of
  // columns, blocks of rows, the chunk's blocks of columns: output rows are
  // written whole while they are in L1 (not in parts a plane apart) and
  // each input row is read a few lines at a time (not one line each of
  // dozens of rows, past what the prefetchers follow).
  SmallVector<int64_t> extents;
  for (int64_t d = 0; d < rank; ++d)
    if (d != s.out && d != last)
      extents.push_back(outType.getDimSize(d));
  int64_t rowBlocks = llvm::divideCeil(rowsExtent, kTile);
  int64_t colBlocks = llvm::divideCeil(colsExtent, kTile);
  int64_t chunk = 1;
  for (int64_t c : {4, 5, 3, 6, 2})
    if (colBlocks % c == 0) {
      chunk = c;
      break;
    }
  extents.push_back(colBlocks / chunk);
  extents.push_back(rowBlocks);
  extents.push_back(chunk);

  // One tile: `rows` input rows (output lanes) of `cols` elements each.
  auto tile = [&](OpBuilder &tb, ArrayRef<Value> outIdx, Value row0, Value col0,
                  int64_t rows, int64_t cols) {
    SmallVector<Value> inIdx(rank);
    for (int64_t d = 0; d < rank; ++d)
      inIdx[perm[d]] = outIdx[d];
    auto rowType = VectorType::get({cols}, elem);
    SmallVector<Value> loaded;
    for (int64_t r = 0; r < rows; ++r) {
      inIdx[s.in] = tb.create<arith::AddIOp>(
          loc, row0, tb.create<arith::ConstantIndexOp>(loc, r));
      inIdx[last] = col0;
      Value v = tb.create<vector::LoadOp>(loc, rowType, in, inIdx);
      if (cols < kTile) { // (the lanes past `cols` are never stored)
        SmallVector<int64_t> widen(kTile, 0);
        for (int64_t j = 0; j < cols; ++j)
          widen[j] = j;
        v = tb.create<vector::ShuffleOp>(loc, v, v, widen);
      }
      loaded.push_back(v);
    }
    SmallVector<Value> columns = vectorize::transposeRows(tb, loc, loaded);
    SmallVector<Value> idx(outIdx);
    idx[last] = row0;
    for (int64_t c = 0; c < cols; ++c) {
      idx[s.out] = tb.create<arith::AddIOp>(
          loc, col0, tb.create<arith::ConstantIndexOp>(loc, c));
      tb.create<vector::StoreOp>(loc, columns[c], out, idx);
    }
  };

  // One loop over every tile (so that threads get even shares however
  // the extents fall), its index split into the loops' indices.
  int64_t tiles = 1;
  for (int64_t e : extents)
    tiles *= e;
  auto loop =
      b.create<scf::ForOp>(loc, b.create<arith::ConstantIndexOp>(loc, 0),
                           b.create<arith::ConstantIndexOp>(loc, tiles),
                           b.create<arith::ConstantIndexOp>(loc, 1));
  {
    OpBuilder lb = OpBuilder::atBlockTerminator(loop.getBody());
    SmallVector<Value> ivs(extents.size());
    Value rest = loop.getInductionVar();
    for (int64_t i = extents.size() - 1; i >= 0; --i) {
      Value e = lb.create<arith::ConstantIndexOp>(loc, extents[i]);
      ivs[i] = i ? lb.create<arith::RemUIOp>(loc, rest, e).getResult() : rest;
      if (i)
        rest = lb.create<arith::DivUIOp>(loc, rest, e);
    }
    Value tileSize = lb.create<arith::ConstantIndexOp>(loc, kTile);
    Value colBlock = lb.create<arith::AddIOp>(
        loc,
        lb.create<arith::MulIOp>(loc, ivs[ivs.size() - 3],
                                 lb.create<arith::ConstantIndexOp>(loc, chunk)),
        ivs.back());
    Value rowBlock = ivs[ivs.size() - 2];
    Value row0 = lb.create<arith::MulIOp>(loc, rowBlock, tileSize);
    Value col0 = lb.create<arith::MulIOp>(loc, colBlock, tileSize);
    SmallVector<Value> outIdx(rank);
    for (int64_t d = 0, i = 0; d < rank; ++d)
      if (d != s.out && d != last)
        outIdx[d] = ivs[i++];
    // Full blocks, and the partial last one of each kind.
    auto notLast = [&](Value block, int64_t blocks, int64_t extent) -> Value {
      if (extent % kTile == 0)
        return Value();
      return lb.create<arith::CmpIOp>(
          loc, arith::CmpIPredicate::ult, block,
          lb.create<arith::ConstantIndexOp>(loc, blocks - 1));
    };
    Value fullRows = notLast(rowBlock, rowBlocks, rowsExtent);
    Value fullCols = notLast(colBlock, colBlocks, colsExtent);
    auto columns = [&](OpBuilder &rb, int64_t rows) {
      branch(
          rb, loc, fullCols,
          [&](OpBuilder &cb) { tile(cb, outIdx, row0, col0, rows, kTile); },
          [&](OpBuilder &cb) {
            tile(cb, outIdx, row0, col0, rows, colsExtent % kTile);
          });
    };
    branch(
        lb, loc, fullRows, [&](OpBuilder &rb) { columns(rb, kTile); },
        [&](OpBuilder &rb) { columns(rb, rowsExtent % kTile); });
  }
  if (outType.getNumElements() >= vectorize::kParallelMoveElements &&
      !vectorize::inParallelLoop(op))
    vectorize::markParallel(loop, vectorize::kParallelMoveElements,
                            kTile * kTile);
  op.erase();
}

struct CpuVectorizeTransposesPass
    : public impl::CpuVectorizeTransposesBase<CpuVectorizeTransposesPass> {
  using CpuVectorizeTransposesBase::CpuVectorizeTransposesBase;

  void runOnOperation() override {
    if (vectorBits < 512)
      return;
    SmallVector<std::pair<linalg::TransposeOp, InnerSwap>> found;
    getOperation().walk([&](linalg::TransposeOp op) {
      if (matchTranspose(op))
        found.push_back({op, InnerSwap{}});
    });
    // (Collapsed, it may no longer move its inner dim: a reshape.)
    llvm::erase_if(found, [](auto &f) {
      f.first = collapseRuns(f.first);
      std::optional<InnerSwap> s = matchTranspose(f.first);
      if (s)
        f.second = *s;
      return !s;
    });
    for (auto [op, s] : found) {
      rewrite(op, s);
      ++numTransposes;
    }
  }
};

} // namespace
} // namespace kiln
