//===- RuntimeCall.h - calls into libkiln_rt from lowered code --*- C++ -*-===//
//
// Sequence ops and ops whose result shape is known only at run time call
// functions of libkiln_rt through kiln.runtime_call. A tensor travels with
// its ONNX dtype, rank and the address of its dims (a constant global), and
// each call names its node for the runtime's error messages.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PROVIDERS_CPU_RUNTIMECALL_H
#define KILN_PROVIDERS_CPU_RUNTIMECALL_H

#include "dialects/kiln/KilnDialect.h"
#include "dialects/onnx/DataTypes.h"
#include "passes/GlobalString.h"
#include "providers/cpu/Lowering.h"

namespace kiln::cpu {

/// The i64 handle of a runtime object (a sequence, an optional, a box).
inline mlir::Type handleType(mlir::Operation *op) {
  return mlir::IntegerType::get(op->getContext(), 64);
}

/// The ONNX dtype of an element type that makeSignless made signless.
inline int64_t onnxDtype(mlir::Type elt, bool isUnsigned) {
  if (isUnsigned)
    elt = mlir::IntegerType::get(elt.getContext(), elt.getIntOrFloatBitWidth(),
                                 mlir::IntegerType::Unsigned);
  return onnx::dtypeOfElementType(elt);
}

/// Builds the operands of one runtime call.
struct Call {
  mlir::OpBuilder &b;
  mlir::Operation *op;
  mlir::Location l;
  llvm::SmallVector<mlir::Value> args;

  Call(mlir::OpBuilder &b, mlir::Operation *op) : b(b), op(op), l(op->getLoc()) {}
  mlir::ModuleOp module() { return op->getParentOfType<mlir::ModuleOp>(); }

  Call &i32(int64_t v) {
    args.push_back(b.create<mlir::arith::ConstantIntOp>(l, v, 32));
    return *this;
  }
  Call &i64(int64_t v) {
    args.push_back(b.create<mlir::arith::ConstantIntOp>(l, v, 64));
    return *this;
  }
  Call &value(mlir::Value v) {
    args.push_back(v);
    return *this;
  }
  /// dtype, rank and the address of the dims of a tensor of `type`.
  Call &describe(mlir::RankedTensorType type, bool isUnsigned) {
    i32(onnxDtype(type.getElementType(), isUnsigned)).i32(type.getRank());
    if (type.getRank() == 0)
      return i64(0);
    auto dims = mlir::DenseElementsAttr::get(
        mlir::RankedTensorType::get({type.getRank()}, b.getI64Type()), type.getShape());
    return value(globalConstantAddress(b, l, module(), dims));
  }
  /// A scalar index input (position), as i64 and whether it is present.
  Call &position(mlir::Value v) {
    if (onnx::isNone(v))
      return i64(0).i32(0);
    // A scalar, or a one-element tensor as some exporters write it.
    mlir::Value zero = b.create<mlir::arith::ConstantIndexOp>(l, 0);
    llvm::SmallVector<mlir::Value> at(typeOf(v).getRank(), zero);
    mlir::Value x = b.create<mlir::tensor::ExtractOp>(l, v, at);
    if (!x.getType().isInteger(64))
      x = b.create<mlir::arith::ExtSIOp>(l, b.getI64Type(), x);
    return value(x).i32(1);
  }
  /// Names the node in the runtime's error messages.
  Call &node() { return value(globalStringAddress(b, l, module(), describeNode(op))); }

  mlir::Value returning(llvm::StringRef callee, mlir::Type result) {
    return b.create<RuntimeCallOp>(l, mlir::TypeRange{result}, callee, args, mlir::ValueRange())
        .getResult(0);
  }
  /// Calls `callee`, which fills a new tensor of the op's result `i`'s type.
  mlir::Value filling(llvm::StringRef callee, unsigned i = 0) {
    auto type = resultType(op, i);
    mlir::Value init =
        b.create<mlir::tensor::EmptyOp>(l, type.getShape(), type.getElementType());
    return b.create<RuntimeCallOp>(l, mlir::TypeRange{type}, callee, args, mlir::ValueRange{init})
        .getResult(0);
  }
};

} // namespace kiln::cpu

#endif // KILN_PROVIDERS_CPU_RUNTIMECALL_H
