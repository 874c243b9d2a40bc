//===- VectorizeWindowsMatch.cpp - depthwise convs and max pools found ---===//
//
// Part of kiln-cpu-vectorize-contractions: which generics are 2-D depthwise
// convolutions and max pools (their strides and dilations), and what
// writes a conv's output before it (a fill or a bias), for the window
// loops (VectorizeWindows.cpp, VectorizeStridedWindows.cpp) and the conv
// rewrites; which window input is a padded copy of another buffer.
//
//===----------------------------------------------------------------------===//
#include "dialects/kiln/KilnDialect.h"
#include "providers/cpu/Vectorize.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AffineExpr.h"

using namespace mlir;

namespace kiln::vectorize {

/// The strides and dilations of a window read x[n, c, oh * sh + kh * dh,
/// ow * sw + kw * dw] over 6 loops (the positions of oh, kh, ow, kw
/// given): the coefficients, read off at unit points, must rebuild the map.
static std::optional<DepthwiseMatch> matchWindowMap(AffineMap xMap, unsigned oh,
                                                    unsigned kh, unsigned ow,
                                                    unsigned kw) {
  MLIRContext *ctx = xMap.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  auto at = [&](unsigned dim, unsigned result) {
    SmallVector<int64_t> point(6, 0);
    point[dim] = 1;
    return xMap.compose(point)[result];
  };
  DepthwiseMatch dm{at(oh, 2), at(kh, 2), at(ow, 3), at(kw, 3)};
  if (xMap != AffineMap::get(6, 0,
                             {d(0), d(1), d(oh) * dm.sh + d(kh) * dm.dh,
                              d(ow) * dm.sw + d(kw) * dm.dw},
                             ctx) ||
      dm.sw < 1 || dm.sw > 4)
    return std::nullopt;
  return dm;
}

/// A 2-D depthwise convolution as the CPU provider emits it: loops
/// (n, m, oh, kh, kw, ow), maps x: (d0, d1, d2*sh + d3*dh, d5*sw + d4*dw),
/// w: (d1, 0, d3, d4), out: (d0, d1, d2, d5).
std::optional<DepthwiseMatch> matchDepthwise(linalg::GenericOp g) {
  if (g.getNumLoops() != 6 || !isa<func::FuncOp>(g->getParentOp()))
    return std::nullopt;
  auto iters = g.getIteratorTypesArray();
  for (unsigned i = 0; i < 6; ++i)
    if ((iters[i] == utils::IteratorType::reduction) != (i == 3 || i == 4))
      return std::nullopt;
  MLIRContext *ctx = g.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  if (maps[1] !=
          AffineMap::get(
              6, 0, {d(1), getAffineConstantExpr(0, ctx), d(3), d(4)}, ctx) ||
      maps[2] != AffineMap::get(6, 0, {d(0), d(1), d(2), d(5)}, ctx) ||
      maps[0].getNumResults() != 4)
    return std::nullopt;
  auto dm = matchWindowMap(maps[0], /*oh=*/2, /*kh=*/3, /*ow=*/5, /*kw=*/4);
  if (!dm)
    return std::nullopt;
  for (Value v : g->getOperands())
    if (!hasIdentityLayout(v))
      return std::nullopt;
  return dm;
}

Operation *poolReduce(Block &body, Type t) {
  Operation *step =
      cast<linalg::YieldOp>(body.getTerminator()).getOperand(0).getDefiningOp();
  if (!step || step->getNumOperands() != 2)
    return nullptr;
  bool ok = t.isF32()
                ? isa<arith::MaximumFOp, arith::AddFOp>(step)
                : t.isInteger(8) && isa<arith::MaxUIOp, arith::MaxSIOp>(step);
  return ok ? step : nullptr;
}

/// A max pool as the CPU provider emits it, on f32 or 8-bit integers, or an
/// f32 average pool's sums (loops n, c, kh, kw, oh, ow; x read at (n, c,
/// oh * sh + kh * dh, ow * sw + kw * dw), the second operand the window,
/// the body max(acc, x) or acc + x), on buffers of identity layout with
/// static channels and window; its strides and dilations.
std::optional<DepthwiseMatch> matchPool(linalg::GenericOp g) {
  if (!g.hasPureBufferSemantics() || g->hasAttr("kiln.device") ||
      g.getNumDpsInputs() != 2 || g.getNumDpsInits() != 1 ||
      g.getNumLoops() != 6 || !isa<func::FuncOp>(g->getParentOp()) ||
      !llvm::all_of(g->getOperands(), hasIdentityLayout))
    return std::nullopt;
  Type t = getElementTypeOrSelf(g.getDpsInits()[0].getType());
  if (llvm::any_of(g->getOperands(), [&](Value v) {
        return !isa<MemRefType>(v.getType()) ||
               getElementTypeOrSelf(v.getType()) != t;
      }))
    return std::nullopt;
  Block &body = g.getRegion().front();
  Operation *step = poolReduce(body, t);
  Value xArg = body.getArgument(0), acc = body.getArgument(2);
  if (!llvm::hasNItems(body.getOperations(), 2) || !step ||
      !((step->getOperand(0) == acc && step->getOperand(1) == xArg) ||
        (step->getOperand(0) == xArg && step->getOperand(1) == acc)))
    return std::nullopt;
  auto iters = g.getIteratorTypesArray();
  for (unsigned i = 0; i < 6; ++i)
    if ((iters[i] == utils::IteratorType::reduction) != (i == 2 || i == 3))
      return std::nullopt;
  SmallVector<int64_t> r = g.getStaticLoopRanges();
  if (ShapedType::isDynamic(r[1]) || ShapedType::isDynamic(r[2]) ||
      ShapedType::isDynamic(r[3]))
    return std::nullopt;
  MLIRContext *ctx = g.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  if (maps[1] != AffineMap::get(6, 0, {d(2), d(3)}, ctx) ||
      maps[2] != AffineMap::get(6, 0, {d(0), d(1), d(4), d(5)}, ctx) ||
      maps[0].getNumResults() != 4)
    return std::nullopt;
  return matchWindowMap(maps[0], /*oh=*/4, /*kh=*/2, /*ow=*/5, /*kw=*/3);
}

bool isEightBitDepthwise(linalg::GenericOp g) {
  if (!g.hasPureBufferSemantics() || g->hasAttr("kiln.device") ||
      g.getNumDpsInputs() != 2 || g.getNumDpsInits() != 1 || !eightBitMulAdd(g))
    return false;
  SmallVector<int64_t> r = g.getStaticLoopRanges(); // n m oh kh kw ow
  if (r.size() != 6 || ShapedType::isDynamic(r[1]) ||
      ShapedType::isDynamic(r[3]) || ShapedType::isDynamic(r[4]))
    return false;
  // Every sum exact in f32: at most 255 * 128 per tap.
  if (255 * 128 * r[3] * r[4] >= (int64_t(1) << 24))
    return false;
  return matchDepthwise(g).has_value();
}

/// A depthwise conv with run-time batch, output rows or columns (the
/// channels and taps static), on f32 buffers of identity layout.
bool isRuntimeDepthwise(linalg::GenericOp g) {
  if (!isF32BufferGeneric(g) || !isMulAddBody(g))
    return false;
  SmallVector<int64_t> r = g.getStaticLoopRanges(); // n m oh kh kw ow
  if (r.size() != 6 ||
      llvm::all_of(r, [](int64_t e) { return !ShapedType::isDynamic(e); }) ||
      ShapedType::isDynamic(r[1]) || ShapedType::isDynamic(r[3]) ||
      ShapedType::isDynamic(r[4]))
    return false;
  return matchDepthwise(g).has_value();
}

std::optional<OutputInit> matchOutputInit(linalg::GenericOp g,
                                          unsigned biasDim) {
  Value out = g.getDpsInits()[0];
  Operation *prev = g->getPrevNode();
  while (prev && isa<memref::AllocOp>(prev))
    prev = prev->getPrevNode();
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(prev);
      fill && fill.getDpsInits()[0] == out)
    return OutputInit{fill.getInputs()[0], Value(), fill};
  auto bias = dyn_cast_or_null<linalg::GenericOp>(prev);
  if (!bias || bias.getNumDpsInputs() != 1 || bias.getNumDpsInits() != 1 ||
      bias.getDpsInits()[0] != out || bias.getNumLoops() <= biasDim ||
      !llvm::hasSingleElement(bias.getRegion().front()))
    return std::nullopt;
  MLIRContext *ctx = g.getContext();
  auto yield = cast<linalg::YieldOp>(bias.getRegion().front().getTerminator());
  auto bt = dyn_cast<MemRefType>(bias.getDpsInputs()[0].getType());
  SmallVector<AffineMap> maps = bias.getIndexingMapsArray();
  if (!bt || bt.getRank() != 1 || !bt.getLayout().isIdentity() ||
      yield.getOperand(0) != bias.getRegion().front().getArgument(0) ||
      maps[0] != AffineMap::get(bias.getNumLoops(), 0,
                                {getAffineDimExpr(biasDim, ctx)}, ctx) ||
      !maps[1].isIdentity())
    return std::nullopt;
  return OutputInit{Value(), bias.getDpsInputs()[0], bias};
}

/// x of `g` as a padded copy (see PaddedSource), if it is one.
std::optional<PaddedSource> matchPaddedSource(linalg::GenericOp g,
                                              bool planesAnyway) {
  Value x = g.getDpsInputs()[0];
  auto alloc = x.getDefiningOp<memref::AllocOp>();
  // (A run-time batch is fine: the planes are per image.)
  auto planeStatic = [](MemRefType t) {
    return t.getRank() == 4 &&
           llvm::none_of(t.getShape().drop_front(), ShapedType::isDynamic);
  };
  if (!alloc || alloc->getBlock() != g->getBlock() ||
      !planeStatic(alloc.getType()))
    return std::nullopt;
  PaddedSource ps;
  linalg::FillOp fill;
  memref::CopyOp copy, base; // base: x copied whole from a filled buffer
  for (Operation *user : x.getUsers()) {
    if (user == g || isa<memref::DeallocOp>(user))
      continue;
    if (auto f = dyn_cast<linalg::FillOp>(user);
        f && !fill && f.getDpsInits()[0] == x) {
      fill = f;
      continue;
    }
    if (auto c = dyn_cast<memref::CopyOp>(user);
        c && !fill && c.getTarget() == x) {
      // The buffer copied must be one that only a fill writes before the
      // copy (others copy it too; the last conv may pad into it in place).
      auto a = c.getSource().getDefiningOp<memref::AllocOp>();
      if (!a)
        return std::nullopt;
      for (Operation *u : a->getUsers()) {
        if (u->getBlock() != c->getBlock())
          return std::nullopt;
        if (auto f = dyn_cast<linalg::FillOp>(u);
            f && !fill && f.getDpsInits()[0] == a.getResult()) {
          fill = f;
          continue;
        }
        auto other = dyn_cast<memref::CopyOp>(u);
        if (u != c && u->isBeforeInBlock(c) &&
            !(other && other.getSource() == a.getResult()))
          return std::nullopt;
      }
      if (!fill || fill->getBlock() != c->getBlock() ||
          !fill->isBeforeInBlock(c))
        return std::nullopt;
      base = c;
      ps.filled = a.getResult();
      continue;
    }
    auto sv = dyn_cast<memref::SubViewOp>(user);
    if (!sv || copy || !sv->hasOneUse())
      return std::nullopt;
    copy = dyn_cast<memref::CopyOp>(*sv->getUsers().begin());
    if (!copy || copy.getTarget() != sv.getResult() || !sv.hasUnitStride())
      return std::nullopt;
    ArrayRef<int64_t> offsets = sv.getStaticOffsets();
    if (offsets.size() != 4 || offsets[0] != 0 || offsets[1] != 0 ||
        ShapedType::isDynamic(offsets[2]) || ShapedType::isDynamic(offsets[3]))
      return std::nullopt;
    ps.top = offsets[2];
    ps.left = offsets[3];
  }
  Operation *start = base ? base.getOperation() : fill.getOperation();
  if (!fill || !copy || start->getBlock() != g->getBlock() ||
      copy->getBlock() != g->getBlock() || !start->isBeforeInBlock(copy) ||
      !copy->isBeforeInBlock(g))
    return std::nullopt;
  ps.src = copy.getSource();
  auto st = dyn_cast<MemRefType>(ps.src.getType());
  if (!st || !planeStatic(st) || !st.getLayout().isIdentity() ||
      st.getDimSize(0) != alloc.getType().getDimSize(0) ||
      st.getDimSize(1) != alloc.getType().getDimSize(1))
    return std::nullopt;
  // g now reads the source where the copy did: nothing in between may
  // write it (linalg ops writing other buffers only), but for g's own
  // output init, which the accumulators take over in registers: g then
  // writes its output in place of its input, each channel after its plane
  // was copied.
  std::optional<OutputInit> init = matchOutputInit(g);
  bool inPlace = false;
  for (Operation *op = copy->getNextNode(); op != g; op = op->getNextNode()) {
    // (The profiler's markers: the pad is a node of its own before an
    // 8-bit conv.)
    if (isa<memref::AllocOp, memref::SubViewOp, memref::ExpandShapeOp,
            memref::CollapseShapeOp, arith::ConstantOp, ProfileBeginOp,
            ProfileEndOp>(op))
      continue;
    // (Neither the source nor the padded buffer written.)
    auto elsewhere = [&](Value v) {
      return rootOf(v) != rootOf(ps.src) && rootOf(v) != rootOf(x);
    };
    // (A copy into another buffer: an 8-bit conv's output starting as a
    // copy of a shared zero buffer.)
    if (auto c = dyn_cast<memref::CopyOp>(op); c && elsewhere(c.getTarget()))
      continue;
    auto l = dyn_cast<linalg::LinalgOp>(op);
    if (!l)
      return std::nullopt;
    if (llvm::all_of(l.getDpsInits(), elsewhere))
      continue;
    if (!init || op != init->op)
      return std::nullopt;
    inPlace = true;
  }
  // Those two forms (mobilenet_v2's) only on large planes: below 56x56
  // (all in L2), the padded copy made once costs less than a copy of each
  // plane (28x28 and smaller 15-20% slower; 56x56 and 112x112 3-7% faster).
  // Unless the conv builds its planes anyway (an 8-bit conv's, in f32):
  // then the padded copy is a pass of its own for nothing.
  auto ot = cast<MemRefType>(g.getDpsInits()[0].getType());
  if ((base || inPlace) && !planesAnyway &&
      ot.getDimSize(2) * ot.getDimSize(3) < 2048)
    return std::nullopt;
  ps.pad = fill.getInputs()[0];
  ps.ops = {copy, copy.getTarget().getDefiningOp(), start};
  ps.inPlace = inPlace;
  return ps;
}

void erasePaddedSource(const PaddedSource &ps, Value x) {
  for (Operation *op : ps.ops)
    op->erase();
  for (Operation *u : llvm::make_early_inc_range(x.getUsers()))
    u->erase(); // deallocs
  x.getDefiningOp()->erase();
  // The shared filled buffer, once no conv copies it any more.
  if (Value a = ps.filled)
    eraseIfWriteOnly(a);
}

SmallVector<Value> writtenWith(linalg::GenericOp g) {
  SmallVector<Value> written(g.getDpsInits());
  // (The caller's epilogue, after its output's allocation.)
  Operation *after = g->getNextNode();
  while (isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(after))
    after = after->getNextNode();
  if (auto next = dyn_cast_or_null<linalg::LinalgOp>(after))
    llvm::append_range(written, next.getDpsInits());
  return written;
}

bool writesInto(ArrayRef<Value> written, Value src) {
  return llvm::any_of(written,
                      [&](Value v) { return rootOf(v) == rootOf(src); });
}

} // namespace kiln::vectorize
