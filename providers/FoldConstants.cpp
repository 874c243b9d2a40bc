//===- FoldConstants.cpp - evaluate constant sub-graphs with the CPU JIT --===//
//
// Constant folding that cannot disagree with the generated code: the ops
// are lowered by the CPU provider, bufferized and lowered to LLVM with the
// compiler's own pipelines (providers/cpu/Pipelines.h) and run once in the
// MLIR ExecutionEngine; their results become onnx.Constant ops.
//
// This pass lives in providers/ (not passes/) because it links the CPU
// lowering; passes/ only knows the provider registry.
//
//===----------------------------------------------------------------------===//
#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/Report.h"
#include "dialects/onnx/ShapeInference.h"
#include "providers/Passes.h"
#include "providers/cpu/OnnxToLinalg.h"
#include "providers/cpu/Pipelines.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/Support/TargetSelect.h"

#include <cstring>
#include <memory>

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_FOLDCONSTANTS
#include "providers/Passes.h.inc"

namespace {

bool isOnnx(Operation *op) {
  return op->getDialect() && op->getDialect()->getNamespace() == "onnx";
}

bool isConstantLike(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  StringRef n = def->getName().getStringRef();
  return n == "onnx.Constant" || n == "onnx.NoValue";
}

/// Bytes of a static tensor as the JIT stores it (i1 takes a byte).
std::optional<int64_t> storageBytes(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  if (!rt || !rt.hasStaticShape())
    return std::nullopt;
  Type e = rt.getElementType();
  if (!e.isIntOrFloat())
    return std::nullopt;
  int64_t width = (e.getIntOrFloatBitWidth() + 7) / 8;
  return rt.getNumElements() * width;
}

Operation *makeConstant(OpBuilder &b, Location loc, Attribute value, Type type) {
  OperationState st(loc, "onnx.Constant");
  st.addAttribute("value", value);
  st.addTypes(type);
  return b.create(st);
}

/// The data of a result buffer as an attribute of `type`: small tensors and
/// integers (shape inference reads those) inline, larger float tensors as
/// dense_resource blobs like the importer's initializers.
Attribute toAttr(RankedTensorType type, ArrayRef<char> data) {
  Type e = type.getElementType();
  if (e.isInteger(1)) {
    SmallVector<bool> bits;
    for (char c : data)
      bits.push_back(c != 0);
    return DenseElementsAttr::get(type, bits);
  }
  bool inlineIt = data.size() <= 64 || (isa<IntegerType>(e) && data.size() <= 65536);
  if (inlineIt || type.getNumElements() == 0)
    return DenseElementsAttr::getFromRawBuffer(type, data);
  return DenseResourceElementsAttr::get(
      type, "kiln_folded",
      HeapAsmResourceBlob::allocateAndCopyInferAlign(data));
}

/// Set by folded code when one of its kiln.checks fails (an index out of
/// range): that job's results are not used, its ops stay for run time.
thread_local bool foldCheckFailed = false;
extern "C" void kilnFoldCheckFailed() { foldCheckFailed = true; }
constexpr llvm::StringLiteral kFoldCheckFn = "kilnFoldCheckFailed";
constexpr llvm::StringLiteral kNoFoldAttr = "kiln.no_fold";

/// Each kiln.check of the lowered fold module calls kilnFoldCheckFailed
/// when its condition is false.
void lowerFoldChecks(ModuleOp module) {
  SmallVector<CheckOp> checks;
  module.walk([&](CheckOp c) { checks.push_back(c); });
  if (checks.empty())
    return;
  MLIRContext *ctx = module.getContext();
  OpBuilder mb(module.getBodyRegion());
  mb.create<func::FuncOp>(module.getLoc(), kFoldCheckFn,
                          FunctionType::get(ctx, {}, {}))
      .setPrivate();
  for (CheckOp check : checks) {
    OpBuilder b(check);
    Location l = check.getLoc();
    Value ok = check.getCondition();
    if (isa<TensorType>(ok.getType()))
      ok = b.create<tensor::ExtractOp>(l, ok, ValueRange{});
    Value failed =
        b.create<arith::XOrIOp>(l, ok, b.create<arith::ConstantIntOp>(l, 1, 1));
    auto ifOp = b.create<scf::IfOp>(l, failed, /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    b.create<func::CallOp>(l, kFoldCheckFn, TypeRange{}, ValueRange{});
    check.erase();
  }
}

struct Stats {
  int64_t ops = 0, constants = 0, bytes = 0, shapeOps = 0, rounds = 0, skipped = 0;
};

struct FoldConstantsPass : public impl::FoldConstantsBase<FoldConstantsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    Stats stats;
    bool changed = foldShapes(module, stats);
    for (unsigned round = 0; round < maxRounds; ++round) {
      if (changed)
        reinferShapes(module);
      // Re-inferred shapes may make more Shape/Size ops foldable even when
      // no op is left to evaluate.
      bool shapes = changed && foldShapes(module, stats);
      changed = foldRound(module, stats) || shapes;
      if (!changed)
        break;
      changed |= foldShapes(module, stats);
    }
    if (changed)
      reinferShapes(module);
    module.walk([](Operation *op) { op->removeAttr(kNoFoldAttr); });
    addReportCount(module, "fold-constants.ops", stats.ops + stats.shapeOps);
    addReportCount(module, "fold-constants.constants", stats.constants);
    addReportCount(module, "fold-constants.bytes", stats.bytes);
    addReportCount(module, "fold-constants.jit-runs", stats.rounds);
  }

  void reinferShapes(ModuleOp module) {
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      func.walk([](Operation *op) { (void)onnx::inferShapesFor(op); });
      Operation *ret = func.getBody().front().getTerminator();
      func.setFunctionType(FunctionType::get(
          func.getContext(), func.getArgumentTypes(), ret->getOperandTypes()));
    }
  }

  /// Shape and Size need only the static dimensions of their input.
  bool foldShapes(ModuleOp module, Stats &stats) {
    SmallVector<Operation *> done;
    module.walk([&](Operation *op) {
      StringRef n = op->getName().getStringRef();
      if (n != "onnx.Shape" && n != "onnx.Size")
        return;
      auto in = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
      if (!in)
        return;
      OpBuilder b(op);
      int64_t rank = in.getRank();
      Attribute value;
      RankedTensorType type;
      if (n == "onnx.Shape") {
        int64_t start = onnx::getIntAttr(op, "start", 0);
        int64_t end = onnx::getIntAttr(op, "end", rank);
        if (start < 0)
          start += rank;
        if (end < 0)
          end += rank;
        start = std::clamp<int64_t>(start, 0, rank);
        end = std::clamp<int64_t>(end, start, rank);
        SmallVector<int64_t> dims;
        for (int64_t i = start; i < end; ++i) {
          if (in.isDynamicDim(i))
            return;
          dims.push_back(in.getDimSize(i));
        }
        type = RankedTensorType::get({(int64_t)dims.size()}, b.getI64Type());
        value = DenseElementsAttr::get(type, ArrayRef<int64_t>(dims));
      } else {
        if (!in.hasStaticShape())
          return;
        type = RankedTensorType::get({}, b.getI64Type());
        value = DenseElementsAttr::get(type, ArrayRef<int64_t>{in.getNumElements()});
      }
      Operation *c = makeConstant(b, op->getLoc(), value, type);
      op->getResult(0).replaceAllUsesWith(c->getResult(0));
      done.push_back(op);
    });
    for (Operation *op : done)
      op->erase();
    stats.shapeOps += done.size();
    return !done.empty();
  }

  /// Ops of `block` computable at compile time, in program order.
  SmallVector<Operation *> collect(Block &block) {
    SmallVector<Operation *> set;
    llvm::DenseSet<Operation *> in;
    for (Operation &opRef : block) {
      Operation *op = &opRef;
      if (!isOnnx(op) || op->getNumRegions() != 0 || op->getNumOperands() == 0)
        continue;
      StringRef n = op->getName().getStringRef();
      if (n == "onnx.Constant" || n == "onnx.NoValue" || !isPure(op) ||
          op->hasAttr(kNoFoldAttr))
        continue;
      bool ok = llvm::all_of(op->getOperands(), [&](Value v) {
        return isConstantLike(v) || in.contains(v.getDefiningOp());
      });
      ok = ok && llvm::all_of(op->getResultTypes(), [&](Type t) {
             auto bytes = storageBytes(t);
             return bytes && *bytes <= maxBytes;
           });
      std::string why;
      if (!ok || cpu::callsRuntime(op) || !cpu::canLowerOnCpu(op, why))
        continue;
      set.push_back(op);
      in.insert(op);
    }
    return set;
  }

  /// One round: every function's foldable ops in one module, one JIT.
  bool foldRound(ModuleOp module, Stats &stats) {
    MLIRContext *ctx = module.getContext();
    struct Job {
      SmallVector<Operation *> ops;
      SmallVector<Value> outs;
    };
    SmallVector<Job> jobs;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      Job job;
      job.ops = collect(func.getBody().front());
      if (job.ops.empty())
        continue;
      llvm::DenseSet<Operation *> in(job.ops.begin(), job.ops.end());
      for (Operation *op : job.ops)
        for (Value r : op->getResults())
          if (llvm::any_of(r.getUsers(), [&](Operation *u) { return !in.contains(u); }))
            job.outs.push_back(r);
      jobs.push_back(std::move(job));
    }
    if (jobs.empty())
      return false;

    // Build @fold_N returning the needed values.
    OpBuilder b(ctx);
    Location loc = module.getLoc();
    OwningOpRef<ModuleOp> tmp = ModuleOp::create(loc);
    for (auto [i, job] : llvm::enumerate(jobs)) {
      b.setInsertionPointToEnd(tmp->getBody());
      SmallVector<Type> types;
      for (Value v : job.outs)
        types.push_back(v.getType());
      auto fn = b.create<func::FuncOp>(loc, "fold_" + std::to_string(i),
                                       FunctionType::get(ctx, {}, types));
      b.setInsertionPointToStart(fn.addEntryBlock());
      IRMapping map;
      for (Operation *op : job.ops) {
        for (Value v : op->getOperands())
          if (!map.contains(v))
            b.clone(*v.getDefiningOp(), map);
        b.clone(*op, map);
      }
      SmallVector<Value> rets;
      for (Value v : job.outs)
        rets.push_back(map.lookup(v));
      b.create<func::ReturnOp>(loc, rets);
    }

    // Lower and run; any failure leaves the graph as it is.
    std::vector<std::vector<std::unique_ptr<uint64_t[]>>> buffers;
    {
      ScopedDiagnosticHandler quiet(ctx, [](Diagnostic &) { return success(); });
      cpu::makeSignless(*tmp);
      if (failed(cpu::lowerOnnxToLinalg(*tmp))) {
        ++stats.skipped;
        return false;
      }
      lowerFoldChecks(*tmp);
      auto run = [&](const std::string &pipeline) {
        PassManager pm(ctx, ModuleOp::getOperationName());
        return succeeded(parsePassPipeline(pipeline, pm, llvm::nulls())) &&
               succeeded(pm.run(*tmp));
      };
      if (!run(std::string(cpu::kBufferizePipeline) + ",buffer-results-to-out-params")) {
        ++stats.skipped;
        return false;
      }
      cpu::stridedCopiesToLoops(*tmp, /*vectorRows=*/false);
      if (!run(cpu::kToLlvmPipeline)) {
        ++stats.skipped;
        return false;
      }
      llvm::InitializeNativeTarget();
      llvm::InitializeNativeTargetAsmPrinter();
      ExecutionEngineOptions opts;
      opts.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Less;
      auto engine = ExecutionEngine::create(*tmp, opts);
      if (!engine) {
        llvm::consumeError(engine.takeError());
        ++stats.skipped;
        return false;
      }
      (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
        llvm::orc::SymbolMap symbols;
        symbols[interner(kFoldCheckFn)] = {
            llvm::orc::ExecutorAddr::fromPtr(&kilnFoldCheckFailed),
            llvm::JITSymbolFlags::Exported};
        return symbols;
      });
      ++stats.rounds;
      for (auto [i, job] : llvm::enumerate(jobs)) {
        std::vector<std::unique_ptr<uint64_t[]>> bufs;
        SmallVector<void *> ptrs, args;
        for (Value v : job.outs) {
          int64_t bytes = *storageBytes(v.getType());
          bufs.emplace_back(new uint64_t[bytes / 8 + 1]());
          ptrs.push_back(bufs.back().get());
        }
        for (void *&p : ptrs)
          args.push_back(&p);
        foldCheckFailed = false;
        if (llvm::Error err =
                (*engine)->invokePacked("fold_" + std::to_string(i), args)) {
          llvm::consumeError(std::move(err));
          ++stats.skipped;
          return false;
        }
        // A failed check (a bad index): the ops run, and fail, at run time.
        if (foldCheckFailed) {
          for (Operation *op : job.ops)
            op->setAttr(kNoFoldAttr, UnitAttr::get(ctx));
          bufs.clear();
          ++stats.skipped;
        }
        buffers.push_back(std::move(bufs));
      }
    }

    // Replace the needed values, then drop the folded ops.
    bool folded = false;
    for (auto [job, bufs] : llvm::zip(jobs, buffers)) {
      if (bufs.empty() && !job.outs.empty())
        continue;
      folded = true;
      for (auto [v, buf] : llvm::zip(job.outs, bufs)) {
        auto type = cast<RankedTensorType>(v.getType());
        int64_t bytes = *storageBytes(type);
        Attribute attr = toAttr(
            type, ArrayRef<char>(reinterpret_cast<const char *>(buf.get()), bytes));
        OpBuilder ob(v.getDefiningOp());
        Operation *c = makeConstant(ob, v.getDefiningOp()->getLoc(), attr, type);
        v.replaceAllUsesWith(c->getResult(0));
        ++stats.constants;
        stats.bytes += bytes;
      }
      SmallVector<Operation *> inputs;
      for (Operation *op : job.ops)
        for (Value v : op->getOperands())
          if (isConstantLike(v))
            inputs.push_back(v.getDefiningOp());
      for (Operation *op : llvm::reverse(job.ops)) {
        op->dropAllUses();
        op->erase();
      }
      stats.ops += job.ops.size();
      llvm::DenseSet<Operation *> seen;
      for (Operation *op : inputs)
        if (seen.insert(op).second && op->use_empty())
          op->erase();
    }
    return folded;
  }
};

} // namespace
} // namespace kiln
