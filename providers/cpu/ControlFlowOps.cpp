//===- ControlFlowOps.cpp - If as scf.if ----------------------------------===//
//
// Both branches are compiled; the branch ops were lowered in place already
// (the driver lowers nested ops first), so If only swaps its regions into an
// scf.if and turns onnx.Yield into scf.yield.
//
//===----------------------------------------------------------------------===//
#include "providers/cpu/Lowering.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace kiln::onnx;

namespace kiln::cpu {
namespace {

/// Moves `from` into `to` and ends it with scf.yield of the branch values,
/// cast to the If's result types where a branch is more precise.
void moveBranch(OpBuilder &b, Region &from, Region &to, TypeRange resultTypes) {
  to.takeBody(from);
  Block &block = to.front();
  Operation *yield = block.getTerminator();
  b.setInsertionPoint(yield);
  SmallVector<Value> values;
  for (auto [v, t] : llvm::zip(yield->getOperands(), resultTypes))
    values.push_back(v.getType() == t
                         ? v
                         : (Value)b.create<tensor::CastOp>(yield->getLoc(), t, v));
  b.create<scf::YieldOp>(yield->getLoc(), values);
  yield->erase();
}

Results lowerIf(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  Value cond = op->getOperand(0);
  auto ct = typeOf(cond);
  SmallVector<Value> zeros(ct.getRank(), b.create<arith::ConstantIndexOp>(loc, 0));
  Value c = b.create<tensor::ExtractOp>(loc, cond, zeros);
  auto ifOp = b.create<scf::IfOp>(loc, op->getResultTypes(), c,
                                  /*addThenBlock=*/false, /*addElseBlock=*/false);
  // Regions are in attribute-name order: else_branch, then_branch.
  OpBuilder inner(b.getContext());
  moveBranch(inner, op->getRegion(1), ifOp.getThenRegion(), op->getResultTypes());
  moveBranch(inner, op->getRegion(0), ifOp.getElseRegion(), op->getResultTypes());
  return SmallVector<Value>(ifOp.getResults());
}

} // namespace

void registerControlFlowOps(LoweringTable &m) { m["If"] = {lowerIf, false}; }

} // namespace kiln::cpu
