//===- DataTypes.h - ONNX TensorProto.DataType <-> MLIR types ---*- C++ -*-===//
#ifndef KILN_DIALECTS_ONNX_DATATYPES_H
#define KILN_DIALECTS_ONNX_DATATYPES_H

#include "mlir/IR/Types.h"

namespace kiln::onnx {

/// The element type of ONNX data type `dtype`, or null where kiln has none
/// (complex; float4e2m1 and float8e8m0 are onnx dialect types).
mlir::Type elementTypeOfDtype(mlir::MLIRContext *ctx, int64_t dtype);

/// The ONNX data type of an element type (also kiln's KILN_DTYPE_*), or 0.
int64_t dtypeOfElementType(mlir::Type t);

} // namespace kiln::onnx

#endif
