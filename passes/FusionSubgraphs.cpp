//===- FusionSubgraphs.cpp - recognize GELU, LayerNorm and attention ------===//
//
// Exporters spell some operators as chains of primitive nodes. This pass
// replaces
//  - x * 0.5 * (1 + Erf(x / sqrt(2)))  (Div by 1.41421 or Mul by 0.70711;
//    the Mul by x and by 0.5 in either order)          -> onnx.Gelu
//  - the same with Tanh(sqrt(2/pi) * (x + 0.044715 x^3)) -> onnx.Gelu{tanh}
//  - ReduceMean/Sub/Pow 2/ReduceMean/Add eps/Sqrt/Div(/Mul gamma/Add beta)
//                                                      -> LayerNormalization
//  - the same without ReduceMean/Sub (x * rsqrt(mean(x^2) + eps) * gamma)
//                                   -> RMSNormalization {kiln.fused}
//  - multi-head attention: Reshape/Transpose of Q, K, V into heads ->
//    MatMul(Q, K^T) -> Mul/Div scale -> Add mask (or Where with a constant
//    condition) -> Softmax -> MatMul(., V) -> Transpose/Reshape back
//                                 -> onnx.Attention {kiln.fused} (3-D Q/K/V)
//    or, Q/K/V already split into heads [B, H, S, D] (rotary embeddings),
//    the same with `kiln.layout = "heads"`
// and marks (without rewriting)
//  - LayerNormalization of a residual Add (`kiln.skip_layer_norm`; the CPU
//    lowering sums the Add's operands inside the LayerNorm kernel),
//  - other attention blocks (`kiln.pattern = "attention"` on the Softmax).
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/ShapeInference.h"
#include "passes/FusionUtils.h"
#include "passes/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace kiln::fusion;

namespace kiln {
#define GEN_PASS_DEF_FUSESUBGRAPHS
#include "passes/Passes.h.inc"

namespace {

/// `op` is Mul(x, c) or Mul(c, x) with c about `value`; returns x.
Value mulByConstant(Operation *op, double value) {
  if (!isOnnx(op, "Mul"))
    return {};
  for (unsigned i = 0; i < 2; ++i)
    if (isConstantNear(op->getOperand(1 - i), value))
      return op->getOperand(i);
  return {};
}

/// The GELU tail from `onePlus` = Add(inner, 1): x * onePlus * 0.5 in any
/// association. Returns the op whose result is the GELU.
Operation *geluTail(Operation *onePlus, Value x) {
  Operation *m1 = singleUser(onePlus->getResult(0));
  if (!isOnnx(m1, "Mul"))
    return nullptr;
  Value o = otherOperand(m1, onePlus->getResult(0));
  if (!o)
    return nullptr;
  if (o == x) {
    Operation *m2 = singleUser(m1->getResult(0));
    return m2 && mulByConstant(m2, 0.5) == m1->getResult(0) ? m2 : nullptr;
  }
  if (isConstantNear(o, 0.5)) {
    Operation *m2 = singleUser(m1->getResult(0));
    return m2 && isOnnx(m2, "Mul") && otherOperand(m2, m1->getResult(0)) == x ? m2 : nullptr;
  }
  Operation *half = o.getDefiningOp();
  if (half && o.hasOneUse() && mulByConstant(half, 0.5) == x)
    return m1;
  return nullptr;
}

/// Add(v, 1) or Add(1, v), the single user of v.
Operation *addOne(Value v) {
  Operation *add = singleUser(v);
  if (!isOnnx(add, "Add"))
    return nullptr;
  Value o = otherOperand(add, v);
  return o && isConstantNear(o, 1.0) ? add : nullptr;
}

Value sameTypeAs(Value v, Value ref) {
  return v && v.getType() == ref.getType() ? v : Value();
}

struct GeluErf : RewritePattern {
  GeluErf(MLIRContext *ctx, Counters &c) : RewritePattern("onnx.Erf", 1, ctx), counters(c) {}
  Counters &counters;

  LogicalResult matchAndRewrite(Operation *erf, PatternRewriter &rewriter) const override {
    Operation *scaled = erf->getOperand(0).getDefiningOp();
    if (!scaled || !erf->getOperand(0).hasOneUse())
      return failure();
    Value x;
    if (isOnnx(scaled, "Div") && isConstantNear(scaled->getOperand(1), M_SQRT2))
      x = scaled->getOperand(0);
    else
      x = mulByConstant(scaled, M_SQRT1_2);
    x = sameTypeAs(x, erf->getResult(0));
    Operation *onePlus = addOne(erf->getResult(0));
    Operation *gelu = onePlus && x ? geluTail(onePlus, x) : nullptr;
    if (!gelu || gelu->getResult(0).getType() != x.getType())
      return rewriter.notifyMatchFailure(erf, "not the erf form of GELU");
    rewriter.setInsertionPoint(gelu);
    OperationState st(fusedLoc(gelu, opsBetween(gelu, x)), "onnx.Gelu");
    st.addOperands(x);
    st.addTypes(x.getType());
    rewriter.replaceOp(gelu, rewriter.create(st)->getResults());
    ++counters["fuse_gelu"];
    return success();
  }
};

/// x^3 as Pow(x, 3), Mul(x, Mul(x, x)) or Mul(Mul(x, x), x).
bool isCube(Value v, Value x) {
  Operation *op = v.getDefiningOp();
  if (isOnnx(op, "Pow"))
    return op->getOperand(0) == x && isConstantNear(op->getOperand(1), 3.0);
  if (!isOnnx(op, "Mul"))
    return false;
  for (unsigned i = 0; i < 2; ++i) {
    Operation *sq = op->getOperand(1 - i).getDefiningOp();
    if (op->getOperand(i) == x && isOnnx(sq, "Mul") && sq->getOperand(0) == x &&
        sq->getOperand(1) == x)
      return true;
  }
  return false;
}

/// x * (1 + 0.044715 * x^2), the factored spelling of x + 0.044715 x^3
/// (FastGelu); returns x.
Value factoredCubic(Operation *op) {
  if (!isOnnx(op, "Mul"))
    return {};
  for (unsigned i = 0; i < 2; ++i) {
    Value x = op->getOperand(i);
    Operation *b = op->getOperand(1 - i).getDefiningOp();
    if (!isOnnx(b, "Add"))
      continue;
    for (unsigned j = 0; j < 2; ++j) {
      if (!isConstantNear(b->getOperand(1 - j), 1.0))
        continue;
      Value sq = mulByConstant(b->getOperand(j).getDefiningOp(), 0.044715);
      Operation *s = sq ? sq.getDefiningOp() : nullptr;
      if ((isOnnx(s, "Mul") && s->getOperand(0) == x && s->getOperand(1) == x) ||
          (isOnnx(s, "Pow") && s->getOperand(0) == x && isConstantNear(s->getOperand(1), 2.0)))
        return x;
    }
  }
  return {};
}

struct GeluTanh : RewritePattern {
  GeluTanh(MLIRContext *ctx, Counters &c) : RewritePattern("onnx.Tanh", 1, ctx), counters(c) {}
  Counters &counters;

  LogicalResult matchAndRewrite(Operation *tanh, PatternRewriter &rewriter) const override {
    // tanh(sqrt(2/pi) * (x + 0.044715 * x^3)), or with x * (1 + 0.044715 x^2)
    Value inner = mulByConstant(tanh->getOperand(0).getDefiningOp(), std::sqrt(2.0 / M_PI));
    Operation *sum = inner ? inner.getDefiningOp() : nullptr;
    Value x;
    if (isOnnx(sum, "Add"))
      for (unsigned i = 0; i < 2 && !x; ++i) {
        Value cubeTerm = mulByConstant(sum->getOperand(1 - i).getDefiningOp(), 0.044715);
        if (cubeTerm && isCube(cubeTerm, sum->getOperand(i)))
          x = sum->getOperand(i);
      }
    if (!x && sum)
      x = factoredCubic(sum);
    x = sameTypeAs(x, tanh->getResult(0));
    Operation *onePlus = x ? addOne(tanh->getResult(0)) : nullptr;
    Operation *gelu = onePlus ? geluTail(onePlus, x) : nullptr;
    if (!gelu || gelu->getResult(0).getType() != x.getType())
      return rewriter.notifyMatchFailure(tanh, "not the tanh form of GELU");
    rewriter.setInsertionPoint(gelu);
    OperationState st(fusedLoc(gelu, opsBetween(gelu, x)), "onnx.Gelu");
    st.addOperands(x);
    st.addAttribute("approximate", rewriter.getStringAttr("tanh"));
    st.addTypes(x.getType());
    rewriter.replaceOp(gelu, rewriter.create(st)->getResults());
    ++counters["fuse_gelu"];
    return success();
  }
};

/// The reduced axes of a keepdims ReduceMean over trailing axes, as the
/// first axis; nullopt otherwise.
std::optional<int64_t> trailingMeanAxis(Operation *op) {
  if (!isOnnx(op, "ReduceMean"))
    return std::nullopt;
  auto t = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (!t)
    return std::nullopt;
  if (auto kd = op->getAttrOfType<IntegerAttr>("keepdims"); kd && !kd.getInt())
    return std::nullopt;
  SmallVector<int64_t> axes;
  if (auto a = op->getAttrOfType<ArrayAttr>("axes")) {
    for (Attribute x : a)
      axes.push_back(cast<IntegerAttr>(x).getInt());
  } else if (op->getNumOperands() > 1 && !isNoneValue(op->getOperand(1))) {
    ElementsAttr c = constantAttr(op->getOperand(1));
    if (!c || !c.getElementType().isInteger(64))
      return std::nullopt;
    for (int64_t v : c.getValues<int64_t>())
      axes.push_back(v);
  }
  int64_t r = t.getRank();
  if (axes.empty())
    return std::nullopt;
  for (int64_t &a : axes)
    if (a < 0)
      a += r;
  llvm::sort(axes);
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != r - (int64_t)axes.size() + (int64_t)i)
      return std::nullopt;
  return axes.front();
}

/// Add(ReduceMean(d^2), eps) over trailing axes, under a LayerNorm's or an
/// RMSNorm's root: d (what is squared), the ops, eps and the first axis.
struct MeanSquare {
  Value of;
  Operation *square, *mean;
  float eps;
  int64_t axis;
};
std::optional<MeanSquare> meanSquare(Operation *addEps) {
  if (!isOnnx(addEps, "Add"))
    return std::nullopt;
  Operation *var = nullptr;
  std::optional<float> eps;
  for (unsigned i = 0; i < 2; ++i)
    if (auto e = constantScalar(addEps->getOperand(1 - i))) {
      var = addEps->getOperand(i).getDefiningOp();
      eps = e;
    }
  auto axis = var ? trailingMeanAxis(var) : std::nullopt;
  if (!axis)
    return std::nullopt;
  Operation *pow = var->getOperand(0).getDefiningOp();
  bool square = (isOnnx(pow, "Pow") && isConstantNear(pow->getOperand(1), 2.0)) ||
                (isOnnx(pow, "Mul") && pow->getOperand(0) == pow->getOperand(1));
  if (!square)
    return std::nullopt;
  return MeanSquare{pow->getOperand(0), pow, var, *eps, *axis};
}

/// The ReduceMean that `sub` = Sub(x, ReduceMean(x)) subtracts, over the
/// trailing axes from `axis`; null otherwise.
Operation *centeringMean(Operation *sub, int64_t axis) {
  if (!isOnnx(sub, "Sub"))
    return nullptr;
  Operation *mean = sub->getOperand(1).getDefiningOp();
  return trailingMeanAxis(mean) == axis && mean->getOperand(0) == sub->getOperand(0) ? mean
                                                                                    : nullptr;
}

/// onnx.LayerNormalization(x, gamma, beta) over the axes from `axis`.
Operation *createLayerNorm(PatternRewriter &rewriter, Location loc, Value x, Value gamma,
                           Value beta, int64_t axis, float eps) {
  OperationState st(loc, "onnx.LayerNormalization");
  st.addOperands({x, gamma, beta});
  st.addAttribute("axis", rewriter.getI64IntegerAttr(axis));
  st.addAttribute("epsilon", rewriter.getF32FloatAttr(eps));
  st.addTypes({x.getType(), rewriter.getNoneType(), rewriter.getNoneType()});
  return rewriter.create(st);
}

/// Constant `c` (a scalar, or one value per normalized element) as a
/// tensor of the normalized shape; `dflt` everywhere when `c` is null.
Value normConstant(OpBuilder &b, Location loc, RankedTensorType normType, Value c, float dflt) {
  if (!c) {
    int64_t n = normType.getNumElements();
    return createConstant(b, loc, normType, SmallVector<float>(n, dflt));
  }
  if (c.getType() == normType)
    return c;
  auto vals = constantFloats(c);
  if (!vals || (vals->size() != 1 && (int64_t)vals->size() != normType.getNumElements()))
    return {};
  SmallVector<float> full(normType.getNumElements());
  for (size_t i = 0; i < full.size(); ++i)
    full[i] = (*vals)[vals->size() == 1 ? 0 : i % vals->size()];
  return createConstant(b, loc, normType, full);
}

struct LayerNormChain : RewritePattern {
  LayerNormChain(MLIRContext *ctx, Counters &c)
      : RewritePattern(MatchAnyOpTypeTag(), 1, ctx), counters(c) {}
  Counters &counters;

  /// The Add(variance, eps) under `den` = Sqrt(a) or Pow(a, 0.5) (`inverse`:
  /// Reciprocal(Sqrt(a)), Div(1, Sqrt(a)) as torch.rsqrt exports, or
  /// Pow(a, -0.5)); the ops on the way go to `ops`.
  static Operation *addUnderRoot(Value den, bool inverse, SmallVectorImpl<Operation *> &ops) {
    Operation *op = den.getDefiningOp();
    if (inverse && (isOnnx(op, "Reciprocal") ||
                    (isOnnx(op, "Div") && isConstantNear(op->getOperand(0), 1.0)))) {
      ops.push_back(op);
      op = op->getOperand(op->getNumOperands() - 1).getDefiningOp();
      inverse = false;
    }
    if ((!inverse && isOnnx(op, "Sqrt")) ||
        (isOnnx(op, "Pow") && isConstantNear(op->getOperand(1), inverse ? -0.5 : 0.5))) {
      ops.push_back(op);
      return op->getOperand(0).getDefiningOp();
    }
    return nullptr;
  }

  LogicalResult matchAndRewrite(Operation *div, PatternRewriter &rewriter) const override {
    // d / Sqrt(Add(ReduceMean(Pow(d, 2)), eps)), d = Sub(x, ReduceMean(x));
    // also d * Reciprocal(Sqrt(..)), d * Pow(.., -0.5) and d / Pow(.., 0.5).
    // Without the Sub (d = x, no centering) it is an RMSNorm (LLaMA, T5).
    if (!isOnnx(div, "Div") && !isOnnx(div, "Mul"))
      return failure();
    SmallVector<Operation *> root;
    Operation *addEps = nullptr;
    Value d;
    for (unsigned i = 0; i < (isOnnx(div, "Mul") ? 2u : 1u) && !addEps; ++i) {
      root.clear();
      if ((addEps = addUnderRoot(div->getOperand(1 - i), isOnnx(div, "Mul"), root)))
        d = div->getOperand(i);
    }
    std::optional<MeanSquare> ms = addEps ? meanSquare(addEps) : std::nullopt;
    if (!ms)
      return rewriter.notifyMatchFailure(div, "no variance ReduceMean");
    if (ms->of != d)
      return rewriter.notifyMatchFailure(div, "variance is not of the numerator squared");
    std::optional<int64_t> axis = ms->axis;
    std::optional<float> eps = ms->eps;
    SmallVector<Operation *> chain = {ms->square, ms->mean, addEps};
    // Centered by a trailing ReduceMean of x over the same axes: LayerNorm.
    Value x = d;
    Operation *sub = d.getDefiningOp();
    bool rms = true;
    if (Operation *mean = centeringMean(sub, *axis)) {
      x = sub->getOperand(0);
      chain.append({mean, sub});
      rms = false;
    }
    auto xt = dyn_cast<RankedTensorType>(x.getType());
    if (!xt || !xt.hasStaticShape() || !xt.getElementType().isF32() ||
        div->getResult(0).getType() != xt)
      return failure();
    // Intermediate values must not be used elsewhere.
    chain.append(root.begin(), root.end());
    for (Operation *op : chain)
      for (Operation *user : op->getResult(0).getUsers())
        if (user != div && !llvm::is_contained(chain, user))
          return rewriter.notifyMatchFailure(div, "intermediate value used elsewhere");
    // Optional affine tail: Mul(gamma), Add(beta), constants over the
    // normalized axes.
    auto normShape = xt.getShape().drop_front(*axis);
    int64_t normElems = 1;
    for (int64_t d : normShape)
      normElems *= d;
    auto affineOperand = [&](Operation *op, Value from) -> Value {
      Value o = op ? otherOperand(op, from) : Value();
      auto ot = o ? dyn_cast<RankedTensorType>(o.getType()) : RankedTensorType();
      if (!ot || !constantAttr(o) || !from.hasOneUse() ||
          op->getResult(0).getType() != xt || ot.getNumElements() != normElems ||
          ot.getRank() > xt.getRank())
        return {};
      // Leading dims of the constant beyond the normalized ones are 1; the
      // rest match the normalized dims.
      int64_t extra = ot.getRank() - (int64_t)normShape.size();
      for (int64_t i = 0; i < ot.getRank(); ++i) {
        int64_t want = i < extra ? 1 : normShape[i - extra];
        if (i >= extra || want == 1) {
          if (ot.getDimSize(i) != want && !(i < extra && ot.getDimSize(i) == 1))
            return {};
        }
      }
      if (extra < 0)
        for (int64_t i = 0; i < -extra; ++i)
          if (normShape[i] != 1)
            return {};
      return o;
    };
    Operation *result = div;
    Value gamma, beta;
    Operation *mul = singleUser(div->getResult(0));
    if (isOnnx(mul, "Mul") && (gamma = affineOperand(mul, div->getResult(0)))) {
      result = mul;
      Operation *add = singleUser(mul->getResult(0));
      // (RMSNormalization has no bias: an Add after it stays.)
      if (!rms && isOnnx(add, "Add") && (beta = affineOperand(add, mul->getResult(0))))
        result = add;
    }
    rewriter.setInsertionPoint(result);
    SmallVector<Operation *> absorbed(chain);
    for (Operation *op : {div, mul})
      if (op != result && op)
        absorbed.push_back(op);
    Location loc = fusedLoc(result, absorbed);
    auto normType = RankedTensorType::get(normShape, xt.getElementType());
    Value g = normConstant(rewriter, loc, normType, gamma, 1.0f),
          bt = normConstant(rewriter, loc, normType, beta, 0.0f);
    if (!g || !bt)
      return rewriter.notifyMatchFailure(div, "affine constants not readable");
    Operation *ln;
    if (rms) {
      OperationState st(loc, "onnx.RMSNormalization");
      st.addOperands({x, g});
      st.addAttribute("axis", rewriter.getI64IntegerAttr(*axis));
      st.addAttribute("epsilon", rewriter.getF32FloatAttr(*eps));
      // Lowered whole by the CPU provider, not decomposed again.
      st.addAttribute("kiln.fused", rewriter.getUnitAttr());
      st.addTypes({xt});
      ln = rewriter.create(st);
    } else {
      ln = createLayerNorm(rewriter, loc, x, g, bt, *axis, *eps);
    }
    rewriter.replaceAllUsesWith(result->getResult(0), ln->getResult(0));
    ++counters[rms ? "fuse_rms_norm" : "fuse_layer_norm"];
    return success();
  }
};

/// LayerNorm with gamma folded into the normalizing factor, as tf2onnx
/// writes Keras' LayerNormalization and some hand-written models do:
///   s = gamma * 1/sqrt(ReduceMean((x - mean)^2) + eps)
///   (x - mean) * s (+ beta)     or     x * s + (beta - mean * s).
struct ScaledLayerNorm : RewritePattern {
  ScaledLayerNorm(MLIRContext *ctx, Counters &c)
      : RewritePattern(MatchAnyOpTypeTag(), 1, ctx), counters(c) {}
  Counters &counters;

  struct Scale {
    Value x, gamma;
    Operation *mean, *sub;
    float eps;
    int64_t axis;
  };

  /// `s` = Mul(gamma, 1/sqrt(var + eps)) with var of x - mean.
  static std::optional<Scale> matchScale(Value s) {
    Operation *mul = s.getDefiningOp();
    if (!isOnnx(mul, "Mul"))
      return std::nullopt;
    for (unsigned i = 0; i < 2; ++i) {
      Value gamma = mul->getOperand(1 - i);
      if (!constantAttr(gamma))
        continue;
      SmallVector<Operation *> root;
      Operation *addEps = LayerNormChain::addUnderRoot(mul->getOperand(i), true, root);
      std::optional<MeanSquare> ms = addEps ? meanSquare(addEps) : std::nullopt;
      Operation *sub = ms ? ms->of.getDefiningOp() : nullptr;
      Operation *mean = ms ? centeringMean(sub, ms->axis) : nullptr;
      if (!mean)
        continue;
      return Scale{sub->getOperand(0), gamma, mean, sub, ms->eps, ms->axis};
    }
    return std::nullopt;
  }

  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    std::optional<Scale> sc;
    Value beta;
    Operation *result = op;
    if (isOnnx(op, "Mul")) {
      // (x - mean) * s, then an optional Add of beta.
      for (unsigned i = 0; i < 2 && !sc; ++i) {
        sc = matchScale(op->getOperand(1 - i));
        if (sc && op->getOperand(i) != sc->sub->getResult(0))
          sc.reset();
      }
      if (!sc)
        return failure();
      Operation *add = singleUser(op->getResult(0));
      if (isOnnx(add, "Add")) {
        Value b = otherOperand(add, op->getResult(0));
        if (b && constantAttr(b)) {
          beta = b;
          result = add;
        }
      }
    } else if (isOnnx(op, "Add")) {
      // x * s + (beta - mean * s)
      for (unsigned i = 0; i < 2 && !sc; ++i) {
        Operation *xs = op->getOperand(i).getDefiningOp();
        Operation *shift = op->getOperand(1 - i).getDefiningOp();
        if (!isOnnx(xs, "Mul") || !isOnnx(shift, "Sub") || !constantAttr(shift->getOperand(0)))
          continue;
        Operation *ms = shift->getOperand(1).getDefiningOp();
        if (!isOnnx(ms, "Mul"))
          continue;
        for (unsigned j = 0; j < 2 && !sc; ++j) {
          Value s = xs->getOperand(1 - j);
          sc = matchScale(s);
          if (sc && (xs->getOperand(j) != sc->x ||
                     otherOperand(ms, s) != sc->mean->getResult(0)))
            sc.reset();
        }
        if (sc)
          beta = shift->getOperand(0);
      }
      if (!sc)
        return failure();
    } else {
      return failure();
    }
    auto xt = dyn_cast<RankedTensorType>(sc->x.getType());
    if (!xt || !xt.hasStaticShape() || !xt.getElementType().isF32() ||
        result->getResult(0).getType() != xt)
      return failure();
    auto normType = RankedTensorType::get(xt.getShape().drop_front(sc->axis), xt.getElementType());
    rewriter.setInsertionPoint(result);
    Location loc = result->getLoc();
    Value g = normConstant(rewriter, loc, normType, sc->gamma, 1.0f),
          bt = normConstant(rewriter, loc, normType, beta, 0.0f);
    if (!g || !bt)
      return rewriter.notifyMatchFailure(op, "affine constants not per normalized element");
    Operation *ln = createLayerNorm(rewriter, loc, sc->x, g, bt, sc->axis, sc->eps);
    rewriter.replaceAllUsesWith(result->getResult(0), ln->getResult(0));
    ++counters["fuse_layer_norm"];
    return success();
  }
};

/// Follows single-use elementwise scale/mask ops up from a Softmax input to
/// the MatMul(Q, K^T).
Operation *attentionScores(Value v) {
  for (int i = 0; i < 3; ++i) {
    Operation *op = v.getDefiningOp();
    if (!op)
      return nullptr;
    if (isOnnx(op, "MatMul"))
      return op;
    if (!(isOnnx(op, "Mul") || isOnnx(op, "Div") || isOnnx(op, "Add")))
      return nullptr;
    v = op->getOperand(0);
    if (isOnnx(op, "Add") && !isOnnx(v.getDefiningOp(), "MatMul") &&
        !isOnnx(v.getDefiningOp(), "Mul") && !isOnnx(v.getDefiningOp(), "Div"))
      v = op->getOperand(1);
  }
  return isOnnx(v.getDefiningOp(), "MatMul") ? v.getDefiningOp() : nullptr;
}

/// How a block splits Q, K and V into heads: batch-first exporters reshape
/// [B, S, E] to [B, S, H, D] and transpose to [B, H, S, D] ([B, H, D, S]
/// for keys); PyTorch's MultiheadAttention, sequence-first, reshapes
/// [S, B, E] to [S, B*H, D] and transposes to [B*H, S, D] ([B*H, D, S]).
struct HeadLayout {
  bool seqFirst;
  SmallVector<int64_t> perm, keyPerm, back;
};
const HeadLayout kBatchFirst{false, {0, 2, 1, 3}, {0, 2, 3, 1}, {0, 2, 1, 3}};
const HeadLayout kSeqFirst{true, {1, 0, 2}, {1, 2, 0}, {1, 0, 2}};

/// The 3-D tensor `v` splits into heads in `layout`, and the head count.
std::optional<std::pair<Value, int64_t>> headsOf(Value v, const HeadLayout &layout, bool key) {
  Operation *t = v.getDefiningOp();
  if (!isOnnx(t, "Transpose") ||
      ArrayRef<int64_t>(onnx::getIntsAttr(t, "perm")) !=
          ArrayRef<int64_t>(key ? layout.keyPerm : layout.perm))
    return std::nullopt;
  Operation *r = t->getOperand(0).getDefiningOp();
  if (!isOnnx(r, "Reshape"))
    return std::nullopt;
  auto in = dyn_cast<RankedTensorType>(r->getOperand(0).getType());
  auto out = dyn_cast<RankedTensorType>(r->getResult(0).getType());
  if (!in || !out || !in.hasStaticShape() || !out.hasStaticShape() || in.getRank() != 3 ||
      out.getRank() != (layout.seqFirst ? 3 : 4))
    return std::nullopt;
  if (layout.seqFirst) {
    // [S, B, E] -> [S, B*H, D]
    if (out.getDimSize(0) != in.getDimSize(0) || in.getDimSize(1) == 0 ||
        out.getDimSize(1) % in.getDimSize(1))
      return std::nullopt;
    int64_t h = out.getDimSize(1) / in.getDimSize(1);
    if (h * out.getDimSize(2) != in.getDimSize(2))
      return std::nullopt;
    return std::make_pair(r->getOperand(0), h);
  }
  if (out.getShape().take_front(2) != in.getShape().take_front(2) ||
      out.getDimSize(2) * out.getDimSize(3) != in.getDimSize(2))
    return std::nullopt;
  return std::make_pair(r->getOperand(0), out.getDimSize(2));
}

/// The scalar of an f32 constant, if it is one.
std::optional<float> scalarOf(Value v) {
  ElementsAttr a = constantAttr(v);
  if (!a || a.getNumElements() != 1)
    return std::nullopt;
  return constantScalar(v);
}

/// The scale a single-use Mul/Div by a scalar constant applies, if `op` is
/// one.
std::optional<float> scaleOf(Operation *op) {
  if (!(isOnnx(op, "Mul") || isOnnx(op, "Div")) || !op->getResult(0).hasOneUse())
    return std::nullopt;
  std::optional<float> c = scalarOf(op->getOperand(1));
  if (!c || *c == 0.0f)
    return std::nullopt;
  return isOnnx(op, "Mul") ? *c : 1.0f / *c;
}

/// Whether the mask (an f32 tensor, or a Where's constant condition) has at
/// most `maxRank` dims and broadcasts to the scores from the right.
bool maskBroadcasts(Value mask, Operation *where, RankedTensorType scores, int64_t maxRank) {
  auto m = dyn_cast<RankedTensorType>(where ? where->getOperand(0).getType() : mask.getType());
  if (!m || !m.hasStaticShape() || m.getRank() > maxRank || (!where && !m.getElementType().isF32()))
    return false;
  for (int64_t i = 0; i < m.getRank(); ++i) {
    int64_t d = m.getDimSize(m.getRank() - 1 - i), want = scores.getDimSize(scores.getRank() - 1 - i);
    if (d != 1 && d != want)
      return false;
  }
  return true;
}

/// The additive f32 mask a Where(c, fill, scores) (or Where(c, scores,
/// fill)) with a constant condition applies.
Value maskOfWhere(OpBuilder &b, Operation *where, bool fillIsTrue) {
  SmallVector<float> bias;
  float fill = *scalarOf(where->getOperand(fillIsTrue ? 1 : 2));
  for (bool c : constantAttr(where->getOperand(0)).getValues<bool>())
    bias.push_back(c == fillIsTrue ? fill : 0.0f);
  auto ct = cast<RankedTensorType>(where->getOperand(0).getType());
  return createConstant(b, where->getLoc(), RankedTensorType::get(ct.getShape(), b.getF32Type()),
                        bias);
}

/// onnx.Attention {kiln.fused} on Q, K, V (and an optional additive mask),
/// with `layout` ("" batch-first 3-D, "seq_first" or "heads" 4-D).
Value createFusedAttention(OpBuilder &b, Location loc, ArrayRef<Value> qkv, Value mask, int64_t heads,
                           float scale, StringRef layout, Type resultType) {
  auto none = [&]() {
    OperationState ns(loc, "onnx.NoValue");
    ns.addTypes(b.getNoneType());
    return b.create(ns)->getResult(0);
  };
  OperationState state(loc, "onnx.Attention");
  state.addOperands({qkv[0], qkv[1], qkv[2], mask ? mask : none(), none(), none(), none()});
  state.addAttribute("q_num_heads", b.getI64IntegerAttr(heads));
  state.addAttribute("kv_num_heads", b.getI64IntegerAttr(heads));
  state.addAttribute("scale", b.getF32FloatAttr(scale));
  state.addAttribute("kiln.fused", b.getUnitAttr());
  if (!layout.empty())
    state.addAttribute("kiln.layout", b.getStringAttr(layout));
  state.addTypes({resultType, b.getNoneType(), b.getNoneType(), b.getNoneType()});
  return b.create(state)->getResult(0);
}

/// Erases a fused block's ops (`ops` in order, then the now unused ones of
/// `chain`) and the head splits feeding it when nothing else reads them.
void eraseBlock(ArrayRef<Operation *> ops, ArrayRef<Operation *> chain, ArrayRef<Value> splits) {
  for (Operation *op : ops)
    op->erase();
  for (Operation *op : chain)
    if (op->use_empty())
      op->erase();
  for (Value v : splits)
    for (Operation *op = v.getDefiningOp(); op && op->use_empty();) {
      Operation *next = op->getNumOperands() ? op->getOperand(0).getDefiningOp() : nullptr;
      op->erase();
      op = isOnnx(next, "Reshape") || isOnnx(next, "Transpose") ? next : nullptr;
    }
}

/// An attention block whose Q, K and V are already split into heads,
/// [B, H, S, D] (as when rotary embeddings apply to the heads): Q, K^T as a
/// Transpose (0, 1, 3, 2) of K, V; fused with `kiln.layout = "heads"`, the
/// result [B, H, S, Dv] replacing the second product's.
bool fuseHeadsAttention(Operation *softmax, Operation *qk, Operation *pv, Value q, Value mask,
                        Operation *where, bool fillIsTrue, float scale,
                        ArrayRef<Operation *> chain) {
  Operation *kt = qk->getOperand(1).getDefiningOp();
  if (!isOnnx(kt, "Transpose") ||
      ArrayRef<int64_t>(onnx::getIntsAttr(kt, "perm")) != ArrayRef<int64_t>{0, 1, 3, 2})
    return false;
  Value k = kt->getOperand(0), v = pv->getOperand(1);
  auto heads4 = [](Value x) {
    auto t = dyn_cast<RankedTensorType>(x.getType());
    return t && t.getRank() == 4 && t.hasStaticShape() && t.getElementType().isF32() ? t
                                                                                    : RankedTensorType();
  };
  auto qt = heads4(q), ktt = heads4(k), vt = heads4(v), yt = heads4(pv->getResult(0));
  if (!qt || !ktt || !vt || !yt || qt.getDimSize(0) != ktt.getDimSize(0) ||
      qt.getDimSize(1) != ktt.getDimSize(1) || ktt.getShape().take_front(3) != vt.getShape().take_front(3) ||
      qt.getDimSize(3) != ktt.getDimSize(3))
    return false;
  if ((mask || where) &&
      !maskBroadcasts(mask, where, cast<RankedTensorType>(softmax->getResult(0).getType()), 4))
    return false;
  Value kT = qk->getOperand(1);
  OpBuilder b(pv);
  if (where)
    mask = maskOfWhere(b, where, fillIsTrue);
  SmallVector<Operation *> absorbed = {qk, kt, pv};
  absorbed.append(chain.begin(), chain.end());
  Value y = createFusedAttention(b, fusedLoc(softmax, absorbed), {q, k, v}, mask, qt.getDimSize(1),
                                 scale, "heads", yt);
  pv->getResult(0).replaceAllUsesWith(y);
  eraseBlock({pv, softmax}, chain, {kT});
  return true;
}

/// Replaces the attention block ending at `softmax` by one onnx.Attention on
/// the 3-D Q, K and V (`kiln.layout = "seq_first"` for [S, B, E] ones);
/// returns whether it did.
bool fuseAttention(Operation *softmax) {
  auto st = dyn_cast<RankedTensorType>(softmax->getResult(0).getType());
  if (!st || (st.getRank() != 4 && st.getRank() != 3) || !st.getElementType().isF32() ||
      (onnx::getIntAttr(softmax, "axis", -1) + st.getRank()) % st.getRank() != st.getRank() - 1)
    return false;
  const HeadLayout &layout = st.getRank() == 4 ? kBatchFirst : kSeqFirst;
  // Scores -> (scale) -> (mask) -> Softmax, each step used once.
  Value scores = softmax->getOperand(0), mask;
  float scale = 1.0f;
  bool haveMask = false, haveScale = false, fillIsTrue = true;
  Operation *qk = nullptr, *where = nullptr;
  SmallVector<Operation *> chain;
  for (int step = 0; step < 3 && !qk; ++step) {
    Operation *op = scores.getDefiningOp();
    if (!op || !scores.hasOneUse())
      return false;
    chain.push_back(op);
    if (isOnnx(op, "MatMul")) {
      qk = op;
    } else if (isOnnx(op, "Add") && !haveMask && !haveScale) {
      // The mask is the operand that is not the scores chain.
      unsigned s = isOnnx(op->getOperand(0).getDefiningOp(), "MatMul") ||
                           isOnnx(op->getOperand(0).getDefiningOp(), "Mul") ||
                           isOnnx(op->getOperand(0).getDefiningOp(), "Div")
                       ? 0
                       : 1;
      scores = op->getOperand(s);
      mask = op->getOperand(1 - s);
      haveMask = true;
    } else if (isOnnx(op, "Where") && !haveMask && !haveScale) {
      // Where(c, fill, scores) or Where(c, scores, fill) (HF GPT-2) with
      // constants c, fill: an additive mask (made below, once the block
      // matches).
      auto ct = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
      fillIsTrue = (bool)scalarOf(op->getOperand(1));
      if (!constantAttr(op->getOperand(0)) || !scalarOf(op->getOperand(fillIsTrue ? 1 : 2)) ||
          !ct || !ct.getElementType().isInteger(1) || !ct.hasStaticShape())
        return false;
      where = op;
      scores = op->getOperand(fillIsTrue ? 2 : 1);
      haveMask = true;
    } else if (auto c = scaleOf(op); c && !haveScale) {
      scale = *c;
      scores = op->getOperand(0);
      haveScale = true;
    } else {
      return false;
    }
  }
  Operation *pv = singleUser(softmax->getResult(0));
  if (!qk || !isOnnx(pv, "MatMul") || pv->getOperand(0) != softmax->getResult(0))
    return false;
  // PyTorch scales Q before the product.
  Value qHeads = qk->getOperand(0);
  Operation *qScale = qHeads.getDefiningOp();
  if (auto c = qScale ? scaleOf(qScale) : std::nullopt; c && !haveScale) {
    scale = *c;
    qHeads = qScale->getOperand(0);
    chain.push_back(qScale);
  } else {
    qScale = nullptr;
  }
  auto q = headsOf(qHeads, layout, false);
  auto k = headsOf(qk->getOperand(1), layout, true);
  auto v = headsOf(pv->getOperand(1), layout, false);
  if (!q || !k || !v || q->second != k->second || k->second != v->second)
    return !layout.seqFirst &&
           fuseHeadsAttention(softmax, qk, pv, qHeads, haveMask ? mask : Value(), where,
                              fillIsTrue, scale, chain);
  Operation *back = singleUser(pv->getResult(0));
  if (!isOnnx(back, "Transpose") ||
      ArrayRef<int64_t>(onnx::getIntsAttr(back, "perm")) != ArrayRef<int64_t>(layout.back))
    return false;
  Operation *merge = singleUser(back->getResult(0));
  auto qt = cast<RankedTensorType>(q->first.getType());
  auto vt = cast<RankedTensorType>(v->first.getType());
  // The fused result keeps Q's layout: [B, S, Ev] or [S, B, Ev].
  auto yt = RankedTensorType::get({qt.getDimSize(0), qt.getDimSize(1), vt.getDimSize(2)},
                                  vt.getElementType());
  auto mt = dyn_cast<RankedTensorType>(merge ? merge->getResult(0).getType() : Type());
  if (!isOnnx(merge, "Reshape") || !mt || !mt.hasStaticShape() ||
      mt.getNumElements() != yt.getNumElements() ||
      !(mt == yt || (layout.seqFirst && mt.getRank() == 2 &&
                     mt.getDimSize(1) == vt.getDimSize(2))) ||
      !vt.getElementType().isF32())
    return false;
  // The mask must broadcast to the scores [B, H, S, Skv] (sequence-first:
  // [B*H, S, Skv], so only a mask over the last two dims means the same).
  if (haveMask && !maskBroadcasts(mask, where, st, layout.seqFirst ? 2 : 4))
    return false;

  OpBuilder b(merge);
  if (where)
    mask = maskOfWhere(b, where, fillIsTrue);
  SmallVector<Operation *> absorbed = {qk, pv, back};
  absorbed.append(chain.begin(), chain.end());
  // The head splits, up to the value each starts from.
  for (auto [h, source] : {std::pair(qHeads, q->first), std::pair(qk->getOperand(1), k->first),
                           std::pair(pv->getOperand(1), v->first)})
    for (Value x = h; x != source;) {
      Operation *op = x.getDefiningOp();
      if (!op || !(isOnnx(op, "Transpose") || isOnnx(op, "Reshape")))
        break;
      absorbed.push_back(op);
      x = op->getOperand(0);
    }
  Value y = createFusedAttention(b, fusedLoc(softmax, absorbed), {q->first, k->first, v->first}, haveMask ? mask : Value(),
                                 q->second, scale, layout.seqFirst ? "seq_first" : "", yt);
  if (mt != yt) {
    // [S, B, E] -> [S*B, E], as the block's own merge did.
    auto shape = RankedTensorType::get({2}, b.getI64Type());
    OperationState cs(merge->getLoc(), "onnx.Constant");
    cs.addAttribute("value", DenseElementsAttr::get(shape, ArrayRef<int64_t>(mt.getShape())));
    cs.addTypes(shape);
    OperationState rs(merge->getLoc(), "onnx.Reshape");
    rs.addOperands({y, b.create(cs)->getResult(0)});
    rs.addTypes(mt);
    y = b.create(rs)->getResult(0);
  }
  merge->getResult(0).replaceAllUsesWith(y);
  eraseBlock({merge, back, pv, softmax}, chain, {qHeads, qk->getOperand(1), pv->getOperand(1)});
  return true;
}

/// Marks what it cannot (yet) replace: attention blocks and skip LayerNorms.
void markPatterns(func::FuncOp func, Counters &counters) {
  Builder b(func.getContext());
  SmallVector<Operation *> softmaxes;
  func.walk([&](Operation *op) {
    if (isOnnx(op, "Softmax"))
      softmaxes.push_back(op);
  });
  for (Operation *op : softmaxes)
    if (fuseAttention(op))
      ++counters["fuse_attention"];
  func.walk([&](Operation *op) {
    if (isOnnx(op, "Softmax") && !op->hasAttr("kiln.pattern")) {
      Operation *scores = attentionScores(op->getOperand(0));
      Operation *pv = singleUser(op->getResult(0));
      auto st = dyn_cast<RankedTensorType>(op->getResult(0).getType());
      if (scores && isOnnx(pv, "MatMul") && pv->getOperand(0) == op->getResult(0) && st &&
          st.getRank() >= 3) {
        op->setAttr("kiln.pattern", b.getStringAttr("attention"));
        ++counters["attention_blocks"];
      }
    }
    if (isOnnx(op, "LayerNormalization") && !op->hasAttr("kiln.skip_layer_norm")) {
      Operation *add = op->getOperand(0).getDefiningOp();
      if (isOnnx(add, "Add") && add->getOperand(0).getType() == add->getOperand(1).getType() &&
          !constantAttr(add->getOperand(0)) && !constantAttr(add->getOperand(1))) {
        op->setAttr("kiln.skip_layer_norm", b.getUnitAttr());
        // The lowering computes the Add inside the normalization's kernel.
        op->setLoc(fusedLoc(op, {add}));
        ++counters["skip_layer_norm"];
      }
    }
  });
}

struct FuseSubgraphsPass : public impl::FuseSubgraphsBase<FuseSubgraphsPass> {
  void runOnOperation() override {
    Counters counters;
    RewritePatternSet patterns(&getContext());
    patterns.add<GeluErf, GeluTanh, LayerNormChain, ScaledLayerNorm>(&getContext(), counters);
    FrozenRewritePatternSet frozen(std::move(patterns));
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (failed(applyPatternsAndFoldGreedily(func, frozen)))
        return signalPassFailure();
      markPatterns(func, counters);
    }
    recordCounters(getOperation(), counters,
                   {"fuse_gelu", "fuse_layer_norm", "fuse_rms_norm", "skip_layer_norm", "fuse_attention",
                    "attention_blocks"});
  }
};

} // namespace
} // namespace kiln
