//===- NodeName.h - how diagnostics name an ONNX node -----------*- C++ -*-===//
//
// Every op imported from ONNX is located by its node name (NameLoc), so any
// diagnostic can say `node "conv_1" (Conv): ...` instead of pointing at IR.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_NODENAME_H
#define KILN_PASSES_NODENAME_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"
#include <string>

namespace kiln {

/// The ONNX node name recorded in `loc`, or "" when there is none.
inline std::string nodeNameOf(mlir::Location loc) {
  if (auto named = mlir::dyn_cast<mlir::NameLoc>(loc))
    return named.getName().str();
  if (auto fused = mlir::dyn_cast<mlir::FusedLoc>(loc))
    for (mlir::Location inner : fused.getLocations())
      if (auto name = nodeNameOf(inner); !name.empty())
        return name;
  return "";
}

/// `node "NAME" (OpType)` for an op of the onnx dialect, else its op name.
inline std::string describeNode(mlir::Operation *op) {
  llvm::StringRef opName = op->getName().getStringRef();
  opName.consume_front("onnx.");
  return "node \"" + nodeNameOf(op->getLoc()) + "\" (" + opName.str() + ")";
}

/// Emits `node "NAME" (OpType): <message>` at the op.
inline mlir::InFlightDiagnostic emitNodeError(mlir::Operation *op) {
  auto diag = mlir::emitError(op->getLoc());
  diag << describeNode(op) << ": ";
  return diag;
}

} // namespace kiln

#endif
