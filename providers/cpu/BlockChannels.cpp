//===- BlockChannels.cpp - kiln-cpu-block-channels ------------------------===//
//
// Conv chains in a channel-blocked layout, [n, c / 16, h, w, 16] (NCHWc
// with c the AVX-512 vector width, as ONNX Runtime's NCHWc transformer and
// oneDNN lay them out): convs, and the elementwise ops between them,
// rewritten onto blocked tensors, the layout changed only where a value
// enters or leaves the chain. A blocked conv's output position holds its
// channels as one vector, so its kernel stores whole vectors without
// transposes, reads 16 input channels from one line, and has no scalar
// column at a row's end; the elementwise ops after it (a residual Add)
// read the same lines. The matchers are in BlockChannelsMatch.cpp.
//
//===----------------------------------------------------------------------===//
#include "passes/FusionUtils.h"
#include "passes/Passes.h"
#include "providers/Passes.h"
#include "providers/cpu/BlockChannelsMatch.h"
#include "providers/cpu/Vectorize.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_CPUBLOCKCHANNELS
#include "providers/Passes.h.inc"

namespace {

using vectorize::kBlockedLanes;
using namespace blocking;

/// A chain is kept where it has at least this many convs and more convs
/// than reorders into and out of blocks (mobilenet_v2's 1x1 convs between
/// depthwise convs, two reorders a pair, ran 5% slower blocked).
constexpr int64_t kMinChainConvs = 2;

struct Blocker {
  Block &block;
  OpBuilder b;
  // Each NCHW value of the chain and its blocked twin.
  DenseMap<Value, Value> blocked;
  SmallVector<Value> order;
  SmallVector<Operation *> replaced;
  int64_t convs = 0, pools = 0, concats = 0, elementwise = 0, reorders = 0,
          globalPools = 0;

  // The conversions (of a conv, pool, elementwise op or concat, or a
  // reorder into blocks), joined where one reads another's blocked value:
  // a chain is kept or undone whole.
  struct Conversion {
    SmallVector<Operation *> originals;
    SmallVector<Value> values; // NCHW values given a blocked twin
    // Original results and the plain values that take their place when
    // the chain is kept (a global pool's [n, c]).
    SmallVector<std::pair<Value, Value>> results;
    unsigned parent;
    bool isConv = false, isReorder = false;
    int64_t *kept = nullptr; // counted there when kept (pools, concats, ...)
  };
  SmallVector<Conversion> conversions;
  DenseMap<Value, unsigned> conversionOf; // blocked value -> conversion
  SmallVector<unsigned> active;           // being built (innermost last)
  // The ops the conversions created, in order, and whose.
  SmallVector<std::pair<Operation *, unsigned>> created;

  /// Records the ops each conversion creates in the block.
  struct Recorder : OpBuilder::Listener {
    Blocker &self;
    explicit Recorder(Blocker &self) : self(self) {}
    void notifyOperationInserted(Operation *op,
                                 OpBuilder::InsertPoint) override {
      if (op->getBlock() == &self.block && !self.active.empty())
        self.created.push_back({op, self.active.back()});
    }
  } recorder{*this};

  explicit Blocker(Block &block) : block(block), b(block.getParentOp()) {
    b.setListener(&recorder);
  }

  unsigned begin(bool isConv = false, bool isReorder = false) {
    unsigned i = conversions.size();
    conversions.push_back({});
    conversions[i].parent = i;
    conversions[i].isConv = isConv;
    conversions[i].isReorder = isReorder;
    active.push_back(i);
    return i;
  }
  void end() { active.pop_back(); }
  unsigned find(unsigned i) {
    while (conversions[i].parent != i)
      i = conversions[i].parent = conversions[conversions[i].parent].parent;
    return i;
  }
  void join(unsigned a, unsigned c) { conversions[find(a)].parent = find(c); }
  /// The active conversion reads `vb` (a blocked value).
  void reads(Value vb) {
    if (!active.empty())
      join(active.back(), conversionOf.lookup(vb));
  }
  void replace(Operation *op) {
    replaced.push_back(op);
    conversions[active.back()].originals.push_back(op);
  }

  /// `v` [n, c, h, w] as [n, c / 16, h, w, 16], made before `at`.
  Value toBlocked(Value v, Operation *at) {
    if (Value vb = blocked.lookup(v)) {
      reads(vb);
      return vb;
    }
    begin(/*isConv=*/false, /*isReorder=*/true);
    MLIRContext *ctx = b.getContext();
    auto t = cast<RankedTensorType>(v.getType());
    auto bt = blockedType(t);
    b.setInsertionPoint(at);
    Location loc = v.getLoc();
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    // (A padded last block: the channels inserted into zeros first.)
    if (!wholeBlocks(t))
      v = zeroPadded(v, 1, bt.getDimSize(1) * kBlockedLanes, loc);
    Value empty =
        b.create<tensor::EmptyOp>(loc, bt.getShape(), bt.getElementType());
    auto g = b.create<linalg::GenericOp>(
        loc, TypeRange{bt}, ValueRange{v}, ValueRange{empty},
        ArrayRef<AffineMap>{
            AffineMap::get(
                5, 0, {d(0), d(1) * kBlockedLanes + d(4), d(2), d(3)}, ctx),
            AffineMap::getMultiDimIdentityMap(5, ctx)},
        parallelIters(5), [](OpBuilder &nb, Location l, ValueRange args) {
          nb.create<linalg::YieldOp>(l, args[0]);
        });
    g->setAttr(vectorize::kToBlocked, UnitAttr::get(ctx));
    record(v, g.getResult(0));
    end();
    reads(g.getResult(0));
    return g.getResult(0);
  }

  void record(Value v, Value vb) {
    blocked[v] = vb;
    order.push_back(v);
    conversionOf[vb] = active.back();
    conversions[active.back()].values.push_back(v);
  }

  /// `v` with dim `dim` grown to `size`, inserted at 0 into zeros.
  Value zeroPadded(Value v, unsigned dim, int64_t size, Location loc) {
    auto t = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape(t.getShape());
    shape[dim] = size;
    Value zero = b.create<arith::ConstantOp>(
        loc, b.getFloatAttr(t.getElementType(), 0.0));
    Value filled = b.create<linalg::FillOp>(loc, zero,
                                            b.create<tensor::EmptyOp>(
                                                 loc, shape, t.getElementType())
                                                .getResult())
                       .getResult(0);
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (int64_t s : t.getShape()) {
      offsets.push_back(b.getIndexAttr(0));
      sizes.push_back(b.getIndexAttr(s));
      strides.push_back(b.getIndexAttr(1));
    }
    return b.create<tensor::InsertSliceOp>(loc, v, filled, offsets, sizes,
                                           strides);
  }

  /// A per-channel operand ([c], [c, 1, 1], ...) as [c / 16, 16] (a
  /// padded block's channels 0).
  Value perChannel(Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != 1) {
      ReassociationIndices all;
      for (int64_t i = 0; i < t.getRank(); ++i)
        all.push_back(i);
      v = b.create<tensor::CollapseShapeOp>(
          v.getLoc(), v, SmallVector<ReassociationIndices>{all});
      t = cast<RankedTensorType>(v.getType());
    }
    int64_t blocks = int64_t(llvm::divideCeil(t.getDimSize(0), kBlockedLanes));
    if (t.getDimSize(0) % kBlockedLanes)
      v = zeroPadded(v, 0, blocks * kBlockedLanes, v.getLoc());
    return b.create<tensor::ExpandShapeOp>(
        v.getLoc(),
        RankedTensorType::get({blocks, kBlockedLanes}, t.getElementType()), v,
        SmallVector<ReassociationIndices>{{0, 1}});
  }

  /// A per-image, per-channel operand [n, c, 1, 1] as [n, c / 16, 16].
  Value perImageChannel(Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    Location loc = v.getLoc();
    int64_t n = t.getDimSize(0), c = t.getDimSize(1),
            blocks = int64_t(llvm::divideCeil(c, kBlockedLanes));
    v = b.create<tensor::CollapseShapeOp>(
        loc, v, SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
    if (c % kBlockedLanes)
      v = zeroPadded(v, 1, blocks * kBlockedLanes, loc);
    return b.create<tensor::ExpandShapeOp>(
        loc,
        RankedTensorType::get({n, blocks, kBlockedLanes}, t.getElementType()),
        v, SmallVector<ReassociationIndices>{{0}, {1, 2}});
  }

  /// A global pool `g` (isGlobalPool) of a blocked value: the same body
  /// over [n, c / 16, h, w, 16] into [n, c / 16, 16], read back as [n, c]
  /// (a padded block's channels dropped).
  void globalPool(linalg::GenericOp g, Value xb) {
    begin();
    conversions[active.back()].kept = &globalPools;
    reads(xb);
    MLIRContext *ctx = b.getContext();
    Location loc = g.getLoc();
    b.setInsertionPoint(g);
    auto xt = cast<RankedTensorType>(xb.getType());
    auto out = cast<RankedTensorType>(g.getResultTypes()[0]);
    int64_t n = xt.getDimSize(0), blocks = xt.getDimSize(1);
    auto pt =
        RankedTensorType::get({n, blocks, kBlockedLanes}, out.getElementType());
    Value init = startedOutput(
        pt, Value(),
        g.getDpsInits()[0].getDefiningOp<linalg::FillOp>().getInputs()[0], loc);
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    SmallVector<utils::IteratorType> iters = parallelIters(5);
    iters[2] = iters[3] = utils::IteratorType::reduction;
    auto bg = b.create<linalg::GenericOp>(
        loc, TypeRange{pt}, ValueRange{xb}, ValueRange{init},
        ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(5, ctx),
                            AffineMap::get(5, 0, {d(0), d(1), d(4)}, ctx)},
        iters, sameBody(g));
    bg->setAttr(vectorize::kBlockedGlobalPool, UnitAttr::get(ctx));
    Value r = b.create<tensor::CollapseShapeOp>(
        loc, bg.getResult(0), SmallVector<ReassociationIndices>{{0}, {1, 2}});
    if (blocks * kBlockedLanes != out.getDimSize(1))
      r = b.create<tensor::ExtractSliceOp>(
          loc, out, r,
          ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(n),
                                 b.getIndexAttr(out.getDimSize(1))},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
    conversions[active.back()].results.push_back({g.getResult(0), r});
    replace(g);
    end();
  }

  /// Blocked `xb` inserted at (top, left) into a blocked tensor of
  /// `paddedType` filled with `padValue` (none: `xb` itself).
  Value padded(Value xb, Value src, RankedTensorType paddedType, int64_t top,
               int64_t left, Value padValue, Location loc) {
    if (!padValue)
      return xb;
    auto pt = blockedType(paddedType);
    Value empty =
        b.create<tensor::EmptyOp>(loc, pt.getShape(), pt.getElementType());
    Value filled = b.create<linalg::FillOp>(loc, padValue, empty).getResult(0);
    auto st = cast<RankedTensorType>(xb.getType());
    SmallVector<OpFoldResult> offsets = {
        b.getIndexAttr(0), b.getIndexAttr(0), b.getIndexAttr(top),
        b.getIndexAttr(left), b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes, strides;
    for (int64_t s : st.getShape()) {
      sizes.push_back(b.getIndexAttr(s));
      strides.push_back(b.getIndexAttr(1));
    }
    return b.create<tensor::InsertSliceOp>(loc, xb, filled, offsets, sizes,
                                           strides);
  }

  /// A pool or depthwise conv on blocks: loops n, cb, oh, ow, ci
  /// (parallel), kh, kw (reductions); a pool's second operand sizes the
  /// window, a depthwise conv's weights are read as they lie.
  void window(linalg::GenericOp g, const WindowParts &p) {
    begin(/*isConv=*/p.depthwise);
    if (!p.depthwise)
      conversions[active.back()].kept = &pools;
    MLIRContext *ctx = b.getContext();
    Location loc = g.getLoc();
    Value xb = toBlocked(p.in.src, g);
    b.setInsertionPoint(g);
    xb = padded(xb, p.in.src, p.paddedType, p.in.top, p.in.left, p.in.padValue,
                loc);
    auto outType = blockedType(cast<RankedTensorType>(g.getResultTypes()[0]));
    Value init = startedOutput(outType, p.bias, p.fillScalar, loc);
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    SmallVector<utils::IteratorType> iters = parallelIters(7);
    iters[5] = iters[6] = utils::IteratorType::reduction;
    SmallVector<AffineExpr> second = {d(5), d(6)};
    if (p.depthwise)
      second = {d(1) * kBlockedLanes + d(4), getAffineConstantExpr(0, ctx),
                d(5), d(6)};
    SmallVector<AffineMap> maps = {
        AffineMap::get(7, 0,
                       {d(0), d(1), d(2) * p.sh + d(5) * p.dh,
                        d(3) * p.sw + d(6) * p.dw, d(4)},
                       ctx),
        AffineMap::get(7, 0, second, ctx),
        AffineMap::get(7, 0, {d(0), d(1), d(2), d(3), d(4)}, ctx)};
    Value w = g.getDpsInputs()[1];
    if (p.depthwise)
      w = paddedWeights(b, w, /*padInputs=*/false);
    auto bg =
        b.create<linalg::GenericOp>(loc, TypeRange{outType}, ValueRange{xb, w},
                                    ValueRange{init}, maps, iters, sameBody(g));
    bg->setAttr(vectorize::kBlockedWindow, UnitAttr::get(ctx));
    record(g.getResult(0), bg.getResult(0));
    replace(g);
    end();
  }

  /// The blocked output of a conv of `outType` started from `bias` (1-D)
  /// or `fillScalar`.
  Value startedOutput(RankedTensorType outType, Value bias, Value fillScalar,
                      Location loc) {
    MLIRContext *ctx = b.getContext();
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    Value init = b.create<tensor::EmptyOp>(loc, outType.getShape(),
                                           outType.getElementType());
    if (!bias)
      return b.create<linalg::FillOp>(loc, fillScalar, init).getResult(0);
    return b
        .create<linalg::GenericOp>(
            loc, TypeRange{outType}, ValueRange{perChannel(bias)},
            ValueRange{init},
            ArrayRef<AffineMap>{AffineMap::get(5, 0, {d(1), d(4)}, ctx),
                                AffineMap::getMultiDimIdentityMap(5, ctx)},
            parallelIters(5),
            [](OpBuilder &nb, Location l, ValueRange args) {
              nb.create<linalg::YieldOp>(l, args[0]);
            })
        .getResult(0);
  }

  void conv(linalg::GenericOp g, const ConvParts &p) {
    begin(/*isConv=*/true);
    MLIRContext *ctx = b.getContext();
    Location loc = g.getLoc();
    Value xb = g.getDpsInputs()[0];
    if (!p.plain) {
      xb = toBlocked(p.src, g);
      b.setInsertionPoint(g);
      xb = padded(xb, p.src, p.paddedType, p.top, p.left, p.padValue, loc);
    }
    b.setInsertionPoint(g);
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    auto outType = blockedType(cast<RankedTensorType>(g.getResultTypes()[0]));
    Value init = startedOutput(outType, p.bias, p.fillScalar, loc);
    // (Plain: loops n, mb, oh, ow, mi, c, kh, kw; x read as it lies.)
    const vectorize::ConvMatch &cm = p.cm;
    unsigned loops = p.plain ? 8 : 9;
    SmallVector<utils::IteratorType> iters = parallelIters(loops);
    for (unsigned i = 5; i < loops; ++i)
      iters[i] = utils::IteratorType::reduction;
    AffineExpr row = d(2) * cm.sh + d(6) * cm.dh,
               col = d(3) * cm.sw + d(7) * cm.dw,
               m = d(1) * kBlockedLanes + d(4);
    SmallVector<AffineExpr> xE = {d(0), d(5), row, col},
                            wE = {m, d(5), d(6), d(7)};
    if (!p.plain) {
      xE.push_back(d(8));
      wE[1] = d(5) * kBlockedLanes + d(8);
    }
    SmallVector<AffineMap> maps = {
        AffineMap::get(loops, 0, xE, ctx), AffineMap::get(loops, 0, wE, ctx),
        AffineMap::get(loops, 0, {d(0), d(1), d(2), d(3), d(4)}, ctx)};
    Value w = paddedWeights(b, g.getDpsInputs()[1], /*padInputs=*/!p.plain);
    auto bg =
        b.create<linalg::GenericOp>(loc, TypeRange{outType}, ValueRange{xb, w},
                                    ValueRange{init}, maps, iters, sameBody(g));
    // (The rows of x that hold the source, for the kernel to skip the
    // padding's.)
    int64_t srcRows = cast<RankedTensorType>(p.src.getType()).getDimSize(2);
    bg->setAttr(vectorize::kBlockedConv,
                b.getDenseI64ArrayAttr({p.top, p.top + srcRows}));
    record(g.getResult(0), bg.getResult(0));
    replace(g);
    end();
  }

  /// An elementwise generic over [n, c, h, w] that reads a blocked value:
  /// the same body over blocked tensors. Its other operands: the same
  /// shape (made blocked), per-channel vectors, or broadcast scalars.
  bool elementwiseOp(linalg::GenericOp g) {
    if (!g.hasPureTensorSemantics() || g.getNumDpsInits() != 1 ||
        g.getNumLoops() != 4 || !blockable(g.getResultTypes()[0]) ||
        g.getNumReductionLoops() ||
        !g.getIndexingMapsArray().back().isIdentity() ||
        !g.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>() ||
        !g.getRegion().front().getArguments().back().use_empty())
      return false;
    bool hasIndex = false;
    g.getRegion().walk([&](linalg::IndexOp) { hasIndex = true; });
    if (hasIndex || (!wholeBlocks(g.getResultTypes()[0]) && !finiteOnFinite(g)))
      return false;
    MLIRContext *ctx = b.getContext();
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    auto outType = cast<RankedTensorType>(g.getResultTypes()[0]);
    bool readsBlocked = false;
    for (auto [v, map] :
         llvm::zip(g.getDpsInputs(), g.getIndexingMapsArray())) {
      if (map.isIdentity()) {
        if (v.getType() != outType)
          return false;
        readsBlocked |= bool(blocked.lookup(v));
        continue;
      }
      if (perChannelMap(map, v, outType.getDimSize(1)) ||
          perImageChannelMap(map, v, outType))
        continue;
      if (map == AffineMap::get(4, 0, {d(2), d(3)}, ctx))
        continue;
      if (map.getNumResults() == 0 ||
          llvm::all_of(map.getResults(),
                       [](AffineExpr e) { return isa<AffineConstantExpr>(e); }))
        continue;
      return false;
    }
    if (!readsBlocked)
      return false;
    begin();
    conversions[active.back()].kept = &elementwise;
    SmallVector<Value> ins;
    SmallVector<AffineMap> maps;
    for (auto [v, map] :
         llvm::zip(g.getDpsInputs(), g.getIndexingMapsArray())) {
      if (map.isIdentity()) {
        ins.push_back(toBlocked(v, g));
        maps.push_back(AffineMap::getMultiDimIdentityMap(5, ctx));
        continue;
      }
      b.setInsertionPoint(g);
      if (perChannelMap(map, v, outType.getDimSize(1))) {
        ins.push_back(perChannel(v));
        maps.push_back(AffineMap::get(5, 0, {d(1), d(4)}, ctx));
        continue;
      }
      if (perImageChannelMap(map, v, outType)) {
        ins.push_back(perImageChannel(v));
        maps.push_back(AffineMap::get(5, 0, {d(0), d(1), d(4)}, ctx));
        continue;
      }
      ins.push_back(v);
      if (map == AffineMap::get(4, 0, {d(2), d(3)}, ctx))
        maps.push_back(AffineMap::get(5, 0, {d(2), d(3)}, ctx));
      else
        maps.push_back(AffineMap::get(5, 0, map.getResults(), ctx));
    }
    b.setInsertionPoint(g);
    auto bt = blockedType(outType);
    maps.push_back(AffineMap::getMultiDimIdentityMap(5, ctx));
    Value empty = b.create<tensor::EmptyOp>(g.getLoc(), bt.getShape(),
                                            bt.getElementType());
    auto bg = b.create<linalg::GenericOp>(g.getLoc(), TypeRange{bt}, ins,
                                          ValueRange{empty}, maps,
                                          parallelIters(5), sameBody(g));
    bg->setAttr(vectorize::kBlockedElementwise, UnitAttr::get(ctx));
    record(g.getResult(0), bg.getResult(0));
    replace(g);
    end();
    return true;
  }

  /// A concat along the channels (insert_slices of whole parts into a
  /// tensor.empty, each at a multiple of 16 channels, together filling it)
  /// of which a part is blocked: the blocked parts inserted alike.
  void concat(tensor::InsertSliceOp first) {
    if (!first.getDest().getDefiningOp<tensor::EmptyOp>() ||
        !blockable(first.getDestType()) || !wholeBlocks(first.getDestType()))
      return;
    auto whole = first.getDestType();
    SmallVector<tensor::InsertSliceOp> parts;
    int64_t filled = 0;
    bool anyBlocked = false;
    for (tensor::InsertSliceOp ins = first; ins;) {
      SmallVector<int64_t> offsets(ins.getStaticOffsets());
      auto st = ins.getSourceType();
      if (!ins.hasUnitStride() || st.getRank() != 4 || !blockable(st) ||
          !wholeBlocks(st) || offsets.size() != 4 || offsets[0] || offsets[2] ||
          offsets[3] || ShapedType::isDynamic(offsets[1]) ||
          offsets[1] % kBlockedLanes ||
          st.getDimSize(0) != whole.getDimSize(0) ||
          st.getDimSize(2) != whole.getDimSize(2) ||
          st.getDimSize(3) != whole.getDimSize(3))
        return;
      parts.push_back(ins);
      filled += st.getDimSize(1);
      anyBlocked |= bool(blocked.lookup(ins.getSource()));
      Value r = ins.getResult();
      ins = r.hasOneUse()
                ? dyn_cast<tensor::InsertSliceOp>(*r.getUsers().begin())
                : tensor::InsertSliceOp();
      // (An insert of the whole, a conv's padding, reads the concat.)
      if (ins && ins.getDest() != r)
        ins = tensor::InsertSliceOp();
    }
    if (filled != whole.getDimSize(1) || !anyBlocked)
      return;
    auto bt = blockedType(whole);
    Location loc = first.getLoc();
    begin();
    conversions[active.back()].kept = &concats;
    b.setInsertionPoint(parts.back());
    Value acc =
        b.create<tensor::EmptyOp>(loc, bt.getShape(), bt.getElementType());
    for (tensor::InsertSliceOp ins : parts) {
      Value part = toBlocked(ins.getSource(), parts.back());
      b.setInsertionPoint(parts.back());
      auto pt = cast<RankedTensorType>(part.getType());
      SmallVector<OpFoldResult> offsets = {
          b.getIndexAttr(0),
          b.getIndexAttr(ins.getStaticOffsets()[1] / kBlockedLanes),
          b.getIndexAttr(0), b.getIndexAttr(0), b.getIndexAttr(0)};
      SmallVector<OpFoldResult> sizes, strides;
      for (int64_t d : pt.getShape()) {
        sizes.push_back(b.getIndexAttr(d));
        strides.push_back(b.getIndexAttr(1));
      }
      acc = b.create<tensor::InsertSliceOp>(loc, part, acc, offsets, sizes,
                                            strides);
    }
    record(parts.back().getResult(), acc);
    for (tensor::InsertSliceOp ins : parts)
      replace(ins);
    end();
  }

  /// The blocked `vb` back as [n, c, h, w], made before `at`.
  Value fromBlocked(Value v, Value vb, Operation *at) {
    MLIRContext *ctx = b.getContext();
    auto t = cast<RankedTensorType>(v.getType());
    b.setInsertionPoint(at);
    Location loc = v.getLoc();
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    Value empty =
        b.create<tensor::EmptyOp>(loc, t.getShape(), t.getElementType());
    auto g = b.create<linalg::GenericOp>(
        loc, TypeRange{t}, ValueRange{vb}, ValueRange{empty},
        ArrayRef<AffineMap>{AffineMap::get(4, 0,
                                           {d(0), d(1).floorDiv(kBlockedLanes),
                                            d(2), d(3), d(1) % kBlockedLanes},
                                           ctx),
                            AffineMap::getMultiDimIdentityMap(4, ctx)},
        parallelIters(4), [](OpBuilder &nb, Location l, ValueRange args) {
          nb.create<linalg::YieldOp>(l, args[0]);
        });
    g->setAttr(vectorize::kFromBlocked, UnitAttr::get(ctx));
    return g.getResult(0);
  }

  /// Keeps the chains worth their reorders (kMinChainConvs) and undoes
  /// the others: their new ops erased, their originals kept.
  void decide() {
    DenseSet<Operation *> gone(replaced.begin(), replaced.end());
    DenseMap<unsigned, std::pair<int64_t, int64_t>> tally; // convs, reorders
    for (unsigned i = 0; i < conversions.size(); ++i) {
      Conversion &c = conversions[i];
      auto &[nConvs, nReorders] = tally[find(i)];
      nConvs += c.isConv;
      nReorders += c.isReorder;
      if (c.isReorder)
        continue;
      // (A value read outside the chain is reordered back; the padded
      // copy of a converted conv's input is not a reader.)
      auto outside = [&](Operation *user) {
        if (gone.contains(user))
          return false;
        auto ins = dyn_cast<tensor::InsertSliceOp>(user);
        return !ins || ins->use_empty() ||
               llvm::any_of(ins->getUsers(),
                            [&](Operation *u) { return !gone.contains(u); });
      };
      for (Value v : c.values)
        if (llvm::any_of(v.getUsers(), outside))
          ++nReorders;
    }
    DenseSet<Value> dropped;
    SmallVector<bool> keep(conversions.size());
    for (unsigned i = 0; i < conversions.size(); ++i) {
      Conversion &c = conversions[i];
      auto [nConvs, nReorders] = tally[find(i)];
      keep[i] = nConvs >= kMinChainConvs && nConvs > nReorders;
      if (keep[i]) {
        convs += c.isConv;
        reorders += c.isReorder;
        if (c.kept)
          ++*c.kept;
        for (auto [original, plain] : c.results)
          original.replaceAllUsesWith(plain);
        continue;
      }
      for (Operation *op : c.originals)
        llvm::erase(replaced, op);
      for (Value v : c.values) {
        blocked.erase(v);
        dropped.insert(v);
      }
    }
    // (Newest first: a conversion's ops may read a nested one's.)
    for (auto [op, i] : llvm::reverse(created))
      if (!keep[i])
        op->erase();
    llvm::erase_if(order, [&](Value v) { return dropped.contains(v); });
  }

  void run() {
    SmallVector<Operation *> ops;
    for (Operation &op : block)
      ops.push_back(&op);
    for (Operation *op : ops) {
      if (auto ins = dyn_cast<tensor::InsertSliceOp>(op)) {
        concat(ins);
        continue;
      }
      // (Another provider's ops stay as they are.)
      auto g = dyn_cast<linalg::GenericOp>(op);
      if (!g || g->hasAttr(vectorize::kDeviceOpAttr))
        continue;
      if (std::optional<ConvParts> p = matchConvParts(g)) {
        conv(g, *p);
        continue;
      }
      if (std::optional<WindowParts> p = matchDepthwiseParts(g)) {
        window(g, *p);
        continue;
      }
      // (A pool joins a chain; alone it keeps its own kernels.)
      if (std::optional<WindowParts> p = matchPoolParts(g);
          p && blocked.lookup(p->in.src)) {
        window(g, *p);
        continue;
      }
      if (isGlobalPool(g))
        if (Value xb = blocked.lookup(g.getDpsInputs()[0])) {
          globalPool(g, xb);
          continue;
        }
      elementwiseOp(g);
    }
    decide();
    // Values still read in NCHW (outside the chain) are reordered back
    // once, before their first such reader.
    DenseSet<Operation *> gone(replaced.begin(), replaced.end());
    for (Value v : order) {
      if (!v.getDefiningOp() || !gone.contains(v.getDefiningOp()))
        continue;
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : v.getUses())
        if (!gone.contains(use.getOwner()))
          uses.push_back(&use);
      if (uses.empty())
        continue;
      Operation *first = nullptr;
      for (OpOperand *use : uses) {
        Operation *user = block.findAncestorOpInBlock(*use->getOwner());
        if (!first || user->isBeforeInBlock(first))
          first = user;
      }
      Value back = fromBlocked(v, blocked[v], first);
      for (OpOperand *use : uses)
        use->set(back);
    }
    for (Operation *op : llvm::reverse(replaced))
      if (op->use_empty())
        op->erase();
  }
};

struct CpuBlockChannelsPass
    : public impl::CpuBlockChannelsBase<CpuBlockChannelsPass> {
  using CpuBlockChannelsBase::CpuBlockChannelsBase;

  void runOnOperation() override {
    if (vectorBits < 512)
      return;
    func::FuncOp func = getOperation();
    if (func.getBody().empty())
      return;
    Blocker blocker(func.getBody().front());
    blocker.run();
    numConvs += blocker.convs;
    numPools += blocker.pools;
    numConcats += blocker.concats;
    numElementwise += blocker.elementwise;
    numReorders += blocker.reorders;
    numGlobalPools += blocker.globalPools;
    // The NCHW inits and paddings the chain no longer reads.
    IRRewriter rewriter(func.getContext());
    (void)eraseUnreachableBlocks(rewriter, func->getRegions());
    bool erased = true;
    while (erased) {
      erased = false;
      for (Operation &op :
           llvm::make_early_inc_range(llvm::reverse(func.getBody().front())))
        if (isOpTriviallyDead(&op)) {
          op.erase();
          erased = true;
        }
    }
  }
};

} // namespace
} // namespace kiln
