//===- ShapeInference.h - onnx shape inference and attribute helpers -*- C++ -*-===//

#ifndef KILN_DIALECTS_ONNX_SHAPEINFERENCE_H
#define KILN_DIALECTS_ONNX_SHAPEINFERENCE_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>

namespace kiln::onnx {

/// Shape inference for any onnx op; the default implementation of
/// ShapeInferenceOpInterface::inferShapes forwards here. Ops without a rule
/// keep their types.
mlir::LogicalResult inferShapesFor(mlir::Operation *op);
bool hasShapeInference(llvm::StringRef opType);

// Attribute reads by ONNX name with the schema's default, shared by shape
// inference and the providers.
int64_t getIntAttr(mlir::Operation *op, llvm::StringRef name, int64_t dflt);
float getFloatAttr(mlir::Operation *op, llvm::StringRef name, float dflt);
llvm::SmallVector<int64_t> getIntsAttr(mlir::Operation *op, llvm::StringRef name);
llvm::StringRef getStrAttr(mlir::Operation *op, llvm::StringRef name,
                           llvm::StringRef dflt);

/// Whether `v` is an absent optional input (`none`).
bool isNone(mlir::Value v);
/// The integers of a constant tensor (onnx.Constant or arith.constant).
std::optional<llvm::SmallVector<int64_t>> getConstantInts(mlir::Value v);

/// Resolves auto_pad/pads/strides/dilations/ceil_mode of a windowed op
/// (Conv, pools) into explicit begin/end pads and output spatial sizes.
mlir::LogicalResult computeWindowPads(mlir::Operation *op,
                                      llvm::ArrayRef<int64_t> inSpatial,
                                      llvm::ArrayRef<int64_t> kernel,
                                      llvm::SmallVectorImpl<int64_t> &padsBegin,
                                      llvm::SmallVectorImpl<int64_t> &padsEnd,
                                      llvm::SmallVectorImpl<int64_t> &outSpatial);

} // namespace kiln::onnx

#endif // KILN_DIALECTS_ONNX_SHAPEINFERENCE_H
