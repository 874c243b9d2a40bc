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
  module.lookupSymbol<memref::GlobalOp>(name)->setAttr(
      kPackedPanels, UnitAttr::get(b.getContext()));
  return get;
}

int64_t prefetchPanels(ModuleOp module) {
  // The register tiles' k loops reading panels with enough multiply-adds
  // per panel load: others (a GEMV's panels, AVX2's 4-row tiles) read each
  // panel once or are bound by their loads already.
  constexpr int64_t kMinFmasPerLoad = 8;
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
    if (!global || !global->hasAttr(kPackedPanels) ||
        global.getType().getRank() != 3)
      return std::nullopt;
    return r;
  };
  SmallVector<std::pair<scf::ForOp, Read>> sites;
  module.walk([&](scf::ForOp loop) {
    std::optional<Read> first;
    int64_t loads = 0, fmas = 0;
    for (Operation &op : *loop.getBody()) {
      if (isa<vector::FMAOp>(op))
        ++fmas;
      std::optional<Read> read = panelRead(op);
      if (!read)
        continue;
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
    if (first && trips && getConstantIntValue(loop.getStep()) == 1 &&
        kStep(first->indices[1]) && fmas >= kMinFmasPerLoad * loads)
      sites.push_back({loop, *first});
  });
  for (auto [loop, read] : sites) {
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
    int64_t ahead = *constantTripCount(loop.getLowerBound(),
                                       loop.getUpperBound(), loop.getStep()) *
                    panel;
    OpBuilder hb(loop);
    Location loc = read.op->getLoc();
    Value flat = hb.create<memref::ReinterpretCastOp>(
        loc, MemRefType::get({total}, type.getElementType()), read.base, 0,
        ArrayRef<int64_t>{total}, ArrayRef<int64_t>{1});
    OpBuilder b(read.op);
    auto idx = [&](int64_t v) -> Value {
      return b.create<arith::ConstantIndexOp>(loc, v);
    };
    ValueRange at = read.indices;
    Value here = b.create<arith::AddIOp>(
        loc,
        b.create<arith::MulIOp>(
            loc,
            b.create<arith::AddIOp>(
                loc, b.create<arith::MulIOp>(loc, at[0], idx(k)), at[1]),
            idx(panel)),
        at[2]);
    // One prefetch per 64-byte line of the k step's panel row, past the
    // end clamped to the last element (prefetching never faults, but an
    // out-of-bounds index is undefined).
    for (int64_t line = 0; line < panel; line += 16) {
      Value to = b.create<arith::AddIOp>(loc, here, idx(ahead + line));
      to = b.create<arith::MinUIOp>(loc, to, idx(total - 1));
      b.create<memref::PrefetchOp>(loc, flat, ValueRange{to},
                                   /*isWrite=*/false, /*localityHint=*/2,
                                   /*isDataCache=*/true);
    }
  }
  return sites.size();
}

} // namespace kiln::vectorize
