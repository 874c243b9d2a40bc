//===- OutlineLoops.cpp - kiln-outline-loops ------------------------------===//
//
// One function per top-level loop nest (see Passes.td for why).
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_OUTLINELOOPS
#include "passes/Passes.h.inc"

namespace {

/// Values a nest may take as arguments: scalars, and buffers the bare-pointer
/// calling convention can pass.
bool passable(Value v) {
  if (auto m = dyn_cast<MemRefType>(v.getType()))
    return m.hasStaticShape() && m.getLayout().isIdentity();
  return v.getType().isIntOrIndexOrFloat();
}

/// Ops cloned into the function instead of passed (loop bounds stay
/// constants there).
bool cloneable(Value v) {
  Operation *def = v.getDefiningOp();
  return def && def->hasTrait<OpTrait::ConstantLike>();
}

struct OutlineLoopsPass : public impl::OutlineLoopsBase<OutlineLoopsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      if (func.isDeclaration() || func->hasAttr("kiln.outlined"))
        continue;
      int64_t next = 0;
      for (Operation &op : llvm::make_early_inc_range(func.getBody().front()))
        if (isa<scf::ForOp, scf::ParallelOp>(op))
          outline(func, &op, next);
    }
  }

  void outline(func::FuncOp func, Operation *nest, int64_t &next) {
    // Device code stays where gpu-to-llvm expects it.
    bool device = false;
    nest->walk([&](Operation *op) {
      if (op->getDialect() && op->getDialect()->getNamespace() == "gpu")
        device = true;
    });
    if (device)
      return;
    llvm::SetVector<Value> used;
    for (Value v : nest->getOperands())
      used.insert(v);
    getUsedValuesDefinedAbove(nest->getRegions(), used);
    SmallVector<Value> args;
    for (Value v : used) {
      if (cloneable(v))
        continue;
      if (!passable(v))
        return;
      args.push_back(v);
    }
    OpBuilder b(func);
    b.setInsertionPointToEnd(func->getParentOfType<ModuleOp>().getBody());
    SmallVector<Type> argTypes;
    for (Value v : args)
      argTypes.push_back(v.getType());
    std::string name = (func.getSymName() + "_loop" + std::to_string(next++)).str();
    auto outlined = b.create<func::FuncOp>(nest->getLoc(), name,
                                           b.getFunctionType(argTypes, nest->getResultTypes()));
    outlined.setPrivate();
    outlined->setAttr("kiln.outlined", b.getUnitAttr());
    // Carried to the llvm.func by convert-func-to-llvm: LLVM would inline
    // the one call back.
    outlined->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("noinline")}));
    Block *entry = outlined.addEntryBlock();
    OpBuilder fb = OpBuilder::atBlockBegin(entry);
    IRMapping map;
    for (auto [v, arg] : llvm::zip(args, entry->getArguments()))
      map.map(v, arg);
    for (Value v : used)
      if (cloneable(v))
        map.map(v, fb.clone(*v.getDefiningOp())->getResult(0));
    Operation *copy = fb.clone(*nest, map);
    fb.create<func::ReturnOp>(nest->getLoc(), copy->getResults());
    OpBuilder cb(nest);
    auto call = cb.create<func::CallOp>(nest->getLoc(), outlined, args);
    nest->replaceAllUsesWith(call.getResults());
    nest->erase();
  }
};

} // namespace
} // namespace kiln
