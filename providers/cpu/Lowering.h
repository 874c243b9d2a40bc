//===- Lowering.h - shared pieces of the onnx -> linalg lowering -*- C++ -*-===//
//
// Each op family registers its lowerings into one table keyed by ONNX op
// type (ElementwiseOps.cpp, ContractionOps.cpp, WindowOps.cpp, NormalizationOps.cpp,
// DataMovementOps.cpp); OnnxToLinalg.cpp drives them and answers the CPU
// provider's capability query from the same table.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PROVIDERS_CPU_LOWERING_H
#define KILN_PROVIDERS_CPU_LOWERING_H

#include "dialects/onnx/ShapeInference.h"
#include "passes/NodeName.h"
#include "providers/cpu/LinalgBuilders.h"
#include "providers/cpu/OnnxToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/StringMap.h"

#include <functional>

namespace kiln::cpu {

/// The values replacing an op's results (null for unused optional results).
using Results = mlir::FailureOr<llvm::SmallVector<mlir::Value>>;
using LowerFn = std::function<Results(mlir::OpBuilder &, mlir::Operation *)>;

struct OpLowering {
  LowerFn lower;
  /// Only f32 tensors (else also i64/i32/i16/i8/i1).
  bool floatOnly = true;
  /// Optional op-specific capability check (constant operands, attribute
  /// values); on false it sets the reason.
  std::function<bool(mlir::Operation *, std::string &)> check = nullptr;
  /// Lowers to calls of libkiln_rt (which constant folding cannot JIT).
  bool callsRuntime = false;
  /// Lowered by `elementwise()` (the ew/un registrations).
  bool elementwise = false;
  /// The lowering and extra check for operands or results with run-time
  /// sizes (tensor<?x...>, RuntimeSizeOps.cpp); without one the op needs
  /// static shapes.
  struct {
    LowerFn lower = nullptr;
    std::function<bool(mlir::Operation *, std::string &)> check = nullptr;
  } dynamic;
};
using LoweringTable = llvm::StringMap<OpLowering>;

/// Fails the run when an element of the integer tensor `indices` lies
/// outside [-n, n) (`n` an index value), naming `op`, the first such index
/// by magnitude and n; the access after it must stay clamped. Constant
/// indices with a constant `n` are checked now instead (an error, no code).
mlir::LogicalResult checkIndexRange(mlir::OpBuilder &b, mlir::Location l,
                                    mlir::Operation *op, mlir::Value indices,
                                    mlir::Value n,
                                    llvm::StringRef what = "index");

void registerElementwiseOps(LoweringTable &table);
void registerContractionOps(LoweringTable &table);
void registerWindowOps(LoweringTable &table);
void registerNormalizationOps(LoweringTable &table);
void registerDataMovementOps(LoweringTable &table);
void registerGatherScatterOps(LoweringTable &table);
void registerControlFlowOps(LoweringTable &table);
void registerCastOps(LoweringTable &table);
void registerGridOps(LoweringTable &table);
void registerSpectralOps(LoweringTable &table);
void registerAttentionOps(LoweringTable &table);
void registerResizeOps(LoweringTable &table);
void registerDropoutOps(LoweringTable &table);
void registerMlOps(LoweringTable &table);
void registerSequenceOps(LoweringTable &table);
void registerDynamicShapeOps(LoweringTable &table);
void registerTextOps(LoweringTable &table);
/// Marks which lowerings take run-time sizes; runs after the others.
void registerRuntimeSizeOps(LoweringTable &table);
/// Whether `op` has an operand or result tensor with a run-time size (not
/// a box).
bool hasRuntimeSizes(mlir::Operation *op);
/// Whether `op`'s module is compiled with run-time sizes (kiln compile on
/// a model with symbolic dims: `kiln.runtime_sizes`); elsewhere every
/// lowering needs static shapes.
bool compilesRuntimeSizes(mlir::Operation *op);
/// onnx seq/optional types, which lower to i64 handles of runtime objects.
bool isSequenceValueType(mlir::Type t);
/// The type a value of type `t` has once lowered (handles for sequences).
mlir::Type loweredValueType(mlir::Type t);
/// A tensor whose shape is known only at run time (a Slice by a loop
/// counter, NonZero, Unique, Compress, NonMaxSuppression) that only
/// sequence ops, Identity and the model's outputs use: it lowers to a box,
/// a one-element runtime sequence (an output of kind KILN_VALUE_DYNAMIC).
bool isBoxedTensor(mlir::Value v);
/// Ops that give a box when their result shape is a run-time value.
bool producesBox(mlir::Operation *op);
/// The first op that uses `v` other than as a box, or null.
mlir::Operation *nonBoxUser(mlir::Value v);
/// The boxed copy of x[start + i * step], i < size per dim (each a
/// tensor<rank x i64>), of the Slice `op`'s input x.
mlir::Value boxSlice(mlir::OpBuilder &b, mlir::Operation *op, mlir::Value start,
                     mlir::Value step, mlir::Value size);

/// `result` through the op's fused activation, if any, as an elementwise
/// generic (kiln-fuse-elementwise merges it with the elementwise ops that
/// follow).
Results withEpilogue(mlir::OpBuilder &b, mlir::Operation *op, mlir::Value result);

/// `x` (a scalar of op's result) through the activation kiln-fuse-epilogues
/// fused into `op` (`kiln.activation`), or `x` itself; null for an unknown
/// activation.
mlir::Value applyFusedActivation(mlir::OpBuilder &b, mlir::Location l, mlir::Value x,
                                 mlir::Operation *op);

/// A kiln.check failing the run unless `ok`: "<node>: <what> (computed at
/// run time) give a result shape other than the compiled <type>".
void checkRuntimeShape(mlir::OpBuilder &b, mlir::Location l, mlir::Value ok, mlir::Operation *op,
                       llvm::StringRef what, mlir::Type compiled);

/// float8 and 4-/2-bit integer types, which only Cast/CastLike convert.
bool isStorageOnlyType(mlir::Type t);

inline mlir::RankedTensorType resultType(mlir::Operation *op, unsigned i = 0) {
  return mlir::cast<mlir::RankedTensorType>(op->getResult(i).getType());
}
inline mlir::RankedTensorType typeOf(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType());
}
inline bool isFloat(mlir::Type t) { return mlir::isa<mlir::FloatType>(t); }
inline mlir::Value cst(mlir::OpBuilder &b, mlir::Location loc, mlir::Type elt,
                       double v) {
  return scalarConst(b, loc, elt, v);
}
/// max(x, bound) and min(x, bound) for a float x and a constant bound, a
/// NaN x kept (Relu, Clip, HardSigmoid): a compare and a select, which x86
/// runs as one maxps or minps, where arith.maximumf, NaN in either operand,
/// took three or four instructions (a compare for NaNs and a blend more).
inline mlir::Value boundKeepingNaN(mlir::OpBuilder &b, mlir::Location l,
                                   mlir::Value x, mlir::Value bound,
                                   mlir::arith::CmpFPredicate past) {
  return b.create<mlir::arith::SelectOp>(
      l, b.create<mlir::arith::CmpFOp>(l, past, x, bound), bound, x);
}
inline mlir::Value maxKeepingNaN(mlir::OpBuilder &b, mlir::Location l,
                                 mlir::Value x, mlir::Value bound) {
  return boundKeepingNaN(b, l, x, bound, mlir::arith::CmpFPredicate::OLT);
}
inline mlir::Value minKeepingNaN(mlir::OpBuilder &b, mlir::Location l,
                                 mlir::Value x, mlir::Value bound) {
  return boundKeepingNaN(b, l, x, bound, mlir::arith::CmpFPredicate::OGT);
}
/// x clamped to constant bounds [lo, hi], a NaN x kept.
inline mlir::Value clampKeepingNaN(mlir::OpBuilder &b, mlir::Location l,
                                   mlir::Value x, mlir::Value lo,
                                   mlir::Value hi) {
  return minKeepingNaN(b, l, maxKeepingNaN(b, l, x, lo), hi);
}
/// The operands that are not `none`.
llvm::SmallVector<mlir::Value> present(mlir::ValueRange vals);
/// Capability check requiring a float first operand.
bool requireFloatInput(mlir::Operation *op, std::string &why);
/// Capability check refusing unsigned element types (arith needs signless).
bool rejectUnsigned(mlir::Operation *op, std::string &why);
/// Scalar conversion with ONNX Cast semantics; integers are signless, so
/// the flags say which side was unsigned.
mlir::Value castScalar(mlir::OpBuilder &b, mlir::Location l, mlir::Value x,
                       mlir::Type to, bool fromUnsigned = false,
                       bool toUnsigned = false);

/// `op` lowered by its entry in the lowering table.
Results lowerOneOp(mlir::OpBuilder &b, mlir::Operation *op);

/// Ops with a shape-deciding input computed at run time whose result shape
/// is nevertheless static (RuntimeShapeInputs.cpp): they compile for the
/// input values that give that shape, guarded by a run-time check.
bool hasRuntimeShapeInput(mlir::Operation *op);
bool canLowerSpecialized(mlir::Operation *op, std::string &why);
Results lowerSpecialized(mlir::OpBuilder &b, mlir::Operation *op);

/// Whether operand `i` (result `i`) of `op` is, or was before makeSignless,
/// an unsigned integer tensor.
bool wasUnsigned(mlir::Operation *op, unsigned i = 0);
bool resultWasUnsigned(mlir::Operation *op, unsigned i = 0);
/// The ONNX dtype of a Cast's input (or result) before makeSignless stored
/// float4e2m1/float8e8m0 as i8.
int64_t castDtype(mlir::Operation *op, bool result);

} // namespace kiln::cpu

#endif
