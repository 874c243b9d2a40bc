//===- LowerPartitions.cpp - lower each partition with its provider -------===//
#include "dialects/kiln/KilnDialect.h"
#include "providers/Passes.h"
#include "providers/Provider.h"
#include "providers/cpu/Lowering.h"
#include "providers/cpu/OnnxToLinalg.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_LOWERPARTITIONS
#include "providers/Passes.h.inc"

namespace {

/// Sequence and optional arguments and results of a function become 0-D
/// i64 tensors, the slots that hold the runtime objects' handles
/// (model_abi.h); inside, the code works on the handle itself.
void handlesAtEntry(func::FuncOp func) {
  // The caller's inputs are read-only: bufferization must not update them in
  // place (a run-time Loop's carried value starts as an input).
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    func.setArgAttr(i, "bufferization.writable", BoolAttr::get(func.getContext(), false));
  Block &entry = func.front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  auto slot = RankedTensorType::get({}, b.getI64Type());
  for (BlockArgument a : entry.getArguments()) {
    if (!cpu::isSequenceValueType(a.getType()))
      continue;
    a.setType(slot);
    auto handle = b.create<tensor::ExtractOp>(func.getLoc(), a, ValueRange{});
    a.replaceAllUsesExcept(handle, handle);
  }
}

void handlesAtReturn(func::FuncOp func) {
  auto ret = cast<func::ReturnOp>(func.front().getTerminator());
  OpBuilder b(ret);
  auto slot = RankedTensorType::get({}, b.getI64Type());
  // (Boxes of tensors whose shape is known only at run time too.)
  for (auto [i, value] : llvm::enumerate(ret->getOperands()))
    if (value.getType().isInteger(64))
      ret->setOperand(i, b.create<tensor::FromElementsOp>(ret.getLoc(), slot, value));
  func.setFunctionType(FunctionType::get(func.getContext(), func.front().getArgumentTypes(),
                                         ret->getOperandTypes()));
}

struct LowerPartitionsPass
    : public impl::LowerPartitionsBase<LowerPartitionsPass> {
  void runOnOperation() override {
    registerBuiltinProviders();
    ModuleOp module = getOperation();
    Builder b(module.getContext());
    // Transfers mark where tensors cross; kiln-cuda-offload moves the
    // buffers after bufferization, so at tensor level they are identities.
    module.walk([&](TransferOp t) {
      t.getOutput().replaceAllUsesWith(t.getInput());
      t.erase();
    });
    cpu::makeSignless(module);
    SmallVector<func::FuncOp> funcs;
    for (auto f : module.getOps<func::FuncOp>())
      if (!f.isExternal())
        funcs.push_back(f);
    for (func::FuncOp f : funcs)
      handlesAtEntry(f);
    SmallVector<PartitionOp> partitions;
    module.walk([&](PartitionOp p) { partitions.push_back(p); });
    SmallVector<Attribute> infos;
    for (PartitionOp p : partitions) {
      const Provider *provider = lookupProvider(p.getProvider());
      if (!provider) {
        p.emitError() << "partition \"" << p.getSymName()
                      << "\": unknown provider \"" << p.getProvider() << "\"";
        return signalPassFailure();
      }
      SmallVector<NamedAttribute> info = {
          b.getNamedAttr("name", p.getSymNameAttr()),
          b.getNamedAttr("provider", p.getProviderAttr()),
          b.getNamedAttr("num_ops", b.getI64IntegerAttr(p.getNumBodyOps()))};
      for (StringRef key : {"kiln.bytes_in", "kiln.bytes_out"})
        if (Attribute a = p->getAttr(key))
          info.push_back(b.getNamedAttr(key.drop_front(5), a));
      infos.push_back(b.getDictionaryAttr(info));
      if (failed(provider->lowerPartition(p)))
        return signalPassFailure();
      // Host-compiled partitions run inline in the model's entry function.
      Block &body = p.getBody().front();
      auto yield = cast<YieldOp>(body.getTerminator());
      p->replaceAllUsesWith(yield.getValues());
      yield.erase();
      p->getBlock()->getOperations().splice(p->getIterator(), body.getOperations());
      p.erase();
    }
    for (func::FuncOp f : funcs)
      handlesAtReturn(f);
    module->setAttr("kiln.partitions", b.getArrayAttr(infos));
    // Checks made on tensors (graph-level decompositions) take the scalar.
    module.walk([&](CheckOp check) {
      if (!isa<TensorType>(check.getCondition().getType()))
        return;
      OpBuilder ob(check);
      check->setOperand(0, ob.create<tensor::ExtractOp>(check.getLoc(), check.getCondition(),
                                                        ValueRange{}));
    });
  }
};

} // namespace
} // namespace kiln
