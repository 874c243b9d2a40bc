//===- GlobalString.h - constant C strings in generated code ----*- C++ -*-===//
//
// Generated code hands out `const char *`s (a failed check's message, a
// LabelEncoder key): each is a private constant memref.global of i8 holding
// the NUL-terminated text, one per distinct text, and its address as i64.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_GLOBALSTRING_H
#define KILN_PASSES_GLOBALSTRING_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace kiln {

/// The address (as i64) of a NUL-terminated constant copy of `text`, built
/// at `b`; the global is shared by equal texts of the module.
inline mlir::Value globalStringAddress(mlir::OpBuilder &b, mlir::Location l,
                                       mlir::ModuleOp module, llvm::StringRef text) {
  using namespace mlir;
  std::string bytes = text.str();
  bytes.push_back('\0');
  auto i8 = b.getI8Type();
  auto type = MemRefType::get({(int64_t)bytes.size()}, i8);
  auto init = DenseElementsAttr::get(RankedTensorType::get(type.getShape(), i8),
                                     ArrayRef<char>(bytes.data(), bytes.size()));
  memref::GlobalOp global;
  for (auto g : module.getOps<memref::GlobalOp>())
    if (g.getConstant() && g.getType() == type && g.getInitialValueAttr() == init)
      global = g;
  if (!global) {
    SymbolTable symbols(module);
    OpBuilder detached(module.getContext());
    global = detached.create<memref::GlobalOp>(l, "__kiln_str", detached.getStringAttr("private"),
                                               type, init, /*constant=*/true, IntegerAttr());
    symbols.insert(global, module.getBody()->begin()); // renamed if taken
  }
  Value text8 = b.create<memref::GetGlobalOp>(l, type, global.getSymName());
  return b.create<arith::IndexCastOp>(
      l, b.getI64Type(), b.create<memref::ExtractAlignedPointerAsIndexOp>(l, text8));
}

} // namespace kiln

#endif
