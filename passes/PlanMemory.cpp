//===- PlanMemory.cpp - static arena planning after bufferization ---------===//
//
// The compiled model never calls malloc: outputs are written into the
// caller's buffers and every intermediate lives at a compile-time offset in
// one per-session arena. Offsets come from greedy first-fit over live ranges
// (largest buffers first), the scheme TFLite and onnx-mlir use.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/KilnDialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_PLANMEMORY
#include "passes/Passes.h.inc"

namespace {

int64_t byteSize(MemRefType t) {
  unsigned bits = t.getElementTypeBitWidth();
  return t.getNumElements() * static_cast<int64_t>((bits + 7) / 8);
}

int64_t alignTo(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

struct Buffer {
  memref::AllocOp alloc;
  int64_t size;
  int64_t start, end; // top-level op indices, inclusive
  int64_t offset = -1;
};

struct PlanMemoryPass : public impl::PlanMemoryBase<PlanMemoryPass> {
  using PlanMemoryBase::PlanMemoryBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isDeclaration() && failed(plan(func)))
        return signalPassFailure();
  }

  /// Results become trailing output arguments.
  LogicalResult outputsToArguments(func::FuncOp func) {
    Block &entry = func.getBody().front();
    auto ret = cast<func::ReturnOp>(entry.getTerminator());
    OpBuilder b(ret);
    unsigned numResults = ret.getNumOperands();
    for (unsigned i = 0; i < numResults; ++i) {
      // Read the operand afresh: an earlier output may have taken over the
      // same buffer (a tensor returned twice), which then gets copied.
      Value v = ret.getOperand(i);
      auto type = dyn_cast<MemRefType>(v.getType());
      if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity())
        return func.emitError() << "result " << i
                                << " is not a static, contiguous buffer: " << v.getType();
      func.insertArgument(func.getNumArguments(), type, {}, func.getLoc());
      Value out = entry.getArgument(entry.getNumArguments() - 1);
      auto alloc = v.getDefiningOp<memref::AllocOp>();
      if (alloc && alloc.getType() == type) {
        alloc.getResult().replaceAllUsesWith(out);
        alloc.erase();
      } else {
        b.create<memref::CopyOp>(ret.getLoc(), v, out);
      }
    }
    ret->setOperands({});
    func.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
    func.setFunctionType(FunctionType::get(func.getContext(),
                                           entry.getArgumentTypes(), {}));
    return success();
  }

  /// Each check stores its message's address into the status slot when
  /// its condition is false.
  LogicalResult lowerChecks(func::FuncOp func, ArrayRef<CheckOp> checks, Value arena) {
    if (checks.empty())
      return success();
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    Type i8 = IntegerType::get(ctx, 8), i64 = IntegerType::get(ctx, 64);
    for (CheckOp check : checks) {
      Location loc = check.getLoc();
      std::string msg = check.getMessage().str();
      msg.push_back('\0');
      auto type = MemRefType::get({(int64_t)msg.size()}, i8);
      auto init = DenseElementsAttr::get(
          RankedTensorType::get(type.getShape(), i8),
          ArrayRef<char>(msg.data(), msg.size()));
      OpBuilder mb(module.getBodyRegion());
      mb.setInsertionPointToStart(module.getBody());
      auto global = mb.create<memref::GlobalOp>(
          loc, "__kiln_check_" + std::to_string(numChecks++), mb.getStringAttr("private"),
          type, init, /*constant=*/true, IntegerAttr());
      OpBuilder b(check);
      Value failed = b.create<arith::XOrIOp>(
          loc, check.getCondition(), b.create<arith::ConstantIntOp>(loc, 1, 1));
      auto ifOp = b.create<scf::IfOp>(loc, failed, /*withElse=*/false);
      b.setInsertionPointToStart(ifOp.thenBlock());
      Value text = b.create<memref::GetGlobalOp>(loc, type, global.getSymName());
      Value addr = b.create<arith::IndexCastOp>(
          loc, i64, b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, text));
      Value c0 = b.create<arith::ConstantIndexOp>(loc, 0);
      Value slot = b.create<memref::ViewOp>(loc, MemRefType::get({1}, i64), arena, c0,
                                            ValueRange{});
      b.create<memref::StoreOp>(loc, addr, slot, ValueRange{c0});
      check.erase();
    }
    module->setAttr("kiln.checks", UnitAttr::get(ctx));
    return success();
  }
  unsigned numChecks = 0;

  /// The bare-pointer calling convention cannot take a memref with a zero
  /// dim (its strides are not all static): such arguments, never read or
  /// written, become memref<0xi8> and the body uses a zero-size alloca.
  void hideEmptyArguments(func::FuncOp func) {
    Block &entry = func.getBody().front();
    OpBuilder b(&entry, entry.begin());
    auto empty = MemRefType::get({0}, IntegerType::get(func.getContext(), 8));
    for (BlockArgument arg : entry.getArguments()) {
      auto t = dyn_cast<MemRefType>(arg.getType());
      if (!t || !t.hasStaticShape() || t.getNumElements() != 0 || t.getRank() < 2)
        continue;
      Value stand = b.create<memref::AllocaOp>(func.getLoc(), t);
      arg.replaceAllUsesWith(stand);
      arg.setType(empty);
    }
    func.setFunctionType(FunctionType::get(func.getContext(), entry.getArgumentTypes(),
                                           func.getResultTypes()));
  }

  LogicalResult plan(func::FuncOp func) {
    if (failed(outputsToArguments(func)))
      return failure();
    Block &entry = func.getBody().front();
    llvm::DenseMap<Operation *, int64_t> index;
    int64_t n = 0;
    for (Operation &op : entry)
      index[&op] = n++;
    auto topIndex = [&](Operation *op) {
      while (op->getBlock() != &entry)
        op = op->getParentOp();
      return index[op];
    };

    SmallVector<Buffer> buffers;
    WalkResult walk = func.walk([&](memref::AllocOp alloc) {
      MemRefType t = alloc.getType();
      // Allocations in branches (scf.if) get their own bytes for the whole
      // span of the top-level op; inside loops a fixed offset could be
      // clobbered by the next iteration while still live, so they stay out.
      bool inLoop = alloc->getParentOfType<LoopLikeOpInterface>() != nullptr;
      if (inLoop || !t.hasStaticShape() || !t.getLayout().isIdentity()) {
        alloc.emitError("kiln-plan-memory: cannot place a dynamic or loop-carried "
                        "allocation in the static arena");
        return WalkResult::interrupt();
      }
      int64_t start = topIndex(alloc);
      Buffer buf{alloc, alignTo(byteSize(t), alignment), start, start};
      // Live until the last use of the buffer or of any view of it.
      SmallVector<Value> work = {alloc.getResult()};
      while (!work.empty()) {
        Value v = work.pop_back_val();
        for (Operation *user : v.getUsers()) {
          buf.end = std::max(buf.end, topIndex(user));
          if (isa<ViewLikeOpInterface>(user))
            for (Value r : user->getResults())
              if (isa<MemRefType>(r.getType()))
                work.push_back(r);
        }
      }
      buffers.push_back(buf);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();

    SmallVector<CheckOp> checks;
    func.walk([&](CheckOp c) { checks.push_back(c); });
    // The status slot of run-time checks comes first.
    int64_t base = checks.empty() ? 0 : alignTo(8, alignment);

    // Greedy first-fit, biggest first.
    SmallVector<Buffer *> order;
    for (Buffer &buf : buffers)
      order.push_back(&buf);
    llvm::stable_sort(order, [](Buffer *a, Buffer *b) { return a->size > b->size; });
    int64_t arenaSize = base, unshared = base;
    SmallVector<Buffer *> placed;
    for (Buffer *buf : order) {
      unshared += buf->size;
      SmallVector<std::pair<int64_t, int64_t>> busy;
      for (Buffer *o : placed)
        if (o->start <= buf->end && buf->start <= o->end)
          busy.push_back({o->offset, o->offset + o->size});
      llvm::sort(busy);
      int64_t offset = base;
      for (auto [lo, hi] : busy) {
        if (offset + buf->size <= lo)
          break;
        offset = std::max(offset, alignTo(hi, alignment));
      }
      buf->offset = offset;
      arenaSize = std::max(arenaSize, offset + buf->size);
      placed.push_back(buf);
    }

    MLIRContext *ctx = func.getContext();
    auto arenaType = MemRefType::get({std::max<int64_t>(arenaSize, 1)},
                                     IntegerType::get(ctx, 8));
    func.insertArgument(func.getNumArguments(), arenaType, {}, func.getLoc());
    Value arena = entry.getArgument(entry.getNumArguments() - 1);
    for (Buffer &buf : buffers) {
      OpBuilder b(buf.alloc);
      Value off = b.create<arith::ConstantIndexOp>(buf.alloc.getLoc(), buf.offset);
      Value view = b.create<memref::ViewOp>(buf.alloc.getLoc(), buf.alloc.getType(),
                                            arena, off, ValueRange{});
      for (Operation *user : llvm::make_early_inc_range(buf.alloc->getUsers()))
        if (isa<memref::DeallocOp>(user))
          user->erase();
      buf.alloc.getResult().replaceAllUsesWith(view);
      buf.alloc.erase();
    }
    if (failed(lowerChecks(func, checks, arena)))
      return failure();
    hideEmptyArguments(func);
    // Strided copies would call MLIR's C runner library (memrefCopy);
    // as linalg.copy they become plain loops and the model stays freestanding.
    func.walk([&](memref::CopyOp copy) {
      auto src = cast<MemRefType>(copy.getSource().getType());
      auto dst = cast<MemRefType>(copy.getTarget().getType());
      if (src.getLayout().isIdentity() && dst.getLayout().isIdentity())
        return;
      OpBuilder ob(copy);
      ob.create<linalg::CopyOp>(copy.getLoc(), copy.getSource(), copy.getTarget());
      copy.erase();
    });
    Builder b(ctx);
    auto module = getOperation();
    module->setAttr("kiln.arena_size", b.getI64IntegerAttr(arenaSize));
    module->setAttr("kiln.arena_size_unshared", b.getI64IntegerAttr(unshared));
    return success();
  }
};

} // namespace
} // namespace kiln
