//===- LowerPartitions.cpp - lower each partition with its provider -------===//
#include "dialects/kiln/KilnDialect.h"
#include "providers/Passes.h"
#include "providers/Provider.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_LOWERPARTITIONS
#include "providers/Passes.h.inc"

namespace {

struct LowerPartitionsPass
    : public impl::LowerPartitionsBase<LowerPartitionsPass> {
  void runOnOperation() override {
    registerBuiltinProviders();
    ModuleOp module = getOperation();
    Builder b(module.getContext());
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
      infos.push_back(b.getDictionaryAttr({
          b.getNamedAttr("name", p.getSymNameAttr()),
          b.getNamedAttr("provider", p.getProviderAttr()),
          b.getNamedAttr("num_ops", b.getI64IntegerAttr(p.getNumBodyOps())),
      }));
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
    module->setAttr("kiln.partitions", b.getArrayAttr(infos));
  }
};

} // namespace
} // namespace kiln
