//===- OutlineLoops.cpp - kiln-outline-loops ------------------------------===//
//
// One function per top-level loop nest (see Passes.td for why).
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_OUTLINELOOPS
#include "passes/Passes.h.inc"

namespace {

/// Values a nest may take as arguments: scalars, and buffers the bare-pointer
/// calling convention can pass.
bool passable(Value v) {
  if (auto m = dyn_cast<MemRefType>(v.getType()))
    return m.hasStaticShape() && m.getLayout().isIdentity();
  return v.getType().isIntOrIndexOrFloat();
}

/// A buffer of run-time size with the identity layout travels as a static
/// one-element view of its pointer plus its dynamic sizes; the function
/// rebuilds the view. (Left in the caller, nests of run-time size made one
/// function of 150k lines and LLVM's codegen super-linear.)
MemRefType dynamicBuffer(Value v) {
  auto m = dyn_cast<MemRefType>(v.getType());
  return m && !m.hasStaticShape() && m.getLayout().isIdentity() ? m
                                                                : MemRefType();
}

/// The caller's side: the pointer as memref<1xT> and the dynamic sizes.
void passDynamicBuffer(OpBuilder &b, Location loc, Value v,
                       SmallVectorImpl<Value> &args) {
  auto m = cast<MemRefType>(v.getType());
  auto ptrType = MemRefType::get(
      {1}, m.getElementType(), MemRefLayoutAttrInterface(), m.getMemorySpace());
  args.push_back(b.create<memref::ReinterpretCastOp>(
      loc, ptrType, v, b.getIndexAttr(0),
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)}));
  for (int64_t d = 0; d < m.getRank(); ++d)
    if (m.isDynamicDim(d))
      args.push_back(b.create<memref::DimOp>(loc, v, d));
}

/// The function's side: the row-major view of type m over the pointer
/// argument, with sizes from the arguments that follow it.
Value rebuildDynamicBuffer(OpBuilder &b, Location loc, MemRefType m,
                           ArrayRef<BlockArgument> &args) {
  Value ptr = args.front();
  args = args.drop_front();
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d < m.getRank(); ++d) {
    if (m.isDynamicDim(d)) {
      sizes.push_back(Value(args.front()));
      args = args.drop_front();
    } else {
      sizes.push_back(b.getIndexAttr(m.getDimSize(d)));
    }
  }
  // Static where every inner size is, as the identity layout's strides.
  SmallVector<OpFoldResult> strides(m.getRank(), b.getIndexAttr(1));
  for (int64_t d = m.getRank() - 2; d >= 0; --d) {
    auto inner = getConstantIntValue(strides[d + 1]);
    auto size = getConstantIntValue(sizes[d + 1]);
    if (inner && size) {
      strides[d] = b.getIndexAttr(*inner * *size);
      continue;
    }
    if (inner == 1) {
      strides[d] = sizes[d + 1];
      continue;
    }
    strides[d] =
        b.create<arith::MulIOp>(
             loc, getValueOrCreateConstantIndexOp(b, loc, strides[d + 1]),
             getValueOrCreateConstantIndexOp(b, loc, sizes[d + 1]))
            .getResult();
  }
  return b.create<memref::ReinterpretCastOp>(loc, m, ptr, b.getIndexAttr(0),
                                             sizes, strides);
}

/// Ops cloned into the function instead of passed (loop bounds stay
/// constants there).
bool cloneable(Value v) {
  Operation *def = v.getDefiningOp();
  // (Also other pure ops of no operands: the masks of vector.constant_mask,
  // whose vector<Nxi1> no function could take, kept a stride-2 conv's
  // im2col blocks on one thread.)
  return def && (def->hasTrait<OpTrait::ConstantLike>() ||
                 (def->getNumOperands() == 0 && def->getNumRegions() == 0 &&
                  isPure(def)));
}

/// Views a function rebuilds from the values it gets, instead of taking
/// them (a strided subview cannot travel as a bare pointer).
bool isRebuiltView(Operation *op) {
  return isa<memref::SubViewOp, memref::CollapseShapeOp, memref::ExpandShapeOp,
             memref::ReinterpretCastOp, memref::CastOp>(op);
}

/// Pure vector values the function recomputes from what it gets, as it
/// does views: no function could take them (a 14-row matmul tile's start,
/// vector.inserts of a constant row, kept its row blocks on one thread).
bool isRebuiltVector(Operation *op) {
  return op->getNumRegions() == 0 && op->getNumResults() == 1 && isPure(op) &&
         isa<VectorType>(op->getResult(0).getType());
}

struct OutlineLoopsPass : public impl::OutlineLoopsBase<OutlineLoopsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    llvm::DenseMap<Operation *, int64_t> next;
    for (func::FuncOp func : funcs) {
      if (func.isDeclaration() || func->hasAttr("kiln.outlined"))
        continue;
      for (Operation &op : llvm::make_early_inc_range(func.getBody().front()))
        if (isa<scf::ForOp, scf::ParallelOp>(op))
          outline(func, &op, next[func]);
    }
    // Parallel loops inside host loops (a matmul's row tiles in a
    // convolution's loop over images) become task functions where they
    // are, inner ones first (the walk is post-order). One inside another
    // parallel loop runs on its own threads when the outer one has too few
    // iterations to split (a decode step's one row: its columns split).
    SmallVector<scf::ForOp> nested;
    module.walk([&](scf::ForOp loop) {
      if (loop->hasAttr(kParallelAttr))
        nested.push_back(loop);
    });
    for (scf::ForOp loop : nested) {
      auto func = loop->getParentOfType<func::FuncOp>();
      outline(func, loop, next[func]);
    }
    // One left (a view the function cannot rebuild) runs as a plain loop
    // (counted: a parallel loop lost silently is a slowdown).
    module.walk([&](scf::ForOp loop) {
      numSerial += loop->removeAttr(kParallelAttr) != nullptr;
    });
    // For `kiln compile --report`.
    // How far the split scales: loops with fewer iterations than 8 or 32
    // threads leave some of them idle.
    Builder b(&getContext());
    for (auto [key, n] :
         {std::pair("kiln.report.parallel_loops", numTasks),
          {"kiln.report.parallel_loops_under_8_tasks", numUnder8},
          {"kiln.report.parallel_loops_under_32_tasks", numUnder32},
          {"kiln.report.parallel_loops_runtime_trips", numRuntime},
          {"kiln.report.parallel_loops_left_serial", numSerial}})
      if (n)
        module->setAttr(key, b.getI64IntegerAttr(n));
  }
  // Parallel loops, those whose iterations make fewer than 8 or 32
  // ranges of at least their grain (they cannot use 8 or 32 threads), and
  // those whose trip count is known only at run time.
  int64_t numTasks = 0, numUnder8 = 0, numUnder32 = 0, numRuntime = 0,
          numSerial = 0;

  void outline(func::FuncOp func, Operation *nest, int64_t &next) {
    // Device code stays where gpu-to-llvm expects it.
    bool device = false;
    nest->walk([&](Operation *op) {
      if (op->getDialect() && op->getDialect()->getNamespace() == "gpu")
        device = true;
    });
    if (device)
      return;
    llvm::SetVector<Value> used;
    for (Value v : nest->getOperands())
      used.insert(v);
    getUsedValuesDefinedAbove(nest->getRegions(), used);
    // What the function takes or clones (leaves), and the views it
    // rebuilds from them, operands first.
    llvm::SetVector<Value> leaves;
    SmallVector<Operation *> views;
    llvm::DenseSet<Operation *> seen;
    std::function<bool(Value)> collect = [&](Value v) {
      if (cloneable(v) || passable(v) || dynamicBuffer(v)) {
        leaves.insert(v);
        return true;
      }
      Operation *def = v.getDefiningOp();
      if (!def || !(isRebuiltView(def) || isRebuiltVector(def)))
        return false;
      if (seen.contains(def))
        return true;
      for (Value operand : def->getOperands())
        if (!collect(operand))
          return false;
      seen.insert(def);
      views.push_back(def);
      return true;
    };
    for (Value v : used)
      if (!collect(v))
        return;
    // A loop whose iterations are independent (kiln.parallel) becomes a
    // task function over a range of its iterations, [lo, hi) of 0..n; the
    // runtime's kilnParallelFor runs it on the session's threads.
    auto parallel = dyn_cast<scf::ForOp>(nest);
    if (parallel &&
        (!parallel->hasAttr(kParallelAttr) || parallel.getNumResults()))
      parallel = nullptr;
    SmallVector<Value> args;
    OpBuilder cb(nest);
    if (parallel) {
      Location loc = nest->getLoc();
      Value lb = parallel.getLowerBound(), ub = parallel.getUpperBound(),
            step = parallel.getStep();
      Value span = cb.create<arith::SubIOp>(loc, ub, lb);
      Value up = cb.create<arith::AddIOp>(
          loc, span,
          cb.create<arith::SubIOp>(loc, step,
                                   cb.create<arith::ConstantIndexOp>(loc, 1)));
      args.push_back(cb.create<arith::ConstantIndexOp>(loc, 0));
      args.push_back(cb.create<arith::DivUIOp>(loc, up, step));
    }
    for (Value v : leaves) {
      if (cloneable(v))
        continue;
      if (passable(v))
        args.push_back(v);
      else
        passDynamicBuffer(cb, nest->getLoc(), v, args);
    }
    OpBuilder b(func);
    b.setInsertionPointToEnd(func->getParentOfType<ModuleOp>().getBody());
    SmallVector<Type> argTypes;
    for (Value v : args)
      argTypes.push_back(v.getType());
    std::string name = (func.getSymName() + "_loop" + std::to_string(next++)).str();
    auto outlined = b.create<func::FuncOp>(nest->getLoc(), name,
                                           b.getFunctionType(argTypes, nest->getResultTypes()));
    outlined.setPrivate();
    outlined->setAttr("kiln.outlined", b.getUnitAttr());
    // Carried to the llvm.func by convert-func-to-llvm: LLVM would inline
    // the one call back. A task function is called through
    // kilnParallelFor once Emit has lowered its call (ParallelTasks.h).
    SmallVector<Attribute> passthrough{b.getStringAttr("noinline")};
    if (parallel) {
      // "kiln-parallel-task"="<grain>".
      auto grain = parallel->getAttrOfType<IntegerAttr>(kParallelAttr);
      passthrough.push_back(b.getArrayAttr(
          {b.getStringAttr(kParallelTaskFnAttr),
           b.getStringAttr(std::to_string(grain ? grain.getInt() : 1))}));
      ++numTasks;
      std::optional<int64_t> trips = constantTripCount(parallel.getLowerBound(),
                                                       parallel.getUpperBound(), parallel.getStep());
      int64_t ranges =
          trips ? *trips / std::max<int64_t>(1, grain ? grain.getInt() : 1) : 0;
      numUnder8 += trips && ranges < 8;
      numUnder32 += trips && ranges < 32;
      numRuntime += !trips;
    }
    outlined->setAttr("passthrough", b.getArrayAttr(passthrough));
    Block *entry = outlined.addEntryBlock();
    OpBuilder fb = OpBuilder::atBlockBegin(entry);
    IRMapping map;
    ArrayRef<BlockArgument> rest = entry->getArguments();
    if (parallel)
      rest = rest.drop_front(2);
    for (Value v : leaves) {
      if (cloneable(v)) {
        map.map(v, fb.clone(*v.getDefiningOp())->getResult(0));
      } else if (passable(v)) {
        map.map(v, rest.front());
        rest = rest.drop_front();
      } else {
        map.map(v, rebuildDynamicBuffer(fb, nest->getLoc(), dynamicBuffer(v),
                                        rest));
      }
    }
    for (Operation *view : views)
      fb.clone(*view, map);
    if (parallel) {
      // for t in [lo, hi): the body at iv = lb + t * step.
      Location loc = nest->getLoc();
      Value one = fb.create<arith::ConstantIndexOp>(loc, 1);
      auto tasks = fb.create<scf::ForOp>(loc, entry->getArgument(0),
                                         entry->getArgument(1), one);
      OpBuilder tb = OpBuilder::atBlockBegin(tasks.getBody());
      Value lb = map.lookupOrDefault(parallel.getLowerBound());
      Value step = map.lookupOrDefault(parallel.getStep());
      Value iv = tb.create<arith::AddIOp>(
          loc, lb,
          tb.create<arith::MulIOp>(loc, tasks.getInductionVar(), step));
      map.map(parallel.getInductionVar(), iv);
      for (Operation &op : parallel.getBody()->without_terminator())
        tb.clone(op, map);
      fb.create<func::ReturnOp>(loc);
    } else {
      Operation *copy = fb.clone(*nest, map);
      fb.create<func::ReturnOp>(nest->getLoc(), copy->getResults());
    }
    auto call = cb.create<func::CallOp>(nest->getLoc(), outlined, args);
    nest->replaceAllUsesWith(call.getResults());
    nest->erase();
  }
};

} // namespace
} // namespace kiln
