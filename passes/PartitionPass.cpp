//===- PartitionPass.cpp - assign ops to providers ------------------------===//
//
// 1. Each onnx op goes to the first provider (priority order) whose
//    capability query accepts it, unless a --provider-assignment file pins
//    its node name or op type.
// 2. Small device islands (whose results are smaller than a threshold, in
//    elements) go back to the CPU: a transfer would cost more than the work,
//    the rule ONNX Runtime applies to its CPU-preferred nodes.
// 3. Consecutive ops of one provider become a kiln.partition; values that
//    cross between providers with different memories get one kiln.transfer
//    per tensor and direction, shared by all consumers.
//
//===----------------------------------------------------------------------===//
#include "passes/NodeName.h"
#include "passes/Passes.h"
#include "providers/Provider.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <map>

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_PARTITION
#include "passes/Passes.h.inc"

namespace {

bool isGraphOp(Operation *op) {
  return op->getDialect() && op->getDialect()->getNamespace() == "onnx";
}

int64_t byteSize(Type t) {
  auto st = dyn_cast<RankedTensorType>(t);
  if (!st || !st.hasStaticShape() || !st.getElementType().isIntOrFloat())
    return 0;
  return st.getNumElements() * ((st.getElementTypeBitWidth() + 7) / 8);
}

/// Node-name and op-type pins read from --provider-assignment.
struct Pins {
  llvm::StringMap<std::string> nodes, opTypes;
};

FailureOr<Pins> readPins(StringRef path, Operation *anchor) {
  Pins pins;
  if (path.empty())
    return pins;
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return anchor->emitError() << "cannot read provider assignment \"" << path
                               << "\": " << buffer.getError().message();
  auto json = llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return anchor->emitError() << "provider assignment \"" << path
                               << "\": " << llvm::toString(json.takeError());
  const llvm::json::Object *root = json->getAsObject();
  if (!root)
    return anchor->emitError() << "provider assignment \"" << path
                               << "\": expected an object with \"nodes\" and/or \"op_types\"";
  for (auto [key, into] : {std::pair<const char *, llvm::StringMap<std::string> *>{"nodes", &pins.nodes},
                           {"op_types", &pins.opTypes}}) {
    const llvm::json::Object *map = root->getObject(key);
    if (!map)
      continue;
    for (const auto &kv : *map) {
      auto provider = kv.second.getAsString();
      if (!provider)
        return anchor->emitError() << "provider assignment \"" << path << "\": \""
                                   << kv.first.str() << "\" must map to a provider name";
      (*into)[kv.first.str()] = provider->str();
    }
  }
  return pins;
}

struct PartitionPass : public impl::PartitionBase<PartitionPass> {
  using PartitionBase::PartitionBase;

  const Provider *lookup(StringRef name) {
    const Provider *p = lookupProvider(name);
    if (!p) {
      std::string known;
      for (const std::string &n : registeredProviderNames())
        known += (known.empty() ? "" : ", ") + n;
      getOperation().emitError() << "unknown provider \"" << name << "\" (known: "
                                 << known << ")";
    }
    return p;
  }

  void runOnOperation() override {
    fallbacks.clear(); // (a pass manager may run the pass on many modules)
    SmallVector<std::string> order(providers.begin(), providers.end());
    if (order.empty())
      order.push_back("cpu");
    SmallVector<const Provider *> chain;
    for (const std::string &name : order) {
      const Provider *p = lookup(name);
      if (!p)
        return signalPassFailure();
      chain.push_back(p);
    }
    auto pins = readPins(assignment, getOperation());
    if (failed(pins))
      return signalPassFailure();
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(partition(func, chain, *pins)))
        return signalPassFailure();
    // "MatMul x4, Add x2 on cpu (cuda: why)" per reason, for --report.
    if (fallbacks.empty())
      return;
    Builder b(&getContext());
    SmallVector<Attribute> lines;
    for (const auto &[where, ops] : fallbacks) {
      std::string line;
      for (const auto &[type, n] : ops)
        line += (line.empty() ? "" : ", ") + type + " x" + std::to_string(n);
      lines.push_back(b.getStringAttr(line + " on " + where));
    }
    getOperation()->setAttr("kiln.fallbacks", b.getArrayAttr(lines));
  }

  // where ("cpu (cuda: why)") -> op type -> count
  std::map<std::string, std::map<std::string, int64_t>> fallbacks;

  LogicalResult assign(Operation *op, ArrayRef<const Provider *> chain,
                       const Pins &pins, const Provider *&chosen) {
    StringRef type = op->getName().getStringRef().drop_front(5);
    std::string pinned;
    if (auto it = pins.nodes.find(nodeNameOf(op->getLoc())); it != pins.nodes.end())
      pinned = it->second;
    else if (auto it = pins.opTypes.find(type); it != pins.opTypes.end())
      pinned = it->second;
    if (!pinned.empty()) {
      chosen = lookup(pinned);
      if (!chosen)
        return failure();
      std::string why;
      if (!chosen->canRun(op, why))
        return emitNodeError(op) << "pinned to provider " << pinned
                                 << ", which cannot run it: " << why;
      return success();
    }
    std::string reasons, firstWhy;
    for (const Provider *p : chain) {
      std::string why;
      if (p->canRun(op, why)) {
        chosen = p;
        // What ran on a later provider than the first, and why (--report).
        if (p != chain.front() && op->getName().getStringRef() != "onnx.Constant" &&
            op->getName().getStringRef() != "onnx.NoValue")
          ++fallbacks[(p->getName() + " (" + chain.front()->getName() + ": " + firstWhy + ")")
                          .str()][type.str()];
        return success();
      }
      if (p == chain.front())
        firstWhy = why;
      if (!reasons.empty())
        reasons += "; ";
      reasons += chain.size() > 1 ? (p->getName() + ": " + why).str() : why;
    }
    std::string names;
    for (const Provider *p : chain)
      names += (names.empty() ? "" : ", ") + p->getName().str();
    return emitNodeError(op) << "not supported by provider " << names << ": " << reasons;
  }

  LogicalResult partition(func::FuncOp func, ArrayRef<const Provider *> chain,
                          const Pins &pins) {
    Block &block = func.getBody().front();
    const Provider *cpu = lookupProvider("cpu");
    SmallVector<std::pair<Operation *, const Provider *>> assigned;
    for (Operation &op : block.without_terminator()) {
      // Other ops stay where they are and end the current run, so that
      // moving a run into a partition never moves a use above its def.
      if (!isGraphOp(&op)) {
        assigned.push_back({&op, nullptr});
        continue;
      }
      const Provider *chosen = nullptr;
      if (failed(assign(&op, chain, pins, chosen)))
        return failure();
      assigned.push_back({&op, chosen});
    }

    // Device runs whose largest result is tiny go back to the CPU.
    auto runs = [&]() {
      SmallVector<std::pair<size_t, size_t>> out;
      for (size_t i = 0; i < assigned.size();) {
        size_t j = i;
        while (j < assigned.size() && assigned[j].second == assigned[i].second)
          ++j;
        if (assigned[i].second)
          out.push_back({i, j});
        i = j;
      }
      return out;
    };
    for (auto [i, j] : runs()) {
      const Provider *p = assigned[i].second;
      if (p == cpu || !cpu)
        continue;
      int64_t largest = 0;
      bool cpuCan = true, pinned = false;
      for (size_t k = i; k < j; ++k) {
        Operation *op = assigned[k].first;
        // A size known only at run time counts as large: the session
        // serves whatever batch or sequence comes, and a run-time size
        // is rarely tiny.
        for (Type t : op->getResultTypes())
          if (auto st = dyn_cast<RankedTensorType>(t))
            largest =
                std::max(largest, st.hasStaticShape() ? st.getNumElements()
                                                      : minDeviceElements);
        std::string why;
        cpuCan &= cpu->canRun(op, why);
        pinned |= pins.nodes.count(nodeNameOf(op->getLoc())) ||
                  pins.opTypes.count(op->getName().getStringRef().drop_front(5));
      }
      if (cpuCan && !pinned && largest < minDeviceElements)
        for (size_t k = i; k < j; ++k)
          assigned[k].second = cpu;
    }

    llvm::StringMap<int> counters;
    SmallVector<PartitionOp> parts;
    for (auto [i, j] : runs()) {
      const Provider *p = assigned[i].second;
      SmallVector<Operation *> group;
      for (size_t k = i; k < j; ++k)
        group.push_back(assigned[k].first);
      parts.push_back(wrap(group, p->getName(), counters[p->getName()]++));
    }
    insertTransfers(func, parts);
    return success();
  }

  PartitionOp wrap(ArrayRef<Operation *> group, StringRef provider, int index) {
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
    return part;
  }

  /// The provider whose memory holds `v`: its partition's, else the host's.
  static StringRef homeOf(Value v) {
    if (auto part = v.getDefiningOp<PartitionOp>())
      return part.getProvider() == "cuda" ? "cuda" : "cpu";
    return "cpu";
  }

  void insertTransfers(func::FuncOp func, ArrayRef<PartitionOp> parts) {
    Builder b(func.getContext());
    // One transfer per (tensor, destination), placed before its first use.
    llvm::DenseMap<std::pair<Value, StringRef>, Value> moved;
    for (PartitionOp part : parts) {
      StringRef here = part.getProvider() == "cuda" ? "cuda" : "cpu";
      int64_t bytesIn = 0;
      llvm::SetVector<Value> captured;
      part.getBody().walk([&](Operation *op) {
        for (Value v : op->getOperands())
          if (!part->isAncestor(v.getParentBlock()->getParentOp()))
            captured.insert(v);
      });
      for (Value v : captured) {
        StringRef home = homeOf(v);
        if (home == here || !isa<RankedTensorType>(v.getType()))
          continue;
        // Constants are weights: the device variant reads them from host
        // memory at run time (see kiln-cuda-offload), no transfer op.
        Value &t = moved[{v, here}];
        if (!t) {
          OpBuilder ob(part);
          t = ob.create<TransferOp>(part.getLoc(), v, ob.getStringAttr(home),
                                    ob.getStringAttr(here));
        }
        bytesIn += byteSize(v.getType());
        Value transferred = t;
        v.replaceUsesWithIf(transferred, [&](OpOperand &use) {
          return part->isAncestor(use.getOwner());
        });
      }
      part->setAttr("kiln.bytes_in", b.getI64IntegerAttr(bytesIn));
    }
    // Once every consumer has its transfers: the results that leave the
    // provider's memory (a device result returned goes to the host too).
    for (PartitionOp part : parts) {
      bool device = part.getProvider() == "cuda";
      int64_t bytesOut = 0;
      for (Value r : part.getResults())
        if (llvm::any_of(r.getUsers(), [&](Operation *user) {
              return isa<TransferOp>(user) || (device && isa<func::ReturnOp>(user));
            }))
          bytesOut += byteSize(r.getType());
      part->setAttr("kiln.bytes_out", b.getI64IntegerAttr(bytesOut));
    }
  }
};

} // namespace
} // namespace kiln
