//===- Offload.cpp - place CUDA partitions' buffers and kernels -----------===//
//
// After bufferization, structured ops tagged by the CUDA provider run on
// the device. Each buffer they touch gets a device twin (or lives only on
// the device when the host never uses it); copies are inserted only where
// the side that is about to use a buffer holds a stale copy, so a tensor
// crosses once per direction however many device ops read it. Contractions
// and reductions then get shared-memory kernels (Kernels.h); the other
// device ops become parallel loop nests (parallel dims outermost, the
// innermost tiled into thread blocks) that gpu-map-parallel-loops and
// convert-parallel-loops-to-gpu turn into kernels.
//
//===----------------------------------------------------------------------===//

#include "providers/Passes.h"
#include "providers/cuda/Cuda.h"
#include "providers/cuda/Kernels.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/MapVector.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_CUDAOFFLOAD
#include "providers/Passes.h.inc"

namespace {

bool isDeviceOp(Operation *op) {
  return isa<linalg::LinalgOp>(op) && op->hasAttr(kCudaDeviceAttr);
}

struct RootUse {
  Value root;
  bool writes;
};

/// Memref roots an op (and its nested ops) touches, with write effects.
SmallVector<RootUse> rootsUsedBy(Operation *op) {
  llvm::MapVector<Value, bool> uses;
  auto note = [&](Value v, bool write) {
    if (!isa<MemRefType>(v.getType()))
      return;
    Value r = rootOf(v);
    uses[r] = uses.lookup(r) || write;
  };
  op->walk([&](Operation *o) {
    // A size read (run-time sizes) needs the buffer's descriptor, which
    // the host has either way, not its data.
    if (isa<ViewLikeOpInterface, memref::DimOp>(o))
      return;
    auto mem = dyn_cast<MemoryEffectOpInterface>(o);
    for (Value v : o->getOperands()) {
      bool write = true;
      if (mem) {
        SmallVector<MemoryEffects::EffectInstance> effects;
        mem.getEffectsOnValue(v, effects);
        write = llvm::any_of(effects, [](auto &e) {
          return isa<MemoryEffects::Write>(e.getEffect());
        });
      } else if (isPure(o)) {
        write = false;
      }
      note(v, write);
    }
  });
  SmallVector<RootUse> out;
  for (auto &[r, w] : uses)
    out.push_back({r, w});
  return out;
}

struct BufferState {
  Value device;       // the device twin (or the root itself if device-only)
  bool hostValid = true;
  bool deviceValid = false;
  bool deviceOnly = false;
};

bool isConstantGlobal(Value root) {
  auto get = root.getDefiningOp<memref::GetGlobalOp>();
  if (!get)
    return false;
  auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(get, get.getNameAttr());
  return global && global.getConstant();
}

/// `kilnDeviceUploadOnce(dst, src, bytes)`, declared on first use.
void createUploadOnce(OpBuilder &b, Location loc, Value device, Value host) {
  auto module = b.getBlock()->getParentOp()->getParentOfType<ModuleOp>();
  Type i64 = b.getI64Type();
  auto fnType = b.getFunctionType({i64, i64, i64}, {});
  if (!module.lookupSymbol<func::FuncOp>(kDeviceUploadOnceFn)) {
    OpBuilder mb(module.getBodyRegion());
    auto fn = mb.create<func::FuncOp>(loc, kDeviceUploadOnceFn, fnType);
    fn.setPrivate();
  }
  auto type = cast<MemRefType>(host.getType());
  int64_t bytes = type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
  auto addr = [&](Value m) -> Value {
    return b.create<arith::IndexCastOp>(
        loc, i64, b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, m));
  };
  Value args[] = {addr(device), addr(host), b.create<arith::ConstantIntOp>(loc, bytes, 64)};
  b.create<func::CallOp>(loc, kDeviceUploadOnceFn, TypeRange(), args);
}

struct CudaOffloadPass : public impl::CudaOffloadBase<CudaOffloadPass> {
  using CudaOffloadBase::CudaOffloadBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isDeclaration() && failed(offload(func)))
        return signalPassFailure();
    // For `kiln compile --report`.
    Builder b(&getContext());
    for (auto [key, n] :
         {std::pair("kiln.report.cuda_tiled_contractions", numContractions),
          {"kiln.report.cuda_parallel_reductions", numReductions},
          {"kiln.report.cuda_per_element_kernels", numPerElement},
          {"kiln.report.cuda_ops_on_host", numOnHost}})
      if (n)
        getOperation()->setAttr(key, b.getI64IntegerAttr(n));
  }

  int64_t numContractions = 0, numReductions = 0, numPerElement = 0,
          numOnHost = 0;

  /// The device value for `v` (a view of a host root): the same views
  /// applied to the root's device twin, rebuilt before `before`.
  Value deviceValueFor(Value v, Value devRoot, OpBuilder &b) {
    SmallVector<Operation *> chain;
    Value cur = v;
    while (auto view = cur.getDefiningOp<ViewLikeOpInterface>()) {
      chain.push_back(view);
      cur = view.getViewSource();
    }
    IRMapping map;
    map.map(cur, devRoot);
    Value result = devRoot;
    for (Operation *view : llvm::reverse(chain)) {
      Operation *clone = b.clone(*view, map);
      result = clone->getResult(0);
      map.map(view->getResult(0), result);
    }
    return result;
  }

  LogicalResult offload(func::FuncOp func) {
    Block &entry = func.getBody().front();
    // Device ops nested in host control flow run on the host.
    // So do those reading a buffer whose layout is only known at run time
    // (a result of host control flow): its device twin cannot be planned.
    func.walk([&](Operation *op) {
      if (!isDeviceOp(op))
        return;
      bool planned = op->getBlock() == &entry &&
                     llvm::all_of(rootsUsedBy(op), [](const RootUse &u) {
                       auto t = cast<MemRefType>(u.root.getType());
                       return t.getLayout().isIdentity();
                     });
      if (!planned) {
        op->removeAttr(kCudaDeviceAttr);
        ++numOnHost;
      }
    });
    OpBuilder b(func.getContext());
    llvm::DenseMap<Value, BufferState> state;
    // With device I/O the arguments are device memory: host ops get a host
    // copy, stale until a host op needs it.
    if (deviceIO) {
      b.setInsertionPointToStart(&entry);
      for (BlockArgument arg : entry.getArguments()) {
        auto type = dyn_cast<MemRefType>(arg.getType());
        if (!type)
          continue;
        // (Its run-time sizes are the argument's.)
        SmallVector<Value> sizes;
        llvm::SmallPtrSet<Operation *, 4> sizeReads;
        for (int64_t d = 0; d < type.getRank(); ++d)
          if (type.isDynamicDim(d)) {
            sizes.push_back(b.create<memref::DimOp>(func.getLoc(), arg, d));
            sizeReads.insert(sizes.back().getDefiningOp());
          }
        Value host = b.create<memref::AllocOp>(func.getLoc(), type, sizes);
        arg.replaceAllUsesExcept(host, sizeReads);
        BufferState s;
        s.device = arg;
        s.hostValid = false;
        s.deviceValid = true;
        state[host] = s;
      }
      func->setAttr(kDeviceIOAttr, b.getUnitAttr());
    }
    // The copies bufferization makes for a CUDA partition's pads and
    // slices are memref.copy, not linalg ops: one that moves data a device
    // op uses runs on the device too (else each padded conv input would go
    // to the host and back).
    llvm::DenseSet<Value> deviceRoots;
    for (Operation &op : entry)
      if (isDeviceOp(&op))
        for (const RootUse &u : rootsUsedBy(&op))
          deviceRoots.insert(u.root);
    for (Operation &op : llvm::make_early_inc_range(entry)) {
      auto copy = dyn_cast<memref::CopyOp>(op);
      if (!copy || (!deviceRoots.contains(rootOf(copy.getSource())) &&
                    !deviceRoots.contains(rootOf(copy.getTarget()))))
        continue;
      b.setInsertionPoint(copy);
      auto onDevice = b.create<linalg::CopyOp>(copy.getLoc(), copy.getSource(), copy.getTarget());
      onDevice->setAttr(kCudaDeviceAttr, b.getStringAttr("cuda"));
      copy.erase();
    }
    SmallVector<Operation *> deviceOps;
    llvm::DenseSet<Value> hostRoots;
    for (Operation &op : entry) {
      if (isDeviceOp(&op)) {
        deviceOps.push_back(&op);
        continue;
      }
      if (isa<ViewLikeOpInterface>(op))
        continue;
      for (const RootUse &u : rootsUsedBy(&op))
        hostRoots.insert(u.root);
    }
    if (deviceOps.empty() && !deviceIO)
      return success();

    llvm::DenseSet<Value> hostTouched; // roots host ops used so far
    SmallVector<Value> toFree;
    auto stateFor = [&](Value root) -> BufferState & {
      auto it = state.find(root);
      if (it != state.end())
        return it->second;
      BufferState s;
      auto type = cast<MemRefType>(root.getType());
      auto alloc = root.getDefiningOp<memref::AllocOp>();
      if (alloc && !hostRoots.contains(root)) {
        // Only device ops touch it: the buffer lives on the device alone.
        b.setInsertionPoint(alloc);
        auto dev = b.create<gpu::AllocOp>(alloc.getLoc(), type, Type(),
                                          ValueRange(), alloc.getDynamicSizes(),
                                          ValueRange(), false);
        alloc.getResult().replaceAllUsesWith(dev.getMemref());
        alloc.erase();
        s.device = dev.getMemref();
        s.deviceOnly = true;
        s.deviceValid = true;
        s.hostValid = false;
        state[s.device] = s;
        toFree.push_back(s.device);
        return state[s.device];
      }
      // A twin of run-time size follows its root, whose sizes it takes.
      SmallVector<Value> sizes;
      if (type.hasStaticShape()) {
        b.setInsertionPointToStart(&entry);
      } else {
        if (Operation *def = root.getDefiningOp())
          b.setInsertionPointAfter(def);
        else
          b.setInsertionPointToStart(&entry);
        for (int64_t d = 0; d < type.getRank(); ++d)
          if (type.isDynamicDim(d))
            sizes.push_back(b.create<memref::DimOp>(func.getLoc(), root, d));
      }
      auto dev =
          b.create<gpu::AllocOp>(func.getLoc(), type, Type(), ValueRange(),
                                 sizes, ValueRange(), false);
      s.device = dev.getMemref();
      if (isConstantGlobal(root)) {
        // Lives for the whole session: no dealloc. Uploaded before any
        // device work, so the upload needs no synchronization point
        // between kernels.
        dev->setAttr(kDeviceConstantAttr, b.getUnitAttr());
        b.setInsertionPointAfter(dev);
        createUploadOnce(b, func.getLoc(), s.device, b.clone(*root.getDefiningOp())->getResult(0));
        s.deviceValid = true;
        return state[root] = s;
      }
      // A host allocation nothing has touched yet holds nothing to copy;
      // once a host op has used it, the twin starts stale.
      s.deviceValid = alloc && !hostTouched.contains(root);
      toFree.push_back(s.device);
      return state[root] = s;
    };

    for (Operation &opRef : llvm::make_early_inc_range(entry)) {
      Operation *op = &opRef;
      if (isa<ViewLikeOpInterface>(op) || (deviceIO && op->hasTrait<OpTrait::IsTerminator>()))
        continue;
      if (isDeviceOp(op)) {
        auto linalgOp = cast<linalg::LinalgOp>(op);
        // Operands and values captured by the body, by root.
        SmallVector<OpOperand *> memOperands;
        for (OpOperand &o : op->getOpOperands())
          if (isa<MemRefType>(o.get().getType()))
            memOperands.push_back(&o);
        SmallVector<OpOperand *> captured;
        op->walk([&](Operation *inner) {
          if (inner == op)
            return;
          for (OpOperand &o : inner->getOpOperands())
            if (isa<MemRefType>(o.get().getType()) &&
                !op->isAncestor(o.get().getParentBlock()->getParentOp()))
              captured.push_back(&o);
        });
        for (OpOperand *o : llvm::concat<OpOperand *>(memOperands, captured)) {
          Value root = rootOf(o->get());
          BufferState &s = stateFor(root);
          if (!s.deviceValid) {
            b.setInsertionPoint(op);
            toDevice(b, op->getLoc(), s, root);
          }
        }
        for (OpOperand *o : llvm::concat<OpOperand *>(memOperands, captured)) {
          Value root = rootOf(o->get());
          BufferState &s = state.find(root) != state.end() ? state[root] : stateFor(root);
          b.setInsertionPoint(op);
          o->set(s.deviceOnly ? o->get() : deviceValueFor(o->get(), s.device, b));
        }
        for (OpOperand &init : linalgOp.getDpsInitsMutable()) {
          Value root = rootOf(init.get());
          for (auto &[host, s] : state)
            if (s.device == root || host == root)
              s.hostValid = false;
        }
        continue;
      }
      // A host op (or the return): its roots must be current on the host.
      for (const RootUse &u : rootsUsedBy(op)) {
        hostTouched.insert(u.root);
        auto it = state.find(u.root);
        if (it == state.end() || it->second.deviceOnly)
          continue;
        BufferState &s = it->second;
        if (!s.hostValid) {
          b.setInsertionPoint(op);
          b.create<gpu::MemcpyOp>(op->getLoc(), TypeRange(), ValueRange(), u.root, s.device);
          s.hostValid = true;
        }
        if (u.writes)
          s.deviceValid = false;
      }
    }
    Operation *ret = entry.getTerminator();
    b.setInsertionPoint(ret);
    if (deviceIO) {
      // Results are returned in device memory.
      for (OpOperand &result : ret->getOpOperands()) {
        Value v = result.get();
        if (!isa<MemRefType>(v.getType()))
          continue;
        Value root = rootOf(v);
        BufferState &s = stateFor(root);
        b.setInsertionPoint(ret);
        if (!s.deviceValid)
          toDevice(b, ret->getLoc(), s, root);
        if (!s.deviceOnly)
          result.set(deviceValueFor(v, s.device, b));
      }
    }
    // Host buffers only device ops used (through views or not) are dead.
    for (Operation &op : llvm::make_early_inc_range(entry))
      if (isa<memref::AllocOp>(op) && op.use_empty())
        op.erase();
    b.setInsertionPoint(ret);
    for (Value dev : toFree)
      if (!llvm::is_contained(ret->getOperands(), dev))
        b.create<gpu::DeallocOp>(ret->getLoc(), TypeRange(), ValueRange(), dev);

    // Contractions and reductions get shared-memory kernels; the other
    // device ops become parallel loop nests, parallel dims outermost.
    IRRewriter rewriter(func.getContext());
    for (Operation *op : deviceOps) {
      rewriter.setInsertionPoint(op);
      linalg::LinalgOp linalgOp = cast<linalg::LinalgOp>(op);
      if (!isa<linalg::GenericOp>(op)) {
        auto generic = linalg::generalizeNamedOp(rewriter, linalgOp);
        if (failed(generic))
          return op->emitError("kiln-cuda-offload: cannot generalize");
        linalgOp = *generic;
      }
      auto generic = cast<linalg::GenericOp>(linalgOp.getOperation());
      // An empty loop nest changes nothing (and a launch needs a block).
      if (llvm::is_contained(generic.getStaticLoopRanges(), 0)) {
        rewriter.eraseOp(generic);
        continue;
      }
      cuda::SharedMemoryKernel kind = cuda::buildSharedMemoryKernel(rewriter, generic);
      if (kind != cuda::SharedMemoryKernel::None) {
        ++(kind == cuda::SharedMemoryKernel::Contraction ? numContractions : numReductions);
        continue;
      }
      ++numPerElement;
      // Loop order: the innermost (contiguous) parallel dim first, because
      // gpu-map-parallel-loops gives dim 0 to thread/block x (threads along
      // z are limited to 64, blocks along y/z to 65535); then the other
      // parallel dims; reductions last, sequential in each thread.
      SmallVector<unsigned> perm;
      auto iters = generic.getIteratorTypesArray();
      for (unsigned i = 0; i < iters.size(); ++i)
        if (iters[i] == utils::IteratorType::parallel)
          perm.push_back(i);
      unsigned numParallel = perm.size();
      if (numParallel > 1)
        std::rotate(perm.begin(), perm.begin() + numParallel - 1, perm.begin() + numParallel);
      for (unsigned i = 0; i < iters.size(); ++i)
        if (iters[i] != utils::IteratorType::parallel)
          perm.push_back(i);
      if (!llvm::equal(perm, llvm::seq<unsigned>(0, perm.size()))) {
        auto swapped = linalg::interchangeGenericOp(rewriter, generic, perm);
        if (failed(swapped))
          return op->emitError("kiln-cuda-offload: cannot interchange loops");
        generic = *swapped;
      }
      SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
      rewriter.setInsertionPoint(generic);
      scf::ParallelOp par;
      if (numParallel == 0) {
        // A scalar result (a short full reduction, a rank-0 op): one thread
        // runs the sequential loops.
        Location loc = generic.getLoc();
        Value zero = rewriter.create<arith::ConstantIndexOp>(loc, 0);
        Value one = rewriter.create<arith::ConstantIndexOp>(loc, 1);
        par = rewriter.create<scf::ParallelOp>(loc, zero, one, one);
        generic->moveBefore(par.getBody()->getTerminator());
        rewriter.setInsertionPoint(generic);
        if (failed(linalg::linalgOpToLoops(rewriter, generic)))
          return op->emitError("kiln-cuda-offload: cannot build loops");
        rewriter.eraseOp(generic);
        ranges.insert(ranges.begin(), 1);
        numParallel = 1;
      } else {
        auto loops = linalg::linalgOpToParallelLoops(rewriter, generic);
        if (failed(loops))
          return op->emitError("kiln-cuda-offload: cannot build loops");
        rewriter.eraseOp(generic);
        par = loops->empty() ? scf::ParallelOp() : dyn_cast<scf::ParallelOp>(loops->front());
      }
      if (!par)
        return op->emitError("kiln-cuda-offload: cannot build a parallel loop nest");
      // Up to 256 threads along the contiguous dim (now loop 0): all of a
      // short dim, else 256 with a guarded last block.
      SmallVector<int64_t> tiles(numParallel, 1);
      bool runtimeSize = ShapedType::isDynamic(ranges[0]);
      tiles.front() = runtimeSize ? 256 : std::min<int64_t>(256, ranges[0]);
      auto [outer, inner] =
          scf::tileParallelLoop(par, tiles, /*noMinMaxBounds=*/!runtimeSize &&
                                                ranges[0] % tiles.front() == 0);
      outer->setAttr(kDeviceLoopAttr, rewriter.getUnitAttr());
    }
    foldTileBounds(func);
    return success();
  }

  void toDevice(OpBuilder &b, Location loc, BufferState &s, Value root) {
    b.create<gpu::MemcpyOp>(loc, TypeRange(), ValueRange(), s.device, root);
    s.deviceValid = true;
  }

  /// convert-parallel-loops-to-gpu needs a constant bound on each inner
  /// loop: fold the tile sizes (steps built as muli of constants) into the
  /// affine.min bounds, touching nothing else.
  void foldTileBounds(func::FuncOp func) {
    SmallVector<Operation *> ops;
    func.walk([&](Operation *op) {
      if (isa<affine::AffineMinOp, arith::MulIOp>(op))
        ops.push_back(op);
    });
    RewritePatternSet patterns(func.getContext());
    affine::AffineMinOp::getCanonicalizationPatterns(patterns, func.getContext());
    arith::MulIOp::getCanonicalizationPatterns(patterns, func.getContext());
    GreedyRewriteConfig config;
    config.strictMode = GreedyRewriteStrictness::ExistingAndNewOps;
    (void)applyOpPatternsAndFold(ops, std::move(patterns), config);
  }
};

} // namespace
} // namespace kiln
