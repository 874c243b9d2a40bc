//===- Emulate.cpp - run CUDA kernels' code on the host -------------------===//
//
// There is no GPU in CI, but kernels' index arithmetic, tiling and
// reductions are where bugs hide. This pass turns what kiln-cuda-offload
// made into host code with the same semantics, so that a model compiled
// with `--cuda-emulate` checks every kernel against the reference outputs:
//  - a `gpu.launch` becomes loops over blocks; its body is split at
//    barriers (top level, or in loops whose bounds every thread shares),
//    and each piece between two barriers loops over the block's threads,
//    so every thread finishes a phase before any starts the next;
//  - shared memory becomes one host buffer; a thread's private memory gets
//    one slice per thread of the block; both are filled with garbage (NaN)
//    as each block starts, as on a GPU;
//  - device buffers, copies and the upload of constants become host ones;
//  - one-thread-per-element loop nests stay host loops.
//
//===----------------------------------------------------------------------===//
#include "providers/Passes.h"
#include "providers/cuda/Cuda.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_CUDAEMULATE
#include "providers/Passes.h.inc"

namespace {

MemRefType hostType(Type t) {
  auto m = cast<MemRefType>(t);
  return MemRefType::get(m.getShape(), m.getElementType(), m.getLayout());
}

bool containsBarrier(Operation *op) {
  return op->walk([](gpu::BarrierOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

class LaunchEmulator {
public:
  LaunchEmulator(gpu::LaunchOp launch) : launch(launch) {}

  LogicalResult run() {
    Location loc = launch.getLoc();
    OpBuilder b(launch);
    Block &body = launch.getBody().front();
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    block = launch.getBlockSizeOperandValues();
    map.map(launch.getGridSize().x, grid.x);
    map.map(launch.getGridSize().y, grid.y);
    map.map(launch.getGridSize().z, grid.z);
    map.map(launch.getBlockSize().x, block.x);
    map.map(launch.getBlockSize().y, block.y);
    map.map(launch.getBlockSize().z, block.z);
    for (Value v : {launch.getThreadIds().x, launch.getThreadIds().y,
                    launch.getThreadIds().z})
      perThread.insert(v);
    // Shared memory: one buffer, each block writes before it reads.
    for (BlockArgument arg : launch.getWorkgroupAttributions())
      map.map(
          arg,
          b.create<memref::AllocOp>(loc, hostType(arg.getType())).getResult());
    // Private memory: one slice per thread.
    if (!launch.getPrivateAttributions().empty()) {
      std::optional<int64_t> x = getConstantIntValue(block.x),
                             y = getConstantIntValue(block.y),
                             z = getConstantIntValue(block.z);
      if (!x || !y || !z)
        return launch.emitError(
            "kiln-cuda-emulate: private memory needs a constant block size");
      for (BlockArgument arg : launch.getPrivateAttributions()) {
        auto t = cast<MemRefType>(arg.getType());
        SmallVector<int64_t> shape{*x * *y * *z};
        llvm::append_range(shape, t.getShape());
        Value slices = b.create<memref::AllocOp>(
            loc, MemRefType::get(shape, t.getElementType()));
        map.map(arg, slices);
        privates.insert(slices);
      }
    }
    Value zero = b.create<arith::ConstantIndexOp>(loc, 0),
          one = b.create<arith::ConstantIndexOp>(loc, 1);
    gpu::KernelDim3 ids = launch.getBlockIds();
    for (auto [id, size] :
         {std::pair(ids.z, grid.z), {ids.y, grid.y}, {ids.x, grid.x}}) {
      auto loop = b.create<scf::ForOp>(loc, zero, size, one);
      map.map(id, loop.getInductionVar());
      b.setInsertionPoint(loop.getBody()->getTerminator());
    }
    // A block starts with garbage in shared and private memory, not the
    // previous block's data: NaN (floats) or a pattern (integers), so that
    // a kernel reading before it writes fails its check.
    SmallVector<BlockArgument> memory(launch.getWorkgroupAttributions());
    llvm::append_range(memory, launch.getPrivateAttributions());
    for (BlockArgument arg : memory) {
      Value buffer = map.lookup(arg);
      Type elt = cast<MemRefType>(buffer.getType()).getElementType();
      TypedAttr poison;
      if (auto f = dyn_cast<FloatType>(elt))
        poison = b.getFloatAttr(f, APFloat::getNaN(f.getFloatSemantics()));
      else if (elt.isIntOrIndex())
        poison = b.getIntegerAttr(elt, 0x5A5A5A5A);
      if (poison)
        b.create<linalg::FillOp>(
            loc, b.create<arith::ConstantOp>(loc, poison).getResult(), buffer);
    }
    if (failed(emitBlock(body, b)))
      return failure();
    launch.erase();
    return success();
  }

private:
  /// Emits `src`'s ops at `b`: uniform ones as they are, the others in a
  /// loop over threads per stretch between barriers.
  LogicalResult emitBlock(Block &src, OpBuilder &b) {
    SmallVector<Operation *> phase;
    for (Operation &op : src) {
      if (&op == src.getTerminator() &&
          isa<gpu::TerminatorOp, scf::YieldOp>(op))
        continue;
      if (containsBarrier(&op)) {
        if (failed(flush(phase, b)))
          return failure();
        if (isa<gpu::BarrierOp>(op))
          continue;
        auto loop = dyn_cast<scf::ForOp>(op);
        if (!loop || loop.getNumRegionIterArgs() != 0 ||
            llvm::any_of(op.getOperands(),
                         [&](Value v) { return perThread.contains(v); }))
          return op.emitError(
              "kiln-cuda-emulate: a barrier must be at the kernel's top level "
              "or in a loop with bounds shared by all threads");
        auto copy = b.create<scf::ForOp>(
            loop.getLoc(), map.lookupOrDefault(loop.getLowerBound()),
            map.lookupOrDefault(loop.getUpperBound()),
            map.lookupOrDefault(loop.getStep()));
        map.map(loop.getInductionVar(), copy.getInductionVar());
        OpBuilder inner = OpBuilder::atBlockTerminator(copy.getBody());
        if (failed(emitBlock(*loop.getBody(), inner)))
          return failure();
        continue;
      }
      bool uniform = op.getNumRegions() == 0 && isMemoryEffectFree(&op) &&
                     llvm::none_of(op.getOperands(), [&](Value v) {
                       return perThread.contains(v);
                     });
      if (uniform) {
        b.clone(op, map);
        continue;
      }
      for (Value r : op.getResults())
        perThread.insert(r);
      phase.push_back(&op);
    }
    return flush(phase, b);
  }

  /// One loop over the block's threads running `phase`.
  LogicalResult flush(SmallVectorImpl<Operation *> &phase, OpBuilder &b) {
    if (phase.empty())
      return success();
    Location loc = phase.front()->getLoc();
    OpBuilder::InsertionGuard g(b);
    Value zero = b.create<arith::ConstantIndexOp>(loc, 0),
          one = b.create<arith::ConstantIndexOp>(loc, 1);
    gpu::KernelDim3 tids = launch.getThreadIds();
    SmallVector<Value> ivs;
    for (auto [id, size] :
         {std::pair(tids.z, block.z), {tids.y, block.y}, {tids.x, block.x}}) {
      auto loop = b.create<scf::ForOp>(loc, zero, size, one);
      map.map(id, loop.getInductionVar());
      ivs.push_back(loop.getInductionVar());
      b.setInsertionPoint(loop.getBody()->getTerminator());
    }
    Value linear = b.create<arith::AddIOp>(
        loc,
        b.create<arith::MulIOp>(
            loc,
            b.create<arith::AddIOp>(
                loc, b.create<arith::MulIOp>(loc, ivs[0], block.y), ivs[1]),
            block.x),
        ivs[2]);
    // A thread's values from earlier phases (its index, its row) are
    // computed again; on the GPU they simply stay in registers.
    for (Operation *op : phase) {
      WalkResult crossed = op->walk([&](Operation *inner) {
        for (Value v : inner->getOperands())
          if (failed(recompute(v, b)))
            return WalkResult::interrupt();
        return WalkResult::advance();
      });
      if (crossed.wasInterrupted())
        return op->emitError(
            "kiln-cuda-emulate: a thread's value that is not pure arithmetic "
            "is used across a barrier");
    }
    SmallVector<Operation *> clones;
    for (Operation *op : phase)
      clones.push_back(b.clone(*op, map));
    // This thread's slice of private memory.
    for (Operation *clone : clones)
      clone->walk([&](Operation *op) {
        OpBuilder ob(op);
        auto at = [&](ValueRange indices) {
          SmallVector<Value> all{linear};
          llvm::append_range(all, indices);
          return all;
        };
        if (auto load = dyn_cast<memref::LoadOp>(op);
            load && privates.contains(load.getMemRef())) {
          auto repl = ob.create<memref::LoadOp>(load.getLoc(), load.getMemRef(),
                                                at(load.getIndices()));
          load.replaceAllUsesWith(repl.getResult());
          load.erase();
        } else if (auto store = dyn_cast<memref::StoreOp>(op);
                   store && privates.contains(store.getMemRef())) {
          ob.create<memref::StoreOp>(store.getLoc(), store.getValue(),
                                     store.getMemRef(), at(store.getIndices()));
          store.erase();
        }
      });
    for (Operation *op : phase)
      for (Value r : op->getResults())
        ended.insert(r);
    phase.clear();
    return success();
  }

  LogicalResult recompute(Value v, OpBuilder &b) {
    if (!ended.contains(v))
      return success();
    Operation *def = v.getDefiningOp();
    if (!def || def->getNumRegions() != 0 || !isMemoryEffectFree(def))
      return failure();
    for (Value operand : def->getOperands())
      if (failed(recompute(operand, b)))
        return failure();
    b.clone(*def, map);
    return success();
  }

  gpu::LaunchOp launch;
  gpu::KernelDim3 block;
  IRMapping map;
  llvm::DenseSet<Value> perThread, ended, privates;
};

/// The memref whose address `kilnDeviceUploadOnce` got.
Value addressed(Value address) {
  auto cast = address.getDefiningOp<arith::IndexCastOp>();
  auto ptr =
      cast
          ? cast.getIn().getDefiningOp<memref::ExtractAlignedPointerAsIndexOp>()
          : nullptr;
  return ptr ? ptr.getSource() : Value();
}

struct CudaEmulatePass : public impl::CudaEmulateBase<CudaEmulatePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::LaunchOp> launches;
    module.walk([&](gpu::LaunchOp l) { launches.push_back(l); });
    for (gpu::LaunchOp l : launches)
      if (failed(LaunchEmulator(l).run()))
        return signalPassFailure();
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) { ops.push_back(op); });
    for (Operation *op : ops) {
      OpBuilder b(op);
      if (auto alloc = dyn_cast<gpu::AllocOp>(op)) {
        Value host = b.create<memref::AllocOp>(op->getLoc(), alloc.getType(),
                                               alloc.getDynamicSizes());
        alloc.getMemref().replaceAllUsesWith(host);
        op->erase();
      } else if (isa<gpu::DeallocOp>(op)) {
        op->erase();
      } else if (auto copy = dyn_cast<gpu::MemcpyOp>(op)) {
        b.create<memref::CopyOp>(op->getLoc(), copy.getSrc(), copy.getDst());
        op->erase();
      } else if (auto call = dyn_cast<func::CallOp>(op);
                 call && call.getCallee() == kDeviceUploadOnceFn) {
        Value dst = addressed(call.getOperand(0)),
              src = addressed(call.getOperand(1));
        if (!dst || !src) {
          call.emitError("kiln-cuda-emulate: cannot tell which buffers this "
                         "upload copies");
          return signalPassFailure();
        }
        b.create<memref::CopyOp>(op->getLoc(), src, dst);
        op->erase();
      } else if (op->hasAttr(kDeviceLoopAttr)) {
        op->removeAttr(kDeviceLoopAttr);
      }
    }
    if (auto fn = module.lookupSymbol<func::FuncOp>(kDeviceUploadOnceFn);
        fn && fn.symbolKnownUseEmpty(module))
      fn.erase();
  }
};

} // namespace
} // namespace kiln
