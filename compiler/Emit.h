//===- Emit.h - object file, descriptor, header, libraries ------*- C++ -*-===//
#ifndef KILN_COMPILER_EMIT_H
#define KILN_COMPILER_EMIT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"
#include <optional>
#include <string>
#include <vector>

namespace kiln {

struct TensorSignature {
  std::string name;
  int dtype = 0; // ONNX TensorProto.DataType
  /// Shape for one sample when the model resolves its batch at run time.
  std::vector<int64_t> shape;
  /// The axis holding the samples (dynamic batch), -1 otherwise.
  int batchAxis = -1;
  /// KILN_VALUE_*: for a sequence or optional, dtype and shape describe its
  /// elements (unranked: no shape; -1 for an unknown dimension).
  int kind = 0;
  bool ranked = true;
};

struct PartitionSignature {
  std::string name, provider;
  int64_t numOps = 0;
};

/// What the descriptor and header say about a compiled model.
struct ModelSignature {
  std::string name;      // C identifier
  std::string entryName; // the lowered entry function
  std::vector<TensorSignature> inputs, outputs;
  std::vector<PartitionSignature> partitions;
  /// The batch dimension's symbol when the batch is resolved at run time.
  std::string batchSymbol;
};

struct EmitOptions {
  std::string targetCpu = "native";
};

/// Reads @main's inputs/outputs (names from `onnx.name`) and the partition
/// list, and renames @main to the model's private entry symbol.
mlir::LogicalResult captureSignature(mlir::ModuleOp module, llvm::StringRef name,
                                     llvm::StringRef entrySuffix,
                                     ModelSignature &signature);

/// Translates the LLVM-dialect module, adds the C-ABI descriptor and
/// partition entry points, optimizes and returns an object file. With
/// `printLlvm`, prints the optimized LLVM IR there instead.
/// A model whose primary variant needs CUDA also carries its CPU-only
/// variant (`fallback`) and its device-resident I/O variant (`deviceIO`);
/// all land in one object.
struct ExtraVariants {
  mlir::ModuleOp fallback;
  const ModelSignature *fallbackSignature = nullptr;
  mlir::ModuleOp deviceIO;
  const ModelSignature *deviceIOSignature = nullptr;
};
std::optional<std::string> emitObject(mlir::ModuleOp module,
                                      const ModelSignature &signature,
                                      const ExtraVariants &extra,
                                      const EmitOptions &options,
                                      llvm::raw_ostream *printLlvm);

/// Writes PREFIX.o, libNAME.a, libNAME.so (optional) and NAME.h.
mlir::LogicalResult writeArtifacts(llvm::StringRef object,
                                   const ModelSignature &signature,
                                   llvm::StringRef prefix, bool sharedLibrary);

/// The generated C++ header.
std::string generateHeader(const ModelSignature &signature);

} // namespace kiln

#endif
