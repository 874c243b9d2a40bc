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

#include "mlir/Dialect/MemRef/IR/MemRef.h"
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
  if (!module.lookupSymbol<memref::GlobalOp>(name)) {
    // (Readable: constantGlobal checked.)
    std::optional<SmallVector<float>> v =
        fusion::elementsFloats(cast<ElementsAttr>(*global.getInitialValue()));
    SmallVector<float> packed(panels * k * panel, 0.0f);
    for (int64_t p = 0; p < panels; ++p)
      for (int64_t kk = 0; kk < k; ++kk)
        for (int64_t j = 0, col = p * panel; j < panel && col < n; ++j, ++col)
          packed[(p * k + kk) * panel + j] =
              (*v)[transB ? col * k + kk : kk * n + col];
    OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
    mb.create<memref::GlobalOp>(
        global.getLoc(), name, mb.getStringAttr("private"), packedType,
        DenseElementsAttr::get(
            RankedTensorType::get(packedType.getShape(),
                                  type.getElementType()),
            ArrayRef<float>(packed)),
        /*constant=*/true, global.getAlignmentAttr());
  }
  return b.create<memref::GetGlobalOp>(loc, packedType, name);
}

} // namespace kiln::vectorize
