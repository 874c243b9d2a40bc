//===- Pipeline.h - the kiln compile pipeline -------------------*- C++ -*-===//
#ifndef KILN_COMPILER_PIPELINE_H
#define KILN_COMPILER_PIPELINE_H

#include "compiler/Importer.h"
#include "compiler/ShapeVariants.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

enum class EmitKind { Library, Onnx, OnnxOpt, Kiln, Linalg, LlvmMlir, Ptx, Llvm, Obj };

struct CompileOptions {
  std::string inputPath;
  /// `out/NAME`: writes out/NAME.o, out/libNAME.a, out/libNAME.so, out/NAME.h.
  std::string outputPrefix;
  std::vector<std::string> providers = {"cpu"};
  /// "native" (the build machine) or an LLVM CPU name such as x86-64-v3.
  std::string targetCpu = "native";
  /// GPU architecture of CUDA partitions (sm_80, sm_89, sm_90).
  std::string cudaArch = "sm_90";
  /// Turn CUDA kernels into host code (kiln-cuda-emulate) instead of PTX.
  bool cudaEmulate = false;
  /// JSON file pinning nodes or op types to providers (optional).
  std::string providerAssignment;
  /// Device partitions smaller than this (elements) run on the CPU.
  int64_t minDeviceElements = 256;
  /// 3x3 convs at stride 1 on the blocked layout as Winograd tiles.
  bool winograd = true;
  EmitKind emit = EmitKind::Library;
  ImportOptions import;
  /// Symbolic dimensions compiled once per listed value; the runtime picks
  /// the variant for each run's input shapes.
  std::vector<DimValues> dimValues;
  /// --batch-one-variant: without --dim-values, a model whose only
  /// symbolic dimension is its inputs' leading one (the batch) also gets
  /// that dimension compiled at 1, a static fast path beside the code for
  /// every size. Unset: on when every provider runs on the host (a device
  /// partition's batch-1 copy could fall under minDeviceElements and move
  /// to the CPU, changing the provider the session reports).
  std::optional<bool> batchOneVariant;
  /// --dim-max: bounds of symbolic dims compiled with run-time sizes.
  std::map<std::string, int64_t> dimMax;
  bool showProgress = true;
  bool buildSharedLibrary = true;
  /// 0: no graph optimizer; 1 and up: constant folding, cleanups, fusions.
  unsigned optLevel = 2;
  /// Constant folding never makes a constant larger than this (bytes); a
  /// larger result stays a run-time op.
  int64_t foldLimitBytes = int64_t(64) << 20;
  /// Print what the optimizer did, the partitions and the arena to stderr.
  bool report = false;
  /// Per-node profiling hooks in host code (one branch each without a
  /// profiler attached).
  bool profileHooks = true;
};

/// Registers every dialect, interface and translation kiln's pipeline uses.
void registerKilnDialects(mlir::DialectRegistry &registry);
/// Registers kiln's passes and the upstream ones its pipelines name.
void registerAllKilnPasses();

/// Runs the whole pipeline; `--emit` stages print to `os`. Returns 0 on
/// success; errors go through the context's diagnostics.
int compileModel(mlir::MLIRContext &ctx, const CompileOptions &options,
                 llvm::raw_ostream &os);

/// Ends a pending progress line so that a diagnostic starts on its own.
void breakProgressLine();

/// The model's C identifier: the output prefix's file name, sanitized.
std::string modelNameFor(llvm::StringRef outputPrefix);

} // namespace kiln

#endif
