//===- kiln.cpp - the kiln compiler driver ---------------------------------===//
//
// kiln compile model.onnx -o out/NAME [--providers=cpu] [--emit=...]
// kiln profile trace.json [--top N] [--compare A.json B.json] [--html OUT]
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipeline.h"
#include "passes/NodeName.h"
#include "tools/kiln/Profile.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/CommandLine.h"
#include <cstdlib>
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace llvm;

static cl::OptionCategory kilnCategory("kiln compile options");
static cl::opt<std::string> inputPath(cl::Positional, cl::desc("<model.onnx>"),
                                      cl::cat(kilnCategory));
static cl::opt<std::string>
    outputPrefix("o", cl::desc("Output prefix: writes PREFIX.o, libNAME.a, libNAME.so, NAME.h"),
                 cl::value_desc("out/NAME"), cl::cat(kilnCategory));
static cl::list<std::string>
    providers("providers", cl::desc("Execution providers in priority order (default: cpu)"),
              cl::CommaSeparated, cl::cat(kilnCategory));
static cl::opt<std::string>
    targetCpu("target-cpu", cl::desc("CPU to generate code for: native (default) or an LLVM "
                                      "CPU name such as x86-64-v3 for portable binaries"),
              cl::init("native"), cl::cat(kilnCategory));
static cl::opt<kiln::EmitKind> emit(
    "emit", cl::desc("Print the IR at a stage to stdout instead of writing libraries"),
    cl::init(kiln::EmitKind::Library),
    cl::values(clEnumValN(kiln::EmitKind::Onnx, "onnx", "imported onnx dialect"),
               clEnumValN(kiln::EmitKind::OnnxOpt, "onnx-opt",
                          "optimized onnx graph (before partitioning)"),
               clEnumValN(kiln::EmitKind::Kiln, "kiln", "after shape inference and partitioning"),
               clEnumValN(kiln::EmitKind::Linalg, "linalg", "after provider lowering"),
               clEnumValN(kiln::EmitKind::LlvmMlir, "llvm-mlir", "LLVM dialect"),
               clEnumValN(kiln::EmitKind::Ptx, "ptx", "PTX of the CUDA partitions"),
               clEnumValN(kiln::EmitKind::Llvm, "llvm", "optimized LLVM IR with the descriptor"),
               clEnumValN(kiln::EmitKind::Obj, "obj", "the object file (to stdout without -o)"),
               clEnumValN(kiln::EmitKind::Library, "lib", "object, libraries and header (default)")),
    cl::cat(kilnCategory));
static cl::opt<std::string>
    cudaArch("cuda-arch", cl::desc("GPU architecture of CUDA partitions: sm_90 (default, "
                                   "H100/H200), sm_89 or sm_80"),
             cl::init("sm_90"), cl::cat(kilnCategory));
static cl::opt<bool> cudaEmulate(
    "cuda-emulate",
    cl::desc("Run the CUDA partitions' kernels as host code (tests kernels without a GPU; "
             "slow, no PTX)"),
    cl::cat(kilnCategory));
static cl::opt<std::string> providerAssignment(
    "provider-assignment",
    cl::desc("JSON file pinning nodes or op types to a provider: "
             "{\"nodes\": {\"conv_1\": \"cpu\"}, \"op_types\": {\"Softmax\": \"cpu\"}}"),
    cl::value_desc("file.json"), cl::cat(kilnCategory));
static cl::opt<bool> winograd(
    "winograd",
    cl::desc("Run 3x3 convs at stride 1 on the blocked layout as Winograd "
             "F(2x2, 3x3) tiles (default on; =false keeps the direct kernels, "
             "whose sums follow the definition's order)"),
    cl::init(true), cl::cat(kilnCategory));
static cl::opt<int64_t> minDeviceElements(
    "min-device-elements",
    cl::desc("Device partitions whose largest tensor has fewer elements run on "
             "the CPU (default 256): the transfer would cost more than the work"),
    cl::init(256), cl::cat(kilnCategory));
static cl::list<std::string>
    inputShapes("input-shape", cl::desc("Pin an input's shape: NAME=d0,d1,... (repeatable; ? keeps a dimension, e.g. the batch, symbolic)"),
                cl::value_desc("NAME=d0,d1,..."), cl::cat(kilnCategory));
static cl::list<std::string> dimValues(
    "dim-values",
    cl::desc("Compile a symbolic dimension once per listed size: NAME=V1,V2,... or "
             "NAME=LO..HI (repeatable; the runtime picks the variant for each run's shapes)"),
    cl::cat(kilnCategory));
static cl::list<std::string> dimMax(
    "dim-max",
    cl::desc("Bound a symbolic dimension of code compiled with run-time sizes: NAME=MAX "
             "(repeatable); a run beyond it fails"),
    cl::value_desc("NAME=MAX"), cl::cat(kilnCategory));
static cl::opt<unsigned>
    optLevel("O", cl::Prefix,
             cl::desc("Graph optimization level: -O0 none, -O1/-O2 (default 2) fold "
                      "constants, remove no-op nodes and fuse"),
             cl::init(2), cl::cat(kilnCategory));
static cl::opt<int64_t> foldLimit(
    "fold-limit",
    cl::desc(
        "Largest constant that constant folding may create, in MiB (default "
        "64); larger results are computed at run time"),
    cl::value_desc("MiB"), cl::init(64), cl::cat(kilnCategory));
static cl::opt<bool> report("report",
                            cl::desc("Print what the optimizer did, the partitions and "
                                     "the arena size to stderr"),
                            cl::cat(kilnCategory));
static cl::opt<bool> noProfileHooks(
    "no-profile-hooks",
    cl::desc("Leave out the per-node profiling hooks (kiln-run --profile then shows partitions only)"),
    cl::cat(kilnCategory));
static cl::opt<bool> quiet("q", cl::desc("Do not print progress"), cl::cat(kilnCategory));
static cl::opt<bool> batchOne("batch-one-variant",
                              cl::desc("A model whose only symbolic dimension "
                                       "is its inputs' batch: also compile "
                                       "batch 1 as a static fast path beside "
                                       "the code for every batch (default "
                                       "when every provider runs on the host; "
                                       "=false for the run-time code alone)"),
                              cl::init(true), cl::cat(kilnCategory));
static cl::opt<bool> noShared("no-shared", cl::desc("Do not link libNAME.so"),
                              cl::cat(kilnCategory));

static int usage() {
  errs() << "usage: kiln compile <model.onnx> -o <out/NAME> [options]\n"
            "       kiln profile <trace.json> [--top N] [--compare A B] [--html OUT]\n"
            "       kiln compile --help\n";
  return 2;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  if (argc < 2)
    return usage();
  // `kiln profile` reads traces; it needs none of the compiler's options.
  if (std::strcmp(argv[1], "profile") == 0)
    return kiln::profileMain(argc - 1, argv + 1);
  bool isCompile = std::strcmp(argv[1], "compile") == 0;
  if (!isCompile && std::strcmp(argv[1], "--help") != 0 && std::strcmp(argv[1], "-help") != 0 &&
      std::strcmp(argv[1], "--version") != 0)
    return usage();
  // Passes first: --mlir-print-ir-after=<pass> lists the passes registered
  // when the option is created.
  kiln::registerAllKilnPasses();
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  // `compile` is the only subcommand; drop it before option parsing.
  std::vector<char *> args(argv, argv + argc);
  if (isCompile)
    args.erase(args.begin() + 1);
  // --help shows kiln's options and MLIR's debugging options, not the
  // hundreds of LLVM backend flags that libLLVM registers.
  for (auto &opt : cl::getRegisteredOptions()) {
    StringRef name = opt.getKey();
    bool ours = llvm::is_contained(opt.getValue()->Categories, &kilnCategory);
    if (!ours && !name.starts_with("mlir-") && name != "help" && name != "version")
      opt.getValue()->setHiddenFlag(cl::Hidden);
  }
  cl::SetVersionPrinter([](raw_ostream &os) { os << "kiln 0.1.0 (LLVM/MLIR 19)\n"; });
  if (!cl::ParseCommandLineOptions(static_cast<int>(args.size()), args.data(),
                                   "kiln: ahead-of-time compiler for ONNX models\n\n"
                                   "  kiln compile model.onnx -o out/NAME\n",
                                   &errs()))
    return 2;
  if (inputPath.empty())
    return usage();

  kiln::CompileOptions options;
  options.inputPath = inputPath;
  options.outputPrefix = outputPrefix;
  if (!providers.empty())
    options.providers.assign(providers.begin(), providers.end());
  options.targetCpu = targetCpu;
  if (cudaArch != "sm_90" && cudaArch != "sm_89" && cudaArch != "sm_80") {
    errs() << "kiln: error: --cuda-arch=" << cudaArch
           << " is not supported (use sm_90, sm_89 or sm_80)\n";
    return 2;
  }
  options.cudaArch = cudaArch;
  options.cudaEmulate = cudaEmulate;
  if (llvm::is_contained(options.providers, "cuda") && !quiet)
    errs() << "kiln: warning: the cuda provider is experimental: only contractions and "
              "reductions have tuned kernels, and it has not run on a GPU in kiln's CI "
              "(README, CUDA)\n";
  options.providerAssignment = providerAssignment;
  options.minDeviceElements = minDeviceElements;
  options.winograd = winograd;
  options.emit = emit;
  options.showProgress = !quiet;
  options.buildSharedLibrary = !noShared;
  if (batchOne.getNumOccurrences())
    options.batchOneVariant = batchOne;
  options.optLevel = optLevel;
  if (foldLimit < 0 || foldLimit > (int64_t(1) << 40)) {
    errs() << "kiln: error: --fold-limit=" << foldLimit
           << " is not 0 to 2^40 (MiB)\n";
    return 2;
  }
  options.foldLimitBytes = foldLimit << 20;
  options.report = report;
  options.profileHooks = !noProfileHooks;
  if (options.emit == kiln::EmitKind::Library && options.outputPrefix.empty()) {
    errs() << "kiln: error: -o out/NAME is required\n";
    return 2;
  }
  for (const std::string &spec : inputShapes) {
    auto [name, dims] = StringRef(spec).split('=');
    SmallVector<StringRef> parts;
    dims.split(parts, ',');
    SmallVector<int64_t> shape;
    for (StringRef p : parts) {
      int64_t d;
      // `?` keeps the model's dimension (a batch left to run time).
      if (p.trim() == "?") {
        shape.push_back(mlir::ShapedType::kDynamic);
        continue;
      }
      if (p.trim().getAsInteger(10, d) || d < 0) {
        errs() << "kiln: error: --input-shape " << spec << ": expected NAME=d0,d1,...\n";
        return 2;
      }
      shape.push_back(d);
    }
    if (name.empty() || dims.empty()) {
      errs() << "kiln: error: --input-shape " << spec << ": expected NAME=d0,d1,...\n";
      return 2;
    }
    options.import.inputShapes[name] = shape;
  }

  for (const std::string &spec : dimValues) {
    kiln::DimValues d;
    std::string error;
    if (!kiln::parseDimValues(spec, d, error)) {
      errs() << "kiln: error: " << error << "\n";
      return 2;
    }
    options.dimValues.push_back(std::move(d));
  }

  for (const std::string &spec : dimMax) {
    size_t eq = spec.find('=');
    char *end = nullptr;
    long long v = eq == std::string::npos ? 0 : std::strtoll(spec.c_str() + eq + 1, &end, 10);
    if (eq == std::string::npos || eq == 0 || !end || *end || v <= 0) {
      errs() << "kiln: error: --dim-max " << spec << ": expected NAME=MAX with MAX > 0\n";
      return 2;
    }
    options.dimMax[spec.substr(0, eq)] = v;
  }

  mlir::DialectRegistry registry;
  kiln::registerKilnDialects(registry);
  mlir::MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  // Errors name the node; dumping the whole module after them only buries it.
  ctx.printOpOnDiagnostic(false);
  // One line per error: "kiln: error: model.onnx: node "x" (Op): reason".
  ctx.getDiagEngine().registerHandler([&](mlir::Diagnostic &diag) {
    kiln::breakProgressLine();
    std::string msg = diag.str();
    if (diag.getSeverity() != mlir::DiagnosticSeverity::Error) {
      if (diag.getSeverity() == mlir::DiagnosticSeverity::Warning)
        errs() << "kiln: warning: " << msg << "\n";
      return mlir::success();
    }
    // An op's own verifier knows the op, not the node: name it here.
    std::string node = kiln::nodeNameOf(diag.getLocation());
    if (!node.empty() && StringRef(msg).find("node \"") == StringRef::npos) {
      StringRef type = kiln::importedOpTypeOf(diag.getLocation(), node);
      msg = "node \"" + node + "\"" +
            (type.empty() ? "" : " (" + type.str() + ")") + ": " + msg;
    }
    if (!StringRef(msg).starts_with(options.inputPath))
      msg = options.inputPath + ": " + msg;
    errs() << "kiln: error: " << msg << "\n";
    for (const mlir::Diagnostic &note : diag.getNotes())
      errs() << "  note: " << note.str() << "\n";
    return mlir::success();
  });
  return kiln::compileModel(ctx, options, outs());
}
