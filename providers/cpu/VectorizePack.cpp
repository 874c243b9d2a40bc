//===- VectorizePack.cpp - constant matmul operands in panel order --------===//
//
// Part of kiln-cpu-vectorize-contractions: a constant B (MatMul or Gemm
// weights) copied at compile time into panels of the register tile's
// width, [N / P][K][P], so that each register tile reads its B panel
// sequentially. Read in place, a row-major B of a wide layer is one row a
// k step apart (12 KiB for a 768 x 3072 FFN weight): every k step a new
// page, the TLB and the prefetchers lose, and the multiply-adds wait.
//
//===----------------------------------------------------------------------===//
#include "passes/FusionUtils.h"
#include "providers/cpu/Vectorize.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

namespace kiln::vectorize {

/// `v`, or the source of the whole view `v` is (blocks of run-time rows
/// view every operand, B whole).
static Value throughWholeView(Value v) {
  auto sv = v.getDefiningOp<memref::SubViewOp>();
  if (!sv)
    return v;
  auto src = cast<MemRefType>(sv.getSource().getType());
  if (sv.getType().getRank() != src.getRank() || !src.hasStaticShape())
    return v;
  for (int64_t i = 0; i < src.getRank(); ++i)
    if (sv.getStaticOffsets()[i] != 0 ||
        sv.getStaticSizes()[i] != src.getDimSize(i) ||
        sv.getStaticStrides()[i] != 1)
      return v;
  return sv.getSource();
}

memref::GlobalOp constantGlobal(Value v) {
  auto get = throughWholeView(v).getDefiningOp<memref::GetGlobalOp>();
  if (!get)
    return {};
  auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
      get, get.getNameAttr());
  if (!global || !global.getConstant() || !global.getInitialValue() ||
      !global.getType().getElementType().isF32() ||
      !global.getType().hasStaticShape() ||
      !global.getType().getLayout().isIdentity())
    return {};
  // A value whose elements can be read (a dense_resource's blob present
  // and as large as the type says).
  Attribute value = *global.getInitialValue();
  if (auto dense = dyn_cast<DenseElementsAttr>(value))
    return dense.getElementType().isF32() ? global : memref::GlobalOp();
  auto resource = dyn_cast<DenseResourceElementsAttr>(value);
  AsmResourceBlob *blob =
      resource ? resource.getRawHandle().getBlob() : nullptr;
  if (!blob || blob->getData().size() !=
                   size_t(global.getType().getNumElements()) * sizeof(float))
    return {};
  return global;
}

Value derivedGlobal(OpBuilder &b, Location loc, ModuleOp module, StringRef name,
                    MemRefType type, function_ref<DenseElementsAttr()> values,
                    IntegerAttr alignment) {
  if (!module.lookupSymbol<memref::GlobalOp>(name)) {
    OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
    mb.create<memref::GlobalOp>(loc, name, mb.getStringAttr("private"), type,
                                values(), /*constant=*/true, alignment);
  }
  return b.create<memref::GetGlobalOp>(loc, type, name);
}

Value packedPanels(OpBuilder &b, Location loc, Value bm, bool transB,
                   int64_t panel) {
  memref::GlobalOp global = constantGlobal(bm);
  MemRefType type = global.getType();
  int64_t k = type.getDimSize(transB ? 1 : 0),
          n = type.getDimSize(transB ? 0 : 1);
  // (The last panel zero-padded when n is not a multiple of the width.)
  int64_t panels = llvm::divideCeil(n, panel);
  auto packedType = MemRefType::get({panels, k, panel}, type.getElementType());
  std::string name =
      (global.getSymName() + "_panels" + std::to_string(panel)).str();
  auto module = global->getParentOfType<ModuleOp>();
  Value get = derivedGlobal(
      b, loc, module, name, packedType,
      [&] {
        // (Readable: constantGlobal checked.)
        std::optional<SmallVector<float>> v = fusion::elementsFloats(
            cast<ElementsAttr>(*global.getInitialValue()));
        SmallVector<float> packed(panels * k * panel, 0.0f);
        for (int64_t p = 0; p < panels; ++p)
          for (int64_t kk = 0; kk < k; ++kk)
            for (int64_t j = 0, col = p * panel; j < panel && col < n;
                 ++j, ++col)
              packed[(p * k + kk) * panel + j] =
                  (*v)[transB ? col * k + kk : kk * n + col];
        return DenseElementsAttr::get(
            RankedTensorType::get(packedType.getShape(), type.getElementType()),
            ArrayRef<float>(packed));
      },
      global.getAlignmentAttr());
  return get;
}

int64_t prefetchPanels(ModuleOp module) {
  // The register tiles' k loops reading panels with enough multiply-adds
  // per panel load, which fetch the slice of the next pass: others (a
  // GEMV's panels, AVX2's 4-row tiles) read each panel once or are bound
  // by their loads already.
  constexpr int64_t kMinFmasPerLoad = 8;
  // But a k loop longer than this whose one or two row tiles hold all of
  // A's rows (a decode step's 2 to 8, 16 on AVX2) streams its panels from
  // memory, and fetches them this many k steps ahead per row of the tile
  // (each loaded vector's FMAs), not a pass ahead (4096 steps, too far):
  // 4 x 4096 x 4096 best 64 steps ahead, 8 x 4096 x 4096 128 (1.65 ->
  // 1.34 and 1.33 ms, 85% of the read bound; 2 x 4096 x 4096 1.05x;
  // AVX2's 4 and 8 rows 1.33x and 1.42x).
  constexpr int64_t kStreamSteps = 128, kStreamAheadPerRow = 16;
  // A panel read: its memref and indices ([N / P][K][P] and panel, k, 0).
  struct Read {
    Operation *op;
    Value base;
    ValueRange indices;
  };
  auto panelRead = [](Operation &op) -> std::optional<Read> {
    Read r{&op, {}, {}};
    if (auto load = dyn_cast<vector::LoadOp>(op))
      r.base = load.getBase(), r.indices = load.getIndices();
    else if (auto read = dyn_cast<vector::TransferReadOp>(op))
      r.base = read.getSource(), r.indices = read.getIndices();
    auto get = r.base ? r.base.getDefiningOp<memref::GetGlobalOp>()
                      : memref::GetGlobalOp();
    auto global = get ? SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
                            get, get.getNameAttr())
                      : memref::GlobalOp();
    if (!global || !global->hasAttr(kPanelsStreamed) ||
        global.getType().getRank() != 3)
      return std::nullopt;
    return r;
  };
  // The rows of the matrix a load in the k loop reads (through views to
  // its buffer): A's, whose rows at most one tile holds where the panels
  // are read once.
  auto rowsRead = [](Operation &op) -> std::optional<int64_t> {
    Value base;
    if (auto l = dyn_cast<memref::LoadOp>(op))
      base = l.getMemRef();
    else if (auto l = dyn_cast<vector::LoadOp>(op))
      base = l.getBase();
    else if (auto r = dyn_cast<vector::TransferReadOp>(op))
      base = r.getSource();
    else
      return std::nullopt;
    while (auto view = base.getDefiningOp<ViewLikeOpInterface>())
      base = view.getViewSource();
    auto type = dyn_cast<MemRefType>(base.getType());
    if (!type || !type.hasStaticShape() || type.getRank() < 2)
      return INT64_MAX;
    return type.getNumElements() / type.getShape().back();
  };
  // The k loops, their panel read, and the tile's rows where it streams
  // its panels (0: it fetches the next pass).
  SmallVector<std::tuple<scf::ForOp, Read, int64_t>> sites;
  module.walk([&](scf::ForOp loop) {
    std::optional<Read> first;
    int64_t loads = 0, fmas = 0, rowsOfA = 0;
    for (Operation &op : *loop.getBody()) {
      if (isa<vector::FMAOp>(op))
        ++fmas;
      std::optional<Read> read = panelRead(op);
      if (!read) {
        if (std::optional<int64_t> rows = rowsRead(op))
          rowsOfA = std::max(rowsOfA, *rows);
        continue;
      }
      if (!first)
        first = read;
      ++loads;
    }
    // (Its k index one step a trip: the loop's variable, plus an offset.)
    Value iv = loop.getInductionVar();
    auto kStep = [&](Value v) {
      if (v == iv)
        return true;
      if (auto add = v.getDefiningOp<arith::AddIOp>())
        return add.getLhs() == iv || add.getRhs() == iv;
      auto apply = v.getDefiningOp<affine::AffineApplyOp>();
      auto sum =
          apply
              ? dyn_cast<AffineBinaryOpExpr>(apply.getAffineMap().getResult(0))
              : AffineBinaryOpExpr(nullptr);
      return sum && sum.getKind() == AffineExprKind::Add &&
             !isa<AffineBinaryOpExpr>(sum.getLHS()) &&
             !isa<AffineBinaryOpExpr>(sum.getRHS()) &&
             llvm::is_contained(apply.getMapOperands(), iv);
    };
    std::optional<int64_t> trips = constantTripCount(
        loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
    if (!first || !trips || getConstantIntValue(loop.getStep()) != 1 ||
        !kStep(first->indices[1]))
      return;
    // Its panels streamed: one or two tiles hold all of A's rows (the
    // second reads the panel from L2).
    int64_t rows = fmas / loads;
    bool streamed = *trips > kStreamSteps && rowsOfA && rowsOfA <= 2 * rows;
    if (fmas >= kMinFmasPerLoad * loads || (streamed && rows >= 2))
      sites.push_back({loop, *first, streamed ? rows : 0});
  });
  for (auto [loop, read, streamedRows] : sites) {
    // The slice of panel the next pass of this k loop reads lies right
    // after the one it reads now ([N / P][K][P]: the next k block, or the
    // next panel's first), one pass of the loop ahead. Fetched into L2 a
    // k step at a time while every row tile reuses the current slice,
    // weights that come from memory (each conv's weights, once a model's
    // no longer fit in the last-level cache) arrive before they are read:
    // otherwise the first row tile of each slice waits on memory.
    auto type = cast<MemRefType>(read.base.getType());
    int64_t k = type.getDimSize(1), panel = type.getDimSize(2),
            total = type.getNumElements();
    int64_t trips = *constantTripCount(loop.getLowerBound(),
                                       loop.getUpperBound(), loop.getStep());
    int64_t ahead = trips * panel;
    if (streamedRows)
      ahead = std::min(trips, kStreamAheadPerRow * streamedRows) * panel;
    OpBuilder hb(loop);
    Location loc = read.op->getLoc();
    Value flat = hb.create<memref::ReinterpretCastOp>(
        loc, MemRefType::get({total}, type.getElementType()), read.base, 0,
        ArrayRef<int64_t>{total}, ArrayRef<int64_t>{1});
    auto idx = [&](OpBuilder &ib, int64_t v) -> Value {
      return ib.create<arith::ConstantIndexOp>(loc, v);
    };
    // The flat index of panel p's element (kk, col).
    auto flatIndex = [&](OpBuilder &ib, Value p, Value kk, Value col) {
      Value row = ib.create<arith::AddIOp>(
          loc, ib.create<arith::MulIOp>(loc, p, idx(ib, k)), kk);
      return ib.create<arith::AddIOp>(
          loc, ib.create<arith::MulIOp>(loc, row, idx(ib, panel)), col);
    };
    // The prefetches go last in the k step: a prefetch orders memory in
    // LLVM's scheduler, and ahead of the panel's loads it kept every
    // broadcast of A above it in a register (14-row tiles spilled).
    OpBuilder b(loop.getBody()->getTerminator());
    ValueRange at = read.indices;
    Value here = flatIndex(b, at[0], at[1], at[2]);
    // How far ahead, less what the loop's last step would fetch past the
    // end (prefetching never faults, but an out-of-bounds index is
    // undefined): computed once before the loop where only k changes in
    // it, not clamped every step (its min and cmovs were 4-5% of a 150 x
    // 384 x 1536 MatMul).
    Value iv = loop.getInductionVar();
    auto invariant = [&](Value v) { return loop.isDefinedOutsideOfLoop(v); };
    Operation *kDef = at[1].getDefiningOp();
    Value dist;
    if (invariant(at[0]) && invariant(at[2]) &&
        (at[1] == iv || (kDef && kDef->getBlock() == loop.getBody() &&
                         llvm::all_of(kDef->getOperands(), [&](Value v) {
                           return v == iv || invariant(v);
                         })))) {
      OpBuilder pb(loop);
      IRMapping last;
      last.map(iv,
               pb.create<arith::SubIOp>(loc, loop.getUpperBound(), idx(pb, 1))
                   .getResult());
      Value lastK =
          at[1] == iv ? last.lookup(iv) : pb.clone(*kDef, last)->getResult(0);
      // (The last line's fetch at most the last element.)
      int64_t lastLine = (panel - 1) / 16 * 16;
      Value room = pb.create<arith::SubIOp>(loc, idx(pb, total - 1 - lastLine),
                                            flatIndex(pb, at[0], lastK, at[2]));
      dist = pb.create<arith::MaxSIOp>(
          loc, idx(pb, 0),
          pb.create<arith::MinSIOp>(loc, idx(pb, ahead), room));
    }
    // One prefetch per 64-byte line of the k step's panel row.
    Value from = dist ? b.create<arith::AddIOp>(loc, here, dist) : here;
    for (int64_t line = 0; line < panel; line += 16) {
      Value to = from;
      if (int64_t off = dist ? line : ahead + line)
        to = b.create<arith::AddIOp>(loc, to, idx(b, off));
      if (!dist)
        to = b.create<arith::MinUIOp>(loc, to, idx(b, total - 1));
      b.create<memref::PrefetchOp>(loc, flat, ValueRange{to},
                                   /*isWrite=*/false, /*localityHint=*/2,
                                   /*isDataCache=*/true);
    }
  }
  return sites.size();
}

} // namespace kiln::vectorize
