//===- Pipeline.cpp - the kiln compile pipeline ---------------------------===//
#include "compiler/Pipeline.h"
#include "providers/cuda/Cuda.h"
#include "compiler/Importer.h"
#include "compiler/Emit.h"
#include "compiler/ShapeVariants.h"
#include "dialects/kiln/KilnDialect.h"
#include "dialects/onnx/OnnxOps.h"
#include "passes/Passes.h"
#include "providers/Passes.h"
#include "providers/Provider.h"
#include "providers/cpu/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
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
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/AMX/AMXToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"

#include <chrono>

using namespace mlir;

namespace kiln {

void registerKilnDialects(DialectRegistry &registry) {
  registry.insert<onnx::ONNXDialect, KilnDialect, affine::AffineDialect,
                  arith::ArithDialect, bufferization::BufferizationDialect,
                  cf::ControlFlowDialect, func::FuncDialect,
                  index::IndexDialect, LLVM::LLVMDialect, linalg::LinalgDialect,
                  math::MathDialect, memref::MemRefDialect, scf::SCFDialect,
                  tensor::TensorDialect, vector::VectorDialect, gpu::GPUDialect,
                  NVVM::NVVMDialect, amx::AMXDialect>();
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerAMXDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
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
  mlir::registerGPUPasses();
}

/// Whether a progress line waits for its timing (an error must start on a
/// line of its own).
static bool progressLineOpen = false;

void breakProgressLine() {
  if (progressLineOpen)
    llvm::errs() << "\n";
  progressLineOpen = false;
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

/// Marks a module compiled with run-time sizes, with the --dim-max bounds.
void markRuntimeSizes(ModuleOp module, const std::map<std::string, int64_t> &dimMax) {
  Builder b(module.getContext());
  SmallVector<NamedAttribute> bounds;
  for (const auto &[name, max] : dimMax)
    bounds.push_back(b.getNamedAttr(name, b.getI64IntegerAttr(max)));
  module->setAttr("kiln.runtime_sizes", b.getDictionaryAttr(bounds));
}

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
    open = progressLineOpen = true;
  }
  void finish() {
    if (!open)
      return;
    auto ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
    // A diagnostic may have ended the line already.
    if (progressLineOpen)
      llvm::errs() << " " << llvm::format("%.0f", ms) << " ms\n";
    open = progressLineOpen = false;
  }
  ~Progress() { finish(); }

private:
  bool enabled;
  bool open = false;
  std::chrono::steady_clock::time_point start;
};

/// Runs one stage; all stages report into one `--mlir-timing` tree.
/// The pass managers stay alive until the compile ends: pass timers are
/// keyed by the pass's address, and a later stage's pass allocated where a
/// freed one was would be reported under the old name.
LogicalResult runPipeline(ModuleOp module, StringRef pipeline,
                          TimingScope &timing,
                          std::vector<std::unique_ptr<PassManager>> &keep) {
  keep.push_back(std::make_unique<PassManager>(module.getContext(),
                                               ModuleOp::getOperationName()));
  PassManager &pm = *keep.back();
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
static const char *kGraphPipeline =
    "func.func(kiln-widen-half,kiln-shape-inference,kiln-decompose-recurrent),"
    "kiln-fuse-quantized,"
    "func.func(kiln-decompose-ops,kiln-decompose-losses,kiln-shape-inference)";
// Graph optimizations, after shape inference and before partitioning; each
// pass records how often it fired as `kiln.report.*` module attributes.
// Unrolling recurrent ops and folding alternate: an LSTM's initial state
// often comes from a Shape chain over the previous LSTM's output. Folding
// runs again after simplification, which inlines the taken branch of an If
// whose condition folding made constant.
static const char *kOptimizePipeline =
    "func.func(kiln-shape-inference),kiln-fuse-quantized,"
    "func.func(kiln-decompose-recurrent{skip-dynamic=1},kiln-decompose-ops,"
    "kiln-shape-inference),kiln-fold-constants,"
    "func.func(kiln-shape-inference,kiln-decompose-recurrent{skip-dynamic=1},"
    "kiln-decompose-ops,"
    "kiln-shape-inference),kiln-fold-constants,kiln-simplify,cse,"
    "func.func(kiln-shape-inference),kiln-fold-constants,kiln-simplify,cse,"
    "func.func(kiln-shape-inference),kiln-fuse-subgraphs,kiln-fuse-conv,"
    "kiln-fuse-epilogues,func.func(kiln-conv1d-as-2d)";
// The CPU codegen pipelines live in providers/cpu/Pipelines.h: constant
// folding JITs the same ones.
using cpu::kBufferizePipeline;
using cpu::kToLlvmPipeline;

/// `kiln compile --report`: one fact per line on stderr.
static void printReport(ModuleOp module, StringRef model, size_t nodesIn,
                        size_t nodesOut, llvm::raw_ostream &os) {
  auto count = [&](StringRef key) -> int64_t {
    auto a = module->getAttrOfType<IntegerAttr>(key);
    return a ? a.getInt() : 0;
  };
  os << "kiln: report: model " << model << "\n";
  os << "kiln: report: nodes in: " << nodesIn << "\n";
  os << "kiln: report: nodes out: " << nodesOut << "\n";
  os << "kiln: report: constants folded: "
     << count("kiln.report.fold-constants.constants") << " ("
     << count("kiln.report.fold-constants.bytes") << " bytes, from "
     << count("kiln.report.fold-constants.ops") << " nodes, "
     << count("kiln.report.fold-constants.jit-runs") << " JIT runs)\n";
  for (NamedAttribute attr : module->getAttrs()) {
    StringRef name = attr.getName().getValue();
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!value || !name.consume_front("kiln.report.") ||
        name.starts_with("fold-constants.") || name.starts_with("cuda_"))
      continue;
    os << "kiln: report: rewrite " << name << ": " << value.getInt() << "\n";
  }
  if (int64_t perElement = count("kiln.report.cuda_per_element_kernels"),
      contractions = count("kiln.report.cuda_tiled_contractions"),
      reductions = count("kiln.report.cuda_parallel_reductions");
      perElement + contractions + reductions)
    os << "kiln: report: cuda kernels: " << contractions
       << " shared-memory tiled contractions, " << reductions << " parallel reductions, "
       << perElement << " one thread per element\n";
  if (int64_t onHost = count("kiln.report.cuda_ops_on_host"))
    os << "kiln: report: cuda: " << onHost
       << " structured ops of cuda partitions run on the host (inside host "
          "loops, "
          "such as a recurrent op's steps, or on buffers laid out at run "
          "time)\n";
  if (module->hasAttr("kiln.arena_size"))
    os << "kiln: report: arena: " << count("kiln.arena_size") << " bytes ("
       << count("kiln.arena_size_unshared") << " bytes without buffer reuse)\n";
  if (auto fallbacks = module->getAttrOfType<ArrayAttr>("kiln.fallbacks"))
    for (auto line : fallbacks.getAsRange<StringAttr>())
      os << "kiln: report: fallback: " << line.getValue() << "\n";
  if (auto parts = module->getAttrOfType<ArrayAttr>("kiln.partitions"))
    for (Attribute a : parts) {
      auto d = dyn_cast<DictionaryAttr>(a);
      if (!d)
        continue;
      auto str = [&](StringRef k) {
        auto s = d.getAs<StringAttr>(k);
        return s ? s.getValue() : StringRef("?");
      };
      auto num = [&](StringRef k) {
        auto v = d.getAs<IntegerAttr>(k);
        return v ? v.getInt() : 0;
      };
      os << "kiln: report: partition " << str("name") << ": provider "
         << str("provider") << ", " << num("num_ops") << " ops, " << num("bytes_in")
         << " bytes in, " << num("bytes_out") << " bytes out\n";
    }
}

/// Run-time sizes: the symbols and each output's shape in them.
static void printRuntimeSizesReport(const ModelSignature &sig, llvm::raw_ostream &os) {
  os << "kiln: report: run-time sizes: symbols " << llvm::join(sig.symbols, ", ") << "\n";
  for (const TensorSignature &t : sig.outputs)
    if (!t.dimText.empty())
      os << "kiln: report:   output \"" << t.name << "\": [" << llvm::join(t.dimText, ", ")
         << "]\n";
}

/// Device kernels: mapped loops become gpu.launch, outlined into a
/// gpu.module, lowered to NVVM and compiled to PTX by LLVM's NVPTX backend.
/// The CUDA toolkit whose libdevice provides kernels' math functions.
static std::string cudaToolkit() {
  for (const char *dir : {(const char *)getenv("CUDA_HOME"),
                          (const char *)getenv("CUDA_PATH"), "/usr/local/cuda"})
    if (dir && *dir && llvm::sys::fs::exists(std::string(dir) + "/nvvm/libdevice"))
      return dir;
  return "";
}

static std::string gpuPipeline(StringRef arch) {
  std::string toolkit = cudaToolkit();
  return ("func.func(gpu-map-parallel-loops,convert-parallel-loops-to-gpu),"
          "gpu-kernel-outlining,kiln-name-kernels,func.func(gpu-async-region),"
          "lower-affine,"
          "nvvm-attach-target{chip=" +
          arch +
          " features=+ptx80 O=3},"
          // Math ops that libdevice does not cover (roundeven, from
          // QuantizeLinear) become LLVM intrinsics NVPTX selects.
          "gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm,convert-math-to-"
          "llvm,"
          "canonicalize,cse,"
          "reconcile-unrealized-casts),gpu-module-to-binary{format=isa" +
          (toolkit.empty() ? std::string() : " toolkit=" + toolkit) + "}")
      .str();
}

static bool hasGpuCode(ModuleOp module) {
  bool found = false;
  module.walk([&](gpu::BinaryOp) { found = true; });
  return found;
}

/// Prints the PTX of every kernel module.
static void printPtx(ModuleOp module, llvm::raw_ostream &os) {
  module.walk([&](gpu::BinaryOp binary) {
    for (Attribute a : binary.getObjects()) {
      StringRef text = cast<gpu::ObjectAttr>(a).getObject().getValue();
      os << "// kernels of " << binary.getSymName() << "\n" << text.rtrim('\0') << "\n";
    }
  });
}

int compileModel(MLIRContext &ctx, const CompileOptions &userOptions,
                 llvm::raw_ostream &os) {
  // (The automatic batch-1 variant joins the user's --dim-values.)
  CompileOptions options = userOptions;
  Progress progress(options.showProgress && options.emit == EmitKind::Library);
  DefaultTimingManager timingManager;
  applyDefaultTimingManagerCLOptions(timingManager);
  TimingScope timing = timingManager.getRootScope();
  std::vector<std::unique_ptr<PassManager>> passManagers;
  bool wantsCuda = llvm::is_contained(options.providers, "cuda");
  if (wantsCuda) {
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  }
  std::string name = modelNameFor(options.outputPrefix.empty() ? "model"
                                                               : options.outputPrefix);

  // Lowers one variant of the model: the user's providers, or (as the
  // fallback of a CUDA build) the CPU alone. Only the first variant prints
  // --emit stages.
  struct Variant {
    OwningOpRef<ModuleOp> module;
    ModelSignature signature;
  };
  bool printed = false;
  auto importModel = [&](StringRef label, const ImportOptions &importOptions) {
    progress.stage("importing " + options.inputPath + label.str());
    TimingScope importTiming = timing.nest("Import");
    return importOnnxFile(ctx, options.inputPath, importOptions);
  };
  OwningOpRef<ModuleOp> firstImport = importModel("", options.import);
  if (!firstImport)
    return 1;
  // A batch-only symbolic model (by default on host providers, see
  // CompileOptions::batchOneVariant): batch 1 static (every kernel on the
  // static schedules) beside the code for every batch. (mobilenet_v2 with a
  // symbolic batch ran 1.26x slower at batch 1 than compiled for it.)
  bool batchOne = false;
  bool hostOnly = llvm::all_of(options.providers, [](const std::string &name) {
    const Provider *p = lookupProvider(name);
    return p && p->runsOnHostThread();
  });
  if (options.batchOneVariant.value_or(hostOnly) && options.dimValues.empty() &&
      options.emit == EmitKind::Library)
    if (std::optional<std::string> batch = leadingBatchSymbol(*firstImport)) {
      options.dimValues.push_back(DimValues{*batch, {1}});
      batchOne = true;
    }
  // Symbolic dimensions listed with --dim-values: one shape variant per
  // combination of their values.
  std::vector<std::vector<int64_t>> combinations = dimCombinations(options.dimValues);
  bool shapeVariants = !options.dimValues.empty();
  if (shapeVariants) {
    if (failed(checkDimSymbols(*firstImport, options.dimValues)))
      return 1;
    constexpr size_t kMaxShapeVariants = 64;
    if (combinations.size() > kMaxShapeVariants) {
      breakProgressLine();
      llvm::errs() << "kiln: error: --dim-values asks for " << combinations.size()
                   << " shape variants; kiln compiles at most " << kMaxShapeVariants
                   << " (each is a full compile)\n";
      return 1;
    }
    firstImport = {};
  }

  // Register tiles are sized for the target's vector registers.
  int64_t vectorBits = targetVectorBits(options.targetCpu);
  bool vnni = targetHasVnni(options.targetCpu);
  bool amx = vnni && targetHasAmx(options.targetCpu);
  bool vbmi = vnni && targetHasVbmi(options.targetCpu);
  // Without VNNI, dynamically quantized matmuls on AVX2's vpmaddwd.
  bool avx2 = !vnni && targetHasAvx2(options.targetCpu);
  // Without VNNI, 8-bit products would run on i32 loops, slower than the
  // float kernels: QDQ layers then stay float.
  auto forTarget = [&](StringRef pipeline) {
    std::string p = pipeline.str();
    if (!vnni)
      if (size_t at = p.find("kiln-fuse-quantized"); at != std::string::npos)
        p.replace(at, strlen("kiln-fuse-quantized"),
                  "kiln-fuse-quantized{integer-products=0}");
    return p;
  };

  // The model compiled for one combination, lowered for the user's
  // providers, and for a CUDA build also for the CPU alone and with
  // device-resident I/O.
  struct Shape {
    std::optional<Variant> primary, fallback, deviceIO;
  };
  // index == combinations.size(): the generic code beside the shape
  // variants, for every size not listed (run-time sizes).
  auto compileShape = [&](size_t index) -> std::optional<Shape> {
    bool generic = index == combinations.size();
    ArrayRef<int64_t> combination =
        generic ? ArrayRef<int64_t>() : ArrayRef<int64_t>(combinations[index]);
    bool first = index == 0;
    Shape shape;
    ImportOptions importOptions = options.import;
    if (!generic)
      importOptions.dimValues = pinsOf(options.dimValues, combination);
    std::string tag =
        generic         ? " [other sizes]"
        : shapeVariants ? " [" + describeCombination(options.dimValues, combination) + "]"
                        : "";
    if (!firstImport && !(firstImport = importModel(tag, importOptions)))
      return std::nullopt;
    // Symbolic dims left after the pins (every one, for the generic code
    // beside shape variants) make code for every size.
    bool runtimeSizes = generic || hasSymbolicInputs(*firstImport);
    std::string variantSuffix = generic         ? std::string("_vrt")
                                : shapeVariants ? "_v" + std::to_string(index)
                                                : "";
    auto lowerVariant = [&](ArrayRef<std::string> providerList, StringRef suffix,
                            bool primary, bool deviceIO = false) -> std::optional<Variant> {
      auto stop = [&](EmitKind kind, ModuleOp m) {
        if (!primary || !first || options.emit != kind)
          return false;
        m.print(os);
        printed = true;
        return true;
      };
      std::string label = (primary ? "" : deviceIO ? " (device I/O)" : " (CPU fallback)") + tag;
      OwningOpRef<ModuleOp> module = std::move(firstImport);
      if (!module && !(module = importModel(label, importOptions)))
        return std::nullopt;
      progress.finish();
      if (runtimeSizes)
        markRuntimeSizes(*module, options.dimMax);
      if (primary && first && options.showProgress && options.emit == EmitKind::Library)
        llvm::errs() << "kiln: " << countGraphOps(*module) << " nodes\n";
      if (stop(EmitKind::Onnx, *module))
        return Variant{std::move(module), {}};
      auto run = [&](StringRef pipeline) { return runPipeline(*module, pipeline, timing, passManagers); };

      size_t nodesIn = countGraphOps(*module);
      if (options.optLevel > 0) {
        progress.stage("optimizing the graph" + label);
        std::string optimize = forTarget(kOptimizePipeline);
        std::string fold = "kiln-fold-constants{max-bytes=" +
                           std::to_string(options.foldLimitBytes) + "}";
        for (size_t at = optimize.find("kiln-fold-constants");
             at != std::string::npos;
             at = optimize.find("kiln-fold-constants", at + fold.size()))
          optimize.replace(at, strlen("kiln-fold-constants"), fold);
        if (failed(run(optimize)))
          return std::nullopt;
      }
      size_t nodesOut = countGraphOps(*module);
      if (stop(EmitKind::OnnxOpt, *module))
        return Variant{std::move(module), {}};
      progress.stage("shape inference and partitioning" + label);
      std::string providers = llvm::join(providerList, ",");
      std::string partition = "kiln-partition{providers=" + providers +
                              " min-device-elements=" +
                              std::to_string(options.minDeviceElements);
      if (!options.providerAssignment.empty())
        partition += " assignment=" + options.providerAssignment;
      if (failed(run(forTarget(kGraphPipeline) +
                     (runtimeSizes ? ",func.func(kiln-symbolic-shapes,kiln-"
                                     "shape-inference,kiln-symbolic-shapes),"
                                   : ",") +
                     partition + "}")))
        return std::nullopt;
      if (stop(EmitKind::Kiln, *module))
        return Variant{std::move(module), {}};
      // Per-node profiling hooks go in once the providers are known.
      if (options.profileHooks && failed(run("kiln-profile-kernels")))
        return std::nullopt;

      // Before lowering, which makes unsigned types signless.
      Variant v;
      if (failed(captureSignature(*module, name, variantSuffix + suffix.str(), v.signature)))
        return std::nullopt;
      progress.stage("lowering partitions" + label);
      (*module)->setAttr(
          kVectorBitsAttr,
          IntegerAttr::get(IntegerType::get(&ctx, 64), vectorBits));
      if (failed(run("kiln-lower-partitions,kiln-fuse-elementwise,func.func(canonicalize,cse)")))
        return std::nullopt;
      if (stop(EmitKind::Linalg, *module))
        return Variant{std::move(module), {}};
      progress.stage("bufferizing and planning memory" + label);
      bool cuda = llvm::is_contained(providerList, "cuda");
      if (failed(run(
              std::string("func.func(kiln-cpu-block-channels{vector-bits=") +
              std::to_string(vectorBits) +
              "},kiln-cpu-unshare-fills,"
              "kiln-cpu-unshare-slice-sources)," +
              kBufferizePipeline +
              (cuda ? deviceIO ? ",kiln-cuda-offload{device-io=1}"
                               : ",kiln-cuda-offload"
                    : "") +
              (cuda && options.cudaEmulate
                   ? ",kiln-cuda-emulate,func.func(canonicalize,cse)"
                   : "") +
              ",kiln-cpu-integer-contractions{vnni=" +
              std::to_string(int(vnni)) + " amx=" + std::to_string(int(amx)) +
              " avx2=" + std::to_string(int(avx2)) +
              " vbmi=" + std::to_string(int(vbmi)) +
              "},func.func(kiln-cpu-fuse-rows),"
              "kiln-cpu-vectorize-blocked{vector-bits=" +
              std::to_string(vectorBits) +
              " winograd=" + std::to_string(int(options.winograd)) +
              "},kiln-cpu-vectorize-contractions{vector-bits=" +
              std::to_string(vectorBits) +
              "},func.func(kiln-cpu-vectorize-transposes{vector-bits=" +
              std::to_string(vectorBits) +
              "}),kiln-cpu-vectorize-upsample{vector-bits=" +
              std::to_string(vectorBits) +
              "},func.func(kiln-cpu-fill-pad-borders,kiln-cpu-parallel-loops,"
              "kiln-elide-slice-copies),"
              "kiln-plan-memory,"
              "kiln-lower-runtime-calls")))
        return std::nullopt;
      if (cuda && !options.cudaEmulate) {
        progress.stage("compiling CUDA kernels to PTX (" + options.cudaArch + ")" + label);
        if (failed(run(gpuPipeline(options.cudaArch))))
          return std::nullopt;
        bool unmapped = false;
        module->walk([&](Operation *op) {
          if (op->hasAttr(kDeviceLoopAttr) && !unmapped) {
            op->emitError("internal error: a CUDA loop nest was not mapped to a kernel");
            unmapped = true;
          }
        });
        if (unmapped)
          return std::nullopt;
        if (primary && first && options.emit == EmitKind::Ptx) {
          printPtx(*module, os);
          printed = true;
          return Variant{std::move(module), {}};
        }
      }
      progress.stage("lowering to LLVM" + label);
      // Vector ops left by kiln-cpu-vectorize-contractions go to LLVM first.
      if (failed(run(std::string(
                         "kiln-approximate-math,kiln-cpu-divide-by-constant,"
                         "kiln-flatten-constants,func."
                         "func(convert-linalg-to-loops),kiln-outline-loops,"
                         "convert-vector-to-llvm{reassociate-fp-reductions=1") +
                     (amx ? " enable-amx=1}," : "},") + kToLlvmPipeline)))
        return std::nullopt;
      if (primary && options.report) {
        progress.finish();
        if (shapeVariants)
          llvm::errs() << "kiln: report: shape variant" << tag << "\n";
        printReport(*module, options.inputPath, nodesIn, nodesOut, llvm::errs());
        if (v.signature.runtimeSizes)
          printRuntimeSizesReport(v.signature, llvm::errs());
      }
      if (stop(EmitKind::LlvmMlir, *module))
        return Variant{std::move(module), {}};
      v.module = std::move(module);
      return v;
    };

    shape.primary = lowerVariant(options.providers, "", /*primary=*/true);
    if (!shape.primary || printed)
      return shape.primary ? std::optional<Shape>(std::move(shape)) : std::nullopt;
    // A model with device code carries a CPU-only copy, chosen at session
    // creation when there is no CUDA driver or device, and one whose inputs
    // and outputs stay in device memory.
    if (hasGpuCode(*shape.primary->module)) {
      shape.fallback = lowerVariant({"cpu"}, "_cpu", /*primary=*/false);
      if (!shape.fallback)
        return std::nullopt;
      shape.deviceIO =
          lowerVariant(options.providers, "_dio", /*primary=*/false, /*deviceIO=*/true);
      if (!shape.deviceIO)
        return std::nullopt;
    }
    return shape;
  };

  // A compile whose errors are kept quiet: the first one's line for a note
  // (for code that is optional).
  auto compileQuietly = [&](size_t index, std::string &why) {
    SmallVector<std::string> errors;
    std::optional<Shape> shape;
    {
      ScopedDiagnosticHandler capture(&ctx, [&](Diagnostic &d) {
        if (d.getSeverity() == DiagnosticSeverity::Error)
          errors.push_back(d.str());
        return success();
      });
      shape = compileShape(index);
    }
    why = errors.empty() ? std::string("?")
                         : StringRef(errors.front()).split('\n').first.str();
    return shape;
  };

  std::vector<Shape> shapes;
  for (size_t index = 0; index < combinations.size(); ++index) {
    // The automatic batch-1 variant is a fast path: where it does not
    // compile, the model compiles as before, with run-time sizes alone.
    if (batchOne) {
      std::string why;
      std::optional<Shape> shape = compileQuietly(index, why);
      if (!shape) {
        breakProgressLine();
        llvm::errs() << "kiln: note: no batch-1 variant (" << why
                     << "): compiling for run-time sizes alone\n";
        CompileOptions alone = userOptions;
        alone.batchOneVariant = false;
        return compileModel(ctx, alone, os);
      }
      shapes.push_back(std::move(*shape));
      continue;
    }
    auto shape = compileShape(index);
    if (!shape) {
      if (shapeVariants) {
        breakProgressLine();
        llvm::errs() << "kiln: note: in the shape variant "
                     << describeCombination(options.dimValues, combinations[index])
                     << " (--dim-values)\n";
      }
      return 1;
    }
    if (printed)
      return 0;
    shapes.push_back(std::move(*shape));
  }
  // Beside the listed sizes, generic code serves every other size. Where
  // some op has no lowering for run-time sizes, other sizes are refused as
  // before (a note says why).
  bool genericVariant = false;
  // (One listed size is the same as pinning it, but for the batch-1 fast
  // path.)
  if (shapeVariants && (combinations.size() > 1 || batchOne) &&
      options.emit == EmitKind::Library) {
    std::string why;
    std::optional<Shape> generic = compileQuietly(combinations.size(), why);
    if (generic) {
      shapes.push_back(std::move(*generic));
      genericVariant = true;
    } else {
      breakProgressLine();
      llvm::errs() << (batchOne ? "kiln: note: only batch 1 runs: no code for "
                                  "other batches ("
                                : "kiln: note: only the sizes listed with "
                                  "--dim-values run: no code for other sizes (")
                   << why << ")\n";
    }
  }

  std::vector<CompiledShape> compiled;
  SmallVector<const ModelSignature *> signatures;
  for (Shape &s : shapes) {
    CompiledShape c;
    c.module = s.primary->module.get();
    c.signature = &s.primary->signature;
    if (s.fallback) {
      c.fallback = s.fallback->module.get();
      c.fallbackSignature = &s.fallback->signature;
    }
    if (s.deviceIO) {
      c.deviceIO = s.deviceIO->module.get();
      c.deviceIOSignature = &s.deviceIO->signature;
    }
    compiled.push_back(c);
    // (The generic code's shapes are not among the listed ones.)
    if (!(genericVariant && &s == &shapes.back()))
      signatures.push_back(c.signature);
  }
  // (One listed size makes an ordinary static model.)
  ModelSignature top = *signatures.front();
  if (signatures.size() > 1) {
    if (failed(checkSameInterface(signatures, options.dimValues, combinations)))
      return 1;
    top = mergeSignatures(signatures, options.dimValues, combinations);
  }
  // With generic code, what it keeps symbolic is symbolic in the model's
  // interface too (a dimension listed with one size).
  if (genericVariant) {
    const ModelSignature &any = *compiled.back().signature;
    auto widen = [](std::vector<TensorSignature> &ts, const std::vector<TensorSignature> &from) {
      for (size_t i = 0; i < ts.size() && i < from.size(); ++i)
        for (size_t d = 0; d < ts[i].shape.size() && d < from[i].shape.size(); ++d)
          if (from[i].shape[d] < 0)
            ts[i].shape[d] = -1;
    };
    widen(top.inputs, any.inputs);
    widen(top.outputs, any.outputs);
    if (top.dimNames.empty())
      for (const DimValues &d : options.dimValues)
        top.dimNames.push_back(d.symbol);
  }

  progress.stage("generating machine code");
  EmitOptions emitOptions;
  emitOptions.targetCpu = options.targetCpu;
  TimingScope codegenTiming = timing.nest("LLVM codegen");
  auto object = emitObject(compiled, top, emitOptions,
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

  // The header of a batch-one library is that of its code for every batch
  // (shape functions, run() for any size): the variant only runs faster.
  ModelSignature header = top;
  if (batchOne) {
    const ModelSignature &any = *compiled.back().signature;
    header.inputs = any.inputs;
    header.outputs = any.outputs;
    header.dimNames = any.dimNames;
    header.runtimeSizes = any.runtimeSizes;
  }
  progress.stage("writing " + options.outputPrefix + ".{o,h,a,so}");
  if (failed(writeArtifacts(*object, header, options.outputPrefix,
                            options.buildSharedLibrary)))
    return 1;
  progress.finish();
  return 0;
}

} // namespace kiln
