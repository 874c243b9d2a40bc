//===- DataTypes.cpp - ONNX TensorProto.DataType <-> MLIR types -----------===//
#include "dialects/onnx/DataTypes.h"
#include "dialects/onnx/OnnxOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

namespace kiln::onnx {

Type elementTypeOfDtype(MLIRContext *ctx, int64_t dtype) {
  Builder b(ctx);
  switch (dtype) {
  case 1: return b.getF32Type();
  case 2: return b.getIntegerType(8, /*isSigned=*/false);
  case 3: return b.getIntegerType(8);
  case 4: return b.getIntegerType(16, false);
  case 5: return b.getIntegerType(16);
  case 6: return b.getIntegerType(32);
  case 7: return b.getIntegerType(64);
  case 8: return StringType::get(ctx);
  case 9: return b.getI1Type();
  case 10: return b.getF16Type();
  case 11: return b.getF64Type();
  case 12: return b.getIntegerType(32, false);
  case 13: return b.getIntegerType(64, false);
  case 16: return b.getBF16Type();
  case 17: return b.getFloat8E4M3FNType();
  case 18: return b.getFloat8E4M3FNUZType();
  case 19: return b.getFloat8E5M2Type();
  case 20: return b.getFloat8E5M2FNUZType();
  case 21: return b.getIntegerType(4, false);
  case 22: return b.getIntegerType(4);
  case 23: return Float4E2M1Type::get(ctx);
  case 24: return Float8E8M0Type::get(ctx);
  case 25: return b.getIntegerType(2, false);
  case 26: return b.getIntegerType(2);
  default: return {};
  }
}

int64_t dtypeOfElementType(Type t) {
  if (t.isF32()) return 1;
  if (t.isF16()) return 10;
  if (t.isF64()) return 11;
  if (t.isBF16()) return 16;
  if (t.isFloat8E4M3FN()) return 17;
  if (t.isFloat8E4M3FNUZ()) return 18;
  if (t.isFloat8E5M2()) return 19;
  if (t.isFloat8E5M2FNUZ()) return 20;
  if (isa<StringType>(t)) return 8;
  if (isa<Float4E2M1Type>(t)) return 23;
  if (isa<Float8E8M0Type>(t)) return 24;
  auto it = dyn_cast<IntegerType>(t);
  if (!it)
    return 0;
  bool u = it.isUnsigned();
  switch (it.getWidth()) {
  case 1: return 9;
  case 2: return u ? 25 : 26;
  case 4: return u ? 21 : 22;
  case 8: return u ? 2 : 3;
  case 16: return u ? 4 : 5;
  case 32: return u ? 12 : 6;
  case 64: return u ? 13 : 7;
  default: return 0;
  }
}

} // namespace kiln::onnx
