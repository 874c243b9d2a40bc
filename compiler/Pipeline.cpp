//===- Pipeline.cpp - the kiln compile pipeline ---------------------------===//
#include "compiler/Pipeline.h"
#include "compiler/Emit.h"
#include "dialects/kiln/KilnDialect.h"
#include "dialects/onnx/OnnxOps.h"
#include "passes/Passes.h"
#include "providers/Passes.h"
#include "providers/Provider.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/Timing.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"

#include <chrono>

using namespace mlir;

namespace kiln {

void registerKilnDialects(DialectRegistry &registry) {
  registry.insert<onnx::ONNXDialect, KilnDialect, affine::AffineDialect,
                  arith::ArithDialect, bufferization::BufferizationDialect,
                  cf::ControlFlowDialect, func::FuncDialect,
                  index::IndexDialect, LLVM::LLVMDialect,
                  linalg::LinalgDialect, math::MathDialect,
                  memref::MemRefDialect, scf::SCFDialect,
                  tensor::TensorDialect, vector::VectorDialect>();
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

void registerAllKilnPasses() {
  registerBuiltinProviders();
  kiln::registerKilnPasses();
  kiln::registerKilnProvidersPasses();
  mlir::registerTransformsPasses();
  mlir::registerConversionPasses();
  mlir::bufferization::registerBufferizationPasses();
  mlir::registerLinalgPasses();
  mlir::memref::registerMemRefPasses();
}

std::string modelNameFor(StringRef outputPrefix) {
  std::string name = llvm::sys::path::filename(outputPrefix).str();
  for (char &c : name)
    if (!isalnum(static_cast<unsigned char>(c)))
      c = '_';
  if (name.empty() || isdigit(static_cast<unsigned char>(name[0])))
    name = "m_" + name;
  return name;
}

namespace {

/// Stage-by-stage progress on stderr, so a long compile says what it does.
class Progress {
public:
  explicit Progress(bool enabled) : enabled(enabled) {}
  void stage(StringRef what) {
    finish();
    if (!enabled)
      return;
    llvm::errs() << "kiln: " << what << "...";
    llvm::errs().flush();
    start = std::chrono::steady_clock::now();
    open = true;
  }
  void finish() {
    if (!open)
      return;
    auto ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
    llvm::errs() << " " << llvm::format("%.0f", ms) << " ms\n";
    open = false;
  }
  ~Progress() { finish(); }

private:
  bool enabled;
  bool open = false;
  std::chrono::steady_clock::time_point start;
};

/// Runs one stage; all stages report into one `--mlir-timing` tree.
LogicalResult runPipeline(ModuleOp module, StringRef pipeline,
                          TimingScope &timing) {
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  pm.enableTiming(timing);
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
    return failure();
  return pm.run(module);
}

size_t countGraphOps(ModuleOp module) {
  size_t n = 0;
  module.walk([&](Operation *op) {
    if (op->getDialect() && op->getDialect()->getNamespace() == "onnx" &&
        op->getName().getStringRef() != "onnx.NoValue" &&
        op->getName().getStringRef() != "onnx.Constant")
      ++n;
  });
  return n;
}

} // namespace

// Graph stages, as pipelines without the builtin.module anchor.
static const char *kGraphPipeline = "func.func(kiln-shape-inference)";
static const char *kBufferizePipeline =
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    "func.func(canonicalize,cse),kiln-plan-memory";
static const char *kToLlvmPipeline =
    "func.func(convert-linalg-to-loops),expand-strided-metadata,lower-affine,"
    "convert-scf-to-cf,func.func(canonicalize,cse),convert-math-to-libm,"
    "convert-math-to-llvm,finalize-memref-to-llvm,convert-arith-to-llvm,"
    "convert-index-to-llvm,"
    "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},convert-cf-to-llvm,"
    "reconcile-unrealized-casts,canonicalize";

int compileModel(MLIRContext &ctx, const CompileOptions &options,
                 llvm::raw_ostream &os) {
  ModuleOp module_;
  Progress progress(options.showProgress && options.emit == EmitKind::Library);
  DefaultTimingManager timingManager;
  applyDefaultTimingManagerCLOptions(timingManager);
  TimingScope timing = timingManager.getRootScope();
  auto runStage = [&](StringRef pipeline) {
    return runPipeline(module_, pipeline, timing);
  };
  progress.stage("importing " + options.inputPath);
  TimingScope importTiming = timing.nest("Import");
  OwningOpRef<ModuleOp> module = importOnnxFile(ctx, options.inputPath, options.import);
  importTiming.stop();
  if (!module)
    return 1;
  module_ = module.get();
  progress.finish();
  if (options.showProgress && options.emit == EmitKind::Library)
    llvm::errs() << "kiln: " << countGraphOps(*module) << " nodes\n";
  if (options.emit == EmitKind::Onnx) {
    module->print(os);
    return 0;
  }

  progress.stage("shape inference and partitioning");
  std::string providers;
  for (const std::string &p : options.providers)
    providers += (providers.empty() ? "" : ",") + p;
  if (failed(runStage(std::string(kGraphPipeline) +
                      ",kiln-partition{providers=" + providers + "}")))
    return 1;
  if (options.emit == EmitKind::Kiln) {
    module->print(os);
    return 0;
  }

  progress.stage("lowering partitions");
  if (failed(runStage("kiln-lower-partitions,func.func(canonicalize,cse)")))
    return 1;
  if (options.emit == EmitKind::Linalg) {
    module->print(os);
    return 0;
  }

  std::string name = modelNameFor(options.outputPrefix.empty() ? "model"
                                                               : options.outputPrefix);
  ModelSignature signature;
  if (failed(captureSignature(*module, name, signature)))
    return 1;
  progress.stage("bufferizing and planning memory");
  if (failed(runStage(kBufferizePipeline)))
    return 1;

  progress.stage("lowering to LLVM");
  if (failed(runStage(kToLlvmPipeline)))
    return 1;
  if (options.emit == EmitKind::LlvmMlir) {
    module->print(os);
    return 0;
  }

  progress.stage("generating machine code");
  EmitOptions emitOptions;
  emitOptions.targetCpu = options.targetCpu;
  TimingScope codegenTiming = timing.nest("LLVM codegen");
  auto object = emitObject(*module, signature, emitOptions,
                           options.emit == EmitKind::Llvm ? &os : nullptr);
  codegenTiming.stop();
  if (!object)
    return 1;
  if (options.emit == EmitKind::Llvm)
    return 0;
  if (options.emit == EmitKind::Obj && options.outputPrefix.empty()) {
    os << *object;
    return 0;
  }

  progress.stage("writing " + options.outputPrefix + ".{o,h,a,so}");
  if (failed(writeArtifacts(*object, signature, options.outputPrefix,
                            options.buildSharedLibrary)))
    return 1;
  progress.finish();
  return 0;
}

} // namespace kiln
