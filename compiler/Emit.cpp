//===- Emit.cpp - LLVM IR, descriptor and object code ---------------------===//
//
// The lowered module is translated to LLVM IR in process; kiln adds the
// C-ABI model descriptor (model_abi.h) and a `void(void**, void**, void*)`
// entry per partition around the bare-pointer entry function, then runs
// LLVM's O3 pipeline and the host (or chosen) TargetMachine.
//
//===----------------------------------------------------------------------===//

#include "compiler/Emit.h"
#include "compiler/ParallelTasks.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/TargetTransformInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/Utils/LoopUtils.h"

#include "dialects/onnx/DataTypes.h"
#include "dialects/onnx/OnnxDialect.h"
#include "kiln/model_abi.h"

using namespace mlir;

namespace kiln {


LogicalResult captureSignature(ModuleOp module, StringRef name,
                               StringRef entrySuffix, ModelSignature &sig) {
  auto func = module.lookupSymbol<func::FuncOp>("main");
  if (!func)
    return module.emitError("no @main function to compile");
  sig.name = name.str();
  sig.entryName = "__kiln_" + name.str() + "_main" + entrySuffix.str();
  auto bounds = module->getAttrOfType<DictionaryAttr>("kiln.runtime_sizes");
  sig.runtimeSizes = static_cast<bool>(bounds);
  if (bounds) {
    if (auto names = func->getAttrOfType<ArrayAttr>("kiln.dim_symbols"))
      for (Attribute a : names)
        sig.symbols.push_back(cast<StringAttr>(a).str());
    for (const std::string &s : sig.symbols) {
      auto max = bounds.getAs<IntegerAttr>(s);
      sig.symbolMax.push_back(max ? max.getInt() : 0);
    }
    sig.dimNames = sig.symbols;
    for (NamedAttribute b : bounds)
      if (!llvm::is_contained(sig.symbols, b.getName().str()))
        return func.emitError() << "--dim-max " << b.getName().getValue()
                                << ": the model has no symbolic dimension of that name";
  }
  auto describe = [&](Type type, StringAttr onnxName, int index, bool isInput,
                      TensorSignature &out) -> LogicalResult {
    out.name = onnxName ? onnxName.str()
                        : (isInput ? "input_" : "output_") + std::to_string(index);
    // A sequence or optional is described by its elements.
    if (auto opt = dyn_cast<onnx::OptType>(type)) {
      type = opt.getElementType();
      out.kind = KILN_VALUE_OPTIONAL;
    }
    if (auto seq = dyn_cast<onnx::SeqType>(type)) {
      type = seq.getElementType();
      out.kind = out.kind ? KILN_VALUE_OPTIONAL_SEQUENCE : KILN_VALUE_SEQUENCE;
    }
    auto t = dyn_cast<TensorType>(type);
    // An output whose shape only the data decides (NonZero, Unique, ...)
    // comes back in a box; the CPU provider accepted it as one.
    // (Run-time sizes: an output the shape function sizes is a tensor.)
    bool sized = sig.runtimeSizes && (isInput || func.getResultAttr(index, "kiln.dim_sizes"));
    if (t && !out.kind && !isInput && !sized && !(t.hasRank() && t.hasStaticShape()))
      out.kind = KILN_VALUE_DYNAMIC;
    if (!t || (!out.kind && !sized && !t.hasStaticShape()))
      return func.emitError() << (isInput ? "input " : "output ") << index
                              << " needs a static shape, got " << type;
    // KILN_DTYPE_* are ONNX's data type numbers.
    out.dtype = static_cast<int>(onnx::dtypeOfElementType(t.getElementType()));
    if (!out.dtype)
      return func.emitError() << "unsupported element type " << t.getElementType();
    out.ranked = t.hasRank();
    if (out.ranked)
      for (int64_t d : t.getShape())
        out.shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
    return success();
  };
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    TensorSignature t;
    if (failed(describe(func.getArgumentTypes()[i],
                        func.getArgAttrOfType<StringAttr>(i, "onnx.name"), i, true, t)))
      return failure();
    if (sig.runtimeSizes) {
      auto bind = func.getArgAttrOfType<DenseI32ArrayAttr>(i, "kiln.dim_symbols");
      for (size_t d = 0; d < t.shape.size(); ++d) {
        int32_t sym = bind && d < bind.size() ? bind[d] : -1;
        sig.inputDimSymbols.push_back(sym);
        t.symbolic.push_back({sym, 1, 0});
      }
    }
    sig.inputs.push_back(t);
  }
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    TensorSignature t;
    if (failed(describe(func.getResultTypes()[i],
                        func.getResultAttrOfType<StringAttr>(i, "onnx.name"), i, false, t)))
      return failure();
    if (auto text = func.getResultAttrOfType<ArrayAttr>(i, "kiln.dim_text"))
      for (auto [d, a] : llvm::enumerate(text)) {
        StringRef e = cast<StringAttr>(a).getValue();
        t.dimText.push_back(e.empty() && d < t.shape.size() ? std::to_string(t.shape[d])
                                                            : e.str());
      }
    if (auto sizes = func.getResultAttrOfType<DenseI64ArrayAttr>(i, "kiln.dim_sizes")) {
      llvm::append_range(sig.outputSizes, sizes.asArrayRef());
      // One program per dynamic dim, each ended by KILN_SIZE_END.
      ArrayRef<int64_t> rest = sizes.asArrayRef();
      for (int64_t d : t.shape) {
        t.sizePrograms.emplace_back();
        if (d >= 0)
          continue;
        while (rest.size() >= 2 && rest[0] != KILN_SIZE_END) {
          t.sizePrograms.back().push_back(rest[0]);
          t.sizePrograms.back().push_back(rest[1]);
          rest = rest.drop_front(2);
        }
        rest = rest.drop_front(std::min<size_t>(2, rest.size()));
      }
    }
    sig.outputs.push_back(t);
  }
  if (auto parts = module->getAttrOfType<ArrayAttr>("kiln.partitions")) {
    for (Attribute a : parts) {
      auto d = cast<DictionaryAttr>(a);
      sig.partitions.push_back({cast<StringAttr>(d.get("name")).str(),
                                cast<StringAttr>(d.get("provider")).str(),
                                cast<IntegerAttr>(d.get("num_ops")).getInt()});
    }
  }
  // The names now live in the signature; LLVM has no use for them.
  func.setAllArgAttrs(ArrayRef<DictionaryAttr>{});
  func.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
  func.setSymName(sig.entryName);
  return success();
}

namespace {

/// Builds the descriptor globals of model_abi.h in `m`.
class DescriptorBuilder {
public:
  DescriptorBuilder(llvm::Module &m, const std::string &modelName, const std::string &targetCpu)
      : m(m), ctx(m.getContext()), modelName(modelName), targetCpu(targetCpu), b(ctx) {
    ptrTy = llvm::PointerType::get(ctx, 0);
    i32 = llvm::Type::getInt32Ty(ctx);
    i64 = llvm::Type::getInt64Ty(ctx);
    tensorInfoTy = llvm::StructType::create(ctx, {ptrTy, i32, i32, ptrTy}, "kiln_tensor_info");
    partitionTy = llvm::StructType::create(ctx, {ptrTy, ptrTy, i32, ptrTy}, "kiln_partition_info");
    modelTy = llvm::StructType::create(
        ctx, {i32, ptrTy, ptrTy, i32, ptrTy, i32, ptrTy, i64, i64, i32, ptrTy,
              i32, i32, ptrTy, i64, i32, ptrTy, ptrTy, ptrTy, i32, ptrTy, i64, ptrTy, ptrTy,
              i32, ptrTy, i32, ptrTy, ptrTy, i32, ptrTy, ptrTy, i64, ptrTy, ptrTy},
        "kiln_model_info");
  }

  /// A `void(void**, void**, void*)` entry around the bare-pointer entry
  /// function of one variant.
  llvm::Function *wrapEntry(const ModelSignature &variant) {
    llvm::Function *impl = m.getFunction(variant.entryName);
    if (!impl)
      return nullptr;
    impl->setLinkage(llvm::GlobalValue::InternalLinkage);
    size_t numArgs = variant.inputs.size() + variant.outputs.size() + 1;
    if (impl->arg_size() != numArgs) {
      llvm::errs() << "kiln: internal error: entry takes " << impl->arg_size()
                   << " arguments, expected " << numArgs << "\n";
      return nullptr;
    }
    auto *entryTy = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx),
                                            {ptrTy, ptrTy, ptrTy}, false);
    auto *entry = llvm::Function::Create(entryTy, llvm::GlobalValue::InternalLinkage,
                                         variant.entryName + "_run", m);
    b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", entry));
    std::vector<llvm::Value *> args;
    auto loadPtr = [&](llvm::Value *array, size_t i) {
      llvm::Value *slot = b.CreateConstGEP1_64(ptrTy, array, i);
      return b.CreateLoad(ptrTy, slot);
    };
    for (size_t i = 0; i < variant.inputs.size(); ++i)
      args.push_back(loadPtr(entry->getArg(0), i));
    for (size_t i = 0; i < variant.outputs.size(); ++i)
      args.push_back(loadPtr(entry->getArg(1), i));
    args.push_back(entry->getArg(2));
    b.CreateCall(impl, args);
    b.CreateRetVoid();
    return entry;
  }

  /// One partition record for a variant whose partitions run inline in its
  /// entry: named after them, with the first non-CPU provider if any.
  llvm::Constant *partitionsFor(const ModelSignature &variant, llvm::Function *entry,
                                const std::string &prefix) {
    std::string provider = "cpu", names;
    int64_t totalOps = 0;
    for (const auto &p : variant.partitions) {
      totalOps += p.numOps;
      names += (names.empty() ? "" : "+") + p.name;
      if (p.provider != "cpu")
        provider = p.provider;
    }
    if (names.empty())
      names = "cpu_0";
    std::vector<llvm::Constant *> parts = {llvm::ConstantStruct::get(
        partitionTy, {str(names, prefix + "pname"), str(provider, prefix + "pprov"),
                      llvm::ConstantInt::get(i32, totalOps), entry})};
    return global(
        llvm::ConstantArray::get(llvm::ArrayType::get(partitionTy, parts.size()), parts),
        prefix + "partitions");
  }

  /// The kiln_model_info of one compiled shape; `tag` keeps the globals of
  /// shape variants apart.
  llvm::Constant *shapeInfo(const CompiledShape &shape, uint32_t flags, const std::string &tag) {
    const ModelSignature &sig = *shape.signature;
    auto arenaOf = [](ModuleOp mod) -> uint64_t {
      if (!mod)
        return 0;
      if (auto a = mod->getAttrOfType<IntegerAttr>("kiln.arena_size"))
        return a.getInt();
      return 0;
    };
    llvm::Function *entry = wrapEntry(sig);
    llvm::Function *fallbackEntry =
        shape.fallbackSignature ? wrapEntry(*shape.fallbackSignature) : nullptr;
    llvm::Function *deviceIOEntry =
        shape.deviceIOSignature ? wrapEntry(*shape.deviceIOSignature) : nullptr;
    if (!entry || (shape.fallbackSignature && !fallbackEntry) ||
        (shape.deviceIOSignature && !deviceIOEntry))
      return nullptr;
    std::string prefix = "__kiln_" + modelName + "_" + tag;
    Parts parts;
    parts.count = 1;
    parts.array = partitionsFor(sig, entry, prefix);
    parts.arena = arenaOf(shape.module);
    if (fallbackEntry) {
      parts.fallbackCount = 1;
      parts.fallback = partitionsFor(*shape.fallbackSignature, fallbackEntry, prefix + "fb_");
      parts.fallbackArena = arenaOf(shape.fallback);
      parts.required = KILN_PROVIDER_CUDA;
    }
    if (deviceIOEntry) {
      parts.deviceIOCount = 1;
      parts.deviceIO = partitionsFor(*shape.deviceIOSignature, deviceIOEntry, prefix + "dio_");
      parts.deviceIOArena = arenaOf(shape.deviceIO);
    }
    return info(sig, parts, flags, prefix, {});
  }

  /// The kiln_model_info callers see of a model compiled once per shape.
  llvm::Constant *variantsInfo(const ModelSignature &top, ArrayRef<llvm::Constant *> variants,
                               uint32_t flags) {
    return info(top, Parts(), flags | KILN_MODEL_SHAPE_VARIANTS, "__kiln_" + modelName + "_",
                variants);
  }

  /// `kiln_model_<name>()` and its fixed-name alias, returning `model`.
  void getter(llvm::Constant *model) {
    auto *getterTy = llvm::FunctionType::get(ptrTy, {}, false);
    auto *fn = llvm::Function::Create(getterTy, llvm::GlobalValue::ExternalLinkage,
                                      "kiln_model_" + modelName, m);
    b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", fn));
    b.CreateRet(model);
    // The fixed-name alias lets a generic loader dlsym any model library;
    // weak so that apps may link several models statically.
    llvm::GlobalAlias::create(getterTy, 0, llvm::GlobalValue::WeakAnyLinkage,
                              KILN_MODEL_ENTRY_SYMBOL, fn, &m);
  }

private:
  /// The partition lists of one info; all empty for a shape-variant model.
  struct Parts {
    int32_t count = 0, fallbackCount = 0, deviceIOCount = 0;
    llvm::Constant *array = nullptr, *fallback = nullptr, *deviceIO = nullptr;
    uint64_t arena = 0, fallbackArena = 0, deviceIOArena = 0;
    uint32_t required = 0;
  };

  llvm::Constant *info(const ModelSignature &sig, const Parts &parts, uint32_t flags,
                       const std::string &prefix, ArrayRef<llvm::Constant *> variants) {
    auto orNull = [&](llvm::Constant *c) { return c ? c : llvm::ConstantPointerNull::get(ptrTy); };
    llvm::Constant *inputs = tensorArray(sig.inputs, prefix + "in");
    llvm::Constant *outputs = tensorArray(sig.outputs, prefix + "out");
    llvm::Constant *variantArray = nullptr, *dimNames = nullptr;
    if (!variants.empty()) {
      variantArray = global(
          llvm::ConstantArray::get(llvm::ArrayType::get(ptrTy, variants.size()), variants),
          prefix + "variants");
      std::vector<llvm::Constant *> names;
      for (const std::string &n : sig.dimNames)
        names.push_back(str(n, prefix + "dim_" + n));
      dimNames = global(llvm::ConstantArray::get(llvm::ArrayType::get(ptrTy, names.size()), names),
                        prefix + "dim_names");
    }
    llvm::Constant *model = llvm::ConstantStruct::get(
        modelTy,
        {llvm::ConstantInt::get(i32, KILN_ABI_VERSION), str(sig.name, prefix + "name"),
         str("kiln 0.1.0", prefix + "producer"),
         llvm::ConstantInt::get(i32, sig.inputs.size()), inputs,
         llvm::ConstantInt::get(i32, sig.outputs.size()), outputs,
         llvm::ConstantInt::get(i64, parts.arena), llvm::ConstantInt::get(i64, 64),
         llvm::ConstantInt::get(i32, parts.count), orNull(parts.array),
         llvm::ConstantInt::get(i32, parts.required),
         llvm::ConstantInt::get(i32, parts.fallbackCount), orNull(parts.fallback),
         llvm::ConstantInt::get(i64, parts.fallbackArena),
         llvm::ConstantInt::get(i32, flags | (sig.runtimeSizes ? KILN_MODEL_RUNTIME_SIZES : 0)),
         // (ABI 4's per-sample batch axes and name: no longer made.)
         llvm::ConstantPointerNull::get(ptrTy), llvm::ConstantPointerNull::get(ptrTy),
         llvm::ConstantPointerNull::get(ptrTy),
         llvm::ConstantInt::get(i32, parts.deviceIOCount), orNull(parts.deviceIO),
         llvm::ConstantInt::get(i64, parts.deviceIOArena), kinds(sig.inputs, prefix + "in_kinds"),
         kinds(sig.outputs, prefix + "out_kinds"),
         llvm::ConstantInt::get(i32, variants.size()), orNull(variantArray),
         llvm::ConstantInt::get(i32, variants.empty() ? 0 : sig.dimNames.size()),
         orNull(dimNames), str(targetCpu, prefix + "target_cpu"),
         llvm::ConstantInt::get(i32, sig.symbols.size()), symbolNames(sig, prefix),
         intArray<uint32_t>(sig.inputDimSymbols, prefix + "in_symbols"),
         llvm::ConstantInt::get(i64, sig.outputSizes.size()),
         intArray<uint64_t>(sig.outputSizes, prefix + "out_sizes"),
         intArray<uint64_t>(sig.symbolMax, prefix + "symbol_max")});
    return global(model, prefix + "model");
  }

  llvm::Constant *symbolNames(const ModelSignature &sig, const std::string &prefix) {
    if (sig.symbols.empty())
      return llvm::ConstantPointerNull::get(ptrTy);
    std::vector<llvm::Constant *> names;
    for (auto [i, n] : llvm::enumerate(sig.symbols))
      names.push_back(str(n, prefix + "symbol" + std::to_string(i)));
    return global(llvm::ConstantArray::get(llvm::ArrayType::get(ptrTy, names.size()), names),
                  prefix + "symbols");
  }
  /// A constant integer array, or NULL when empty.
  template <typename T, typename V>
  llvm::Constant *intArray(const std::vector<V> &values, const std::string &name) {
    if (values.empty())
      return llvm::ConstantPointerNull::get(ptrTy);
    std::vector<T> data(values.begin(), values.end());
    return global(llvm::ConstantDataArray::get(ctx, data), name);
  }

  llvm::Constant *global(llvm::Constant *init, const std::string &name) {
    return new llvm::GlobalVariable(m, init->getType(), /*isConstant=*/true,
                                    llvm::GlobalValue::PrivateLinkage, init, name);
  }
  llvm::Constant *str(const std::string &s, const std::string &name) {
    return global(llvm::ConstantDataArray::getString(ctx, s), name);
  }
  /// KILN_VALUE_* per input/output; NULL when all are tensors.
  llvm::Constant *kinds(const std::vector<TensorSignature> &ts, const std::string &name) {
    if (llvm::all_of(ts, [](const TensorSignature &t) { return t.kind == KILN_VALUE_TENSOR; }))
      return llvm::ConstantPointerNull::get(ptrTy);
    std::vector<uint32_t> kinds;
    for (const TensorSignature &t : ts)
      kinds.push_back(static_cast<uint32_t>(t.kind));
    return global(llvm::ConstantDataArray::get(ctx, kinds), name);
  }
  llvm::Constant *tensorArray(const std::vector<TensorSignature> &ts,
                              const std::string &name) {
    std::vector<llvm::Constant *> elems;
    for (size_t i = 0; i < ts.size(); ++i) {
      std::vector<uint64_t> dims(ts[i].shape.begin(), ts[i].shape.end());
      llvm::Constant *shape =
          dims.empty() ? llvm::ConstantPointerNull::get(ptrTy)
                       : global(llvm::ConstantDataArray::get(ctx, dims),
                                name + std::to_string(i) + "_shape");
      elems.push_back(llvm::ConstantStruct::get(
          tensorInfoTy, {str(ts[i].name, name + std::to_string(i) + "_name"),
                         llvm::ConstantInt::get(i32, ts[i].dtype),
                         llvm::ConstantInt::get(i32, ts[i].ranked ? (int64_t)dims.size() : -1),
                         shape}));
    }
    if (elems.empty())
      return llvm::ConstantPointerNull::get(ptrTy);
    return global(llvm::ConstantArray::get(llvm::ArrayType::get(tensorInfoTy, elems.size()), elems),
                  name);
  }

  llvm::Module &m;
  llvm::LLVMContext &ctx;
  std::string modelName, targetCpu;
  llvm::IRBuilder<> b;
  llvm::PointerType *ptrTy;
  llvm::Type *i32, *i64;
  llvm::StructType *tensorInfoTy, *partitionTy, *modelTy;
};

std::unique_ptr<llvm::TargetMachine> createTargetMachine(StringRef cpuName,
                                                         std::string &triple) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  triple = llvm::sys::getDefaultTargetTriple();
  std::string err;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, err);
  if (!target) {
    llvm::errs() << "kiln: error: no target for " << triple << ": " << err << "\n";
    return nullptr;
  }
  std::string cpu = cpuName.str(), features;
  if (cpu.empty() || cpu == "native") {
    cpu = llvm::sys::getHostCPUName().str();
    // A CPU this LLVM does not know gets portable AVX2-era code.
    if (cpu.empty() || cpu == "generic") {
      llvm::errs() << "kiln: warning: unknown host CPU, generating code for x86-64-v3\n";
      cpu = "x86-64-v3";
    }
    for (auto &f : llvm::sys::getHostCPUFeatures())
      if (cpu != "x86-64-v3")
        features += (features.empty() ? "" : ",") + std::string(f.second ? "+" : "-") +
                  f.first().str();
  }
  llvm::TargetOptions opts;
  auto *tm = target->createTargetMachine(triple, cpu, features, opts,
                                         llvm::Reloc::PIC_, std::nullopt,
                                         llvm::CodeGenOptLevel::Aggressive);
  if (!tm || !tm->getMCSubtargetInfo()->isCPUStringValid(cpu)) {
    llvm::errs() << "kiln: error: unknown --target-cpu \"" << cpu << "\"\n";
    delete tm;
    return nullptr;
  }
  return std::unique_ptr<llvm::TargetMachine>(tm);
}

/// The vector register width the CPU provider tiles for.
int64_t registerBits(llvm::TargetMachine *tm) {
  return tm->getMCSubtargetInfo()->checkFeatures("+avx512f") ? 512 : 256;
}

/// Keeps register-tiled loops rolled: a matmul's k loop holds its whole
/// accumulator tile in vector registers, and when that is more than half of
/// them, the partial unrolling the target asks for interleaves two
/// iterations past the register file (an AVX2 6 x 16 tile spilled in its k
/// loop and ran 40% slower; a 4 x 16 one ran 6% faster unrolled).
void keepRegisterTilesRolled(llvm::Module &m, llvm::TargetMachine *tm) {
  for (llvm::Function &f : m) {
    if (f.isDeclaration())
      continue;
    // (The register width, not the preferred vector width: CPUs with
    // AVX-512 prefer 256-bit vectors, but kiln's tiles use all 512.)
    llvm::TargetTransformInfo tti = tm->getTargetTransformInfo(f);
    uint64_t half =
        tti.getNumberOfRegisters(tti.getRegisterClassForType(true)) *
        registerBits(tm) / 2;
    llvm::DominatorTree dt(f);
    llvm::LoopInfo li(dt);
    for (llvm::Loop *l : li.getLoopsInPreorder()) {
      if (!l->isInnermost())
        continue;
      uint64_t bits = 0; // accumulated by the loop's vector multiply-adds
      for (llvm::BasicBlock *bb : l->blocks())
        for (llvm::Instruction &i : *bb)
          if (auto *c = llvm::dyn_cast<llvm::IntrinsicInst>(&i);
              c && c->getType()->isVectorTy() &&
              (c->getIntrinsicID() == llvm::Intrinsic::fma ||
               c->getIntrinsicID() == llvm::Intrinsic::fmuladd ||
               c->getIntrinsicID() == llvm::Intrinsic::x86_avx512_vpdpbusd_512))
            bits += c->getType()->getPrimitiveSizeInBits().getFixedValue();
      // (A value of 0 would read as "unrolling not disabled".)
      if (bits > half)
        llvm::addStringMetadataToLoop(l, "llvm.loop.unroll.disable", 1);
    }
  }
}

void optimize(llvm::Module &m, llvm::TargetMachine *tm) {
  keepRegisterTilesRolled(m, tm);
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(m, mam);
}

} // namespace

int64_t targetVectorBits(StringRef cpuName) {
  std::string triple;
  auto tm = createTargetMachine(cpuName, triple);
  return tm ? registerBits(tm.get()) : 256;
}

/// Whether --target-cpu has all of `features` ("+a,+b"), at `bits`-wide
/// vector registers if given.
static bool targetHas(StringRef cpuName, StringRef features, int64_t bits = 0) {
  std::string triple;
  auto tm = createTargetMachine(cpuName, triple);
  return tm && (!bits || registerBits(tm.get()) == bits) &&
         tm->getMCSubtargetInfo()->checkFeatures(features);
}

bool targetHasVnni(StringRef cpuName) {
  return targetHas(cpuName, "+avx512vnni", 512);
}

bool targetHasAvx2(StringRef cpuName) { return targetHas(cpuName, "+avx2"); }

bool targetHasVbmi(StringRef cpuName) {
  return targetHas(cpuName, "+avx512vbmi", 512);
}

bool targetHasAmx(StringRef cpuName) {
  return targetHas(cpuName, "+amx-tile,+amx-int8");
}

std::optional<std::string> emitObject(ArrayRef<CompiledShape> shapes,
                                      const ModelSignature &top,
                                      const EmitOptions &options,
                                      llvm::raw_ostream *printLlvm) {
  std::string triple;
  auto tm = createTargetMachine(options.targetCpu, triple);
  if (!tm)
    return std::nullopt;
  llvm::LLVMContext llctx;
  std::unique_ptr<llvm::Module> llmod;
  for (const CompiledShape &shape : shapes)
    for (ModuleOp variant : {shape.module, shape.fallback, shape.deviceIO}) {
      if (!variant)
        continue;
      auto other = translateModuleToLLVMIR(variant, llctx, top.name);
      if (!other) {
        variant.emitError("translation to LLVM IR failed");
        return std::nullopt;
      }
      other->setTargetTriple(triple);
      other->setDataLayout(tm->createDataLayout());
      if (!llmod) {
        llmod = std::move(other);
        continue;
      }
      // Private globals of the variants (weights) are renamed on clash.
      if (llvm::Linker::linkModules(*llmod, std::move(other))) {
        llvm::errs() << "kiln: internal error: cannot link a model variant\n";
        return std::nullopt;
      }
    }
  // Nothing compares the addresses of weights: marking private constants
  // unnamed_addr lets LLVM's constant merging keep one copy of each weight
  // shared by the CUDA and CPU variants and by all shape variants.
  for (llvm::GlobalVariable &g : llmod->globals())
    if (g.isConstant() && g.hasLocalLinkage())
      g.setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  auto hasChecks = [](ModuleOp m) { return m && m->hasAttr("kiln.checks"); };
  auto hasHooks = [](ModuleOp m) { return m && m->hasAttr("kiln.profile_hooks"); };
  auto hasAmx = [](ModuleOp m) { return m && m->hasAttr(kAmxTilesAttr); };
  DescriptorBuilder descriptor(*llmod, top.name, tm->getTargetCPU().str());
  std::vector<llvm::Constant *> infos;
  for (auto [index, shape] : llvm::enumerate(shapes)) {
    uint32_t flags =
        (hasChecks(shape.module) ? KILN_MODEL_CHECKS : 0) |
        (hasChecks(shape.fallback) ? KILN_MODEL_FALLBACK_CHECKS : 0) |
        (hasChecks(shape.deviceIO) ? KILN_MODEL_DEVICE_IO_CHECKS : 0) |
        (hasHooks(shape.module) ? KILN_MODEL_PROFILE_HOOKS : 0) |
        (hasHooks(shape.fallback) ? KILN_MODEL_FALLBACK_PROFILE_HOOKS : 0) |
        (hasHooks(shape.deviceIO) ? KILN_MODEL_DEVICE_IO_PROFILE_HOOKS : 0) |
        (hasAmx(shape.module) || hasAmx(shape.fallback) ||
                 hasAmx(shape.deviceIO)
             ? KILN_MODEL_AMX_TILES
             : 0);
    llvm::Constant *info =
        descriptor.shapeInfo(shape, flags, shapes.size() > 1 ? "v" + std::to_string(index) + "_" : "");
    if (!info)
      return std::nullopt;
    infos.push_back(info);
  }
  descriptor.getter(shapes.size() > 1 ? descriptor.variantsInfo(top, infos, 0) : infos.front());
  lowerParallelTaskCalls(*llmod);
  if (llvm::verifyModule(*llmod, &llvm::errs())) {
    llvm::errs() << "kiln: internal error: invalid LLVM IR\n";
    return std::nullopt;
  }
  optimize(*llmod, tm.get());
  if (printLlvm) {
    llmod->print(*printLlvm, nullptr);
    return std::string();
  }
  llvm::SmallVector<char, 0> object;
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager cg;
  if (tm->addPassesToEmitFile(cg, os, nullptr, llvm::CodeGenFileType::ObjectFile)) {
    llvm::errs() << "kiln: error: the target cannot emit object files\n";
    return std::nullopt;
  }
  cg.run(*llmod);
  return std::string(object.begin(), object.end());
}

} // namespace kiln
