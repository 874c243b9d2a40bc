//===- ShapeInference.h - onnx shape inference and attribute helpers -*- C++ -*-===//

#ifndef KILN_DIALECTS_ONNX_SHAPEINFERENCE_H
#define KILN_DIALECTS_ONNX_SHAPEINFERENCE_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>
#include <string>

namespace kiln::onnx {

/// Shape inference for any onnx op; the default implementation of
/// ShapeInferenceOpInterface::inferShapes forwards here. Ops without a rule
/// keep their types.
mlir::LogicalResult inferShapesFor(mlir::Operation *op);
bool hasShapeInference(llvm::StringRef opType);

/// How result 0's shape follows from the operands: the first operand's
/// shape (unary and normalization ops, Cast, Trilu, ...), numpy
/// broadcasting of all operands (binary ops, comparisons, Where), or a
/// rule of the op's own.
enum class ShapeRule { Other, SameAsFirst, Broadcast };
ShapeRule shapeRuleOf(mlir::Operation *op);

// Attribute reads by ONNX name with the schema's default, shared by shape
// inference and the providers.
int64_t getIntAttr(mlir::Operation *op, llvm::StringRef name, int64_t dflt);
float getFloatAttr(mlir::Operation *op, llvm::StringRef name, float dflt);
llvm::SmallVector<int64_t> getIntsAttr(mlir::Operation *op, llvm::StringRef name);
llvm::StringRef getStrAttr(mlir::Operation *op, llvm::StringRef name,
                           llvm::StringRef dflt);

/// Whether `v` is an absent optional input (`none`).
bool isNone(mlir::Value v);
/// Bytes of a tensor of `shape` (static dims, 0 or more) and `elt` (a bool
/// takes a byte); nullopt when the count or the size overflows int64.
std::optional<int64_t> tensorBytes(llvm::ArrayRef<int64_t> shape,
                                   mlir::Type elt);
/// Why `shape` cannot be a tensor's ("" if it can): a negative dimension, or
/// a size that overflows int64. Dynamic dims count as 1.
std::string badShape(llvm::ArrayRef<int64_t> shape, mlir::Type elt);
/// The integers of a constant tensor (onnx.Constant or arith.constant).
std::optional<llvm::SmallVector<int64_t>> getConstantInts(mlir::Value v);
/// The values of a constant tensor as doubles (float or integer data).
std::optional<llvm::SmallVector<double>> getConstantDoubles(mlir::Value v);
/// Whether a Dropout (opset 12 on: data, ratio, training_mode) is known at
/// compile time to pass its data through: training_mode absent or false,
/// or a constant zero ratio.
bool isIdentityDropout(mlir::Operation *op);
/// A type that describes values of both `a` and `b` (If branches, sequence
/// elements): dims that differ become `?`; null when they cannot agree.
mlir::Type joinTypes(mlir::Type a, mlir::Type b);
/// The number of tensors in a sequence built by ops whose counts are known.
std::optional<int64_t> staticSequenceLength(mlir::Value seq);

/// Resolves auto_pad/pads/strides/dilations/ceil_mode of a windowed op
/// (Conv, pools) into explicit begin/end pads and output spatial sizes.
mlir::LogicalResult computeWindowPads(mlir::Operation *op,
                                      llvm::ArrayRef<int64_t> inSpatial,
                                      llvm::ArrayRef<int64_t> kernel,
                                      llvm::SmallVectorImpl<int64_t> &padsBegin,
                                      llvm::SmallVectorImpl<int64_t> &padsEnd,
                                      llvm::SmallVectorImpl<int64_t> &outSpatial);

/// Whether a pool's ceil_mode output size is ceil((in + pads - eff) /
/// stride) + 1 for every input size: no window can start in the end
/// padding, as the effective kernel covers a stride plus the end pad.
bool ceilModeIsPlainCeil(mlir::Operation *op, llvm::ArrayRef<int64_t> kernel);

/// Slice starts/ends/axes/steps (constant inputs) resolved against `shape`:
/// per dim the first index, the step and the result size. Fails silently
/// when an input is not a constant.
mlir::LogicalResult resolveSlice(mlir::Operation *op, llvm::ArrayRef<int64_t> shape,
                                 llvm::SmallVectorImpl<int64_t> &start,
                                 llvm::SmallVectorImpl<int64_t> &step,
                                 llvm::SmallVectorImpl<int64_t> &size);
/// Split part sizes along an axis of size `dim` (split input, num_outputs
/// or an even split over the results).
mlir::LogicalResult resolveSplit(mlir::Operation *op, int64_t dim,
                                 llvm::SmallVectorImpl<int64_t> &sizes);
/// Pad's constant pads (and axes) as per-dim low/high amounts.
mlir::LogicalResult resolvePads(mlir::Operation *op, int64_t rank,
                                llvm::SmallVectorImpl<int64_t> &low,
                                llvm::SmallVectorImpl<int64_t> &high);
/// Resize/Upsample's roi, scales and sizes inputs (null where the op has
/// none) and its axes, normalized (every dim without the attribute).
struct ResizeInputs {
  mlir::Value roi, scales, sizes;
  llvm::SmallVector<int64_t> axes;
};
ResizeInputs resizeInputs(mlir::Operation *op, int64_t rank);

/// Resize/Upsample output sizes and per-dim scales from constant
/// scales/sizes (axes, keep_aspect_ratio_policy applied).
mlir::LogicalResult resolveResize(mlir::Operation *op, llvm::ArrayRef<int64_t> in,
                                  llvm::SmallVectorImpl<int64_t> &out,
                                  llvm::SmallVectorImpl<double> &scales);
/// ConvTranspose begin/end pads and output spatial sizes.
/// MaxUnpool's shape without an output_shape input, from its attributes
/// and the static shape of its input (nullopt if either is missing).
std::optional<llvm::SmallVector<int64_t>> maxUnpoolDefaultShape(mlir::Operation *op);

mlir::LogicalResult convTransposePads(mlir::Operation *op,
                                      llvm::ArrayRef<int64_t> inSpatial,
                                      llvm::ArrayRef<int64_t> kernel,
                                      llvm::SmallVectorImpl<int64_t> &padsBegin,
                                      llvm::SmallVectorImpl<int64_t> &padsEnd,
                                      llvm::SmallVectorImpl<int64_t> &outSpatial);
/// Einsum labels per input and of the output ("..." expanded).
mlir::LogicalResult parseEinsum(mlir::Operation *op,
                                llvm::SmallVectorImpl<llvm::SmallVector<char>> &ins,
                                llvm::SmallVector<char> &out);

} // namespace kiln::onnx

#endif // KILN_DIALECTS_ONNX_SHAPEINFERENCE_H
