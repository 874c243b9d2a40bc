//===- FusionQuantized.cpp - QDQ linear layers as 8-bit products ----------===//
//
// A statically quantized model (onnxruntime.quantization's QDQ format)
// dequantizes activations and weights in front of each MatMul or Gemm:
//   MatMul(DequantizeLinear(a, sa, za), DequantizeLinear(W, sw, zw))
// which, widened to float, costs what the float model costs. The product
// of the dequantized operands is the scaled integer product
//   sa * sw * sum_k (a - za)(W - zw) = sa * sw * MatMulInteger(a, W, za, zw)
// so the layer becomes MatMulInteger (kiln-decompose-ops turns it into the
// u8 x s8 product the CPU's VNNI kernels take), a Cast and one Mul by the
// constant scales (per tensor, or per output column). Runs before
// kiln-decompose-ops, while the DequantizeLinear ops are still whole.
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/OnnxOps.h"
#include "passes/DecomposeOps.h"
#include "passes/FusionUtils.h"
#include "passes/GraphBuilder.h"
#include "passes/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace kiln::fusion;

namespace kiln {
#define GEN_PASS_DEF_FUSEQUANTIZED
#include "passes/Passes.h.inc"

namespace {

bool isEightBit(Type t) {
  auto st = dyn_cast<ShapedType>(t);
  return st && st.getElementType().isInteger(8);
}

RankedTensorType staticTensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() ? t : RankedTensorType();
}

/// One element, or absent.
bool isScalarParam(Value v) {
  auto t = staticTensor(v);
  return isNoneValue(v) || (t && t.getNumElements() == 1);
}

/// A DequantizeLinear of 8-bit data to f32 per tensor (the activation side).
onnx::DequantizeLinearOp activationDequantize(Value v) {
  auto dq = v.getDefiningOp<onnx::DequantizeLinearOp>();
  if (!dq || !isEightBit(dq.getX().getType()) || dq.getBlockSize() != 0 ||
      !cast<ShapedType>(dq.getY().getType()).getElementType().isF32() ||
      !isScalarParam(dq.getXScale()) || !isScalarParam(dq.getXZeroPoint()))
    return {};
  return dq;
}

/// A DequantizeLinear of constant 8-bit 2-D weights, per tensor or per
/// column of the [K, N] matrix they form (`transposed`: stored [N, K]).
onnx::DequantizeLinearOp weightDequantize(Value v, bool transposed) {
  auto dq = v.getDefiningOp<onnx::DequantizeLinearOp>();
  if (!dq || !constantAttr(dq.getX()) || !isEightBit(dq.getX().getType()) ||
      dq.getBlockSize() != 0 ||
      !cast<ShapedType>(dq.getY().getType()).getElementType().isF32())
    return {};
  auto wt = staticTensor(dq.getX());
  if (!wt || wt.getRank() != 2)
    return {};
  int64_t axis = int64_t(dq.getAxis());
  if (axis < 0)
    axis += 2;
  int64_t columns = wt.getDimSize(transposed ? 0 : 1);
  auto perColumn = [&](Value p) {
    auto t = staticTensor(p);
    return isScalarParam(p) ||
           (t && t.getRank() == 1 && t.getNumElements() == columns &&
            axis == (transposed ? 0 : 1));
  };
  if (!perColumn(dq.getXScale()) || !perColumn(dq.getXZeroPoint()))
    return {};
  return dq;
}

/// The i32 product `q` in f32 times `scale`.
Value scaled(GraphBuilder &g, Value q, Value scale) {
  Value f = g.op("Cast", {q}, {g.attr("to", int64_t(1))}, g.b.getF32Type());
  return g.op("Mul", {f, scale});
}

/// Cast(MatMulInteger(a, W, za, zw)) * sa * sw for the two dequantizes;
/// `w` is the weights as [K, N].
Value scaledProduct(GraphBuilder &g, onnx::DequantizeLinearOp a,
                    onnx::DequantizeLinearOp w, Value weights) {
  auto none = [&](Value v) { return isNoneValue(v) ? g.none() : v; };
  Type i32 = g.b.getI32Type();
  Value q = g.op(
      "MatMulInteger",
      {a.getX(), weights, none(a.getXZeroPoint()), none(w.getXZeroPoint())}, {},
      i32);
  return scaled(g, q, g.op("Mul", {a.getXScale(), w.getXScale()}));
}

/// A pattern that counts its rewrites for `--report`.
template <typename OpT> struct CountedPattern : OpRewritePattern<OpT> {
  CountedPattern(MLIRContext *ctx, Counters &c)
      : OpRewritePattern<OpT>(ctx), counters(c) {}
  Counters &counters;
};

/// Replaces `op`'s result by `y` when the types agree, counting `key`.
LogicalResult replaceCounted(PatternRewriter &rewriter, Operation *op, Value y,
                             Counters &counters, StringRef key) {
  if (y.getType() != op->getResult(0).getType())
    return rewriter.notifyMatchFailure(op, "the rewrite's type differs");
  rewriter.replaceOp(op, y);
  ++counters[key];
  return success();
}

struct QuantizedMatMul : CountedPattern<onnx::MatMulOp> {
  using CountedPattern::CountedPattern;

  LogicalResult matchAndRewrite(onnx::MatMulOp op,
                                PatternRewriter &rewriter) const override {
    auto a = activationDequantize(op.getA());
    auto w = weightDequantize(op.getB(), /*transposed=*/false);
    auto at = dyn_cast<RankedTensorType>(op.getA().getType());
    if (!a || !w || !at || at.getRank() < 2)
      return rewriter.notifyMatchFailure(
          op, "not a dequantized activation by dequantized weights");
    GraphBuilder g(rewriter, op.getLoc(), rewriter.getF32Type());
    Value y = scaledProduct(g, a, w, w.getX());
    return replaceCounted(rewriter, op, y, counters, "fuse_quantized_matmul");
  }
};

/// Gemm (alpha = 1, beta = 1, A not transposed) of the same operands, B
/// stored [N, K] with transB; the bias C added after the scaling.
struct QuantizedGemm : CountedPattern<onnx::GemmOp> {
  using CountedPattern::CountedPattern;

  LogicalResult matchAndRewrite(onnx::GemmOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getTransA() || !op.getAlpha().isExactlyValue(1.0) ||
        !op.getBeta().isExactlyValue(1.0))
      return rewriter.notifyMatchFailure(op, "scaled or transposed A");
    bool transB = op.getTransB();
    auto a = activationDequantize(op.getA());
    auto w = weightDequantize(op.getB(), transB);
    if (!a || !w)
      return rewriter.notifyMatchFailure(
          op, "not a dequantized activation by dequantized weights");
    GraphBuilder g(rewriter, op.getLoc(), rewriter.getF32Type());
    Value weights =
        transB ? g.op("Transpose", {w.getX()}, {g.perm({1, 0})},
                      cast<ShapedType>(w.getX().getType()).getElementType())
               : w.getX();
    Value y = scaledProduct(g, a, w, weights);
    if (!isNoneValue(op.getC()))
      y = g.op("Add", {y, op.getC()});
    return replaceCounted(rewriter, op, y, counters, "fuse_quantized_gemm");
  }
};

/// A 2-D Conv (group 1, or depthwise) of the same operands, the weights
/// constant 8-bit [M, C, kh, kw] dequantized per tensor or per output
/// channel without a zero point (symmetric, as the quantizer writes s8
/// weights):
///   ConvInteger(x, W, zx) * (sx * sw) + B, the scales and bias per channel.
struct QuantizedConv : CountedPattern<onnx::ConvOp> {
  using CountedPattern::CountedPattern;

  LogicalResult matchAndRewrite(onnx::ConvOp op,
                                PatternRewriter &rewriter) const override {
    auto x = activationDequantize(op.getX());
    auto w = op.getW().getDefiningOp<onnx::DequantizeLinearOp>();
    auto xt = dyn_cast<RankedTensorType>(op.getX().getType());
    auto wt = w ? staticTensor(w.getX()) : RankedTensorType();
    if (!x || !w || !xt || xt.getRank() != 4 || !wt || wt.getRank() != 4 ||
        !wt.getElementType().isSignlessInteger(8) || !constantAttr(w.getX()) ||
        w.getBlockSize() != 0 || !decompose::integerKernelGroups(op, wt) ||
        op.getAutoPad() != "NOTSET")
      return rewriter.notifyMatchFailure(
          op, "not a dequantized 2-D conv of group 1 or depthwise");
    if (!isNoneValue(w.getXZeroPoint()) &&
        !isZeroIntegerConstant(w.getXZeroPoint()))
      return rewriter.notifyMatchFailure(op, "weights with a zero point");
    int64_t m = wt.getDimSize(0);
    auto st = staticTensor(w.getXScale());
    if (!st ||
        !(st.getNumElements() == 1 ||
          (st.getRank() == 1 && st.getNumElements() == m && w.getAxis() == 0)))
      return rewriter.notifyMatchFailure(
          op, "weight scales not per tensor or channel");
    GraphBuilder g(rewriter, op.getLoc(), rewriter.getF32Type());
    SmallVector<NamedAttribute> attrs = opAttributes(op);
    Value xz = isNoneValue(x.getXZeroPoint()) ? g.none() : x.getXZeroPoint();
    Value q = g.op("ConvInteger", {x.getX(), w.getX(), xz, g.none()}, attrs,
                   rewriter.getI32Type());
    auto perChannel = [&](Value v) {
      auto t = staticTensor(v);
      return t && t.getNumElements() == m && m > 1
                 ? g.op("Reshape", {v, g.ints({1, m, 1, 1})})
                 : v;
    };
    Value y =
        scaled(g, q, perChannel(g.op("Mul", {x.getXScale(), w.getXScale()})));
    if (!isNoneValue(op.getB()))
      y = g.op("Add", {y, perChannel(op.getB())});
    return replaceCounted(rewriter, op, y, counters, "fuse_quantized_conv");
  }
};

/// The same scale or zero point: one value, or equal constants.
bool sameParameter(Value a, Value b) {
  if (isNoneValue(a) || isNoneValue(b))
    return isNoneValue(a) && isNoneValue(b);
  return a == b || (constantAttr(a) && constantAttr(a) == constantAttr(b));
}

/// QuantizeLinear(MaxPool(DequantizeLinear(x, s, z)), s, z), one positive
/// scale: MaxPool(x) on the 8-bit data. Dequantizing is increasing, so the
/// window's max dequantizes to the max of the dequantized window, which
/// quantizes back to itself (ONNX Runtime runs QDQ max pools so too).
struct QuantizedMaxPool : CountedPattern<onnx::QuantizeLinearOp> {
  using CountedPattern::CountedPattern;

  LogicalResult matchAndRewrite(onnx::QuantizeLinearOp q,
                                PatternRewriter &rewriter) const override {
    auto pool = q.getX().getDefiningOp<onnx::MaxPoolOp>();
    auto dq =
        pool ? activationDequantize(pool.getX()) : onnx::DequantizeLinearOp();
    std::optional<float> scale =
        dq ? constantScalar(dq.getXScale()) : std::nullopt;
    if (!dq || !pool.getIndices().use_empty() || !scale || *scale <= 0 ||
        isNoneValue(q.getYZeroPoint()) ||
        !sameParameter(q.getYScale(), dq.getXScale()) ||
        !sameParameter(q.getYZeroPoint(), dq.getXZeroPoint()) ||
        getElementTypeOrSelf(q.getY().getType()) !=
            getElementTypeOrSelf(dq.getX().getType()))
      return rewriter.notifyMatchFailure(
          q, "not a max pool between a dequantize and a quantize alike");
    Operation *narrow = rewriter.clone(*pool);
    narrow->setOperand(0, dq.getX());
    narrow->getResult(0).setType(q.getY().getType());
    rewriter.replaceOp(q, narrow->getResult(0));
    ++counters["fuse_quantized_maxpool"];
    return success();
  }
};

/// The contraction `v` is the result of, through its dequantization (a
/// cast, a scale, a bias) and maybe a quantize-dequantize pair (as is or
/// already in f32), if any.
Operation *contractionBehind(Value v) {
  for (int steps = 0; steps < 16; ++steps) {
    Operation *op = v.getDefiningOp();
    if (!op)
      return nullptr;
    if (isa<onnx::ConvOp, onnx::ConvIntegerOp, onnx::MatMulOp,
            onnx::MatMulIntegerOp, onnx::GemmOp>(op))
      return op;
    if (!isa<onnx::CastOp, onnx::MulOp, onnx::AddOp, onnx::SubOp, onnx::DivOp,
             onnx::RoundOp, onnx::ClipOp, onnx::QuantizeLinearOp,
             onnx::DequantizeLinearOp>(op))
      return nullptr;
    // (The operand of v's shape; the other one is a broadcast constant.)
    auto same = llvm::find_if(op->getOperands(), [&](Value in) {
      auto it = dyn_cast<ShapedType>(in.getType());
      auto vt = dyn_cast<ShapedType>(v.getType());
      return it && vt && it.hasRank() && vt.hasRank() &&
             it.getShape() == vt.getShape();
    });
    if (same == op->getOperands().end())
      return nullptr;
    v = *same;
  }
  return nullptr;
}

/// Whether `dq`'s one reader is an Add or Mul joining it to the
/// dequantized quantize of a contraction (Conv, MatMul, Gemm) that comes
/// after `producer` in the block: that one's store will run the join as
/// its epilogue, reading this operand, which should then be 8-bit (as
/// written in `producer`'s store) rather than recomputed from its wide
/// sums (a resnet50 downsample's 3.2 MB of i32 sums read by the residual
/// Add in a 1x1 conv's store: 860 us, 190 without).
bool joinsLaterContraction(onnx::DequantizeLinearOp dq, Operation *producer) {
  if (!producer || !dq->hasOneUse())
    return false;
  Operation *join = *dq->getUsers().begin();
  if (!isa<onnx::AddOp, onnx::MulOp>(join))
    return false;
  return llvm::any_of(join->getOperands(), [&](Value other) {
    Operation *later = other != dq.getY() ? contractionBehind(other) : nullptr;
    return later && later->getBlock() == producer->getBlock() &&
           producer->isBeforeInBlock(later);
  });
}

/// DequantizeLinear(QuantizeLinear(x, s, z), s, z) per tensor, read by
/// float ops: the same rounding in f32,
///   (clamp(round(x / s) + z, lo, hi) - z) * s,
/// which vectorizes and fuses with its neighbours instead of a round trip
/// through an 8-bit tensor. Not when an 8-bit reader (an integer conv)
/// needs that tensor anyway: reading its bytes costs less than an f32
/// copy, and the quantize then fuses into its producer whole (resnet's
/// residual input of a block, written as u8 and f32 before); nor when a
/// later contraction's epilogue will read it (joinsLaterContraction).
struct QuantizeDequantizePair : CountedPattern<onnx::DequantizeLinearOp> {
  using CountedPattern::CountedPattern;

  LogicalResult matchAndRewrite(onnx::DequantizeLinearOp dq,
                                PatternRewriter &rewriter) const override {
    auto q = dq.getX().getDefiningOp<onnx::QuantizeLinearOp>();
    if (!q || !activationDequantize(dq) || isNoneValue(dq.getXZeroPoint()) ||
        llvm::any_of(
            q.getY().getUsers(),
            [](Operation *u) { return !isa<onnx::DequantizeLinearOp>(u); }) ||
        q.getYScale() != dq.getXScale() ||
        q.getYZeroPoint() != dq.getXZeroPoint() ||
        !cast<ShapedType>(q.getX().getType()).getElementType().isF32())
      return rewriter.notifyMatchFailure(
          dq, "not a per-tensor quantize-dequantize pair read as floats only");
    if (joinsLaterContraction(dq, contractionBehind(q.getX())))
      return rewriter.notifyMatchFailure(
          dq, "read by a later contraction's epilogue: kept 8-bit");
    auto qt = cast<IntegerType>(
        cast<ShapedType>(dq.getX().getType()).getElementType());
    GraphBuilder g(rewriter, dq.getLoc(), rewriter.getF32Type());
    Type f32 = rewriter.getF32Type();
    Value s = dq.getXScale();
    Value z =
        g.op("Cast", {dq.getXZeroPoint()}, {g.attr("to", int64_t(1))}, f32);
    double lo = qt.isUnsigned() ? 0 : -128, hi = qt.isUnsigned() ? 255 : 127;
    Value v = g.op("Add", {g.op("Round", {g.op("Div", {q.getX(), s})}), z});
    v = g.op("Clip", {v, g.scalar(lo), g.scalar(hi)});
    Value y = g.op("Mul", {g.op("Sub", {v, z}), s});
    return replaceCounted(rewriter, dq, y, counters, "fuse_quantize_dequantize");
  }
};

/// An 8-bit result that is an elementwise function of one 8-bit tensor
/// alone: QuantizeLinear(f(DequantizeLinear(x))), f made of elementwise
/// float ops on scalar constants, maybe through more quantize-dequantize
/// pairs (a QDQ SiLU: Q(DQ(x) * DQ(Q(Sigmoid(DQ(x)))))). It takes 256
/// values, so it is a table lookup: the table is the same ops on the 256
/// values of x (kiln-fold-constants computes it, with the kernels the ops
/// would run on), read by a Gather. Only where f costs more than a
/// requantization (a sigmoid, tanh, exp or erf in it): in a conv's store,
/// a QDQ SiLU cost as much as the conv's products.
struct QuantizedLookup : CountedPattern<onnx::QuantizeLinearOp> {
  using CountedPattern::CountedPattern;

  /// Adds the ops computing `v` from `source` (set on the first leaf) to
  /// `ops`; false if `v` is not such a function.
  static bool collect(Value v, Value &source, SetVector<Operation *> &ops,
                      bool &costly) {
    // (A lookup's chain is a few ops: bounds the walk back from each
    // quantize through a float model.)
    if (ops.size() > 64)
      return false;
    if (auto c = constantAttr(v))
      return c.getNumElements() == 1;
    Operation *def = v.getDefiningOp();
    if (!def || def->getNumResults() != 1)
      return false;
    if (ops.contains(def))
      return true;
    auto sameShape = [](Value r, Value src) {
      auto t = staticTensor(r);
      return t && src && t.getShape() == staticTensor(src).getShape();
    };
    if (auto dq = dyn_cast<onnx::DequantizeLinearOp>(def)) {
      if (!activationDequantize(dq))
        return false;
      // Through a quantize of the same function first; else x is a leaf.
      if (auto q = dq.getX().getDefiningOp<onnx::QuantizeLinearOp>()) {
        SetVector<Operation *> inner = ops;
        Value innerSource = source;
        bool innerCostly = costly;
        if (isScalarParam(q.getYScale()) && isScalarParam(q.getYZeroPoint()) &&
            collect(q.getX(), innerSource, inner, innerCostly) &&
            sameShape(q.getX(), innerSource)) {
          ops = std::move(inner);
          source = innerSource;
          costly = innerCostly;
          ops.insert(q);
          ops.insert(dq);
          return true;
        }
      }
      // (Not a constant: kiln-fold-constants computes those, the tables
      // built here among them.)
      if ((source && source != dq.getX()) || constantAttr(dq.getX()))
        return false;
      source = dq.getX();
      if (!staticTensor(source))
        return false;
      ops.insert(dq);
      return true;
    }
    if (!isa<onnx::SigmoidOp, onnx::TanhOp, onnx::ExpOp, onnx::ErfOp,
             onnx::HardSwishOp, onnx::HardSigmoidOp, onnx::ReluOp,
             onnx::LeakyReluOp, onnx::ClipOp, onnx::MulOp, onnx::AddOp,
             onnx::SubOp, onnx::DivOp>(def) ||
        !cast<ShapedType>(v.getType()).getElementType().isF32())
      return false;
    for (Value o : def->getOperands())
      if (!isNoneValue(o) && !collect(o, source, ops, costly))
        return false;
    if (!sameShape(v, source))
      return false;
    // (Not a hard-swish: a few vector ops in the conv's store beat the
    // lookup's pass of its own, mobilenet_v3_small QDQ 0.57 -> 0.73 ms.)
    costly |= isa<onnx::SigmoidOp, onnx::TanhOp, onnx::ExpOp, onnx::ErfOp>(def);
    ops.insert(def);
    return true;
  }

  LogicalResult matchAndRewrite(onnx::QuantizeLinearOp q,
                                PatternRewriter &rewriter) const override {
    Value source;
    SetVector<Operation *> ops;
    bool costly = false;
    auto yt = staticTensor(q.getY());
    if (!yt || !isEightBit(yt) || !isScalarParam(q.getYScale()) ||
        !isScalarParam(q.getYZeroPoint()) ||
        !collect(q.getX(), source, ops, costly) || !costly || !source ||
        staticTensor(source).getShape() != yt.getShape() ||
        llvm::any_of(ops, [&](Operation *op) {
          return op->getBlock() != q->getBlock();
        }))
      return rewriter.notifyMatchFailure(
          q, "not an 8-bit function of one 8-bit tensor through costly ops");
    // The 256 values of x, in the table's order.
    auto xt = cast<IntegerType>(staticTensor(source).getElementType());
    SmallVector<APInt> values;
    for (int64_t i = 0; i < 256; ++i)
      values.push_back(APInt(8, xt.isUnsigned() ? i : i - 128));
    GraphBuilder g(rewriter, q.getLoc(), rewriter.getF32Type());
    IRMapping map;
    map.map(source, g.constant(DenseElementsAttr::get(
                        RankedTensorType::get({256}, xt), values)));
    SmallVector<Operation *> order(ops.begin(), ops.end());
    order.push_back(q);
    llvm::sort(order, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    for (Operation *op : order) {
      Operation *c = rewriter.clone(*op, map);
      for (Value r : c->getResults())
        r.setType(UnrankedTensorType::get(getElementTypeOrSelf(r.getType())));
      (void)onnx::inferShapesFor(c);
    }
    Type i32 = rewriter.getI32Type();
    // (ONNX's INT32 is 6.)
    Value table =
        g.op("Cast", {map.lookup(q.getY())}, {g.attr("to", int64_t(6))}, i32);
    Value index = g.op("Cast", {source}, {g.attr("to", int64_t(6))}, i32);
    if (!xt.isUnsigned())
      index = g.op("Add", {index, g.constant(DenseElementsAttr::get(
                                      RankedTensorType::get({}, i32),
                                      rewriter.getI32IntegerAttr(128)))});
    Value looked =
        g.op("Gather", {table, index}, {g.attr("axis", int64_t(0))}, i32);
    // (Every index is 0..255 by its type: no range check.)
    looked.getDefiningOp()->setAttr(kIndicesInRangeAttr,
                                    rewriter.getUnitAttr());
    // (ONNX's UINT8 is 2, INT8 3.)
    Value y =
        g.op("Cast", {looked},
             {g.attr("to",
                     int64_t(yt.getElementType().isUnsignedInteger() ? 2 : 3))},
             yt.getElementType());
    return replaceCounted(rewriter, q, y, counters, "fuse_quantized_lookup");
  }
};

struct FuseQuantizedPass : public impl::FuseQuantizedBase<FuseQuantizedPass> {
  using Base::Base;
  void runOnOperation() override {
    Counters counters;
    // The products first: a pair rewritten first would hide their
    // dequantized operands.
    RewritePatternSet products(&getContext()), pairs(&getContext());
    if (integerProducts)
      products.add<QuantizedMatMul, QuantizedGemm, QuantizedConv>(&getContext(),
                                                                  counters);
    products.add<QuantizedMaxPool, QuantizedLookup>(&getContext(), counters);
    pairs.add<QuantizeDequantizePair>(&getContext(), counters);
    FrozenRewritePatternSet frozenProducts(std::move(products)),
        frozenPairs(std::move(pairs));
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(applyPatternsAndFoldGreedily(func, frozenProducts)) ||
          failed(applyPatternsAndFoldGreedily(func, frozenPairs)))
        return signalPassFailure();
    recordCounters(getOperation(), counters,
                   {"fuse_quantized_matmul", "fuse_quantized_gemm",
                    "fuse_quantized_conv", "fuse_quantized_maxpool",
                    "fuse_quantized_lookup", "fuse_quantize_dequantize"});
  }
};

} // namespace
} // namespace kiln
