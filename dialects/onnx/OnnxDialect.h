//===- OnnxDialect.h - onnx dialect and types -------------------*- C++ -*-===//

#ifndef KILN_DIALECTS_ONNX_ONNXDIALECT_H
#define KILN_DIALECTS_ONNX_ONNXDIALECT_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"

#include "dialects/onnx/OnnxOpsDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/onnx/OnnxOpsTypes.h.inc"

#endif // KILN_DIALECTS_ONNX_ONNXDIALECT_H
