//===- DataTypes.h - ONNX TensorProto.DataType <-> MLIR types ---*- C++ -*-===//
#ifndef KILN_DIALECTS_ONNX_DATATYPES_H
#define KILN_DIALECTS_ONNX_DATATYPES_H

#include "mlir/IR/Types.h"

namespace kiln::onnx {

/// The element type of ONNX data type `dtype`, or null where kiln has none
/// (bfloat16 is typed; float4, float8e8m0 and complex are not).
mlir::Type elementTypeOfDtype(mlir::MLIRContext *ctx, int64_t dtype);

/// The ONNX data type of an element type (also kiln's KILN_DTYPE_*), or 0.
int64_t dtypeOfElementType(mlir::Type t);

} // namespace kiln::onnx

#endif
