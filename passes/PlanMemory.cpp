//===- PlanMemory.cpp - static arena planning after bufferization ---------===//
//
// The compiled model never calls malloc: outputs are written into the
// caller's buffers and every intermediate lives at a compile-time offset in
// one per-session arena. Offsets come from greedy first-fit over live ranges
// (largest buffers first), the scheme TFLite and onnx-mlir use.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/KilnDialect.h"
#include "passes/BufferAliases.h"
#include "passes/GlobalString.h"
#include "passes/NodeName.h"
#include "passes/Passes.h"
#include "providers/cpu/Pipelines.h"
#include "providers/cpu/Vectorize.h"
#include "providers/cuda/Cuda.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/JSON.h"
#include "kiln/model_abi.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_PLANMEMORY
#include "passes/Passes.h.inc"

namespace {

constexpr llvm::StringLiteral kProfileBeginFn = "kilnProfileBegin";
constexpr llvm::StringLiteral kProfileEndFn = "kilnProfileEnd";
constexpr llvm::StringLiteral kDynAllocFn = "kilnDynAlloc";
constexpr llvm::StringLiteral kDynFreeFn = "kilnDynFree";
// A thread's own buffer for a slot (allocations inside parallel loops).
constexpr llvm::StringLiteral kThreadScratchFn = "kilnThreadScratch";
// Ends the run at once (a fatal check failed; its message is stored).
constexpr llvm::StringLiteral kRunFailedFn = "kilnRunFailed";
// A check's message with its values in place of "{}" (a runtime buffer).
constexpr llvm::StringLiteral kCheckMessageFn = "kilnCheckMessage";

/// A profile descriptor ("node\x1fop\x1fprovider\x1fargs") whose args'
/// fused_nodes also lists `names` (in order, once each).
std::string withFusedNodes(StringRef desc, ArrayRef<std::string> names) {
  SmallVector<StringRef, 4> fields;
  desc.split(fields, '\x1f', /*MaxSplit=*/3);
  if (fields.size() != 4)
    return desc.str();
  auto args = llvm::json::parse(("{" + fields[3] + "}").str());
  llvm::json::Object *obj = args ? args->getAsObject() : nullptr;
  llvm::json::Array *fused = obj ? obj->getArray("fused_nodes") : nullptr;
  if (!fused) {
    if (!args)
      llvm::consumeError(args.takeError());
    return desc.str();
  }
  bool changed = false;
  for (const std::string &n : names)
    if (llvm::none_of(*fused, [&](const llvm::json::Value &v) { return v.getAsString() == n; })) {
      fused->push_back(n);
      changed = true;
    }
  if (!changed)
    return desc.str();
  std::string json;
  llvm::raw_string_ostream os(json);
  os << llvm::json::Value(std::move(*obj));
  os.flush();
  return (fields[0] + "\x1f" + fields[1] + "\x1f" + fields[2] + "\x1f" +
          StringRef(json).drop_front().drop_back())
      .str();
}

int64_t byteSize(MemRefType t) {
  unsigned bits = t.getElementTypeBitWidth();
  return t.getNumElements() * static_cast<int64_t>((bits + 7) / 8);
}

int64_t alignTo(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

/// The bytes of `alloc`'s buffer as an i64, computed from its dynamic sizes.
Value runtimeByteSize(OpBuilder &b, Location l, Operation *alloc) {
  auto t = cast<MemRefType>(alloc->getResult(0).getType());
  int64_t elementBytes = (t.getElementTypeBitWidth() + 7) / 8;
  Value bytes = b.create<arith::ConstantIndexOp>(l, elementBytes);
  unsigned next = 0;
  for (int64_t d = 0; d < t.getRank(); ++d) {
    Value size = t.isDynamicDim(d)
                     ? alloc->getOperand(next++)
                     : b.create<arith::ConstantIndexOp>(l, t.getDimSize(d));
    bytes = b.create<arith::MulIOp>(l, bytes, size);
  }
  return b.create<arith::IndexCastOp>(l, b.getI64Type(), bytes);
}

struct Buffer {
  Operation *alloc; // memref.alloc, or gpu.alloc for the device arena
  int64_t size;
  int64_t start, end; // top-level op indices, inclusive
  int64_t offset = -1;
};

/// Greedy first-fit, biggest first, from `base`; returns the arena size.
int64_t placeBuffers(MutableArrayRef<Buffer> buffers, int64_t base, int64_t alignment) {
  SmallVector<Buffer *> order;
  for (Buffer &buf : buffers)
    order.push_back(&buf);
  llvm::stable_sort(order, [](Buffer *a, Buffer *b) { return a->size > b->size; });
  int64_t arenaSize = base;
  SmallVector<Buffer *> placed;
  for (Buffer *buf : order) {
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
  return arenaSize;
}

/// Replaces each buffer's allocation by a view of `arena` at its offset
/// (its deallocations go).
void replaceByViews(ArrayRef<Buffer> buffers, Value arena) {
  for (const Buffer &buf : buffers) {
    OpBuilder b(buf.alloc);
    Location loc = buf.alloc->getLoc();
    Value result = buf.alloc->getResult(0);
    Value off = b.create<arith::ConstantIndexOp>(loc, buf.offset);
    Value view = b.create<memref::ViewOp>(loc, result.getType(), arena, off, ValueRange{});
    for (Operation *user : llvm::make_early_inc_range(result.getUsers())) {
      if (isa<memref::DeallocOp, gpu::DeallocOp>(user)) {
        user->erase();
      } else if (auto addr = dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(user)) {
        // expand-strided-metadata would take a view's address for its
        // source's: spell out the offset.
        OpBuilder ab(addr);
        Value base = ab.create<memref::ExtractAlignedPointerAsIndexOp>(loc, arena);
        addr.replaceAllUsesWith(ab.create<arith::AddIOp>(loc, base, off).getResult());
        addr.erase();
      }
    }
    result.replaceAllUsesWith(view);
    buf.alloc->erase();
  }
}

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
      bool runtimeSized = type && !type.hasStaticShape() && isRuntimeSized(func);
      if (!type || (!type.hasStaticShape() && !runtimeSized))
        return func.emitError() << "result " << i
                                << " is not a static, contiguous buffer: " << v.getType();
      // A strided result (a view) is copied into the caller's buffer.
      if (!type.getLayout().isIdentity())
        type = MemRefType::get(type.getShape(), type.getElementType());
      func.insertArgument(func.getNumArguments(), type, {}, func.getLoc());
      Value out = entry.getArgument(entry.getNumArguments() - 1);
      Operation *alloc = v.getDefiningOp();
      bool inPlace = alloc && isa<memref::AllocOp, gpu::AllocOp>(alloc) &&
                     v.getType() == type && !alloc->hasAttr(kDeviceConstantAttr);
      if (runtimeSized) {
        // The caller's buffer has the sizes of the shape function; the
        // computed ones must agree (once bindRuntimeSizes views it).
        OpBuilder cb(inPlace ? alloc : ret.getOperation());
        Location loc = ret.getLoc();
        Value ok = cb.create<arith::ConstantIntOp>(loc, 1, 1);
        unsigned next = 0;
        for (int64_t d = 0; d < type.getRank(); ++d) {
          if (!type.isDynamicDim(d))
            continue;
          Value got = inPlace ? alloc->getOperand(next++) : cb.create<memref::DimOp>(loc, v, d);
          Value want = cb.create<memref::DimOp>(loc, out, d);
          ok = cb.create<arith::AndIOp>(
              loc, ok, cb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, want, got));
        }
        cb.create<CheckOp>(loc, ok,
                           "internal error: an output's size disagrees with the shape "
                           "function's",
                           /*fatal=*/true);
      }
      if (inPlace) {
        for (Operation *user : llvm::make_early_inc_range(v.getUsers()))
          if (isa<gpu::DeallocOp>(user))
            user->erase();
        v.replaceAllUsesWith(out);
        alloc->erase();
      } else if (func->hasAttr(kDeviceIOAttr)) {
        // Results live in device memory (kiln-cuda-offload{device-io}).
        b.create<gpu::MemcpyOp>(ret.getLoc(), TypeRange(), ValueRange(), out, v);
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

  static bool isRuntimeSized(func::FuncOp func) {
    return func->getParentOfType<ModuleOp>()->hasAttr("kiln.runtime_sizes");
  }

  /// An int64 slot of the arena at byte `offset`, loaded.
  static Value loadSlot(OpBuilder &b, Location loc, Value arena, int64_t offset) {
    Type i64 = b.getI64Type();
    Value c0 = b.create<arith::ConstantIndexOp>(loc, 0);
    Value slot = b.create<memref::ViewOp>(loc, MemRefType::get({1}, i64), arena,
                                          b.create<arith::ConstantIndexOp>(loc, offset),
                                          ValueRange{});
    return b.create<memref::LoadOp>(loc, slot, ValueRange{c0});
  }

  /// Arguments with run-time sizes become plain pointers (memref<0xi8>,
  /// which the bare-pointer convention takes) viewed at the sizes the
  /// runtime stores in the arena: the inputs' dynamic dims, then the
  /// outputs' (which the shape function gave). Returns the slots used.
  int64_t bindRuntimeSizes(func::FuncOp func, Value arena) {
    Block &entry = func.getBody().front();
    OpBuilder b(&entry, entry.begin());
    Location loc = func.getLoc();
    auto pointer = MemRefType::get({0}, b.getI8Type());
    int64_t slot = 0;
    for (BlockArgument arg : entry.getArguments()) {
      auto t = dyn_cast<MemRefType>(arg.getType());
      if (!t || t.hasStaticShape() || arg == arena)
        continue;
      SmallVector<Value> sizes;
      for (int64_t d = 0; d < t.getRank(); ++d)
        if (t.isDynamicDim(d))
          sizes.push_back(b.create<arith::IndexCastOp>(
              loc, b.getIndexType(), loadSlot(b, loc, arena, KILN_ARENA_SIZES + 8 * slot++)));
      arg.setType(pointer);
      Value view = b.create<memref::ViewOp>(loc, t, arg, b.create<arith::ConstantIndexOp>(loc, 0),
                                            sizes);
      arg.replaceAllUsesExcept(view, view.getDefiningOp());
    }
    func.setFunctionType(FunctionType::get(func.getContext(), entry.getArgumentTypes(),
                                           func.getResultTypes()));
    return slot;
  }

  /// Each allocation of a run-time size comes from the run's allocator
  /// (kilnDynAlloc, arena bytes 16-23) and goes back to it after its last
  /// use in its block (kilnDynFree); the runtime keeps the memory from run
  /// to run, so a run at sizes seen before allocates nothing.
  void placeRuntimeSized(func::FuncOp func, ArrayRef<Operation *> allocs, Value arena) {
    if (allocs.empty())
      return;
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    Type i64 = IntegerType::get(ctx, 64);
    auto pointer = MemRefType::get({0}, IntegerType::get(ctx, 8));
    Location loc = func.getLoc();
    declareRuntimeFn(kDynAllocFn, {i64, i64}, {pointer});
    declareRuntimeFn(kDynFreeFn, {i64, pointer}, {});
    // Device buffers of run-time size come from the running session's
    // device allocator (the same first fit, in device memory).
    if (llvm::any_of(allocs,
                     [](Operation *a) { return isa<gpu::AllocOp>(a); })) {
      declareRuntimeFn(kDeviceDynAllocFn, {i64}, {pointer});
      declareRuntimeFn(kDeviceDynFreeFn, {pointer}, {});
    }
    Block &entry = func.getBody().front();
    OpBuilder eb(&entry, entry.begin());
    Value allocator = loadSlot(eb, loc, arena, KILN_ARENA_ALLOCATOR);
    for (Operation *alloc : allocs) {
      bool device = isa<gpu::AllocOp>(alloc);
      auto t = cast<MemRefType>(alloc->getResult(0).getType());
      OpBuilder b(alloc);
      Location l = alloc->getLoc();
      Value bytes64 = runtimeByteSize(b, l, alloc);
      Value base =
          device
              ? b.create<func::CallOp>(l, kDeviceDynAllocFn, pointer, bytes64)
                    .getResult(0)
              : b.create<func::CallOp>(l, kDynAllocFn, pointer,
                                       ValueRange{allocator, bytes64})
                    .getResult(0);
      ValueRange sizes = device
                             ? cast<gpu::AllocOp>(alloc).getDynamicSizes()
                             : cast<memref::AllocOp>(alloc).getDynamicSizes();
      Value view = b.create<memref::ViewOp>(
          l, t, base, b.create<arith::ConstantIndexOp>(l, 0), sizes);
      Value result = alloc->getResult(0);
      // The last use in the allocation's block, unless an alias leaves it.
      Block *block = alloc->getBlock();
      Operation *last = nullptr;
      bool escapes = false;
      forEachAliasUse(result, [&](OpOperand &use) {
        Operation *user = use.getOwner();
        if (isa<memref::DeallocOp, gpu::DeallocOp>(user))
          return;
        Operation *anc = block->findAncestorOpInBlock(*user);
        if (!anc) {
          escapes = true;
          return;
        }
        if (!last || last->isBeforeInBlock(anc))
          last = anc;
      });
      for (Operation *user : llvm::make_early_inc_range(result.getUsers()))
        if (isa<memref::DeallocOp, gpu::DeallocOp>(user))
          user->erase();
      result.replaceAllUsesWith(view);
      alloc->erase();
      if (escapes || !last || last->hasTrait<OpTrait::IsTerminator>())
        continue;
      OpBuilder fb(last->getBlock(), std::next(last->getIterator()));
      if (device)
        fb.create<func::CallOp>(l, kDeviceDynFreeFn, TypeRange{}, base);
      else
        fb.create<func::CallOp>(l, kDynFreeFn, TypeRange{},
                                ValueRange{allocator, base});
    }
  }

  static bool inParallelLoop(Operation *op) {
    for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
      if (p->hasAttr(kParallelAttr))
        return true;
    return false;
  }

  /// `name(inputs) -> results`, a libkiln_rt function, declared on first use.
  void declareRuntimeFn(StringRef name, TypeRange inputs, TypeRange results) {
    ModuleOp module = getOperation();
    if (module.lookupSymbol<func::FuncOp>(name))
      return;
    OpBuilder mb(module.getBodyRegion());
    mb.create<func::FuncOp>(
          module.getLoc(), name,
          FunctionType::get(module.getContext(), inputs, results))
        .setPrivate();
  }

  /// Buffers allocated in a parallel loop's body: `kilnThreadScratch(slot,
  /// bytes)`, the running thread's buffer for the slot (kept and grown by
  /// the runtime, never freed by the run).
  void placeThreadScratch(ArrayRef<Operation *> allocs) {
    if (allocs.empty())
      return;
    Builder tb(getOperation().getContext());
    auto pointer = MemRefType::get({0}, tb.getI8Type());
    declareRuntimeFn(kThreadScratchFn, {tb.getI64Type(), tb.getI64Type()},
                     {pointer});
    for (Operation *alloc : allocs) {
      auto t = cast<MemRefType>(alloc->getResult(0).getType());
      OpBuilder b(alloc);
      Location l = alloc->getLoc();
      Value slot = b.create<arith::ConstantIntOp>(l, nextScratchSlot++, 64);
      Value bytes = t.hasStaticShape()
                        ? b.create<arith::ConstantIntOp>(l, byteSize(t), 64)
                        : runtimeByteSize(b, l, alloc);
      Value base = b.create<func::CallOp>(l, kThreadScratchFn, pointer,
                                          ValueRange{slot, bytes})
                       .getResult(0);
      Value view = b.create<memref::ViewOp>(
          l, t, base, b.create<arith::ConstantIndexOp>(l, 0),
          cast<memref::AllocOp>(alloc).getDynamicSizes());
      Value result = alloc->getResult(0);
      for (Operation *user : llvm::make_early_inc_range(result.getUsers()))
        if (isa<memref::DeallocOp>(user))
          user->erase();
      result.replaceAllUsesWith(view);
      alloc->erase();
    }
  }
  int64_t nextScratchSlot = 0;

  /// Each check stores its message's address into the status slot when
  /// its condition is false; a check with values stores the message
  /// kilnCheckMessage formats.
  LogicalResult lowerChecks(func::FuncOp func, ArrayRef<CheckOp> checks, Value arena) {
    if (checks.empty())
      return success();
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    Type i64 = IntegerType::get(ctx, 64);
    for (CheckOp check : checks) {
      Location loc = check.getLoc();
      OpBuilder b(check);
      Value failed = b.create<arith::XOrIOp>(
          loc, check.getCondition(), b.create<arith::ConstantIntOp>(loc, 1, 1));
      auto ifOp = b.create<scf::IfOp>(loc, failed, /*withElse=*/false);
      b.setInsertionPointToStart(ifOp.thenBlock());
      Value addr = globalStringAddress(b, loc, module, check.getMessage());
      if (!check.getValues().empty()) {
        declareRuntimeFn(kCheckMessageFn, {i64, i64, i64, i64}, {i64});
        SmallVector<Value> args = {addr};
        args.append(check.getValues().begin(), check.getValues().end());
        while (args.size() < 4)
          args.push_back(b.create<arith::ConstantIntOp>(loc, 0, 64));
        addr =
            b.create<func::CallOp>(loc, kCheckMessageFn, TypeRange{i64}, args)
                .getResult(0);
      }
      Value c0 = b.create<arith::ConstantIndexOp>(loc, 0);
      Value slot = b.create<memref::ViewOp>(loc, MemRefType::get({1}, i64), arena, c0,
                                            ValueRange{});
      b.create<memref::StoreOp>(loc, addr, slot, ValueRange{c0});
      if (check.getFatal()) {
        if (!module.lookupSymbol<func::FuncOp>(kRunFailedFn)) {
          OpBuilder mb(module.getBodyRegion());
          mb.create<func::FuncOp>(loc, kRunFailedFn, FunctionType::get(ctx, {}, {}))
              .setPrivate();
        }
        b.create<func::CallOp>(loc, kRunFailedFn, TypeRange{}, ValueRange{});
      }
      check.erase();
    }
    module->setAttr("kiln.checks", UnitAttr::get(ctx));
    return success();
  }

  /// Drops each kiln.profile_begin/end pair with no work between (the view
  /// a Reshape became): an event for it would only cost.
  /// The kiln.profile_end after `begin` in its block (pairs do not nest).
  static ProfileEndOp matchingEnd(ProfileBeginOp begin) {
    for (Operation *op = begin->getNextNode(); op; op = op->getNextNode())
      if (auto end = dyn_cast<ProfileEndOp>(op))
        return end;
    return {};
  }

  static void dropEmptyProfilePairs(func::FuncOp func) {
    SmallVector<ProfileBeginOp> begins;
    func.walk([&](ProfileBeginOp b) { begins.push_back(b); });
    for (ProfileBeginOp begin : begins) {
      ProfileEndOp end = matchingEnd(begin);
      bool work = false;
      for (Operation *op = begin->getNextNode(); end && op != end; op = op->getNextNode())
        work |= !(op->getNumRegions() == 0 && isMemoryEffectFree(op)) &&
                !isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp>(op);
      if (end && !work) {
        end.erase();
        begin.erase();
      }
    }
  }

  /// Each kiln.profile_begin/end becomes a call of kilnProfileBegin/End
  /// (context, descriptor) under one branch: the runtime stores its
  /// profiler context, or 0, in the arena's second 8 bytes before a run,
  /// and the function reads it once at entry.
  LogicalResult lowerProfileHooks(func::FuncOp func, Value arena) {
    SmallVector<Operation *> marks;
    func.walk([&](Operation *op) {
      if (isa<ProfileBeginOp, ProfileEndOp>(op))
        marks.push_back(op);
    });
    if (marks.empty())
      return success();
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    Type i64 = IntegerType::get(ctx, 64);
    Location loc = func.getLoc();
    OpBuilder b(&func.getBody().front(), func.getBody().front().begin());
    Value c0 = b.create<arith::ConstantIndexOp>(loc, 0);
    Value slot = b.create<memref::ViewOp>(loc, MemRefType::get({1}, i64), arena,
                                          b.create<arith::ConstantIndexOp>(loc, 8), ValueRange{});
    Value context = b.create<memref::LoadOp>(loc, slot, ValueRange{c0});
    Value on = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, context,
                                       b.create<arith::ConstantIntOp>(loc, 0, 64));
    auto fnType = FunctionType::get(ctx, {i64, i64}, {});
    for (StringRef name : {kProfileBeginFn, kProfileEndFn})
      if (!module.lookupSymbol<func::FuncOp>(name)) {
        OpBuilder mb(module.getBodyRegion());
        mb.create<func::FuncOp>(loc, name, fnType).setPrivate();
      }
    // Nodes whose code a later fusion moved into a kernel (its ops'
    // locations hold their names) join the kernel's fused_nodes.
    for (Operation *mark : marks) {
      auto begin = dyn_cast<ProfileBeginOp>(mark);
      ProfileEndOp end = begin ? matchingEnd(begin) : ProfileEndOp();
      if (!end)
        continue;
      SmallVector<std::string> names;
      for (Operation *op = begin->getNextNode(); op != end; op = op->getNextNode())
        llvm::append_range(names, nodeNamesOf(op->getLoc()));
      std::string desc = withFusedNodes(begin.getDescriptor(), names);
      begin.setDescriptor(desc);
      end.setDescriptor(desc);
    }
    for (Operation *mark : marks) {
      OpBuilder mb(mark);
      auto ifOp = mb.create<scf::IfOp>(mark->getLoc(), on, /*withElse=*/false);
      mb.setInsertionPointToStart(ifOp.thenBlock());
      auto begin = dyn_cast<ProfileBeginOp>(mark);
      StringRef desc = begin ? begin.getDescriptor() : cast<ProfileEndOp>(mark).getDescriptor();
      Value addr = globalStringAddress(mb, mark->getLoc(), module, desc);
      mb.create<func::CallOp>(mark->getLoc(), begin ? kProfileBeginFn : kProfileEndFn,
                              TypeRange{}, ValueRange{context, addr});
      mark->erase();
    }
    module->setAttr("kiln.profile_hooks", UnitAttr::get(ctx));
    return success();
  }

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

  /// Whether the buffer of `alloc` (or an alias) is carried into a loop's
  /// next iteration: yielded by a loop body, or a loop's initial value.
  static bool isCarried(Operation *alloc) {
    bool carried = false;
    forEachAliasUse(alloc->getResult(0), [&](OpOperand &use) {
      Operation *user = use.getOwner();
      carried |= isa<scf::ConditionOp, LoopLikeOpInterface>(user) ||
                 (isa<scf::YieldOp>(user) && isa<LoopLikeOpInterface>(user->getParentOp()));
    });
    return carried;
  }

  LogicalResult plan(func::FuncOp func) {
    if (failed(outputsToArguments(func)))
      return failure();
    dropEmptyProfilePairs(func);
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

    SmallVector<Buffer> buffers, deviceBuffers;
    SmallVector<Operation *> dynamicAllocs, threadAllocs;
    bool runtimeSized = isRuntimeSized(func);
    // The run's allocator and a failed check's abort belong to the calling
    // thread, and the arena's bytes to all: a parallel loop that checks or
    // allocates other than per-thread scratch (identity layout; its size
    // may be known only at run time) runs whole on the calling thread.
    func.walk([&](Operation *op) {
      auto alloc = dyn_cast<memref::AllocOp>(op);
      if (!isa<CheckOp>(op) &&
          !(alloc && !alloc.getType().getLayout().isIdentity()))
        return;
      for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
        p->removeAttr(kParallelAttr);
    });
    WalkResult walk = func.walk([&](Operation *alloc) {
      auto device = dyn_cast<gpu::AllocOp>(alloc);
      if (!device && !isa<memref::AllocOp>(alloc))
        return WalkResult::advance();
      auto t = cast<MemRefType>(alloc->getResult(0).getType());
      // Threads run a parallel loop's iterations at once: what its body
      // allocates is each thread's own.
      if (!device && t.getLayout().isIdentity() && inParallelLoop(alloc)) {
        threadAllocs.push_back(alloc);
        return WalkResult::advance();
      }
      // Allocations in branches (scf.if) and loop bodies get their own
      // bytes for the whole span of the top-level op. A loop's next
      // iteration reuses them, so none may be carried into it.
      if (!t.hasStaticShape() && runtimeSized && t.getLayout().isIdentity() &&
          !(device && device.getAsyncToken())) {
        dynamicAllocs.push_back(alloc);
        return WalkResult::advance();
      }
      bool carried = alloc->getParentOfType<LoopLikeOpInterface>() && isCarried(alloc);
      if (carried || !t.hasStaticShape() || !t.getLayout().isIdentity() ||
          (device && device.getAsyncToken())) {
        alloc->emitError("kiln-plan-memory: cannot place a dynamic or loop-carried "
                         "allocation in the static arena");
        return WalkResult::interrupt();
      }
      int64_t start = topIndex(alloc);
      Buffer buf{alloc, alignTo(byteSize(t), alignment), start, start};
      // A constant's device copy persists from run to run: it overlaps
      // everything.
      if (alloc->hasAttr(kDeviceConstantAttr)) {
        buf.start = 0;
        buf.end = n;
        (device ? deviceBuffers : buffers).push_back(buf);
        return WalkResult::advance();
      }
      // Live until the last use of the buffer or of any alias of it (a
      // view, or the scf.if result it is yielded as).
      forEachAliasUse(alloc->getResult(0), [&](OpOperand &use) {
        buf.end = std::max(buf.end, topIndex(use.getOwner()));
      });
      (device ? deviceBuffers : buffers).push_back(buf);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();

    SmallVector<CheckOp> checks;
    func.walk([&](CheckOp c) { checks.push_back(c); });
    bool profiled = false;
    func.walk([&](ProfileBeginOp) { profiled = true; });
    // The status slot of run-time checks comes first, then the profiler's;
    // with run-time sizes, the allocator's and the sizes (model_abi.h).
    int64_t numSizes = 0;
    if (runtimeSized)
      for (Type t : func.getArgumentTypes())
        if (auto m = dyn_cast<MemRefType>(t))
          numSizes += m.getNumDynamicDims();
    int64_t base = runtimeSized ? alignTo(KILN_ARENA_SIZES + 8 * numSizes, alignment)
                   : checks.empty() && !profiled ? 0
                                                 : alignTo(16, alignment);

    int64_t unshared = base;
    for (const Buffer &buf : buffers)
      unshared += buf.size;
    int64_t arenaSize = placeBuffers(buffers, base, alignment);

    MLIRContext *ctx = func.getContext();
    Type i8 = IntegerType::get(ctx, 8);
    auto arenaType = MemRefType::get({std::max<int64_t>(arenaSize, 1)}, i8);
    func.insertArgument(func.getNumArguments(), arenaType, {}, func.getLoc());
    Value arena = entry.getArgument(entry.getNumArguments() - 1);
    replaceByViews(buffers, arena);
    placeThreadScratch(threadAllocs);
    if (runtimeSized) {
      placeRuntimeSized(func, dynamicAllocs, arena);
      bindRuntimeSizes(func, arena);
      // The checks bindRuntimeSizes added.
      checks.clear();
      func.walk([&](CheckOp c) { checks.push_back(c); });
    }
    // Device buffers share one device arena per session, which the runtime
    // allocates on the first run (kilnDeviceArena).
    int64_t deviceArenaSize = 0;
    if (!deviceBuffers.empty()) {
      deviceArenaSize = placeBuffers(deviceBuffers, 0, alignment);
      auto deviceType = MemRefType::get({deviceArenaSize}, i8);
      auto module = getOperation();
      Type i64 = IntegerType::get(ctx, 64);
      auto fnType = FunctionType::get(ctx, {i64}, {deviceType});
      if (!module.lookupSymbol<func::FuncOp>(kDeviceArenaFn)) {
        OpBuilder mb(module.getBodyRegion());
        mb.create<func::FuncOp>(func.getLoc(), kDeviceArenaFn, fnType).setPrivate();
      }
      OpBuilder b(&entry, entry.begin());
      Value size = b.create<arith::ConstantIntOp>(func.getLoc(), deviceArenaSize, 64);
      Value deviceArena =
          b.create<func::CallOp>(func.getLoc(), kDeviceArenaFn, deviceType, size).getResult(0);
      replaceByViews(deviceBuffers, deviceArena);
    }
    if (failed(lowerChecks(func, checks, arena)) || failed(lowerProfileHooks(func, arena)))
      return failure();
    hideEmptyArguments(func);
    // (Large copies split across threads, as elementwise ops do.)
    cpu::stridedCopiesToLoops(func, /*vectorRows=*/true, kParallelAttr,
                              vectorize::kParallelElements);
    Builder b(ctx);
    auto module = getOperation();
    module->setAttr("kiln.arena_size", b.getI64IntegerAttr(arenaSize));
    module->setAttr("kiln.arena_size_unshared", b.getI64IntegerAttr(unshared));
    if (deviceArenaSize)
      module->setAttr("kiln.device_arena_size", b.getI64IntegerAttr(deviceArenaSize));
    return success();
  }
};

} // namespace
} // namespace kiln
