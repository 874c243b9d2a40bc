//===- GlobalString.h - constant C strings in generated code ----*- C++ -*-===//
//
// Generated code hands out addresses of constant data: `const char *`s (a
// failed check's message, a LabelEncoder key, a node's name for the runtime)
// and small i64 arrays (a tensor's dims for the runtime). Each is a private
// constant memref.global, one per distinct value, and its address as i64.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_GLOBALSTRING_H
#define KILN_PASSES_GLOBALSTRING_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace kiln {

/// The address (as i64) of a private constant memref.global holding
/// `init`, built at `b`; one global per distinct value in the module.
inline mlir::Value globalConstantAddress(mlir::OpBuilder &b, mlir::Location l,
                                         mlir::ModuleOp module, mlir::DenseElementsAttr init,
                                         llvm::StringRef name = "__kiln_const") {
  using namespace mlir;
  auto type = MemRefType::get(init.getType().getShape(), init.getType().getElementType());
  memref::GlobalOp global;
  for (auto g : module.getOps<memref::GlobalOp>())
    if (g.getConstant() && g.getType() == type && g.getInitialValueAttr() == init)
      global = g;
  if (!global) {
    SymbolTable symbols(module);
    OpBuilder detached(module.getContext());
    global = detached.create<memref::GlobalOp>(l, name, detached.getStringAttr("private"),
                                               type, init, /*constant=*/true, IntegerAttr());
    symbols.insert(global, module.getBody()->begin()); // renamed if taken
  }
  Value data = b.create<memref::GetGlobalOp>(l, type, global.getSymName());
  return b.create<arith::IndexCastOp>(
      l, b.getI64Type(), b.create<memref::ExtractAlignedPointerAsIndexOp>(l, data));
}

/// The address (as i64) of a NUL-terminated constant copy of `text`.
inline mlir::Value globalStringAddress(mlir::OpBuilder &b, mlir::Location l,
                                       mlir::ModuleOp module, llvm::StringRef text) {
  using namespace mlir;
  std::string bytes = text.str();
  bytes.push_back('\0');
  auto i8 = b.getI8Type();
  auto init = DenseElementsAttr::get(RankedTensorType::get({(int64_t)bytes.size()}, i8),
                                     ArrayRef<char>(bytes.data(), bytes.size()));
  return globalConstantAddress(b, l, module, init, "__kiln_str");
}

} // namespace kiln

#endif
