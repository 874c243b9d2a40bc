//===- Kernels.cpp - shared-memory CUDA kernels for linalg ops ------------===//
//
// One thread per output element re-reads every operand element from global
// memory once per output that uses it, and a reduction runs sequentially in
// one thread. The two shapes that dominate models get kernels of their own,
// built directly as `gpu.launch` ops:
//  - contractions stage 64x16 tiles of both operands in shared memory, so a
//    block reads each operand element once per tile of 64 outputs;
//  - reductions give one block to each output element (or, over an outer
//    dim, to 32 adjacent outputs) and reduce in parallel, first strided
//    partials per thread, then a tree in shared memory.
// Both keep the generic's body (cloned per step) and so its exact
// semantics; only the order in which a reduction combines changes.
//
//===----------------------------------------------------------------------===//
#include "providers/cuda/Kernels.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace kiln::cuda {
namespace {

// Contractions: a 64x64 output tile per block of 16x16 threads, each thread
// computing 4x4 outputs strided by 16 (coalesced stores, no bank conflicts
// on the shared tiles), 16 reduction steps per staged tile.
constexpr int64_t kTile = 64, kTileK = 16, kThreads = 16, kMicro = 4;
// A tile row of 65: threads staging along k write 65 words apart, a
// different bank each (64 apart would be one bank, 16-way conflicts).
constexpr int64_t kPad = 1;
// Reductions: up to 256 threads per output; shorter ones stay sequential.
constexpr int64_t kReduceThreads = 256, kMinReduction = 64;
// Reductions over an outer dim: 32 adjacent outputs per block (a warp's
// coalesced reads), 8 threads along the reduction for each.
constexpr int64_t kColumns = 32, kColumnLanes = 8;
// Below this many rows or columns a contraction tile would be mostly idle.
constexpr int64_t kMinContractionDim = 16;
constexpr int64_t kMaxGridYZ = 65535;

/// Index arithmetic inside a kernel under construction.
struct KernelBuilder {
  OpBuilder &b;
  Location loc;

  Value idx(int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); }
  Value add(Value x, Value y) { return b.create<arith::AddIOp>(loc, x, y); }
  Value mul(Value x, int64_t y) {
    return b.create<arith::MulIOp>(loc, x, idx(y));
  }
  Value lt(Value x, int64_t y) {
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, x, idx(y));
  }
  Value both(Value x, Value y) { return b.create<arith::AndIOp>(loc, x, y); }
  /// A size: a constant made here, or the value the host computed.
  Value get(OpFoldResult v) {
    return getValueOrCreateConstantIndexOp(b, loc, v);
  }
  Value lt(Value x, OpFoldResult y) {
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, x, get(y));
  }

  /// Splits `lin` row-major over `dims` (increasing loop dims) into `iv`.
  void delinearize(Value lin, ArrayRef<unsigned> dims,
                   ArrayRef<OpFoldResult> sizes, SmallVectorImpl<Value> &iv) {
    for (unsigned i = dims.size(); i-- > 0;) {
      if (i == 0) {
        iv[dims[i]] = lin;
        break;
      }
      Value r = get(sizes[dims[i]]);
      iv[dims[i]] = b.create<arith::RemUIOp>(loc, lin, r);
      lin = b.create<arith::DivUIOp>(loc, lin, r);
    }
  }

  /// The operand indices `map` gives at loop point `iv`.
  SmallVector<Value> indices(AffineMap map, ArrayRef<Value> iv) {
    SmallVector<Value> out;
    for (AffineExpr e : map.getResults()) {
      if (auto d = dyn_cast<AffineDimExpr>(e))
        out.push_back(iv[d.getPosition()]);
      else
        out.push_back(b.create<affine::AffineApplyOp>(
            loc, AffineMap::get(map.getNumDims(), 0, e), iv));
    }
    return out;
  }

  /// `then()` under `cond`, yielding nothing.
  void ifThen(Value cond, function_ref<void()> then) {
    auto ifOp = b.create<scf::IfOp>(loc, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    then();
  }
};

/// Clones the generic's body with its block arguments bound to `args`,
/// skipping `skip`; returns the mapping.
IRMapping cloneBody(OpBuilder &b, Block &body, ValueRange args,
                    Operation *skip = nullptr) {
  IRMapping map;
  map.map(body.getArguments().take_front(args.size()), args);
  for (Operation &op : body.without_terminator())
    if (&op != skip)
      b.clone(op, map);
  return map;
}

bool suitsKernel(linalg::GenericOp op) {
  return op.hasPureBufferSemantics() && op.getNumDpsInits() == 1 &&
         llvm::all_of(op->getOperandTypes(),
                      [](Type t) { return isa<MemRefType>(t); }) &&
         op.getBody()->getOps<linalg::IndexOp>().empty() &&
         op.getIndexingMapsArray().back().isProjectedPermutation();
}

/// The product of `dims`' static sizes; kDynamic if one is known only at
/// run time (then the kernel takes it as an argument).
int64_t product(ArrayRef<unsigned> dims, ArrayRef<int64_t> ranges) {
  int64_t p = 1;
  for (unsigned d : dims) {
    if (ShapedType::isDynamic(ranges[d]))
      return ShapedType::kDynamic;
    p *= ranges[d];
  }
  return p;
}

/// Whether a static size is below `bound`; a run-time size is taken to be
/// large (the kernel guards its edges either way).
bool staticBelow(int64_t size, int64_t bound) {
  return !ShapedType::isDynamic(size) && size < bound;
}
bool staticAbove(int64_t size, int64_t bound) {
  return !ShapedType::isDynamic(size) && size > bound;
}

/// (x + y - 1) / y; arith.ceildivui would need arith-expand, which the
/// host pipeline does not run.
Value ceilDivUI(OpBuilder &b, Location loc, Value x, int64_t y) {
  Value sum = b.create<arith::AddIOp>(
      loc, x, b.create<arith::ConstantIndexOp>(loc, y - 1));
  return b.create<arith::DivUIOp>(loc, sum,
                                  b.create<arith::ConstantIndexOp>(loc, y));
}

/// Sizes computed on the host before a launch, folded where static.
struct HostSizes {
  OpBuilder &b;
  Location loc;
  SmallVector<OpFoldResult> loops;

  HostSizes(OpBuilder &b, linalg::GenericOp op) : b(b), loc(op.getLoc()) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    SmallVector<Range> dynamic;
    if (ShapedType::isDynamicShape(ranges))
      dynamic =
          cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc);
    for (auto [d, r] : llvm::enumerate(ranges))
      loops.push_back(ShapedType::isDynamic(r) ? dynamic[d].size
                                               : b.getIndexAttr(r));
  }
  OpFoldResult mul(OpFoldResult x, OpFoldResult y) {
    auto cx = getConstantIntValue(x), cy = getConstantIntValue(y);
    if (cx && cy)
      return b.getIndexAttr(*cx * *cy);
    return b
        .create<arith::MulIOp>(loc, getValueOrCreateConstantIndexOp(b, loc, x),
                               getValueOrCreateConstantIndexOp(b, loc, y))
        .getResult();
  }
  OpFoldResult product(ArrayRef<unsigned> dims) {
    OpFoldResult p = b.getIndexAttr(1);
    for (unsigned d : dims)
      p = mul(p, loops[d]);
    return p;
  }
  OpFoldResult ceilDiv(OpFoldResult x, int64_t y) {
    if (auto cx = getConstantIntValue(x))
      return b.getIndexAttr(llvm::divideCeil(*cx, y));
    return ceilDivUI(b, loc, getValueOrCreateConstantIndexOp(b, loc, x), y);
  }
};

MemRefType sharedType(ArrayRef<int64_t> shape, Type element,
                      gpu::AddressSpace space) {
  return MemRefType::get(
      shape, element, AffineMap(),
      gpu::AddressSpaceAttr::get(element.getContext(), space));
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

/// Loop dims of a contraction: `m` only the first operand reads, `n` only
/// the second, `batch` both (or neither), `k` the reductions.
struct Contraction {
  SmallVector<unsigned> batch, m, n, k;
  int64_t numBatch, numM, numN, numK;
};

std::optional<Contraction> analyzeContraction(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || !suitsKernel(op))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  Contraction c;
  for (auto [d, iter] : llvm::enumerate(op.getIteratorTypesArray())) {
    if (iter == utils::IteratorType::reduction) {
      c.k.push_back(d);
      continue;
    }
    bool inA = maps[0].isFunctionOfDim(d), inB = maps[1].isFunctionOfDim(d);
    (inA && !inB ? c.m : !inA && inB ? c.n : c.batch).push_back(d);
  }
  c.numBatch = product(c.batch, ranges);
  c.numM = product(c.m, ranges);
  c.numN = product(c.n, ranges);
  c.numK = product(c.k, ranges);
  if (c.k.empty() || staticBelow(c.numM, kMinContractionDim) ||
      staticBelow(c.numN, kMinContractionDim) ||
      staticAbove(c.numBatch, kMaxGridYZ) ||
      staticAbove(c.numM, kMaxGridYZ * kTile))
    return std::nullopt;
  return c;
}

/// Whether consecutive elements of the operand's innermost dim follow the
/// reduction (then threads stage a tile along k) rather than its rows.
bool reductionIsInnermost(AffineMap map, ArrayRef<unsigned> rowDims,
                          ArrayRef<unsigned> kDims) {
  if (map.getNumResults() == 0)
    return false;
  AffineExpr last = map.getResults().back();
  auto uses = [&](ArrayRef<unsigned> dims) {
    return llvm::any_of(dims,
                        [&](unsigned d) { return last.isFunctionOfDim(d); });
  };
  return uses(kDims) && !uses(rowDims);
}

void buildContraction(RewriterBase &rw, linalg::GenericOp op,
                      const Contraction &c) {
  Location loc = op.getLoc();
  KernelBuilder kb{rw, loc};
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  // Sizes known only at run time are computed here, before the launch.
  HostSizes host(rw, op);
  ArrayRef<OpFoldResult> sizes = host.loops;
  OpFoldResult numM = host.product(c.m), numN = host.product(c.n),
               numK = host.product(c.k), numBatch = host.product(c.batch);
  OpFoldResult gridX = host.ceilDiv(numN, kTile),
               gridY = host.ceilDiv(numM, kTile);
  Value operands[2] = {op.getDpsInputs()[0], op.getDpsInputs()[1]};
  Value out = op.getDpsInits()[0];
  auto elementOf = [](Value v) {
    return cast<MemRefType>(v.getType()).getElementType();
  };
  Type accType = elementOf(out);

  auto launch = rw.create<gpu::LaunchOp>(
      loc, kb.get(gridX), kb.get(gridY), kb.get(numBatch), kb.idx(kThreads),
      kb.idx(kThreads), kb.idx(1), Value(), Type(), ValueRange(),
      TypeRange{sharedType({kTileK, kTile + kPad}, elementOf(operands[0]),
                           gpu::AddressSpace::Workgroup),
                sharedType({kTileK, kTile + kPad}, elementOf(operands[1]),
                           gpu::AddressSpace::Workgroup)},
      TypeRange{
          sharedType({kMicro, kMicro}, accType, gpu::AddressSpace::Private)});
  Block *body = &launch.getBody().front();
  rw.setInsertionPointToStart(body);
  rw.create<gpu::TerminatorOp>(loc);
  rw.setInsertionPointToStart(body);

  Value tx = launch.getThreadIds().x, ty = launch.getThreadIds().y;
  Value tiles[2] = {launch.getWorkgroupAttributions()[0],
                    launch.getWorkgroupAttributions()[1]};
  Value acc = launch.getPrivateAttributions()[0];
  Value zero = kb.idx(0);
  SmallVector<Value> base(sizes.size(), zero);
  if (!c.batch.empty())
    kb.delinearize(launch.getBlockIds().z, c.batch, sizes, base);
  // Tile origins: rows (m) along block y, columns (n) along block x.
  Value origin[2] = {kb.mul(launch.getBlockIds().y, kTile),
                     kb.mul(launch.getBlockIds().x, kTile)};
  Value tid = kb.add(kb.mul(ty, kThreads), tx);
  ArrayRef<unsigned> rowDims[2] = {c.m, c.n};
  OpFoldResult rows[2] = {numM, numN};

  // Output (i, j) of this thread, and whether it exists.
  auto row = [&](int64_t i) {
    return kb.add(origin[0], kb.add(ty, kb.idx(kThreads * i)));
  };
  auto col = [&](int64_t j) {
    return kb.add(origin[1], kb.add(tx, kb.idx(kThreads * j)));
  };
  auto forEachOutput =
      [&](function_ref<void(int64_t, int64_t, SmallVector<Value> &)> fn) {
        for (int64_t i = 0; i < kMicro; ++i)
          for (int64_t j = 0; j < kMicro; ++j) {
            Value m = row(i), n = col(j);
            kb.ifThen(kb.both(kb.lt(m, numM), kb.lt(n, numN)), [&] {
              SmallVector<Value> iv = base;
              kb.delinearize(m, c.m, sizes, iv);
              kb.delinearize(n, c.n, sizes, iv);
              SmallVector<Value> at = kb.indices(maps[2], iv);
              fn(i, j, at);
            });
          }
      };
  auto accAt = [&](int64_t i, int64_t j) {
    return SmallVector<Value>{kb.idx(i), kb.idx(j)};
  };
  // Outputs past the edge are computed (from zero-padded tiles) but never
  // stored; they start from zero rather than undefined values.
  Value accZero = rw.create<arith::ConstantOp>(loc, rw.getZeroAttr(accType));
  for (int64_t i = 0; i < kMicro; ++i)
    for (int64_t j = 0; j < kMicro; ++j)
      rw.create<memref::StoreOp>(loc, accZero, acc, accAt(i, j));
  forEachOutput([&](int64_t i, int64_t j, SmallVector<Value> &at) {
    Value init = rw.create<memref::LoadOp>(loc, out, at);
    rw.create<memref::StoreOp>(loc, init, acc, accAt(i, j));
  });

  // The reduction, one staged tile of 16 steps at a time.
  Value kTiles = ShapedType::isDynamic(c.numK)
                     ? ceilDivUI(rw, loc, kb.get(numK), kTileK)
                     : kb.idx(llvm::divideCeil(c.numK, kTileK));
  auto ktLoop = rw.create<scf::ForOp>(loc, zero, kTiles, kb.idx(1));
  rw.setInsertionPoint(ktLoop.getBody()->getTerminator());
  Value k0 = kb.mul(ktLoop.getInductionVar(), kTileK);
  for (int operand = 0; operand < 2; ++operand) {
    bool kFast = reductionIsInnermost(maps[operand], rowDims[operand], c.k);
    Type element = elementOf(operands[operand]);
    for (int64_t r = 0; r < kTile * kTileK / (kThreads * kThreads); ++r) {
      Value e = kb.add(tid, kb.idx(r * kThreads * kThreads));
      int64_t fast = kFast ? kTileK : kTile;
      Value minor = rw.create<arith::RemUIOp>(loc, e, kb.idx(fast));
      Value major = rw.create<arith::DivUIOp>(loc, e, kb.idx(fast));
      Value kk = kFast ? minor : major, rr = kFast ? major : minor;
      Value rowIdx = kb.add(origin[operand], rr), k = kb.add(k0, kk);
      auto load = rw.create<scf::IfOp>(
          loc, kb.both(kb.lt(rowIdx, rows[operand]), kb.lt(k, numK)),
          [&](OpBuilder &b, Location l) {
            KernelBuilder inner{b, l};
            SmallVector<Value> iv = base;
            inner.delinearize(rowIdx, rowDims[operand], sizes, iv);
            inner.delinearize(k, c.k, sizes, iv);
            Value v = b.create<memref::LoadOp>(
                l, operands[operand], inner.indices(maps[operand], iv));
            b.create<scf::YieldOp>(l, v);
          },
          [&](OpBuilder &b, Location l) {
            b.create<scf::YieldOp>(l, ValueRange{b.create<arith::ConstantOp>(
                                          l, b.getZeroAttr(element))});
          });
      rw.create<memref::StoreOp>(loc, load.getResult(0), tiles[operand],
                                 ValueRange{kk, rr});
    }
  }
  rw.create<gpu::BarrierOp>(loc);
  Value steps = kb.idx(kTileK);
  if (ShapedType::isDynamic(c.numK) || c.numK % kTileK)
    steps = rw.create<arith::MinSIOp>(
        loc, steps, rw.create<arith::SubIOp>(loc, kb.get(numK), k0));
  SmallVector<Value> accs;
  for (int64_t i = 0; i < kMicro; ++i)
    for (int64_t j = 0; j < kMicro; ++j)
      accs.push_back(rw.create<memref::LoadOp>(loc, acc, accAt(i, j)));
  auto kLoop = rw.create<scf::ForOp>(loc, zero, steps, kb.idx(1), accs);
  {
    OpBuilder::InsertionGuard g(rw);
    rw.setInsertionPointToStart(kLoop.getBody());
    Value kk = kLoop.getInductionVar();
    SmallVector<Value> a, b;
    for (int64_t i = 0; i < kMicro; ++i) {
      a.push_back(rw.create<memref::LoadOp>(
          loc, tiles[0], ValueRange{kk, kb.add(ty, kb.idx(kThreads * i))}));
      b.push_back(rw.create<memref::LoadOp>(
          loc, tiles[1], ValueRange{kk, kb.add(tx, kb.idx(kThreads * i))}));
    }
    SmallVector<Value> next;
    Block &generic = *op.getBody();
    for (int64_t i = 0; i < kMicro; ++i)
      for (int64_t j = 0; j < kMicro; ++j) {
        Value prev = kLoop.getRegionIterArgs()[i * kMicro + j];
        IRMapping map = cloneBody(rw, generic, {a[i], b[j], prev});
        next.push_back(
            map.lookupOrDefault(generic.getTerminator()->getOperand(0)));
      }
    rw.create<scf::YieldOp>(loc, next);
  }
  for (int64_t i = 0; i < kMicro; ++i)
    for (int64_t j = 0; j < kMicro; ++j)
      rw.create<memref::StoreOp>(loc, kLoop.getResult(i * kMicro + j), acc,
                                 accAt(i, j));
  rw.create<gpu::BarrierOp>(loc);

  rw.setInsertionPointAfter(ktLoop);
  forEachOutput([&](int64_t i, int64_t j, SmallVector<Value> &at) {
    Value v = rw.create<memref::LoadOp>(loc, acc, accAt(i, j));
    rw.create<memref::StoreOp>(loc, v, out, at);
  });
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// A reduction whose body is `yield combine(out, x)`, with `x` not reading
/// `out`.
struct Reduction {
  SmallVector<unsigned> parallel, reduced;
  int64_t numOutputs, numReduced;
  Operation *combine;
  Value x;
  /// For a reduction over an outer dim (a [K, N] matrix-vector product,
  /// ReduceSum over C of NCHW): the parallel dim innermost in the inputs,
  /// along which a warp's threads take adjacent outputs.
  std::optional<unsigned> fast;
};

std::optional<Reduction> analyzeReduction(linalg::GenericOp op) {
  static const llvm::StringSet<> associative = {
      "arith.addf",    "arith.mulf",    "arith.maximumf", "arith.minimumf",
      "arith.maxnumf", "arith.minnumf", "arith.addi",     "arith.muli",
      "arith.maxsi",   "arith.minsi",   "arith.maxui",    "arith.minui",
      "arith.andi",    "arith.ori",     "arith.xori"};
  if (op.getNumDpsInputs() == 0 || !suitsKernel(op))
    return std::nullopt;
  Block &body = *op.getBody();
  BlockArgument outArg = body.getArguments().back();
  Value yielded = body.getTerminator()->getOperand(0);
  Operation *combine = yielded.getDefiningOp();
  if (!combine || combine->getBlock() != &body ||
      combine->getNumOperands() != 2 ||
      !associative.contains(combine->getName().getStringRef()) ||
      !outArg.hasOneUse() || !yielded.hasOneUse())
    return std::nullopt;
  Reduction r;
  r.combine = combine;
  if (combine->getOperand(0) == outArg)
    r.x = combine->getOperand(1);
  else if (combine->getOperand(1) == outArg)
    r.x = combine->getOperand(0);
  else
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (auto [d, iter] : llvm::enumerate(op.getIteratorTypesArray()))
    (iter == utils::IteratorType::reduction ? r.reduced : r.parallel)
        .push_back(d);
  r.numOutputs = product(r.parallel, ranges);
  r.numReduced = product(r.reduced, ranges);
  if (r.reduced.empty() || staticBelow(r.numReduced, kMinReduction) ||
      staticAbove(r.numOutputs, std::numeric_limits<int32_t>::max()))
    return std::nullopt;
  // A warp's reads must be adjacent in memory: its threads take consecutive
  // reduction steps when each input that varies along the reduction has a
  // reduced dim innermost; else consecutive outputs along the one parallel
  // dim those inputs have innermost.
  auto reads = [&](AffineExpr e) {
    return llvm::any_of(r.reduced,
                        [&](unsigned d) { return e.isFunctionOfDim(d); });
  };
  bool rows = true;
  for (OpOperand *in : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(in);
    if (!llvm::any_of(map.getResults(), reads) ||
        reads(map.getResults().back()))
      continue;
    rows = false;
    auto dim = dyn_cast<AffineDimExpr>(map.getResults().back());
    if (!dim || (r.fast && *r.fast != dim.getPosition()))
      return std::nullopt;
    r.fast = dim.getPosition();
  }
  if (!rows && !op.getIndexingMapsArray().back().isFunctionOfDim(*r.fast))
    return std::nullopt;
  return r;
}

void buildReduction(RewriterBase &rw, linalg::GenericOp op,
                    const Reduction &r) {
  Location loc = op.getLoc();
  KernelBuilder kb{rw, loc};
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  HostSizes host(rw, op);
  ArrayRef<OpFoldResult> sizes = host.loops;
  // With a run-time reduction length, lanes past its end hold no partial
  // result: they load nothing and the tree skips them.
  bool runtimeSteps = ShapedType::isDynamic(r.numReduced);
  OpFoldResult numReduced = host.product(r.reduced);
  Value out = op.getDpsInits()[0];
  Type accType = cast<MemRefType>(out.getType()).getElementType();
  // Per block: `cols` adjacent outputs along the fast dim (1 when the
  // reduction is innermost), each reduced by `lanes` threads.
  int64_t cols = r.fast ? kColumns : 1;
  int64_t lanes =
      r.fast ? kColumnLanes
      : runtimeSteps
          ? kReduceThreads
          : std::min<int64_t>(kReduceThreads,
                              llvm::bit_floor(uint64_t(r.numReduced)));
  SmallVector<unsigned> others;
  for (unsigned d : r.parallel)
    if (!r.fast || d != *r.fast)
      others.push_back(d);
  OpFoldResult fastSize = r.fast ? sizes[*r.fast] : rw.getIndexAttr(1);
  OpFoldResult chunks = host.ceilDiv(fastSize, cols);
  OpFoldResult blocks = host.mul(host.product(others), chunks);

  auto launch = rw.create<gpu::LaunchOp>(
      loc, kb.get(blocks), kb.idx(1), kb.idx(1), kb.idx(r.fast ? cols : lanes),
      kb.idx(r.fast ? lanes : 1), kb.idx(1), Value(), Type(), ValueRange(),
      TypeRange{
          sharedType({lanes, cols}, accType, gpu::AddressSpace::Workgroup)},
      TypeRange());
  Block *body = &launch.getBody().front();
  rw.setInsertionPointToStart(body);
  rw.create<gpu::TerminatorOp>(loc);
  rw.setInsertionPointToStart(body);
  Value lane = r.fast ? launch.getThreadIds().y : launch.getThreadIds().x;
  Value col = r.fast ? launch.getThreadIds().x : kb.idx(0);
  Value partials = launch.getWorkgroupAttributions()[0];
  SmallVector<Value> base(sizes.size(), kb.idx(0));
  Value bid = launch.getBlockIds().x;
  // This thread's output; past the fast dim's end, a thread reads the last
  // output's data (so it can join the barriers) and stores nothing.
  Value valid;
  if (r.fast) {
    Value chunk = rw.create<arith::RemUIOp>(loc, bid, kb.get(chunks));
    kb.delinearize(rw.create<arith::DivUIOp>(loc, bid, kb.get(chunks)), others,
                   sizes, base);
    Value f = kb.add(kb.mul(chunk, cols), col);
    valid = kb.lt(f, fastSize);
    Value last = rw.create<arith::SubIOp>(loc, kb.get(fastSize), kb.idx(1));
    base[*r.fast] = rw.create<arith::MinUIOp>(loc, f, last);
  } else {
    kb.delinearize(bid, r.parallel, sizes, base);
  }

  Block &generic = *op.getBody();
  auto combine = [&](OpBuilder &b, Value acc, Value x) {
    IRMapping map;
    map.map(generic.getArguments().back(), acc);
    map.map(r.x, x);
    return b.clone(*r.combine, map)->getResult(0);
  };
  // The body's `x` at reduction step `k`.
  auto xAt = [&](OpBuilder &b, Location l, Value k) {
    KernelBuilder inner{b, l};
    SmallVector<Value> iv = base;
    inner.delinearize(k, r.reduced, sizes, iv);
    SmallVector<Value> args;
    for (OpOperand *in : op.getDpsInputOperands())
      args.push_back(b.create<memref::LoadOp>(
          l, in->get(), inner.indices(maps[in->getOperandNumber()], iv)));
    return cloneBody(b, generic, args, r.combine).lookupOrDefault(r.x);
  };
  // Each lane combines steps lane, lane + lanes, ... (with static sizes
  // lanes <= steps, so every lane has a first one).
  Value first;
  if (runtimeSteps) {
    first = rw.create<scf::IfOp>(
                  loc, kb.lt(lane, numReduced),
                  [&](OpBuilder &b, Location l) {
                    b.create<scf::YieldOp>(l, xAt(b, l, lane));
                  },
                  [&](OpBuilder &b, Location l) {
                    b.create<scf::YieldOp>(
                        l, ValueRange{b.create<arith::ConstantOp>(
                               l, b.getZeroAttr(accType))});
                  })
                .getResult(0);
  } else {
    first = xAt(rw, loc, lane);
  }
  auto strided = rw.create<scf::ForOp>(
      loc, kb.add(lane, kb.idx(lanes)), kb.get(numReduced), kb.idx(lanes),
      ValueRange{first},
      [&](OpBuilder &b, Location l, Value k, ValueRange acc) {
        b.create<scf::YieldOp>(l, combine(b, acc[0], xAt(b, l, k)));
      });
  rw.create<memref::StoreOp>(loc, strided.getResult(0), partials,
                             ValueRange{lane, col});
  rw.create<gpu::BarrierOp>(loc);
  for (int64_t s = lanes / 2; s >= 1; s /= 2) {
    Value pair = kb.lt(lane, s);
    if (runtimeSteps)
      pair = kb.both(pair, kb.lt(kb.add(lane, kb.idx(s)), numReduced));
    kb.ifThen(pair, [&] {
      Value mine =
          rw.create<memref::LoadOp>(loc, partials, ValueRange{lane, col});
      Value other = rw.create<memref::LoadOp>(
          loc, partials, ValueRange{kb.add(lane, kb.idx(s)), col});
      rw.create<memref::StoreOp>(loc, combine(rw, mine, other), partials,
                                 ValueRange{lane, col});
    });
    rw.create<gpu::BarrierOp>(loc);
  }
  // Over no steps at all, the output keeps its initial value.
  Value first0 = kb.lt(lane, 1);
  if (runtimeSteps)
    first0 = kb.both(first0, kb.lt(kb.idx(0), numReduced));
  kb.ifThen(valid ? kb.both(first0, valid) : first0, [&] {
    SmallVector<Value> at = kb.indices(maps.back(), base);
    Value init = rw.create<memref::LoadOp>(loc, out, at);
    Value total =
        rw.create<memref::LoadOp>(loc, partials, ValueRange{kb.idx(0), col});
    rw.create<memref::StoreOp>(loc, combine(rw, init, total), out, at);
  });
}

} // namespace

SharedMemoryKernel buildSharedMemoryKernel(RewriterBase &rewriter,
                                           linalg::GenericOp op) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  SharedMemoryKernel kind = SharedMemoryKernel::None;
  if (auto c = analyzeContraction(op)) {
    buildContraction(rewriter, op, *c);
    kind = SharedMemoryKernel::Contraction;
  } else if (auto r = analyzeReduction(op)) {
    buildReduction(rewriter, op, *r);
    kind = SharedMemoryKernel::Reduction;
  } else {
    return kind;
  }
  rewriter.eraseOp(op);
  return kind;
}

} // namespace kiln::cuda
