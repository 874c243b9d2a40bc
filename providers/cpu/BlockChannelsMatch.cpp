//===- BlockChannelsMatch.cpp - what kiln-cpu-block-channels blocks -------===//
//
// The matchers of kiln-cpu-block-channels: which tensors and ops run on
// the channel-blocked layout (convs, depthwise convs, pools, global pools,
// elementwise operands) and the pieces of each, plus the constant
// weights' zero padding.
//
//===----------------------------------------------------------------------===//
#include "providers/cpu/BlockChannelsMatch.h"
#include "passes/FusionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace kiln::blocking {

using vectorize::kBlockedLanes;

namespace {
/// Channels past a multiple of 16 are blocked with the last block padded
/// (24 as 32, as ONNX Runtime's NCHWc pads them) from this many on.
constexpr int64_t kMinPaddedChannels = 24;
} // namespace

/// A static f32 [n, c, h, w] tensor type whose channels fill blocks, the
/// last maybe padded. The padded channels hold finite values that meet
/// zero weights: convs' padded weights and biases are 0, and only ops
/// that keep finite values finite run on them (finiteOnFinite).
bool blockable(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  if (!rt || !rt.hasStaticShape() || rt.getRank() != 4 ||
      !rt.getElementType().isF32())
    return false;
  int64_t c = rt.getDimSize(1);
  return c % kBlockedLanes == 0 || c >= kMinPaddedChannels;
}

/// Whether `t`'s channels fill whole blocks (no padding).
bool wholeBlocks(Type t) {
  return cast<RankedTensorType>(t).getDimSize(1) % kBlockedLanes == 0;
}

RankedTensorType blockedType(RankedTensorType t) {
  return RankedTensorType::get(
      {t.getDimSize(0),
       int64_t(llvm::divideCeil(t.getDimSize(1), kBlockedLanes)),
       t.getDimSize(2), t.getDimSize(3), kBlockedLanes},
      t.getElementType());
}

/// Whether `g`'s body gives finite results for finite operands, so that
/// padded channels stay finite: no division but by a nonzero constant or
/// by 1 + exp (a sigmoid), no log, sqrt or pow.
bool finiteOnFinite(linalg::GenericOp g) {
  auto positive = [](Value v) {
    FloatAttr c;
    return matchPattern(v, m_Constant(&c)) && c.getValueAsDouble() > 0;
  };
  WalkResult r = g.getRegion().walk([&](Operation *op) {
    if (isa<linalg::YieldOp, arith::ConstantOp, arith::AddFOp, arith::SubFOp,
            arith::MulFOp, arith::MaximumFOp, arith::MinimumFOp,
            arith::MaxNumFOp, arith::MinNumFOp, arith::NegFOp, arith::CmpFOp,
            arith::SelectOp, math::FmaOp, math::AbsFOp, math::ExpOp,
            math::TanhOp, math::ErfOp>(op))
      return WalkResult::advance();
    if (auto div = dyn_cast<arith::DivFOp>(op)) {
      Value d = div.getRhs();
      FloatAttr c;
      if (matchPattern(d, m_Constant(&c)) && !c.getValue().isZero())
        return WalkResult::advance();
      auto add = d.getDefiningOp<arith::AddFOp>();
      if (add && ((positive(add.getLhs()) &&
                   add.getRhs().getDefiningOp<math::ExpOp>()) ||
                  (positive(add.getRhs()) &&
                   add.getLhs().getDefiningOp<math::ExpOp>())))
        return WalkResult::advance();
    }
    return WalkResult::interrupt();
  });
  return !r.wasInterrupted();
}

/// Whether constant weights `w` can be read (to pad them).
bool readableWeights(Value w) {
  auto cst = w.getDefiningOp<arith::ConstantOp>();
  return cst && fusion::elementsFloats(dyn_cast<ElementsAttr>(cst.getValue()));
}

/// Constant weights [m, c, ...] with m and c (when `padInputs`) padded
/// with zeros to whole blocks; `w` itself when whole.
Value paddedWeights(OpBuilder &b, Value w, bool padInputs) {
  auto t = cast<RankedTensorType>(w.getType());
  int64_t m = t.getDimSize(0), c = t.getDimSize(1);
  int64_t pm = llvm::alignTo(m, kBlockedLanes),
          pc = padInputs ? llvm::alignTo(c, kBlockedLanes) : c;
  if (pm == m && pc == c)
    return w;
  auto cst = w.getDefiningOp<arith::ConstantOp>();
  std::optional<SmallVector<float>> values =
      fusion::elementsFloats(dyn_cast<ElementsAttr>(cst.getValue()));
  if (!values)
    return Value();
  int64_t inner = t.getNumElements() / (m * c);
  SmallVector<float> out(pm * pc * inner, 0.0f);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < c; ++j)
      std::copy_n(values->begin() + (i * c + j) * inner, inner,
                  out.begin() + (i * pc + j) * inner);
  SmallVector<int64_t> shape(t.getShape());
  shape[0] = pm;
  shape[1] = pc;
  auto pt = RankedTensorType::get(shape, t.getElementType());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(cst);
  return b.create<arith::ConstantOp>(
      cst.getLoc(), DenseElementsAttr::get(pt, ArrayRef<float>(out)));
}

SmallVector<utils::IteratorType> parallelIters(unsigned n) {
  return SmallVector<utils::IteratorType>(n, utils::IteratorType::parallel);
}

std::optional<PaddedInput> matchPaddedInput(Value x, bool wholeBlocks) {
  // (An insert_slice into anything but a fill is another op: a concat.)
  auto ins = x.getDefiningOp<tensor::InsertSliceOp>();
  if (!ins || !ins.getDest().getDefiningOp<linalg::FillOp>())
    return PaddedInput{x, 0, 0, Value()};
  auto fill = ins.getDest().getDefiningOp<linalg::FillOp>();
  SmallVector<int64_t> offsets(ins.getStaticOffsets());
  if (!fill || !ins.hasUnitStride() || offsets.size() != 4 || offsets[0] ||
      offsets[1] || ShapedType::isDynamic(offsets[2]) ||
      ShapedType::isDynamic(offsets[3]) ||
      (wholeBlocks && !blockable(ins.getSourceType())) ||
      ins.getSourceType().getDimSize(1) !=
          cast<RankedTensorType>(x.getType()).getDimSize(1))
    return std::nullopt;
  return PaddedInput{ins.getSource(), offsets[2], offsets[3],
                     fill.getInputs()[0]};
}

/// How a conv's output `out` starts: from a 1-D bias along the channels
/// (`bias`), or a fill or splat (`fillScalar`); false if neither.
bool matchOutputStart(Value out, Value &bias, Value &fillScalar) {
  // The output starts from the bias along the channels, or a fill.
  Operation *init = out.getDefiningOp();
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(init)) {
    fillScalar = fill.getInputs()[0];
  } else if (auto bg = dyn_cast_or_null<linalg::GenericOp>(init);
             bg && bg.getNumDpsInputs() == 0 &&
             llvm::hasSingleElement(bg.getRegion().front()) &&
             bg.getRegion()
                     .front()
                     .getTerminator()
                     ->getOperand(0)
                     .getParentRegion() != &bg.getRegion()) {
    // (A splat bias: a generic yielding one value, shared by the convs
    // of its shape.)
    fillScalar = bg.getRegion().front().getTerminator()->getOperand(0);
  } else if (auto bg = dyn_cast_or_null<linalg::GenericOp>(init)) {
    MLIRContext *ctx = out.getContext();
    if (bg.getNumDpsInputs() != 1 ||
        bg.getIndexingMapsArray()[0] !=
            AffineMap::get(4, 0, {getAffineDimExpr(1, ctx)}, ctx) ||
        !bg.getIndexingMapsArray()[1].isIdentity() ||
        !llvm::hasSingleElement(bg.getRegion().front()) ||
        bg.getRegion().front().getTerminator()->getOperand(0) !=
            bg.getRegion().front().getArgument(0))
      return false;
    bias = bg.getDpsInputs()[0];
  } else {
    return false;
  }
  return true;
}

std::optional<ConvParts> matchConvParts(linalg::GenericOp g) {
  // (matchConv reads x at channel c: no groups.)
  if (!g.hasPureTensorSemantics())
    return std::nullopt;
  std::optional<vectorize::ConvMatch> cm = vectorize::matchConv(g);
  if (!cm)
    return std::nullopt;
  Value x = g.getDpsInputs()[0], w = g.getDpsInputs()[1],
        out = g.getDpsInits()[0];
  // (An input of fewer channels than a block is read as it lies: the
  // stem's NCHW image into a blocked chain, as ONNX Runtime's NCHWc
  // stems do.)
  auto xt = dyn_cast<RankedTensorType>(x.getType());
  bool plain = xt && xt.hasStaticShape() && xt.getRank() == 4 &&
               xt.getElementType().isF32() && xt.getDimSize(1) < kBlockedLanes;
  if ((!blockable(x.getType()) && !plain) || !blockable(out.getType()) ||
      !w.getDefiningOp<arith::ConstantOp>() ||
      ((!wholeBlocks(out.getType()) || (!plain && !wholeBlocks(x.getType()))) &&
       !readableWeights(w)))
    return std::nullopt;
  // The body: the multiply-add.
  Block &body = g.getRegion().front();
  if (std::distance(body.begin(), body.end()) != 3)
    return std::nullopt;
  ConvParts p;
  p.cm = *cm;
  p.paddedType = cast<RankedTensorType>(x.getType());
  p.plain = plain;
  std::optional<PaddedInput> in = matchPaddedInput(x, !plain);
  if (!in || (in->padValue && !matchPattern(in->padValue, m_AnyZeroFloat())))
    return std::nullopt;
  p.src = in->src;
  p.top = in->top;
  p.left = in->left;
  p.padValue = in->padValue;
  if (!matchOutputStart(out, p.bias, p.fillScalar))
    return std::nullopt;
  return p;
}

std::optional<WindowLoops> matchWindowLoops(linalg::GenericOp g, unsigned oh,
                                            unsigned kh, unsigned ow,
                                            unsigned kw) {
  if (!g.hasPureTensorSemantics() || g.getNumLoops() != 6 ||
      g.getNumDpsInputs() != 2)
    return std::nullopt;
  for (auto [i, t] : llvm::enumerate(g.getIteratorTypesArray()))
    if ((t == utils::IteratorType::reduction) != (i == kh || i == kw))
      return std::nullopt;
  AffineMap x = g.getIndexingMapsArray()[0];
  if (x.getNumResults() != 4 || x.getNumSymbols())
    return std::nullopt;
  auto at = [&](unsigned loop, unsigned result) {
    SmallVector<int64_t> v(6, 0);
    v[loop] = 1;
    return x.compose(v)[result];
  };
  WindowLoops w{at(oh, 2), at(ow, 3), at(kh, 2), at(kw, 3)};
  MLIRContext *ctx = g.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  if (x != AffineMap::get(6, 0,
                          {d(0), d(1), d(oh) * w.sh + d(kh) * w.dh,
                           d(ow) * w.sw + d(kw) * w.dw},
                          ctx))
    return std::nullopt;
  return w;
}

/// A max or sum pool's generic (loops n, c, kh, kw, oh, ow; x read at (n,
/// c, oh * sh + kh * dh, ow * sw + kw * dw), the window's shape a second
/// input; one op of the window value and the output's in its body), its
/// output started from a fill.
std::optional<WindowParts> matchPoolParts(linalg::GenericOp g) {
  MLIRContext *ctx = g.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  // Loops n, c, kh, kw, oh, ow.
  std::optional<WindowLoops> wl = matchWindowLoops(g, 4, 2, 5, 3);
  if (!wl ||
      g.getIndexingMapsArray()[1] != AffineMap::get(6, 0, {d(2), d(3)}, ctx) ||
      g.getIndexingMapsArray()[2] !=
          AffineMap::get(6, 0, {d(0), d(1), d(4), d(5)}, ctx))
    return std::nullopt;
  WindowParts p;
  p.sh = wl->sh;
  p.sw = wl->sw;
  p.dh = wl->dh;
  p.dw = wl->dw;
  Value x = g.getDpsInputs()[0], out = g.getDpsInits()[0];
  if (!blockable(x.getType()) || !blockable(out.getType()))
    return std::nullopt;
  Block &body = g.getRegion().front();
  if (std::distance(body.begin(), body.end()) != 2 ||
      !body.getArgument(1).use_empty() ||
      body.getTerminator()->getOperand(0).getDefiningOp() != &body.front() ||
      body.front().getNumRegions())
    return std::nullopt;
  for (Value v : body.front().getOperands())
    if (v != body.getArgument(0) && v != body.getArgument(2))
      return std::nullopt;
  auto fill = out.getDefiningOp<linalg::FillOp>();
  std::optional<PaddedInput> in = matchPaddedInput(x);
  if (!fill || !in)
    return std::nullopt;
  p.in = *in;
  p.paddedType = cast<RankedTensorType>(x.getType());
  p.fillScalar = fill.getInputs()[0];
  return p;
}

/// A body builder that clones `g`'s body (the same scalar ops on the
/// blocked loops).
std::function<void(OpBuilder &, Location, ValueRange)>
sameBody(linalg::GenericOp g) {
  return [g](OpBuilder &nb, Location, ValueRange args) mutable {
    IRMapping map;
    Block &body = g.getRegion().front();
    map.map(body.getArguments(), args);
    for (Operation &op : body)
      nb.clone(op, map);
  };
}

/// Whether `map` reads a per-channel operand `v`: d1 at one result, 0 at
/// the others, which are dims of 1 (a bias [c], a scale [c, 1, 1]).
bool perChannelMap(AffineMap map, Value v, int64_t channels) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || !t.hasStaticShape() || t.getNumElements() != channels)
    return false;
  int64_t found = 0;
  for (auto [i, e] : llvm::enumerate(map.getResults())) {
    if (auto d = dyn_cast<AffineDimExpr>(e); d && d.getPosition() == 1) {
      ++found;
      continue;
    }
    auto c = dyn_cast<AffineConstantExpr>(e);
    if (!c || c.getValue() != 0 || t.getDimSize(i) != 1)
      return false;
  }
  return found == 1;
}

/// Whether `map` reads a per-image, per-channel operand `v` [n, c, 1, 1]
/// (a squeeze-and-excitation scale): (d0, d1, 0, 0).
bool perImageChannelMap(AffineMap map, Value v, RankedTensorType out) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  MLIRContext *ctx = map.getContext();
  auto zero = getAffineConstantExpr(0, ctx);
  return t && t.hasStaticShape() && t.getRank() == 4 &&
         t.getDimSize(0) == out.getDimSize(0) &&
         t.getDimSize(1) == out.getDimSize(1) && t.getDimSize(2) == 1 &&
         t.getDimSize(3) == 1 &&
         map == AffineMap::get(4, 0,
                               {getAffineDimExpr(0, ctx),
                                getAffineDimExpr(1, ctx), zero, zero},
                               ctx);
}

/// Whether `g` sums or takes the max of an [n, c, h, w] tensor over its
/// positions into [n, c] (a global pool), its output started from a fill.
/// The value folded may be an elementwise function of the element alone
/// (mobilenet_v2's last Clip, fused into its pool).
bool isGlobalPool(linalg::GenericOp g) {
  if (!g.hasPureTensorSemantics() || g.getNumDpsInputs() != 1 ||
      g.getNumDpsInits() != 1 || g.getNumLoops() != 4 ||
      !g.getDpsInits()[0].getDefiningOp<linalg::FillOp>())
    return false;
  MLIRContext *ctx = g.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  auto iters = g.getIteratorTypesArray();
  if (!maps[0].isIdentity() ||
      maps[1] != AffineMap::get(4, 0, {d(0), d(1)}, ctx) ||
      iters[0] != utils::IteratorType::parallel ||
      iters[1] != utils::IteratorType::parallel ||
      iters[2] != utils::IteratorType::reduction ||
      iters[3] != utils::IteratorType::reduction)
    return false;
  Block &body = g.getRegion().front();
  std::optional<PoolFold> pf = matchPoolFold(body);
  if (!pf)
    return false;
  // The ops before the fold: pure, on the element and constants alone.
  for (Operation &op : body.without_terminator()) {
    if (&op == pf->fold)
      break;
    if (op.getNumResults() != 1 || op.getNumRegions() ||
        !isMemoryEffectFree(&op) || isa<linalg::IndexOp>(op))
      return false;
    for (Value v : op.getOperands())
      if (isa<BlockArgument>(v) && v != body.getArgument(0))
        return false;
  }
  return true;
}

std::optional<PoolFold> matchPoolFold(Block &body) {
  Value acc = body.getArguments().back();
  Operation *fold = body.getTerminator()->getOperand(0).getDefiningOp();
  if (!fold || fold->getBlock() != &body ||
      !isa<arith::AddFOp, arith::MaximumFOp>(fold) ||
      fold->getNextNode() != body.getTerminator() || !acc.hasOneUse() ||
      !llvm::is_contained(fold->getOperands(), acc))
    return std::nullopt;
  return PoolFold{fold, fold->getOperand(fold->getOperand(0) == acc ? 1 : 0)};
}

/// A depthwise conv's generic (loops n, c, oh, kh, kw, ow; x read at (n,
/// c, oh * sh + kh * dh, ow * sw + kw * dw), constant weights [c, 1, kh,
/// kw]), its input maybe zero-padded, its output started from a bias or a
/// fill.
std::optional<WindowParts> matchDepthwiseParts(linalg::GenericOp g) {
  MLIRContext *ctx = g.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  // Loops n, c, oh, kh, kw, ow.
  std::optional<WindowLoops> wl = matchWindowLoops(g, 2, 3, 5, 4);
  if (!wl ||
      g.getIndexingMapsArray()[1] !=
          AffineMap::get(
              6, 0, {d(1), getAffineConstantExpr(0, ctx), d(3), d(4)}, ctx) ||
      g.getIndexingMapsArray()[2] !=
          AffineMap::get(6, 0, {d(0), d(1), d(2), d(5)}, ctx))
    return std::nullopt;
  WindowParts p;
  p.depthwise = true;
  p.sh = wl->sh;
  p.sw = wl->sw;
  p.dh = wl->dh;
  p.dw = wl->dw;
  Value x = g.getDpsInputs()[0], w = g.getDpsInputs()[1],
        out = g.getDpsInits()[0];
  Block &body = g.getRegion().front();
  if (!blockable(x.getType()) || !blockable(out.getType()) ||
      !w.getDefiningOp<arith::ConstantOp>() ||
      (!wholeBlocks(out.getType()) && !readableWeights(w)) ||
      std::distance(body.begin(), body.end()) != 3)
    return std::nullopt;
  std::optional<PaddedInput> in = matchPaddedInput(x);
  if (!in || (in->padValue && !matchPattern(in->padValue, m_AnyZeroFloat())) ||
      !matchOutputStart(out, p.bias, p.fillScalar))
    return std::nullopt;
  p.in = *in;
  p.paddedType = cast<RankedTensorType>(x.getType());
  return p;
}

} // namespace kiln::blocking
