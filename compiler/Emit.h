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
  /// -1 for a symbolic dimension.
  std::vector<int64_t> shape;
  /// KILN_VALUE_*: for a sequence or optional, dtype and shape describe its
  /// elements (unranked: no shape; -1 for an unknown dimension).
  int kind = 0;
  bool ranked = true;
  /// A shape-variant model's dimensions (-1 in `shape`): dimension d is
  /// `scale * dimNames[symbol] + offset`, or unknown when symbol is -1.
  struct SymbolicDim {
    int symbol = -1;
    int64_t scale = 1, offset = 0;
  };
  std::vector<SymbolicDim> symbolic;
  /// Run-time sizes: per dim of an output, its size program over the
  /// symbols (model_abi.h KILN_SIZE_*, without the END), empty if static.
  std::vector<std::vector<int64_t>> sizePrograms;
  /// ... and each dim as text ("batch", "8*sequence"; the static size).
  std::vector<std::string> dimText;
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
  /// Symbolic dimensions compiled once per listed value (--dim-values),
  /// or with run-time sizes its symbols (the sizes the header's run()
  /// takes).
  std::vector<std::string> dimNames;
  /// Code for every size of the symbolic dims (ABI 9, KILN_MODEL_RUNTIME_SIZES):
  /// the symbols, per input dim the symbol it binds (-1: static), the
  /// size programs of the dynamic output dims and each symbol's bound (0:
  /// none).
  bool runtimeSizes = false;
  std::vector<std::string> symbols;
  std::vector<int32_t> inputDimSymbols;
  std::vector<int64_t> outputSizes;
  std::vector<int64_t> symbolMax;
};

struct EmitOptions {
  std::string targetCpu = "native";
};

/// Reads @main's inputs/outputs (names from `onnx.name`) and the partition
/// list, and renames @main to the model's private entry symbol.
mlir::LogicalResult captureSignature(mlir::ModuleOp module, llvm::StringRef name,
                                     llvm::StringRef entrySuffix,
                                     ModelSignature &signature);

/// One compiled shape of the model. A model whose primary variant needs
/// CUDA also carries its CPU-only variant (`fallback`) and its
/// device-resident I/O variant (`deviceIO`).
struct CompiledShape {
  mlir::ModuleOp module;
  const ModelSignature *signature = nullptr;
  mlir::ModuleOp fallback;
  const ModelSignature *fallbackSignature = nullptr;
  mlir::ModuleOp deviceIO;
  const ModelSignature *deviceIOSignature = nullptr;
};

/// The vector register width of --target-cpu: 512 with AVX-512, else 256
/// (what kiln-cpu-vectorize-contractions sizes its register tiles for).
int64_t targetVectorBits(llvm::StringRef cpuName);
/// Whether --target-cpu has AVX-512 VNNI (vpdpbusd on 512-bit registers:
/// kiln-cpu-integer-contractions' 8-bit kernels).
bool targetHasVnni(llvm::StringRef cpuName);
/// Whether --target-cpu has AMX-INT8 (tile dot products of bytes:
/// kiln-cpu-integer-contractions' kernels then run on tiles).
bool targetHasAmx(llvm::StringRef cpuName);
/// Whether --target-cpu has AVX2 (the 8-bit matmul kernel without VNNI).
bool targetHasAvx2(llvm::StringRef cpuName);
/// Whether --target-cpu has AVX-512 VBMI (vpermb: the 8-bit depthwise
/// kernel's byte permutations).
bool targetHasVbmi(llvm::StringRef cpuName);

/// Translates the LLVM-dialect modules, adds the C-ABI descriptor and
/// partition entry points, optimizes and returns one object file. With
/// `printLlvm`, prints the optimized LLVM IR there instead. With more than
/// one shape, `top` (see mergeSignatures) describes the model and each
/// shape becomes one of its KILN_MODEL_SHAPE_VARIANTS.
std::optional<std::string> emitObject(llvm::ArrayRef<CompiledShape> shapes,
                                      const ModelSignature &top,
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
