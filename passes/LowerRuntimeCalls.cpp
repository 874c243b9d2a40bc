//===- LowerRuntimeCalls.cpp - kiln.runtime_call to func.call -------------===//
#include "dialects/kiln/KilnDialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_LOWERRUNTIMECALLS
#include "passes/Passes.h.inc"

namespace {

/// The address of a dense buffer's first element. An arena view keeps its
/// byte shift in the view op (MLIR folds the aligned pointer of a view to
/// its source's), so views and reshapes are followed to their source.
Value addressOf(OpBuilder &b, Location l, Value m) {
  if (auto view = m.getDefiningOp<memref::ViewOp>())
    return b.create<arith::AddIOp>(l, addressOf(b, l, view.getSource()), view.getByteShift());
  if (auto def = m.getDefiningOp();
      isa_and_nonnull<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp>(def))
    return addressOf(b, l, def->getOperand(0));
  auto meta = b.create<memref::ExtractStridedMetadataOp>(l, m);
  Value base = b.create<memref::ExtractAlignedPointerAsIndexOp>(l, meta.getBaseBuffer());
  int64_t bytes = (cast<MemRefType>(m.getType()).getElementTypeBitWidth() + 7) / 8;
  return b.create<arith::AddIOp>(
      l, base,
      b.create<arith::MulIOp>(l, meta.getOffset(), b.create<arith::ConstantIndexOp>(l, bytes)));
}

struct LowerRuntimeCallsPass : public impl::LowerRuntimeCallsBase<LowerRuntimeCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<RuntimeCallOp> calls;
    module.walk([&](RuntimeCallOp call) { calls.push_back(call); });
    for (RuntimeCallOp call : calls) {
      if (llvm::any_of(call->getOperandTypes(), [](Type t) { return isa<TensorType>(t); })) {
        call.emitOpError("must be bufferized first");
        return signalPassFailure();
      }
      OpBuilder b(call);
      Location l = call.getLoc();
      SmallVector<Value> args;
      SmallVector<Value> operands(call.getArgs());
      llvm::append_range(operands, call.getOuts());
      for (Value v : operands) {
        if (isa<MemRefType>(v.getType()))
          v = b.create<arith::IndexCastOp>(l, b.getI64Type(), addressOf(b, l, v));
        args.push_back(v);
      }
      SmallVector<Type> results;
      if (call.getValue())
        results.push_back(call.getValue().getType());
      auto type = b.getFunctionType(ValueRange(args).getTypes(), results);
      StringRef callee = call.getCallee();
      auto decl = module.lookupSymbol<func::FuncOp>(callee);
      if (!decl) {
        OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
        decl = mb.create<func::FuncOp>(l, callee, type);
        decl.setPrivate();
      } else if (decl.getFunctionType() != type) {
        call.emitOpError() << "calls @" << callee << " as " << type << ", declared as "
                           << decl.getFunctionType();
        return signalPassFailure();
      }
      auto newCall = b.create<func::CallOp>(l, decl, args);
      if (call.getValue())
        call.getValue().replaceAllUsesWith(newCall.getResult(0));
      call.erase();
    }
  }
};

} // namespace
} // namespace kiln
