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

/// tensor.empty of `type`; `dynSizes` gives its dynamic dims in order.
mlir::Value emptyTensor(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::RankedTensorType type,
                        mlir::ValueRange dynSizes = {});
mlir::Value scalarConst(mlir::OpBuilder &b, mlir::Location loc, mlir::Type elt,
                        double value);
mlir::Value filledTensor(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::RankedTensorType type, double value,
                         mlir::ValueRange dynSizes = {});

/// The size of dim `d` of tensor `v` as an index value (a constant when
/// static).
/// The sizes of `like` at the dynamic dims of `type` (same rank): the
/// run-time sizes of a result shaped like an operand.
llvm::SmallVector<mlir::Value> dynamicSizesLike(mlir::OpBuilder &b, mlir::Location loc,
                                                mlir::RankedTensorType type, mlir::Value like);
mlir::Value dimSize(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                    int64_t d);
/// The sizes of `type`'s dynamic dims for a loop nest over `type` that
/// reads `ins` through `maps`: dim d is the size of the first input dim
/// indexed by loop dim d. Where none is, the lowering fails (see
/// takeBuilderFailure).
/// With `outMap`, the loops are those of the maps and out dim j is loop
/// dim outMap[j] (a contraction's result).
llvm::SmallVector<mlir::Value> loopSizes(mlir::OpBuilder &b, mlir::Location loc,
                                         mlir::RankedTensorType type,
                                         mlir::ValueRange ins,
                                         llvm::ArrayRef<mlir::AffineMap> maps,
                                         mlir::AffineMap outMap = {});
/// Run-time checks (kiln.check) that every input dim indexed by the same
/// loop dim has the same size, and the size of `type` where it is static.
/// `what` names the node for the message.
void checkLoopSizes(mlir::OpBuilder &b, mlir::Location loc,
                    mlir::RankedTensorType type, mlir::ValueRange ins,
                    llvm::ArrayRef<mlir::AffineMap> maps, llvm::StringRef what,
                    mlir::AffineMap outMap = {});
/// The node being lowered (for messages of run-time checks); set by the
/// driver around each lowering.
std::string &currentNodeLabel();
/// floor(a / b) and ceil(a / b) of index or integer values (any signs),
/// from divsi/remsi: LLVM lowering has no arith.floordivsi/ceildivsi.
mlir::Value floorDivSigned(mlir::OpBuilder &b, mlir::Location loc, mlir::Value a,
                           mlir::Value d);
mlir::Value ceilDivSigned(mlir::OpBuilder &b, mlir::Location loc, mlir::Value a,
                          mlir::Value d);
/// Whether a builder could not size a dynamic dim since the last call;
/// clears the flag.
bool takeBuilderFailure();

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
/// `dynSizes`, when given, sizes the result's dynamic dims (else the
/// inputs do, see loopSizes).
mlir::Value mapped(mlir::OpBuilder &b, mlir::Location loc,
                   mlir::RankedTensorType outType, mlir::ValueRange ins,
                   llvm::ArrayRef<mlir::AffineMap> inMaps, const BodyFn &body,
                   mlir::ValueRange dynSizes = {});

/// Reduces `x` over `dims` (sorted) with `combine`, starting from `init`;
/// the result drops the reduced dims.
mlir::Value reduce(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                   llvm::ArrayRef<int64_t> dims, double init,
                   const BodyFn &combine);

/// Map from the full loop nest of rank `rank` to the dims not in `dropped`.
mlir::AffineMap dropDimsMap(mlir::MLIRContext *ctx, int64_t rank,
                            llvm::ArrayRef<int64_t> dropped);

/// Row-major reshape through collapse/expand (views). With dynamic dims,
/// the dynamic dims of `outType` take the sizes of those of `x` in order:
/// only dims of size 1 may come or go (keepdims, Squeeze/Unsqueeze).
mlir::Value reshapeTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      mlir::RankedTensorType outType);

/// Pads `x` with `value`: `low`/`high` per dim.
mlir::Value padTensor(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      llvm::ArrayRef<int64_t> low, llvm::ArrayRef<int64_t> high,
                      double value);
/// The same with pads that may be run-time values (index).
mlir::Value padTensor(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      llvm::ArrayRef<mlir::OpFoldResult> low,
                      llvm::ArrayRef<mlir::OpFoldResult> high, double value);

} // namespace kiln::cpu

#endif
