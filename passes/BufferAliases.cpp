//===- BufferAliases.cpp - uses of a buffer and its aliases ---------------===//
#include "passes/BufferAliases.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;

namespace kiln {

void forEachAliasUse(Value root, function_ref<void(OpOperand &)> fn) {
  SmallVector<Value> work = {root};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (OpOperand &use : v.getUses()) {
      fn(use);
      Operation *user = use.getOwner();
      SmallVector<Value> aliases;
      if (isa<ViewLikeOpInterface, RegionBranchOpInterface>(user))
        aliases.append(user->result_begin(), user->result_end());
      else if (isa<scf::YieldOp>(user) &&
               use.getOperandNumber() < user->getParentOp()->getNumResults())
        aliases.push_back(
            user->getParentOp()->getResult(use.getOperandNumber()));
      for (Value a : aliases)
        if (isa<MemRefType>(a.getType()))
          work.push_back(a);
    }
  }
}

} // namespace kiln
