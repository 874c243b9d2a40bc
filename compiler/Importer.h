//===- Importer.h - ONNX ModelProto to the onnx dialect ---------*- C++ -*-===//
#ifndef KILN_COMPILER_IMPORTER_H
#define KILN_COMPILER_IMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

namespace kiln {

struct ImportOptions {
  /// Constants with at least this many bytes become dense_resource blobs;
  /// smaller ones stay DenseElementsAttr so that folders can read them.
  int64_t resourceThresholdBytes = 256;
  /// Pins the shape of graph inputs with symbolic or unknown dimensions.
  llvm::StringMap<llvm::SmallVector<int64_t>> inputShapes;
  /// Dimensions named by these symbols (dim_param) get the value, wherever
  /// the model declares them (one shape variant of --dim-values).
  llvm::StringMap<int64_t> dimValues;
};

/// How `onnx.dim_params` names a symbolic dimension without a dim_param.
inline constexpr llvm::StringLiteral kUnnamedDim = "?";

/// Reads an .onnx file (and its external data, which must stay inside the
/// model's folder) into a module holding `func.func @main` of onnx ops.
/// Errors are reported through the context's diagnostic engine, each naming
/// the file, node and op.
mlir::OwningOpRef<mlir::ModuleOp> importOnnxFile(mlir::MLIRContext &ctx,
                                                 llvm::StringRef path,
                                                 const ImportOptions &options = {});

/// Whether an input of @main keeps a symbolic dimension after import (the
/// model then compiles with run-time sizes).
bool hasSymbolicInputs(mlir::ModuleOp module);
/// The symbol of the inputs' one kind of symbolic dimension when every
/// symbolic dimension is that one, as their leading dim (the batch of an
/// image model); nullopt otherwise.
std::optional<std::string> leadingBatchSymbol(mlir::ModuleOp module);

/// Same as importOnnxFile, from bytes already in memory; `baseDir` resolves external data.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxBytes(mlir::MLIRContext &ctx, llvm::StringRef bytes,
                llvm::StringRef displayName, llvm::StringRef baseDir,
                const ImportOptions &options = {});

} // namespace kiln

#endif
