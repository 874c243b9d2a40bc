//===- ShapeInference.h - onnx shape inference entry point ------*- C++ -*-===//

#ifndef KILN_DIALECTS_ONNX_SHAPEINFERENCE_H
#define KILN_DIALECTS_ONNX_SHAPEINFERENCE_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"

namespace kiln::onnx {

/// Shape inference for any onnx op; the default implementation of
/// ShapeInferenceOpInterface::inferShapes forwards here.
mlir::LogicalResult inferShapesFor(mlir::Operation *op);

} // namespace kiln::onnx

#endif // KILN_DIALECTS_ONNX_SHAPEINFERENCE_H
