//===- LinalgBuilders.h - small builders for onnx -> linalg -----*- C++ -*-===//
#ifndef KILN_PROVIDERS_CPU_LINALGBUILDERS_H
#define KILN_PROVIDERS_CPU_LINALGBUILDERS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include <functional>

namespace kiln::cpu {

using BodyFn = std::function<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                         mlir::ValueRange)>;

mlir::Value emptyTensor(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::RankedTensorType type);
mlir::Value scalarConst(mlir::OpBuilder &b, mlir::Location loc, mlir::Type elt,
                        double value);
mlir::Value filledTensor(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::RankedTensorType type, double value);

/// Indexing map reading `operand` (numpy-broadcast) inside a loop nest whose
/// dims are the dims of a tensor of shape `outShape`.
mlir::AffineMap broadcastMap(mlir::MLIRContext *ctx,
                             llvm::ArrayRef<int64_t> outShape,
                             mlir::RankedTensorType operand);

/// A parallel linalg.generic over `outType` reading `ins` with numpy
/// broadcasting; `body` maps the scalar inputs to the scalar result.
mlir::Value elementwise(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::RankedTensorType outType, mlir::ValueRange ins,
                        const BodyFn &body);

/// Same with explicit maps (one per input; the output map is identity).
mlir::Value mapped(mlir::OpBuilder &b, mlir::Location loc,
                   mlir::RankedTensorType outType, mlir::ValueRange ins,
                   llvm::ArrayRef<mlir::AffineMap> inMaps, const BodyFn &body);

/// Reduces `x` over `dims` (sorted) with `combine`, starting from `init`;
/// the result drops the reduced dims.
mlir::Value reduce(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                   llvm::ArrayRef<int64_t> dims, double init,
                   const BodyFn &combine);

/// Map from the full loop nest of rank `rank` to the dims not in `dropped`.
mlir::AffineMap dropDimsMap(mlir::MLIRContext *ctx, int64_t rank,
                            llvm::ArrayRef<int64_t> dropped);

/// Row-major reshape of a static tensor through collapse/expand (views).
mlir::Value reshapeTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      mlir::RankedTensorType outType);

/// Pads `x` (static) with `value`: `low`/`high` per dim.
mlir::Value padTensor(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      llvm::ArrayRef<int64_t> low, llvm::ArrayRef<int64_t> high,
                      double value);

} // namespace kiln::cpu

#endif
