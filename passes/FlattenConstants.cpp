//===- FlattenConstants.cpp - kiln-flatten-constants ----------------------===//
//
// Constant globals as 1-D arrays, read through expand_shape views (see
// Passes.td for why).
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_FLATTENCONSTANTS
#include "passes/Passes.h.inc"

namespace {

/// `value` with the 1-D type `flat`, or null for an initializer kind this
/// does not know.
Attribute flatValue(Attribute value, RankedTensorType flat) {
  if (auto dense = dyn_cast<DenseElementsAttr>(value))
    return dense.reshape(flat);
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value))
    return DenseResourceElementsAttr::get(flat, resource.getRawHandle());
  return {};
}

struct FlattenConstantsPass : public impl::FlattenConstantsBase<FlattenConstantsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::DenseMap<StringAttr, MemRefType> original;
    for (auto global : module.getOps<memref::GlobalOp>()) {
      MemRefType type = global.getType();
      if (!global.getConstant() || type.getRank() < 2 || !type.hasStaticShape() ||
          !type.getLayout().isIdentity() || !global.getInitialValue())
        continue;
      auto flatType = MemRefType::get({type.getNumElements()}, type.getElementType(),
                                      MemRefLayoutAttrInterface(), type.getMemorySpace());
      Attribute value = flatValue(*global.getInitialValue(),
                                  RankedTensorType::get({type.getNumElements()}, type.getElementType()));
      if (!value)
        continue;
      global.setType(flatType);
      global.setInitialValueAttr(value);
      original[global.getSymNameAttr()] = type;
    }
    if (original.empty())
      return;
    module.walk([&](memref::GetGlobalOp get) {
      auto it = original.find(get.getNameAttr().getAttr());
      // (A kernel module's globals are its own.)
      if (it == original.end() || SymbolTable::getNearestSymbolTable(get) != module)
        return;
      MemRefType type = it->second;
      OpBuilder b(get);
      auto flat = b.create<memref::GetGlobalOp>(
          get.getLoc(),
          MemRefType::get({type.getNumElements()}, type.getElementType(), MemRefLayoutAttrInterface(),
                          type.getMemorySpace()),
          get.getName());
      ReassociationIndices all;
      for (int64_t i = 0; i < type.getRank(); ++i)
        all.push_back(i);
      Value shaped = b.create<memref::ExpandShapeOp>(get.getLoc(), type, flat,
                                                     ArrayRef<ReassociationIndices>{all});
      get.replaceAllUsesWith(shaped);
      get.erase();
    });
  }
};

} // namespace
} // namespace kiln
