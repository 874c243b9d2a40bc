//===- PartitionPass.cpp - assign ops to providers ------------------------===//
#include "passes/NodeName.h"
#include "passes/Passes.h"
#include "providers/Provider.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_PARTITION
#include "passes/Passes.h.inc"

namespace {

bool isGraphOp(Operation *op) {
  return op->getDialect() && op->getDialect()->getNamespace() == "onnx";
}

struct PartitionPass : public impl::PartitionBase<PartitionPass> {
  using PartitionBase::PartitionBase;

  void runOnOperation() override {
    SmallVector<std::string> order(providers.begin(), providers.end());
    if (order.empty())
      order.push_back("cpu");
    SmallVector<const Provider *> chain;
    for (const std::string &name : order) {
      const Provider *p = lookupProvider(name);
      if (!p) {
        std::string known;
        for (const std::string &n : registeredProviderNames())
          known += (known.empty() ? "" : ", ") + n;
        getOperation().emitError() << "unknown provider \"" << name
                                   << "\" (known: " << known << ")";
        return signalPassFailure();
      }
      chain.push_back(p);
    }
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(partition(func, chain)))
        return signalPassFailure();
  }

  LogicalResult partition(func::FuncOp func, ArrayRef<const Provider *> chain) {
    Block &block = func.getBody().front();
    // 1. Assignment in priority order.
    SmallVector<std::pair<Operation *, const Provider *>> assigned;
    for (Operation &op : block.without_terminator()) {
      // Other ops stay where they are and end the current run, so that
      // moving a run into a partition never moves a use above its def.
      if (!isGraphOp(&op)) {
        assigned.push_back({&op, nullptr});
        continue;
      }
      const Provider *chosen = nullptr;
      std::string reasons;
      for (const Provider *p : chain) {
        std::string why;
        if (p->canRun(&op, why)) {
          chosen = p;
          break;
        }
        if (!reasons.empty())
          reasons += "; ";
        reasons += chain.size() > 1 ? (p->getName() + ": " + why).str() : why;
      }
      if (!chosen) {
        std::string names;
        for (const Provider *p : chain)
          names += (names.empty() ? "" : ", ") + p->getName().str();
        return emitNodeError(&op) << "not supported by provider " << names
                                  << ": " << reasons;
      }
      assigned.push_back({&op, chosen});
    }
    // 2. Runs of one provider become partitions. Program order is a
    // topological order, so consecutive grouping cannot create cycles.
    llvm::StringMap<int> counters;
    size_t i = 0;
    while (i < assigned.size()) {
      const Provider *p = assigned[i].second;
      if (!p) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < assigned.size() && assigned[j].second == p)
        ++j;
      SmallVector<Operation *> group;
      for (size_t k = i; k < j; ++k)
        group.push_back(assigned[k].first);
      wrap(group, p->getName(), counters[p->getName()]++);
      i = j;
    }
    return success();
  }

  void wrap(ArrayRef<Operation *> group, StringRef provider, int index) {
    llvm::SmallPtrSet<Operation *, 16> inGroup(group.begin(), group.end());
    llvm::SetVector<Value> escaping;
    for (Operation *op : group)
      for (Value r : op->getResults())
        for (OpOperand &use : r.getUses())
          if (!inGroup.contains(use.getOwner()))
            escaping.insert(r);
    OpBuilder b(group.front());
    SmallVector<Type> types;
    for (Value v : escaping)
      types.push_back(v.getType());
    std::string name = (provider + "_" + Twine(index)).str();
    auto part = b.create<PartitionOp>(group.front()->getLoc(), types,
                                      b.getStringAttr(name),
                                      b.getStringAttr(provider));
    Block *body = new Block();
    part.getBody().push_back(body);
    for (Operation *op : group)
      op->moveBefore(body, body->end());
    OpBuilder inner = OpBuilder::atBlockEnd(body);
    inner.create<YieldOp>(part.getLoc(), escaping.getArrayRef());
    for (auto [escaped, r] : llvm::zip(escaping, part.getResults())) {
      Value v = escaped;
      v.replaceUsesWithIf(r, [&](OpOperand &use) {
        return use.getOwner()->getParentOp() != part.getOperation() &&
               !part->isProperAncestor(use.getOwner());
      });
    }
  }
};

} // namespace
} // namespace kiln
