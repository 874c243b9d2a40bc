//===- ControlFlowOps.cpp - If as scf.if, Loop as scf.while ---------------===//
//
// Both branches are compiled; the branch ops were lowered in place already
// (the driver lowers nested ops first), so If only swaps its regions into an
// scf.if and turns onnx.Yield into scf.yield. A Loop whose trip count is
// known only at run time (kiln-decompose-ops unrolls the others) moves its
// lowered body into an scf.while the same way.
//
//===----------------------------------------------------------------------===//
#include "dialects/kiln/KilnDialect.h"
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
  SmallVector<Type> types = llvm::map_to_vector(op->getResultTypes(), loweredValueType);
  auto ifOp = b.create<scf::IfOp>(loc, types, c,
                                  /*addThenBlock=*/false, /*addElseBlock=*/false);
  // Regions are in attribute-name order: else_branch, then_branch.
  OpBuilder inner(b.getContext());
  moveBranch(inner, op->getRegion(1), ifOp.getThenRegion(), types);
  moveBranch(inner, op->getRegion(0), ifOp.getElseRegion(), types);
  return SmallVector<Value>(ifOp.getResults());
}

/// A run-time Loop carries values whose types stay the same from one
/// iteration to the next, and no scan outputs (their length would be a
/// run-time value).
bool checkLoop(Operation *op, std::string &why) {
  Block &body = op->getRegion(0).front();
  Operation *yield = body.getTerminator();
  unsigned nCarried = op->getNumOperands() - 2;
  if (yield->getNumOperands() != nCarried + 1) {
    why = "scan outputs need a trip count known at compile time";
    return false;
  }
  for (unsigned i = 0; i < nCarried; ++i) {
    Type in = op->getOperand(2 + i).getType(), out = yield->getOperand(1 + i).getType();
    if (isSequenceValueType(in) && isSequenceValueType(out))
      continue;
    // With run-time sizes a carried value may have dims of run-time size
    // that stay the same in every iteration (checked at run time).
    auto shaped = dyn_cast<ShapedType>(in); // (a handle once lowered)
    bool sized = shaped && (shaped.hasStaticShape() ||
                            (compilesRuntimeSizes(op) && isa<RankedTensorType>(in)));
    if (in != out || (shaped && !sized)) {
      llvm::raw_string_ostream(why)
          << "loop-carried value " << i << " changes type from " << in << " to " << out
          << " (a run-time Loop needs it " << (compilesRuntimeSizes(op) ? "ranked" : "static")
          << " and unchanged)";
      return false;
    }
  }
  return true;
}

Value scalarOf(OpBuilder &b, Location l, Value t) {
  SmallVector<Value> zeros(typeOf(t).getRank(), b.create<arith::ConstantIndexOp>(l, 0));
  return b.create<tensor::ExtractOp>(l, t, zeros);
}

/// scf.while over (carried..., iteration, condition): it runs while the
/// iteration is below the trip count (if given) and the condition holds
/// (if the node has one: without, the body's condition is ignored). The
/// carried values come first: bufferization pairs scf.condition's operands
/// with the loop's arguments by position, and canonicalization drops
/// unused scalars from the end of that list.
Results lowerLoop(OpBuilder &b, Operation *op) {
  Location l = op->getLoc();
  Value trip = op->getOperand(0), cond = op->getOperand(1);
  Block &body = op->getRegion(0).front();
  Operation *yield = body.getTerminator();
  Type i64 = b.getI64Type(), i1 = b.getI1Type();
  unsigned n = op->getNumOperands() - 2; // carried values
  SmallVector<Value> inits(op->getOperands().drop_front(2));
  inits.push_back(b.create<arith::ConstantIntOp>(l, 0, 64));
  inits.push_back(isNone(cond) ? b.create<arith::ConstantIntOp>(l, 1, 1).getResult()
                               : scalarOf(b, l, cond));
  SmallVector<Type> types(ValueRange(inits).getTypes());
  Value limit = isNone(trip) ? Value() : castScalar(b, l, scalarOf(b, l, trip), i64);
  SmallVector<Location> locs(types.size(), l);
  auto loop = b.create<scf::WhileOp>(l, types, inits);

  OpBuilder::InsertionGuard guard(b);
  Block *before = b.createBlock(&loop.getBefore(), {}, types, locs);
  Value go = before->getArgument(n + 1);
  if (limit)
    go = b.create<arith::AndIOp>(
        l, go, b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, before->getArgument(n), limit));
  b.create<scf::ConditionOp>(l, go, before->getArguments());

  Block *after = b.createBlock(&loop.getAfter(), {}, types, locs);
  auto scalarTensor = [&](Type elt, Value v) -> Value {
    return b.create<tensor::FromElementsOp>(l, RankedTensorType::get({}, elt), v);
  };
  Value iteration = after->getArgument(n), condition = after->getArgument(n + 1);
  body.getArgument(0).replaceAllUsesWith(scalarTensor(i64, iteration));
  body.getArgument(1).replaceAllUsesWith(scalarTensor(i1, condition));
  for (unsigned i = 0; i < n; ++i)
    body.getArgument(2 + i).replaceAllUsesWith(after->getArgument(i));
  after->getOperations().splice(after->end(), body.getOperations(), body.begin(),
                                yield->getIterator());
  b.setInsertionPointToEnd(after);
  // A carried tensor is written back into its iteration argument, so the
  // loop keeps one buffer per value (an arena slot) instead of yielding a
  // new one every iteration.
  // A value that is another carried value's argument (a swap) is read
  // before any is written back.
  SmallVector<Value> next(yield->getOperands().drop_front());
  for (auto [i, v] : llvm::enumerate(next)) {
    auto arg = dyn_cast<BlockArgument>(v);
    if (arg && arg.getOwner() == after && arg.getArgNumber() != i &&
        isa<RankedTensorType>(v.getType()))
    {
      Value fresh = emptyTensor(b, l, typeOf(v), dynamicSizesLike(b, l, typeOf(v), v));
      v = b.create<linalg::CopyOp>(l, v, fresh).getResult(0);
    }
  }
  // A value written in place into its own argument (a scan row inserted
  // by ScatterND) is yielded as is: copying it back would copy all of it
  // every iteration.
  auto updatesInPlace = [&](Value v, Value arg) {
    auto ins = v.getDefiningOp<tensor::InsertSliceOp>();
    return ins && ins.getDest() == arg && arg.hasOneUse() &&
           ins.getResult().hasOneUse();
  };
  for (auto [i, v] : llvm::enumerate(next))
    if (isa<RankedTensorType>(v.getType()) && v != after->getArgument(i) &&
        !updatesInPlace(v, after->getArgument(i))) {
      // A dim of run-time size must keep its size from one iteration to
      // the next (the value goes back into the same buffer).
      auto t = typeOf(v);
      for (int64_t d = 0; d < t.getRank(); ++d)
        if (t.isDynamicDim(d))
          b.create<CheckOp>(l,
                            b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, dimSize(b, l, v, d),
                                                    dimSize(b, l, after->getArgument(i), d)),
                            describeNode(op) + ": loop-carried value " + std::to_string(i) +
                                " changes size in dimension " + std::to_string(d) +
                                " at run time",
                            /*fatal=*/true);
      v = b.create<linalg::CopyOp>(l, v, after->getArgument(i)).getResult(0);
    }
  next.push_back(b.create<arith::AddIOp>(l, iteration, b.create<arith::ConstantIntOp>(l, 1, 64)));
  next.push_back(isNone(cond) ? condition : scalarOf(b, l, yield->getOperand(0)));
  b.create<scf::YieldOp>(l, next);
  // A failed runtime call fills zeros, which could keep the loop going: it
  // also stops once the run has failed.
  bool callsRuntime = false;
  after->walk([&](RuntimeCallOp) { callsRuntime = true; });
  if (callsRuntime) {
    b.setInsertionPoint(before->getTerminator());
    Value ok = b.create<RuntimeCallOp>(l, TypeRange{b.getI32Type()}, "kilnRunOk", ValueRange(),
                                       ValueRange())
                   .getResult(0);
    Value stop = b.create<arith::TruncIOp>(l, i1, ok);
    auto condition = cast<scf::ConditionOp>(before->getTerminator());
    condition.getConditionMutable().assign(
        b.create<arith::AndIOp>(l, condition.getCondition(), stop));
  }
  return SmallVector<Value>(loop.getResults().take_front(n));
}

} // namespace

void registerControlFlowOps(LoweringTable &m) {
  m["If"] = {lowerIf, false};
  m["Loop"] = {lowerLoop, false, checkLoop};
}

} // namespace kiln::cpu
