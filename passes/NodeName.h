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
#include "llvm/ADT/SmallVector.h"
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

/// Every node name `loc` holds, once each, in order: a fused op's location
/// fuses those of the nodes it replaced (passes/FusionUtils.h, fusedLoc).
inline llvm::SmallVector<std::string> nodeNamesOf(mlir::Location loc) {
  llvm::SmallVector<std::string> names;
  loc->walk([&](mlir::Location l) {
    if (auto named = mlir::dyn_cast<mlir::NameLoc>(l))
      if (!llvm::is_contained(names, named.getName().str()))
        names.push_back(named.getName().str());
    return mlir::WalkResult::advance();
  });
  return names;
}

/// The ONNX op type the importer recorded for node `name` in `loc` (the
/// metadata of the node's fused child location), for the first recorded
/// node if `name` is empty; "" if none.
inline llvm::StringRef importedOpTypeOf(mlir::Location loc, llvm::StringRef name = {}) {
  llvm::StringRef type;
  loc->walk([&](mlir::Location l) {
    auto named = mlir::dyn_cast<mlir::NameLoc>(l);
    auto fused = named ? mlir::dyn_cast<mlir::FusedLoc>(named.getChildLoc()) : mlir::FusedLoc();
    auto t = fused ? mlir::dyn_cast_or_null<mlir::StringAttr>(fused.getMetadata())
                   : mlir::StringAttr();
    if (t && (name.empty() || named.getName() == name)) {
      type = t.getValue();
      return mlir::WalkResult::interrupt();
    }
    return mlir::WalkResult::advance();
  });
  return type;
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
