//===- DecomposeOps.cpp - kiln-decompose-ops ------------------------------===//
//
// Ops without a provider lowering of their own, rewritten into onnx ops that
// every provider already lowers (MatMul, Softmax, Where, ReduceMean, Slice,
// Concat, ...). Each rewrite needs static shapes and constant attributes;
// anything else is left in place, so the partitioner reports the op as
// unsupported with its reason instead of computing a wrong answer. The
// quantization ops' rewrites are in DecomposeQuantization.cpp.
//
//===----------------------------------------------------------------------===//
#include "passes/DecomposeOps.h"
#include "dialects/kiln/KilnDialect.h"
#include "dialects/onnx/DataTypes.h"
#include "dialects/onnx/OnnxDialect.h"
#include "dialects/onnx/OnnxOps.h"
#include "dialects/onnx/ShapeInference.h"
#include "passes/GraphBuilder.h"
#include "passes/NodeName.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <functional>
#include <limits>
#include <map>

using namespace mlir;
using namespace kiln::onnx;

namespace kiln {
#define GEN_PASS_DEF_DECOMPOSEOPS
#include "passes/Passes.h.inc"

namespace decompose {

RankedTensorType staticType(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() ? t : RankedTensorType();
}

Value optionalOperand(Operation *op, unsigned i) {
  return i < op->getNumOperands() && !isNone(op->getOperand(i)) ? op->getOperand(i) : Value();
}

bool isFloat(Type t) { return t.isF32() || t.isF64() || t.isF16() || t.isBF16(); }

void replaceResults(Operation *op, ArrayRef<Value> values) {
  for (unsigned i = 0; i < op->getNumResults() && i < values.size(); ++i)
    if (!op->getResult(i).use_empty())
      op->getResult(i).replaceAllUsesWith(values[i]);
  op->erase();
}

Value castTo(GraphBuilder &g, Value v, Type elt,
             ArrayRef<NamedAttribute> extra) {
  if (cast<ShapedType>(v.getType()).getElementType() == elt)
    return v;
  SmallVector<NamedAttribute> attrs = {g.attr("to", dtypeOfElementType(elt))};
  llvm::append_range(attrs, extra);
  return g.op("Cast", {v}, attrs, elt);
}

} // namespace decompose

namespace {

using namespace decompose;

/// A constant of `shape` and element type `elt` from doubles.
Value floatConstant(GraphBuilder &g, Type elt, ArrayRef<int64_t> shape, ArrayRef<double> values) {
  SmallVector<Attribute> attrs;
  for (double v : values)
    attrs.push_back(g.b.getFloatAttr(elt, v));
  return g.constant(DenseElementsAttr::get(RankedTensorType::get(shape, elt), attrs));
}

//===----------------------------------------------------------------------===//
// Attention (opset 23-25), following onnx/reference/ops/op_attention.py.
//===----------------------------------------------------------------------===//

/// GQA: [B, kvHeads, S, D] -> [B, qHeads, S, D], each kv head serving
/// qHeads / kvHeads consecutive query heads.
Value repeatHeads(GraphBuilder &g, Value x, int64_t qHeads) {
  auto t = cast<RankedTensorType>(x.getType());
  int64_t kvHeads = t.getDimSize(1);
  if (kvHeads == qHeads)
    return x;
  Value u = g.op("Unsqueeze", {x, g.ints({2})});
  Value e = g.op("Expand", {u, g.ints({t.getDimSize(0), kvHeads, qHeads / kvHeads, t.getDimSize(2),
                                       t.getDimSize(3)})});
  return g.op("Reshape", {e, g.ints({t.getDimSize(0), qHeads, t.getDimSize(2), t.getDimSize(3)})});
}

bool decomposeAttention(Operation *op) {
  // kiln-fuse-subgraphs' own attention blocks go to the providers whole.
  if (op->hasAttr("kiln.fused"))
    return false;
  Value q = op->getOperand(0), k = op->getOperand(1), v = op->getOperand(2);
  Value mask = optionalOperand(op, 3), pastK = optionalOperand(op, 4),
        pastV = optionalOperand(op, 5);
  Value nonpad = optionalOperand(op, 6);
  auto qt = staticType(q), kt = staticType(k), vt = staticType(v);
  if (!qt || !kt || !vt)
    return false;
  Type elt = qt.getElementType();
  // Narrow floats would round between the ops where the reference keeps
  // f32 (the CPU provider has no cast back to them): leave those.
  if (!(elt.isF32() || elt.isF64()) || kt.getElementType() != elt || vt.getElementType() != elt)
    return false;
  int64_t rank = qt.getRank();
  if ((rank != 3 && rank != 4) || kt.getRank() != rank || vt.getRank() != rank)
    return false;
  if ((bool)pastK != (bool)pastV || (nonpad && pastK))
    return false;
  if (nonpad) {
    auto nt = staticType(nonpad);
    if (!nt || nt.getRank() != 1 || nt.getDimSize(0) != qt.getDimSize(0) ||
        !nt.getElementType().isInteger(64))
      return false;
  }
  for (Value x : {mask, pastK, pastV})
    if (x && !staticType(x))
      return false;
  if (pastK && (staticType(pastK).getRank() != 4 || staticType(pastV).getRank() != 4 ||
                staticType(pastK).getElementType() != elt ||
                staticType(pastV).getElementType() != elt))
    return false;
  RankedTensorType mt = mask ? staticType(mask) : RankedTensorType();
  if (mt && !(mt.getElementType().isInteger(1) || mt.getElementType() == elt))
    return false;

  int64_t batch = qt.getDimSize(0);
  int64_t qHeads, kvHeads;
  if (rank == 3) {
    if (!op->hasAttr("q_num_heads") || !op->hasAttr("kv_num_heads"))
      return false;
    qHeads = getIntAttr(op, "q_num_heads", 0);
    kvHeads = getIntAttr(op, "kv_num_heads", 0);
    if (qHeads <= 0 || kvHeads <= 0 || qt.getDimSize(2) % qHeads || kt.getDimSize(2) % kvHeads ||
        vt.getDimSize(2) % kvHeads || kt.getDimSize(0) != batch || vt.getDimSize(0) != batch)
      return false;
  } else {
    qHeads = qt.getDimSize(1);
    kvHeads = kt.getDimSize(1);
    if (vt.getDimSize(1) != kvHeads)
      return false;
  }
  bool repeat = qHeads != kvHeads;
  if (repeat && qHeads % kvHeads)
    return false;
  int64_t mode = getIntAttr(op, "qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3)
    return false;
  int64_t left = getIntAttr(op, "left_window_size", -1);
  int64_t right = getIntAttr(op, "right_window_size", -1);
  if (left < -1 || right < -1)
    return false;
  bool causal = getIntAttr(op, "is_causal", 0) != 0;
  float softcap = getFloatAttr(op, "softcap", 0.0f);

  OpBuilder b(op);
  GraphBuilder g(b, op->getLoc(), elt);
  auto typeOf = [](Value x) { return cast<RankedTensorType>(x.getType()); };
  // [B, S, heads*D] -> [B, heads, S, D].
  auto toHeads = [&](Value x, int64_t heads) {
    if (rank == 4)
      return x;
    auto t = typeOf(x);
    Value r = g.op("Reshape", {x, g.ints({t.getDimSize(0), t.getDimSize(1), heads,
                                          t.getDimSize(2) / heads})});
    return g.op("Transpose", {r}, {g.perm({0, 2, 1, 3})});
  };
  Value qh = toHeads(q, qHeads), kh = toHeads(k, kvHeads), vh = toHeads(v, kvHeads);
  if (pastK) {
    auto pk = typeOf(pastK), kht = typeOf(kh);
    if (pk.getDimSize(0) != batch || pk.getDimSize(1) != kvHeads ||
        pk.getDimSize(3) != kht.getDimSize(3) || typeOf(pastV).getDimSize(3) != typeOf(vh).getDimSize(3)) {
      // Shapes that do not concatenate: undo nothing, the built ops are dead.
      return false;
    }
    kh = g.op("Concat", {pastK, kh}, {g.attr("axis", (int64_t)2)});
    vh = g.op("Concat", {pastV, vh}, {g.attr("axis", (int64_t)2)});
  }
  Value presentK = kh, presentV = vh;
  int64_t qLen = typeOf(qh).getDimSize(2), kvLen = typeOf(kh).getDimSize(2);
  int64_t headSize = typeOf(qh).getDimSize(3);
  int64_t offset = pastK ? typeOf(pastK).getDimSize(2) : 0;

  // scale: applied as sqrt(scale) to both Q and K, as the reference does.
  double scale = op->hasAttr("scale") ? (double)getFloatAttr(op, "scale", 1.0f)
                                      : 1.0 / std::sqrt((double)headSize);
  Value s = g.scalar((float)std::sqrt(scale));

  // The additive bias: attn_mask (padded with "masked" to kvLen), plus the
  // causal / sliding-window structure, which is a constant.
  const double ninf = -std::numeric_limits<double>::infinity();
  Value bias;
  if (mask) {
    Value m = mask;
    if (mt.getElementType().isInteger(1))
      m = g.op("Where", {m, g.scalar(0.0), g.scalar(ninf)});
    int64_t have = mt.getRank() ? mt.getDimSize(mt.getRank() - 1) : 1;
    if (mt.getRank() == 0 || have > kvLen)
      return false;
    if (have < kvLen) {
      SmallVector<int64_t> padShape(mt.getShape());
      padShape.back() = kvLen - have;
      int64_t n = 1;
      for (int64_t d : padShape)
        n *= d;
      m = g.op("Concat", {m, floatConstant(g, elt, padShape, SmallVector<double>(n, ninf))},
               {g.attr("axis", (int64_t)mt.getRank() - 1)});
    }
    bias = m;
  }
  std::vector<bool> rowMasked(qLen, false);
  if (nonpad) {
    // External cache: keys at j >= nonpad[b] are padding, and the causal /
    // window frontier of batch b is offset by nonpad[b] - qLen.
    auto i64 = b.getI64Type();
    auto intConstant = [&](ArrayRef<int64_t> shape, ArrayRef<int64_t> values) {
      return g.constant(DenseElementsAttr::get(RankedTensorType::get(shape, i64), values));
    };
    auto toBias = [&](Value allowed, ArrayRef<int64_t> shape) {
      return g.op("Reshape", {g.op("Where", {allowed, g.scalar(0.0), g.scalar(ninf)}), g.ints(shape)});
    };
    SmallVector<int64_t> iota, diff;
    for (int64_t j = 0; j < kvLen; ++j)
      iota.push_back(j);
    for (int64_t i = 0; i < qLen; ++i)
      for (int64_t j = 0; j < kvLen; ++j)
        diff.push_back(i - j);
    if (causal || left >= 0 || right >= 0) {
      Value off = g.op("Reshape", {g.op("Sub", {nonpad, g.ints({qLen})}), g.ints({batch, 1, 1})});
      Value d = g.op("Add", {off, intConstant({qLen, kvLen}, diff)});
      Value allowed;
      auto both = [&](Value c) { allowed = allowed ? g.op("And", {allowed, c}) : c; };
      if (causal)
        both(g.op("GreaterOrEqual", {d, g.ints({0}, true)}));
      if (left >= 0)
        both(g.op("LessOrEqual", {d, g.ints({left}, true)}));
      if (right >= 0)
        both(g.op("GreaterOrEqual", {d, g.ints({-right}, true)}));
      Value structure = toBias(allowed, {batch, 1, qLen, kvLen});
      bias = bias ? g.op("Add", {bias, structure}) : structure;
    }
    Value valid = g.op("Less", {intConstant({1, kvLen}, iota),
                                g.op("Unsqueeze", {nonpad, g.ints({1})})});
    Value padding = toBias(valid, {batch, 1, 1, kvLen});
    bias = bias ? g.op("Add", {bias, padding}) : padding;
  } else if (causal || left >= 0 || right >= 0) {
    SmallVector<double> values;
    for (int64_t i = 0; i < qLen; ++i) {
      bool any = false;
      for (int64_t j = 0; j < kvLen; ++j) {
        int64_t diff = i + offset - j;
        bool allowed = (!causal || diff >= 0) && (left < 0 || diff <= left) &&
                       (right < 0 || -diff <= right);
        values.push_back(allowed ? 0.0 : ninf);
        any |= allowed;
      }
      rowMasked[i] = !any;
    }
    Value structure = floatConstant(g, elt, {qLen, kvLen}, values);
    bias = bias ? g.op("Add", {bias, structure}) : structure;
  }
  // Rows whose bias is all -inf attend nothing: their probabilities are 0.
  Value fullyMasked;
  if (mask || nonpad) {
    int64_t biasRank = typeOf(bias).getRank();
    fullyMasked = g.op("IsInf", {g.op("ReduceMax", {bias, g.ints({biasRank - 1})})},
                       {g.attr("detect_positive", (int64_t)0)}, b.getI1Type());
  } else if (llvm::is_contained(rowMasked, true)) {
    SmallVector<bool> flags(rowMasked.begin(), rowMasked.end());
    fullyMasked = g.constant(DenseElementsAttr::get(
        RankedTensorType::get({qLen, 1}, b.getI1Type()), ArrayRef<bool>(flags)));
  }

  Value kr = repeatHeads(g, g.op("Mul", {kh, s}), qHeads), vr = repeatHeads(g, vh, qHeads);
  Value qk = g.op("MatMul", {g.op("Mul", {qh, s}), g.op("Transpose", {kr}, {g.perm({0, 1, 3, 2})})});
  if (softcap > 0) {
    Value c = g.scalar(softcap);
    qk = g.op("Mul", {g.op("Tanh", {g.op("Div", {qk, c})}), c});
  }
  Value withBias = bias ? g.op("Add", {qk, bias}) : qk;
  Value probs = g.op("Softmax", {withBias}, {g.attr("axis", (int64_t)-1)});
  if (fullyMasked)
    probs = g.op("Where", {fullyMasked, g.scalar(0.0), probs});
  Value debug = mode == 3 ? probs : mode == 2 ? withBias : qk;
  Value y = g.op("MatMul", {probs, vr});
  if (rank == 3) {
    auto t = typeOf(y);
    y = g.op("Reshape", {g.op("Transpose", {y}, {g.perm({0, 2, 1, 3})}),
                         g.ints({t.getDimSize(0), t.getDimSize(2), t.getDimSize(1) * t.getDimSize(3)})});
  }
  for (Value x : {y, presentK, presentV, debug})
    if (!staticType(x))
      return false; // inconsistent shapes: the original op stays, its errors reported later
  replaceResults(op, {y, presentK, presentV, debug});
  return true;
}

//===----------------------------------------------------------------------===//
// RMSNormalization: x / sqrt(mean(x^2 over [axis..]) + epsilon) * scale.
//===----------------------------------------------------------------------===//

bool decomposeRmsNorm(Operation *op) {
  // kiln-fuse-subgraphs' RMSNorms go to the providers whole.
  if (op->hasAttr("kiln.fused"))
    return false;
  Value x = op->getOperand(0), scale = op->getOperand(1);
  auto xt = staticType(x), st = staticType(scale);
  if (!xt || !st || !isFloat(xt.getElementType()) || st.getElementType() != xt.getElementType())
    return false;
  int64_t rank = xt.getRank();
  int64_t axis = getIntAttr(op, "axis", -1);
  if (axis < 0)
    axis += rank;
  if (rank == 0 || axis < 0 || axis >= rank)
    return false;
  OpBuilder b(op);
  GraphBuilder g(b, op->getLoc(), xt.getElementType());
  SmallVector<int64_t> axes;
  for (int64_t a = axis; a < rank; ++a)
    axes.push_back(a);
  Value meanSq = g.op("ReduceMean", {g.op("Mul", {x, x}), g.ints(axes)});
  Value rms = g.op("Sqrt", {g.op("Add", {meanSq, g.scalar(getFloatAttr(op, "epsilon", 1e-5f))})});
  Value y = g.op("Mul", {g.op("Mul", {x, g.op("Reciprocal", {rms})}), scale});
  if (!staticType(y))
    return false;
  replaceResults(op, {y});
  return true;
}

//===----------------------------------------------------------------------===//
// CumSum / CumProd: unrolled along the (short, static) axis with Slice, a
// running Add or Mul, and Concat; exact for integers.
//===----------------------------------------------------------------------===//

constexpr int64_t kMaxScanLength = 256;

bool decomposeScan(Operation *op, bool product) {
  Value x = op->getOperand(0);
  auto xt = staticType(x);
  auto axisValues = getConstantInts(op->getOperand(1));
  if (!xt || xt.getRank() == 0 || !axisValues || axisValues->size() != 1)
    return false;
  Type elt = xt.getElementType();
  if (!isFloat(elt) && !elt.isInteger(32) && !elt.isInteger(64))
    return false;
  int64_t rank = xt.getRank(), axis = (*axisValues)[0];
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return false;
  int64_t n = xt.getDimSize(axis);
  if (n < 1 || n > kMaxScanLength)
    return false;
  bool exclusive = getIntAttr(op, "exclusive", 0) != 0;
  bool reverse = getIntAttr(op, "reverse", 0) != 0;

  OpBuilder b(op);
  GraphBuilder g(b, op->getLoc(), elt);
  SmallVector<Value> outs(n);
  Value acc;
  for (int64_t step = 0; step < n; ++step) {
    int64_t i = reverse ? n - 1 - step : step;
    Value slice = g.slice(x, i, i + 1, axis);
    if (exclusive) {
      if (!acc) {
        auto st = cast<RankedTensorType>(slice.getType());
        Attribute one = isa<FloatType>(elt) ? (Attribute)b.getFloatAttr(elt, product ? 1.0 : 0.0)
                                            : (Attribute)b.getIntegerAttr(elt, product ? 1 : 0);
        outs[i] = g.constant(DenseElementsAttr::get(st, one));
      } else {
        outs[i] = acc;
      }
    }
    if (exclusive && step == n - 1)
      break; // the total is no output's value
    acc = acc ? g.op(product ? "Mul" : "Add", {acc, slice}) : slice;
    if (!exclusive)
      outs[i] = acc;
  }
  Value y = n == 1 ? outs[0] : g.op("Concat", outs, {g.attr("axis", axis)});
  if (!staticType(y) || staticType(y).getShape() != xt.getShape())
    return false;
  replaceResults(op, {y});
  return true;
}

//===----------------------------------------------------------------------===//
// CausalConvWithState: past state (or zeros) + input, a depthwise Conv1d, an
// optional SiLU (in f32, as the reference), and the last k-1 frames as the
// present state.
//===----------------------------------------------------------------------===//

bool decomposeCausalConv(Operation *op) {
  Value x = op->getOperand(0), w = op->getOperand(1);
  Value bias = optionalOperand(op, 2), past = optionalOperand(op, 3);
  auto xt = staticType(x), wt = staticType(w);
  if (!xt || !wt || xt.getRank() != 3 || wt.getRank() != 3 || !isFloat(xt.getElementType()))
    return false;
  StringRef act = getStrAttr(op, "activation", "none");
  if (act != "none" && act != "silu" && act != "swish")
    return false;
  int64_t b = xt.getDimSize(0), c = xt.getDimSize(1), len = xt.getDimSize(2), k = wt.getDimSize(2);
  Type elt = xt.getElementType();
  OpBuilder ob(op);
  GraphBuilder g(ob, op->getLoc(), elt);
  Value padded = x;
  if (k > 1) {
    Value state = past ? past : g.zeros({b, c, k - 1});
    padded = g.op("Concat", {state, x}, {g.attr("axis", int64_t(2))});
  }
  SmallVector<NamedAttribute> attrs = {g.attr("group", c), g.b.getNamedAttr("kernel_shape", g.b.getI64ArrayAttr({k})),
                                       g.b.getNamedAttr("pads", g.b.getI64ArrayAttr({0, 0}))};
  // The convolution accumulates in f32 and rounds once, as the reference.
  Type f32 = ob.getF32Type();
  GraphBuilder gf(ob, op->getLoc(), f32);
  Value y = castTo(gf, gf.op("Conv", {castTo(gf, padded, f32), castTo(gf, w, f32),
                                      bias ? castTo(gf, bias, f32) : g.none()},
                             attrs),
                   elt);
  if (act != "none") {
    Value y32 = castTo(gf, y, f32);
    y = castTo(gf, gf.op("Mul", {y32, gf.op("Sigmoid", {y32})}), elt);
  }
  // (Empty for k = 1.)
  Value present = g.slice(padded, len, len + k - 1, 2);
  if (!staticType(y) || !staticType(present))
    return false;
  replaceResults(op, {y, present});
  return true;
}

//===----------------------------------------------------------------------===//
// LinearAttention: the reference's recurrence, unrolled over the (short,
// static) sequence in f32: decay (gated), delta correction, the rank-1
// state update and the read by each query head.
//===----------------------------------------------------------------------===//

constexpr int64_t kMaxLinearAttentionSteps = 64;

bool decomposeLinearAttention(Operation *op) {
  Value q = op->getOperand(0), k = op->getOperand(1), v = op->getOperand(2);
  Value past = optionalOperand(op, 3), decay = optionalOperand(op, 4), beta = optionalOperand(op, 5);
  auto qt = staticType(q), kt = staticType(k), vt = staticType(v);
  if (!qt || !kt || !vt || qt.getRank() != 3 || kt.getRank() != 3 || vt.getRank() != 3 ||
      !isFloat(qt.getElementType()))
    return false;
  StringRef rule = getStrAttr(op, "update_rule", "gated_delta");
  bool gating = rule == "gated" || rule == "gated_delta";
  bool delta = rule == "delta" || rule == "gated_delta";
  int64_t hq = getIntAttr(op, "q_num_heads", 0), hkv = getIntAttr(op, "kv_num_heads", 0);
  if (hq <= 0 || hkv <= 0 || hq % hkv || (gating && !decay) || (delta && !beta))
    return false;
  int64_t b = qt.getDimSize(0), t = qt.getDimSize(1);
  int64_t dk = qt.getDimSize(2) / hq, dv = vt.getDimSize(2) / hkv, group = hq / hkv;
  if (t < 1 || t > kMaxLinearAttentionSteps)
    return false;
  double scale = getFloatAttr(op, "scale", 0.0f);
  if (scale == 0.0)
    scale = 1.0 / std::sqrt(double(dk));
  Type outElt = qt.getElementType();
  OpBuilder ob(op);
  Type f32 = ob.getF32Type();
  GraphBuilder g(ob, op->getLoc(), f32);
  // (B, T, H*D) -> (B, H, T, D), in f32.
  auto heads = [&](Value x, int64_t h) {
    int64_t d = staticType(x).getDimSize(2) / h;
    Value r = g.op("Reshape", {castTo(g, x, f32), g.ints({b, t, h, d})});
    return g.op("Transpose", {r}, {g.perm({0, 2, 1, 3})});
  };
  Value q4 = heads(q, hq), k4 = heads(k, hkv), v4 = heads(v, hkv);
  Value decay4, beta4;
  if (gating) {
    int64_t last = staticType(decay).getDimSize(2);
    decay4 = last == hkv ? g.op("Transpose", {g.op("Reshape", {castTo(g, decay, f32), g.ints({b, t, hkv, 1})})},
                                {g.perm({0, 2, 1, 3})})
                         : heads(decay, hkv);
  }
  if (delta) {
    int64_t last = staticType(beta).getDimSize(2);
    beta4 = g.op("Transpose", {g.op("Reshape", {castTo(g, beta, f32), g.ints({b, t, last, 1})})},
                 {g.perm({0, 2, 1, 3})});
  }
  Value state = past ? castTo(g, past, f32) : g.zeros({b, hkv, dk, dv});
  auto swapLast = [&](Value x) { return g.op("Transpose", {x}, {g.perm({0, 1, 3, 2})}); };
  SmallVector<Value> outs;
  for (int64_t i = 0; i < t; ++i) {
    Value qi = g.slice(q4, i, i + 1, 2), ki = g.slice(k4, i, i + 1, 2), vi = g.slice(v4, i, i + 1, 2);
    if (gating) // state * exp(g) over d_v
      state = g.op("Mul", {state, swapLast(g.op("Exp", {g.slice(decay4, i, i + 1, 2)}))});
    if (delta) {
      Value retrieved = g.op("MatMul", {ki, state});
      vi = g.op("Mul", {g.slice(beta4, i, i + 1, 2), g.op("Sub", {vi, retrieved})});
    }
    state = g.op("Add", {state, g.op("MatMul", {swapLast(ki), vi})});
    Value read = state;
    if (group > 1) {
      Value e = g.op("Expand", {g.op("Unsqueeze", {state, g.ints({2})}), g.ints({b, hkv, group, dk, dv})});
      read = g.op("Reshape", {e, g.ints({b, hq, dk, dv})});
    }
    outs.push_back(g.op("Mul", {g.op("MatMul", {qi, read}), g.scalar(scale)}));
  }
  Value all = t == 1 ? outs[0] : g.op("Concat", outs, {g.attr("axis", int64_t(2))});
  Value y = g.op("Reshape", {g.op("Transpose", {all}, {g.perm({0, 2, 1, 3})}), g.ints({b, t, hq * dv})});
  y = castTo(g, y, outElt);
  Type stateElt = past ? staticType(past).getElementType() : outElt;
  Value present = castTo(g, state, stateElt);
  if (!staticType(y) || !staticType(present))
    return false;
  replaceResults(op, {y, present});
  return true;
}

//===----------------------------------------------------------------------===//
// Loop with a known trip count (constant, or the scan outputs' length) whose
// condition cannot turn false inside the body: unrolled, scan outputs
// stacked, unless marked kKeepLoopAttr (a recurrent op's steps). A trip
// count or condition computed at run time is checked.
//===----------------------------------------------------------------------===//

constexpr int64_t kMaxLoopUnroll = 256;

/// One copy of `body`'s ops with its arguments bound to `args`, typed as
/// they go; the values it yields, or nullopt when a copy fails to type.
std::optional<SmallVector<Value>> inlineBody(OpBuilder &b, Block &body, ValueRange args) {
  IRMapping map;
  for (auto [arg, v] : llvm::zip(body.getArguments(), args))
    map.map(arg, v);
  for (Operation &inner : body.without_terminator()) {
    Operation *c = b.clone(inner, map);
    if (failed(inferShapesFor(c)))
      return std::nullopt;
  }
  SmallVector<Value> yields;
  for (Value v : body.getTerminator()->getOperands())
    yields.push_back(map.lookupOrDefault(v));
  return yields;
}

/// The per-iteration values `steps` stacked along a new `axis`.
Value stack(GraphBuilder &g, ArrayRef<Value> steps, int64_t axis) {
  Type elt = cast<ShapedType>(steps[0].getType()).getElementType();
  SmallVector<Value> rows;
  for (Value s : steps)
    rows.push_back(g.op("Unsqueeze", {s, g.ints({axis})}, {}, elt));
  return rows.size() == 1 ? rows[0] : g.op("Concat", rows, {g.attr("axis", axis)}, elt);
}

bool isConstantTrue(Value v) {
  auto ints = getConstantInts(v);
  return ints && llvm::all_of(*ints, [](int64_t x) { return x != 0; });
}

/// The value of a scalar computed from constants by a few onnx ops (a
/// while loop's counter and its stop condition); nullopt otherwise.
std::optional<double> scalarValue(Value v, int depth = 0) {
  if (auto c = getConstantDoubles(v))
    return c->size() == 1 ? std::optional<double>((*c)[0]) : std::nullopt;
  Operation *op = v.getDefiningOp();
  if (!op || depth > 64 || op->getNumResults() != 1 || !op->getName().getStringRef().starts_with("onnx."))
    return std::nullopt;
  SmallVector<double> in;
  for (Value o : op->getOperands()) {
    auto x = scalarValue(o, depth + 1);
    if (!x)
      return std::nullopt;
    in.push_back(*x);
  }
  StringRef name = op->getName().getStringRef().drop_front(5);
  auto binary = [&](auto f) -> std::optional<double> {
    return in.size() == 2 ? std::optional<double>(f(in[0], in[1])) : std::nullopt;
  };
  if (name == "Add")
    return binary([](double a, double b) { return a + b; });
  if (name == "Sub")
    return binary([](double a, double b) { return a - b; });
  if (name == "Mul")
    return binary([](double a, double b) { return a * b; });
  if (name == "Less")
    return binary([](double a, double b) { return double(a < b); });
  if (name == "LessOrEqual")
    return binary([](double a, double b) { return double(a <= b); });
  if (name == "Greater")
    return binary([](double a, double b) { return double(a > b); });
  if (name == "GreaterOrEqual")
    return binary([](double a, double b) { return double(a >= b); });
  if (name == "Equal")
    return binary([](double a, double b) { return double(a == b); });
  if (name == "And")
    return binary([](double a, double b) { return double(a != 0 && b != 0); });
  if (name == "Or")
    return binary([](double a, double b) { return double(a != 0 || b != 0); });
  if (in.size() == 1 && name == "Not")
    return double(in[0] == 0);
  if (in.size() == 1 && name == "Neg")
    return -in[0];
  if (in.size() == 1 && name == "Identity")
    return in[0];
  if (in.size() == 1 && name == "Cast") {
    Type t = cast<ShapedType>(op->getResult(0).getType()).getElementType();
    if (t.isInteger(1))
      return double(in[0] != 0);
    return isa<IntegerType>(t) ? std::trunc(in[0]) : in[0];
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// SequenceMap as the Loop of its ONNX function: one iteration per element of
// the first sequence, each output sequence built by SequenceInsert.
//===----------------------------------------------------------------------===//

bool decomposeSequenceMap(Operation *op) {
  Block &body = op->getRegion(0).front();
  Operation *yield = body.getTerminator();
  auto first = dyn_cast<SeqType>(op->getOperand(0).getType());
  if (!first || body.getNumArguments() != op->getNumOperands() ||
      yield->getNumOperands() != op->getNumResults())
    return false;
  OpBuilder b(op);
  Location loc = op->getLoc();
  GraphBuilder g(b, loc, b.getF32Type());
  auto i64 = b.getI64Type(), i1 = b.getI1Type();
  Value trip = g.op("SequenceLength", {op->getOperand(0)}, {}, i64);
  Value go = g.constant(DenseElementsAttr::get(RankedTensorType::get({}, i1), true));
  SmallVector<Value> operands = {trip, go};
  SmallVector<Type> carried;
  for (Value out : yield->getOperands()) {
    auto t = dyn_cast<TensorType>(out.getType());
    if (!t)
      return false;
    int64_t dtype = dtypeOfElementType(t.getElementType());
    operands.push_back(g.op("SequenceEmpty", {}, {g.attr("dtype", dtype)}));
    carried.push_back(SeqType::get(b.getContext(), out.getType()));
  }
  OperationState state(loc, "onnx.Loop");
  state.addOperands(operands);
  state.addTypes(op->getResultTypes());
  state.addRegion();
  Operation *loop = b.create(state);

  Block *inner = new Block();
  loop->getRegion(0).push_back(inner);
  inner->addArgument(RankedTensorType::get({}, i64), loc);
  inner->addArgument(RankedTensorType::get({}, i1), loc);
  for (Type t : carried)
    inner->addArgument(t, loc);
  OpBuilder ib = OpBuilder::atBlockBegin(inner);
  GraphBuilder ig(ib, loc, b.getF32Type());
  IRMapping map;
  for (auto [arg, in] : llvm::zip(body.getArguments(), op->getOperands())) {
    Value v = in;
    if (auto seq = dyn_cast<SeqType>(in.getType()))
      v = ig.op("SequenceAt", {in, inner->getArgument(0)}, {},
                cast<TensorType>(seq.getElementType()).getElementType());
    map.map(arg, v);
  }
  for (Operation &o : body.without_terminator())
    ib.clone(o, map);
  SmallVector<Value> yields = {inner->getArgument(1)};
  for (auto [k, out] : llvm::enumerate(yield->getOperands())) {
    Value v = map.lookupOrDefault(out);
    yields.push_back(ig.op("SequenceInsert", {inner->getArgument(2 + k), v, ig.none()}, {}));
  }
  OperationState y(loc, "onnx.Yield");
  y.addOperands(yields);
  ib.create(y);
  op->replaceAllUsesWith(loop->getResults());
  op->erase();
  return true;
}

/// With run-time sizes, a Loop whose trip count is known only at run time
/// (a dim of an input: `for i in range(x.size(0))`) and that stops only
/// there keeps its scan outputs of static shape as carried values: each
/// starts as zeros [trip, ...] and each iteration writes its row by
/// ScatterND. The run-time Loop lowering then runs it.
bool carryScanOutputs(Operation *op, unsigned nCarried, unsigned nScan) {
  auto module = op->getParentOfType<ModuleOp>();
  Value m = op->getOperand(0);
  Block &body = op->getRegion(0).front();
  Operation *yield = body.getTerminator();
  if (!module || !module->hasAttr("kiln.runtime_sizes") || isNone(m))
    return false;
  SmallVector<RankedTensorType> scanTypes;
  for (unsigned k = 0; k < nScan; ++k) {
    auto t = dyn_cast<RankedTensorType>(yield->getOperand(1 + nCarried + k).getType());
    if (!t || !t.hasStaticShape())
      return false;
    scanTypes.push_back(t);
  }
  OpBuilder b(op);
  Location loc = op->getLoc();
  GraphBuilder g(b, loc, b.getF32Type());
  Type i64 = b.getI64Type();
  Value trip = g.op("Reshape", {m, g.ints({1})}, {}, i64);
  SmallVector<Value> operands(op->getOperands());
  SmallVector<Type> types;
  for (unsigned k = 0; k < nCarried; ++k)
    types.push_back(op->getResult(k).getType());
  for (RankedTensorType t : scanTypes) {
    Value shape = g.op("Concat", {trip, g.ints(t.getShape())}, {g.attr("axis", (int64_t)0)}, i64);
    auto zero = DenseElementsAttr::get(RankedTensorType::get({1}, t.getElementType()),
                                       b.getZeroAttr(t.getElementType()));
    Value acc = g.op("ConstantOfShape", {shape}, {b.getNamedAttr("value", zero)},
                     t.getElementType());
    SmallVector<int64_t> dims = {ShapedType::kDynamic};
    dims.append(t.getShape().begin(), t.getShape().end());
    acc.setType(RankedTensorType::get(dims, t.getElementType()));
    operands.push_back(acc);
    types.push_back(acc.getType());
  }
  OperationState state(loc, "onnx.Loop");
  state.addOperands(operands);
  state.addTypes(types);
  state.addAttributes(op->getAttrs());
  state.addRegion();
  Operation *loop = b.create(state);
  loop->getRegion(0).takeBody(op->getRegion(0));
  Block &nb = loop->getRegion(0).front();
  OpBuilder yb(yield);
  GraphBuilder gy(yb, loc, b.getF32Type());
  Value at = gy.op("Reshape", {nb.getArgument(0), gy.ints({1, 1})}, {}, i64);
  SmallVector<Value> yields(yield->getOperands().take_front(1 + nCarried));
  for (unsigned k = 0; k < nScan; ++k) {
    Value acc = nb.addArgument(types[nCarried + k], loc);
    Value row = gy.op("Unsqueeze", {yield->getOperand(1 + nCarried + k), gy.ints({0})}, {},
                      scanTypes[k].getElementType());
    Value next = gy.op("ScatterND", {acc, at, row}, {}, scanTypes[k].getElementType());
    next.setType(acc.getType());
    yields.push_back(next);
  }
  OperationState y(loc, "onnx.Yield");
  y.addOperands(yields);
  yb.create(y);
  yield->erase();
  op->replaceAllUsesWith(loop->getResults());
  op->erase();
  return true;
}

bool decomposeLoop(Operation *op) {
  if (op->hasAttr(kKeepLoopAttr))
    return false;
  Value m = op->getOperand(0), cond = op->getOperand(1);
  unsigned nCarried = op->getNumOperands() - 2;
  Block &body = op->getRegion(0).front();
  Operation *yield = body.getTerminator();
  if (body.getNumArguments() != nCarried + 2 || yield->getNumOperands() < nCarried + 1)
    return false;
  unsigned nScan = yield->getNumOperands() - 1 - nCarried;
  std::optional<int64_t> trip;
  bool runtimeTrip = false;
  if (!isNone(m)) {
    if (auto v = getConstantInts(m); v && v->size() == 1)
      trip = (*v)[0];
    else
      runtimeTrip = true;
  }
  if (!trip && nScan > 0)
    if (auto st = staticType(op->getResult(nCarried)); st && st.getRank() >= 1)
      trip = st.getDimSize(0);
  // The body passes the condition through (or makes it true), or computes
  // it: a while loop, unrolled while its condition evaluates to true at
  // compile time (a counter against a bound).
  Value condOut = yield->getOperand(0);
  while (Operation *def = condOut.getDefiningOp())
    if (def->getName().getStringRef() == "onnx.Identity")
      condOut = def->getOperand(0);
    else
      break;
  bool whileLoop = condOut != body.getArgument(1) && !isConstantTrue(condOut);
  // A condition computed at run time: the CPU runs the loop as a loop
  // (scan outputs, whose length that would decide, need unrolling).
  if (!isNone(cond) && !isConstantTrue(cond) && nScan == 0)
    return false;
  if (!whileLoop && (!trip || *trip < 1 || *trip > kMaxLoopUnroll))
    return runtimeTrip && nScan > 0 && (isNone(cond) || isConstantTrue(cond)) &&
           carryScanOutputs(op, nCarried, nScan);
  if (whileLoop && (runtimeTrip || (trip && *trip < 1) || (!isNone(cond) && !isConstantTrue(cond))))
    return false;
  OpBuilder b(op);
  Location loc = op->getLoc();
  GraphBuilder g(b, loc, b.getF32Type());
  auto i1 = b.getI1Type();
  SmallVector<Value> checks;
  if (runtimeTrip)
    checks.push_back(g.op("Equal", {m, g.ints({*trip}, true)}, {}, i1));
  if (!isNone(cond) && !isConstantTrue(cond))
    checks.push_back(cond);
  if (!checks.empty()) {
    Value ok = checks[0];
    for (Value c : ArrayRef<Value>(checks).drop_front())
      ok = g.op("And", {ok, c}, {}, i1);
    if (auto t = staticType(ok); !t || t.getRank() != 0)
      ok = g.op("Reshape", {ok, g.ints({})}, {}, i1);
    b.create<CheckOp>(loc, ok,
                      describeNode(op) + ": the trip count or condition (computed at run time) "
                                         "differs from the " + std::to_string(*trip) +
                          " iterations compiled");
  }
  SmallVector<Value> carried(op->operand_begin() + 2, op->operand_end());
  SmallVector<SmallVector<Value>> scans(nScan);
  Value trueCond = g.constant(DenseElementsAttr::get(RankedTensorType::get({}, i1), true));
  int64_t limit = whileLoop ? std::min<int64_t>(trip.value_or(kMaxLoopUnroll), kMaxLoopUnroll) : *trip;
  bool stopped = false;
  for (int64_t i = 0; i < limit && !stopped; ++i) {
    SmallVector<Value> args = {g.ints({i}, true), trueCond};
    args.append(carried);
    auto yields = inlineBody(b, body, args);
    if (!yields)
      return false;
    for (unsigned j = 0; j < nCarried; ++j)
      carried[j] = (*yields)[1 + j];
    for (unsigned k = 0; k < nScan; ++k)
      scans[k].push_back((*yields)[1 + nCarried + k]);
    if (whileLoop) {
      std::optional<double> go = scalarValue((*yields)[0]);
      if (!go)
        return false; // a condition known only at run time
      stopped = *go == 0;
    }
  }
  // A while loop that would run past the unroll limit stays unsupported.
  if (whileLoop && !stopped && (!trip || *trip > limit))
    return false;
  SmallVector<Value> results(carried);
  for (auto &steps : scans)
    results.push_back(stack(g, steps, 0));
  // Static, or ranked with run-time sizes (a symbolic batch).
  for (Value r : results)
    if (!isa<RankedTensorType>(r.getType()))
      return false;
  replaceResults(op, results);
  return true;
}

//===----------------------------------------------------------------------===//
// Scan (opset 9+) over static scan axes: unrolled, each iteration reading
// slice t of every scan input (from the end when its direction is 1) and
// the scan outputs stacked along their axes (reversed for direction 1).
//===----------------------------------------------------------------------===//

bool decomposeScanOp(Operation *op) {
  int64_t nInputs = op->getAttrOfType<IntegerAttr>("num_scan_inputs").getInt();
  int64_t nState = op->getNumOperands() - nInputs;
  Block &body = op->getRegion(0).front();
  int64_t nOutputs = op->getNumResults() - nState;
  if (nState < 0 || nOutputs < 0 || body.getNumArguments() != op->getNumOperands())
    return false;
  auto listed = [&](StringRef name, int64_t n) {
    SmallVector<int64_t> v = getIntsAttr(op, name);
    v.resize(n, 0);
    return v;
  };
  SmallVector<int64_t> inAxes = listed("scan_input_axes", nInputs),
                       inDirs = listed("scan_input_directions", nInputs),
                       outAxes = listed("scan_output_axes", nOutputs),
                       outDirs = listed("scan_output_directions", nOutputs);
  std::optional<int64_t> trip;
  for (int64_t i = 0; i < nInputs; ++i) {
    auto t = staticType(op->getOperand(nState + i));
    if (!t)
      return false;
    int64_t &axis = inAxes[i];
    if (axis < 0)
      axis += t.getRank();
    if (axis < 0 || axis >= t.getRank() || (trip && *trip != t.getDimSize(axis)))
      return false;
    trip = t.getDimSize(axis);
  }
  if (!trip || *trip < 1 || *trip > kMaxLoopUnroll)
    return false;
  OpBuilder b(op);
  GraphBuilder g(b, op->getLoc(), b.getF32Type());
  SmallVector<Value> state(op->operand_begin(), op->operand_begin() + nState);
  SmallVector<SmallVector<Value>> scans(nOutputs);
  for (int64_t t = 0; t < *trip; ++t) {
    SmallVector<Value> args(state);
    for (int64_t i = 0; i < nInputs; ++i) {
      Value x = op->getOperand(nState + i);
      Value row = g.op("Gather", {x, g.ints({inDirs[i] ? *trip - 1 - t : t}, true)},
                       {g.attr("axis", inAxes[i])}, cast<ShapedType>(x.getType()).getElementType());
      args.push_back(row);
    }
    auto yields = inlineBody(b, body, args);
    if (!yields)
      return false;
    for (int64_t j = 0; j < nState; ++j)
      state[j] = (*yields)[j];
    for (int64_t k = 0; k < nOutputs; ++k)
      scans[k].push_back((*yields)[nState + k]);
  }
  SmallVector<Value> results(state);
  for (int64_t k = 0; k < nOutputs; ++k) {
    if (outDirs[k])
      std::reverse(scans[k].begin(), scans[k].end());
    int64_t rank = cast<ShapedType>(scans[k][0].getType()).getRank() + 1;
    results.push_back(stack(g, scans[k], outAxes[k] < 0 ? outAxes[k] + rank : outAxes[k]));
  }
  for (Value r : results)
    if (!staticType(r))
      return false;
  replaceResults(op, results);
  return true;
}

/// MaxUnpool: the values scattered at their flat indices into zeros of the
/// shape the attributes give, padded at the end to output_shape (a
/// run-time one reshapes the result, which checks it at run time).
bool decomposeMaxUnpool(Operation *op) {
  auto y = staticType(op->getResult(0));
  Value x = op->getOperand(0), indices = op->getOperand(1);
  auto unpooled = maxUnpoolDefaultShape(op);
  if (!y || !unpooled || !staticType(indices) || y.getRank() != (int64_t)unpooled->size())
    return false;
  OpBuilder b(op);
  GraphBuilder g(b, op->getLoc(), y.getElementType());
  int64_t count = 1;
  SmallVector<int64_t> pads(2 * y.getRank(), 0);
  for (int64_t d = 0; d < y.getRank(); ++d) {
    count *= (*unpooled)[d];
    pads[y.getRank() + d] = y.getDimSize(d) - (*unpooled)[d];
    if (pads[y.getRank() + d] < 0)
      return false;
  }
  Value flatX = g.op("Reshape", {x, g.ints({-1})});
  Value flatI = g.op("Reshape", {indices, g.ints({-1})}, {}, b.getI64Type());
  Value flat = g.op("ScatterElements",
                    {g.zeros({count}), flatI, flatX},
                    {g.attr("axis", (int64_t)0)});
  Value r = g.op("Reshape", {flat, g.ints(*unpooled)});
  if (llvm::any_of(pads, [](int64_t p) { return p != 0; }))
    r = g.op("Pad", {r, g.ints(pads), g.none(), g.none()});
  if (Value shape = optionalOperand(op, 2)) {
    r = g.op("Reshape", {r, shape});
    r.setType(y);
  }
  if (!staticType(r))
    return false;
  replaceResults(op, {r});
  return true;
}

/// TensorScatter (a KV cache update): the update's rows go to positions
/// write_indices[b] + s along `axis` (modulo the cache length in circular
/// mode), as one ScatterElements.
bool decomposeTensorScatter(Operation *op) {
  Value past = op->getOperand(0), update = op->getOperand(1);
  Value start = optionalOperand(op, 2);
  auto pt = staticType(past), ut = staticType(update);
  if (!pt || !ut || pt.getRank() < 2)
    return false;
  int64_t rank = pt.getRank(), axis = getIntAttr(op, "axis", -2);
  if (axis < 0)
    axis += rank;
  if (axis <= 0 || axis >= rank)
    return false;
  OpBuilder b(op);
  GraphBuilder g(b, op->getLoc(), pt.getElementType());
  SmallVector<int64_t> along(rank, 1), perBatch(rank, 1);
  along[axis] = ut.getDimSize(axis);
  perBatch[0] = pt.getDimSize(0);
  Value pos = g.op("Reshape", {g.ints(llvm::to_vector(llvm::seq<int64_t>(0, along[axis]))),
                               g.ints(along)}, {}, b.getI64Type());
  if (start)
    pos = g.op("Add", {g.op("Reshape", {start, g.ints(perBatch)}, {}, b.getI64Type()), pos}, {},
               b.getI64Type());
  if (getStrAttr(op, "mode", "linear") == "circular")
    pos = g.op("Mod", {pos, g.ints({pt.getDimSize(axis)}, true)}, {}, b.getI64Type());
  Value idx = g.op("Expand", {pos, g.ints(ut.getShape())}, {}, b.getI64Type());
  Value y = g.op("ScatterElements", {past, idx, update}, {g.attr("axis", axis)});
  if (!staticType(y))
    return false;
  replaceResults(op, {y});
  return true;
}

/// Det of matrices up to 4x4 by cofactor expansion along the first row
/// (at most 24 products per matrix).
bool decomposeDet(Operation *op) {
  Value x = op->getOperand(0);
  auto xt = staticType(x);
  if (!xt || xt.getRank() < 2 || !isFloat(xt.getElementType()))
    return false;
  int64_t rank = xt.getRank(), n = xt.getDimSize(rank - 1);
  if (n != xt.getDimSize(rank - 2) || n < 1 || n > 4)
    return false;
  OpBuilder b(op);
  GraphBuilder g(b, op->getLoc(), xt.getElementType());
  std::map<std::pair<int64_t, int64_t>, Value> elements;
  auto at = [&](int64_t i, int64_t j) {
    Value &e = elements[{i, j}];
    if (!e)
      e = g.pick(g.pick(x, i, rank - 2), j, rank - 2);
    return e;
  };
  std::function<Value(int64_t, SmallVector<int64_t>)> det = [&](int64_t row,
                                                               SmallVector<int64_t> cols) {
    if (cols.size() == 1)
      return at(row, cols[0]);
    Value sum;
    for (size_t k = 0; k < cols.size(); ++k) {
      SmallVector<int64_t> rest(cols);
      rest.erase(rest.begin() + k);
      Value term = g.op("Mul", {at(row, cols[k]), det(row + 1, rest)});
      sum = !sum ? term : g.op(k % 2 ? "Sub" : "Add", {sum, term});
    }
    return sum;
  };
  Value y = det(0, llvm::to_vector(llvm::seq<int64_t>(0, n)));
  if (!staticType(y))
    return false;
  replaceResults(op, {y});
  return true;
}

/// The training optimizers (ai.onnx.preview.training) as elementwise math
/// on each (X, G, V[, H]) group, as the ONNX reference computes them:
/// Momentum (standard or Nesterov), Adagrad and Adam. T (the step) decides
/// at run time: Momentum's first step takes the whole gradient, Adam
/// corrects its bias only after it.
bool decomposeOptimizer(Operation *op) {
  StringRef name = op->getName().stripDialect();
  int64_t groups = name == "Adam" ? 4 : 3;
  int64_t n = ((int64_t)op->getNumOperands() - 2) / groups;
  Value r = op->getOperand(0), t = op->getOperand(1);
  auto rt = staticType(r);
  if (n <= 0 || !rt || !isFloat(rt.getElementType()))
    return false;
  OpBuilder b(op);
  GraphBuilder g(b, op->getLoc(), rt.getElementType());
  auto attr = [&](StringRef a, float dflt) { return g.scalar(getFloatAttr(op, a, dflt)); };
  Value step = castTo(g, t, rt.getElementType());
  Value started = g.op("Greater", {t, g.ints({0}, true)}, {}, b.getI1Type());
  Value one = g.scalar(1.0);
  SmallVector<Value> results(op->getNumResults());
  for (int64_t i = 0; i < n; ++i) {
    Value x = op->getOperand(2 + i), grad = op->getOperand(2 + n + i);
    Value v = op->getOperand(2 + 2 * n + i);
    Value reg = g.op("Add", {g.op("Mul", {attr("norm_coefficient", 0.0f), x}), grad});
    if (name == "Momentum") {
      Value alpha = attr("alpha", 0.0f);
      Value beta = g.op("Where", {started, attr("beta", 0.0f), one});
      Value vNew = g.op("Add", {g.op("Mul", {alpha, v}), g.op("Mul", {beta, reg})});
      Value dir = getStrAttr(op, "mode", "standard") == "nesterov"
                      ? g.op("Add", {reg, g.op("Mul", {alpha, vNew})})
                      : vNew;
      results[i] = g.op("Sub", {x, g.op("Mul", {r, dir})});
      results[n + i] = vNew;
    } else if (name == "Adagrad") {
      Value rate = g.op("Div", {r, g.op("Add", {one, g.op("Mul", {step, attr("decay_factor", 0.0f)})})});
      Value hNew = g.op("Add", {v, g.op("Mul", {reg, reg})});
      Value scale = g.op("Add", {g.op("Sqrt", {hNew}), attr("epsilon", 0.0f)});
      results[i] = g.op("Sub", {x, g.op("Div", {g.op("Mul", {rate, reg}), scale})});
      results[n + i] = hNew;
    } else {
      Value h = op->getOperand(2 + 3 * n + i);
      float alphaF = getFloatAttr(op, "alpha", 0.9f), betaF = getFloatAttr(op, "beta", 0.999f);
      Value alpha = g.scalar(alphaF), beta = g.scalar(betaF);
      Value vNew = g.op("Add", {g.op("Mul", {alpha, v}), g.op("Mul", {g.scalar(1.0 - alphaF), reg})});
      Value hNew = g.op("Add", {g.op("Mul", {beta, h}),
                                g.op("Mul", {g.scalar(1.0 - betaF), g.op("Mul", {reg, reg})})});
      Value scale = g.op("Add", {g.op("Sqrt", {hNew}), attr("epsilon", 0.0f)});
      Value corrected = g.op("Div", {g.op("Mul", {r, g.op("Sqrt", {g.op("Sub", {one, g.op("Pow", {beta, step})})})}),
                                     g.op("Sub", {one, g.op("Pow", {alpha, step})})});
      Value rate = g.op("Where", {started, corrected, r});
      Value xNew = g.op("Sub", {x, g.op("Mul", {rate, g.op("Div", {vNew, scale})})});
      results[i] = g.op("Mul", {g.scalar(1.0 - getFloatAttr(op, "norm_coefficient_post", 0.0f)), xNew});
      results[n + i] = vNew;
      results[2 * n + i] = hNew;
    }
  }
  for (Value v : results)
    if (!v || !staticType(v))
      return false;
  replaceResults(op, results);
  return true;
}

/// Binarizer (ai.onnx.ml): 1 where x > threshold, else 0.
bool decomposeBinarizer(Operation *op) {
  Value x = op->getOperand(0);
  auto xt = staticType(x);
  if (!xt || !isFloat(xt.getElementType()))
    return false;
  OpBuilder b(op);
  GraphBuilder g(b, op->getLoc(), xt.getElementType());
  Value above = g.op("Greater", {x, g.scalar(getFloatAttr(op, "threshold", 0.0f))}, {},
                     b.getI1Type());
  Value y = g.op("Where", {above, g.scalar(1.0), g.scalar(0.0)});
  if (!staticType(y))
    return false;
  replaceResults(op, {y});
  return true;
}

/// The ai.onnx.ml preprocessors and linear model of scikit-learn pipelines,
/// as ONNX's reference computes them (in f32): Scaler (x - offset) *
/// scale; Normalizer x / max(norm of its row, 1e-30) for MAX, L1 or L2;
/// LinearRegressor x . coefficients^T + intercepts (post_transform NONE).
bool decomposeMlLinear(Operation *op) {
  Value x = op->getOperand(0);
  auto xt = staticType(x);
  if (!xt || !staticType(op->getResult(0)))
    return false;
  OpBuilder b(op);
  Type f32 = b.getF32Type();
  GraphBuilder g(b, op->getLoc(), f32);
  Value xf = castTo(g, x, f32);
  auto floats = [&](StringRef name) {
    SmallVector<double> v;
    if (auto a = op->getAttrOfType<ArrayAttr>(name))
      for (Attribute f : a)
        v.push_back(cast<FloatAttr>(f).getValueAsDouble());
    return v;
  };
  auto vector = [&](ArrayRef<double> v) {
    return floatConstant(g, f32, {(int64_t)v.size()}, v);
  };
  StringRef name = op->getName().stripDialect();
  Value y;
  if (name == "Scaler") {
    SmallVector<double> offset = floats("offset"), scale = floats("scale");
    y = xf;
    if (!offset.empty())
      y = g.op("Sub", {y, vector(offset)});
    if (!scale.empty())
      y = g.op("Mul", {y, vector(scale)});
  } else if (name == "Normalizer") {
    StringRef norm = getStrAttr(op, "norm", "MAX");
    if (xt.getRank() != 2 || (norm != "MAX" && norm != "L1" && norm != "L2"))
      return false;
    Value axes = g.ints({1});
    Value n = norm == "MAX"  ? g.op("ReduceMax", {g.op("Abs", {xf}), axes})
              : norm == "L1" ? g.op("ReduceSum", {g.op("Abs", {xf}), axes})
                             : g.op("Sqrt", {g.op("ReduceSum", {g.op("Mul", {xf, xf}), axes})});
    y = g.op("Div", {xf, g.op("Max", {n, g.scalar(1e-30)})});
  } else {
    int64_t targets = getIntAttr(op, "targets", 1);
    SmallVector<double> coef = floats("coefficients"), icpt = floats("intercepts");
    if (xt.getRank() != 2 || getStrAttr(op, "post_transform", "NONE") != "NONE" ||
        (int64_t)coef.size() != targets * xt.getDimSize(1) ||
        (!icpt.empty() && (int64_t)icpt.size() != targets))
      return false;
    Value w = floatConstant(g, f32, {targets, xt.getDimSize(1)}, coef);
    y = g.op("MatMul", {xf, g.op("Transpose", {w}, {g.perm({1, 0})})});
    if (!icpt.empty())
      y = g.op("Add", {y, vector(icpt)});
  }
  if (!y || staticType(y) != staticType(op->getResult(0)))
    return false;
  replaceResults(op, {y});
  return true;
}

/// ArrayFeatureExtractor (ai.onnx.ml): the last axis gathered at the
/// indices; a 1-D input gives [1, k].
bool decomposeArrayFeatureExtractor(Operation *op) {
  Value x = op->getOperand(0), idx = op->getOperand(1);
  auto xt = staticType(x), out = staticType(op->getResult(0));
  if (!xt || !staticType(idx) || !out)
    return false;
  OpBuilder b(op);
  GraphBuilder g(b, op->getLoc(), xt.getElementType());
  Value flat = g.op("Reshape", {idx, g.ints({-1})}, {}, b.getI64Type());
  Value y = g.op("Gather", {x, flat}, {g.attr("axis", xt.getRank() - 1)});
  if (xt.getRank() == 1)
    y = g.op("Reshape", {y, g.ints(out.getShape())});
  if (!staticType(y))
    return false;
  replaceResults(op, {y});
  return true;
}

/// FlexAttention (ai.onnx.preview): attention with its score_mod and
/// prob_mod subgraphs inlined, as ONNX's reference computes it: Q and K
/// each scaled by sqrt(scale) in the input type, the scores, the modifiers,
/// Softmax and the product with V in softmax_precision (f32 for 16-bit
/// inputs), the result cast back.
bool decomposeFlexAttention(Operation *op) {
  Value q = op->getOperand(0), k = op->getOperand(1), v = op->getOperand(2);
  auto qt = staticType(q), kt = staticType(k), vt = staticType(v);
  if (!qt || !kt || !vt || qt.getRank() != 4 || kt.getRank() != 4 || vt.getRank() != 4 ||
      !isFloat(qt.getElementType()) || kt.getDimSize(1) == 0 ||
      qt.getDimSize(1) % kt.getDimSize(1))
    return false;
  OpBuilder b(op);
  Type inElt = qt.getElementType();
  GraphBuilder g(b, op->getLoc(), inElt);
  double scale = 1.0 / std::sqrt((double)qt.getDimSize(3));
  if (auto a = op->getAttrOfType<FloatAttr>("scale"))
    scale = a.getValueAsDouble();
  Value s = g.scalar(std::sqrt((float)scale));
  int64_t heads = qt.getDimSize(1);
  Value kr = repeatHeads(g, k, heads), vr = repeatHeads(g, v, heads);
  Value scores = g.op("MatMul", {g.op("Mul", {q, s}),
                                 g.op("Transpose", {g.op("Mul", {kr, s})}, {g.perm({0, 1, 3, 2})})});
  Type compute = inElt.isF16() || inElt.isBF16() ? b.getF32Type() : inElt;
  if (auto p = op->getAttrOfType<IntegerAttr>("softmax_precision")) {
    compute = elementTypeOfDtype(b.getContext(), p.getInt());
    if (!compute || !isFloat(compute))
      return false;
  }
  GraphBuilder gc(b, op->getLoc(), compute);
  auto flex = cast<onnx::FlexAttentionOp>(op);
  auto modify = [&](Region &region, Value x) -> std::optional<Value> {
    if (region.empty())
      return x;
    auto yields = inlineBody(b, region.front(), {x});
    if (!yields || yields->size() != 1)
      return std::nullopt;
    return castTo(gc, (*yields)[0], compute);
  };
  auto scored = modify(flex.getScoreMod(), castTo(gc, scores, compute));
  if (!scored)
    return false;
  auto probs = modify(flex.getProbMod(), gc.op("Softmax", {*scored}, {gc.attr("axis", (int64_t)-1)}));
  if (!probs)
    return false;
  Value y = castTo(g, gc.op("MatMul", {*probs, castTo(gc, vr, compute)}), vt.getElementType());
  if (!staticType(y))
    return false;
  replaceResults(op, {y});
  return true;
}

/// STFT: frames gathered at f * frame_step + n, windowed, then one DFT over
/// the frame axis. frame_step and frame_length known only at run time are
/// taken from the result shape (the largest step that gives its frame
/// count; the window's length, or the even length with its bins) and
/// checked when the model runs.
bool decomposeStft(Operation *op) {
  Value signal = op->getOperand(0), step = op->getOperand(1);
  Value window = optionalOperand(op, 2), length = optionalOperand(op, 3);
  auto st = staticType(signal), out = staticType(op->getResult(0));
  if (!st || !out || st.getRank() != 3 || out.getRank() != 4)
    return false;
  bool onesided = getIntAttr(op, "onesided", 1) != 0;
  int64_t total = st.getDimSize(1), frames = out.getDimSize(1), bins = out.getDimSize(2);
  auto constant = [](Value v) -> std::optional<int64_t> {
    auto c = v ? getConstantInts(v) : std::nullopt;
    return c && c->size() == 1 ? std::optional<int64_t>((*c)[0]) : std::nullopt;
  };
  std::optional<int64_t> n = constant(length);
  if (!n && window)
    n = staticType(window) ? std::optional<int64_t>(staticType(window).getDimSize(0)) : std::nullopt;
  if (!n)
    n = onesided ? 2 * (bins - 1) : bins;
  std::optional<int64_t> hop = constant(step);
  if (!hop && frames > 1)
    hop = (total - *n) / (frames - 1);
  if (!hop && frames == 1)
    hop = 1; // one frame: the step does not matter
  if (*n <= 0 || *hop <= 0 || *n > total || (total - *n) / *hop + 1 != frames ||
      (onesided ? *n / 2 + 1 : *n) != bins)
    return false;
  OpBuilder b(op);
  Location loc = op->getLoc();
  GraphBuilder g(b, loc, st.getElementType());
  auto i1 = b.getI1Type();
  SmallVector<Value> checks;
  if (!constant(step) && frames > 1)
    checks.push_back(g.op("Equal", {castTo(g, step, b.getI64Type()), g.ints({*hop}, true)}, {}, i1));
  if (length && !constant(length))
    checks.push_back(g.op("Equal", {castTo(g, length, b.getI64Type()), g.ints({*n}, true)}, {}, i1));
  for (Value ok : checks)
    b.create<CheckOp>(loc, g.op("Reshape", {ok, g.ints({})}, {}, i1),
                      describeNode(op) + ": frame_step or frame_length (computed at run time) "
                                         "differs from the values the result shape implies (" +
                          std::to_string(*hop) + ", " + std::to_string(*n) + ")");
  SmallVector<int64_t> idx;
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t k = 0; k < *n; ++k)
      idx.push_back(f * *hop + k);
  Value indices = g.constant(DenseElementsAttr::get(
      RankedTensorType::get({frames, *n}, b.getI64Type()), ArrayRef<int64_t>(idx)));
  Value framesV = g.op("Gather", {signal, indices}, {g.attr("axis", (int64_t)1)});
  if (window)
    framesV = g.op("Mul", {framesV, g.op("Reshape", {window, g.ints({1, 1, *n, 1})})});
  Value y = g.op("DFT", {framesV, g.none(), g.ints({2}, true)}, {g.attr("onesided", (int64_t)onesided)});
  y.setType(out);
  replaceResults(op, {y});
  return true;
}

/// The rewrite of each op this pass decomposes.
const llvm::StringMap<bool (*)(Operation *)> &rewrites() {
  static const llvm::StringMap<bool (*)(Operation *)> table = {
      {"onnx.Attention", decomposeAttention},
      {"onnx.RMSNormalization", decomposeRmsNorm},
      {"onnx.DequantizeLinear", decomposeDequantize},
      {"onnx.QuantizeLinear", decomposeQuantize},
      {"onnx.DynamicQuantizeLinear", decomposeDynamicQuantize},
      {"onnx.MatMulInteger", decomposeMatMulInteger},
      {"onnx.ConvInteger", decomposeConvInteger},
      {"onnx.QLinearMatMul", decomposeQLinearMatMul},
      {"onnx.QLinearConv", decomposeQLinearConv},
      {"onnx.CausalConvWithState", decomposeCausalConv},
      {"onnx.ConvTranspose", decomposeConvTranspose},
      {"onnx.LinearAttention", decomposeLinearAttention},
      {"onnx.CumSum", [](Operation *op) { return decomposeScan(op, false); }},
      {"onnx.CumProd", [](Operation *op) { return decomposeScan(op, true); }},
      {"onnx.Loop", decomposeLoop},
      {"onnx.SequenceMap", decomposeSequenceMap},
      {"onnx.Scan", decomposeScanOp},
      {"onnx.MaxUnpool", decomposeMaxUnpool},
      {"onnx.TensorScatter", decomposeTensorScatter},
      {"onnx.Det", decomposeDet},
      {"onnx.Momentum", decomposeOptimizer},
      {"onnx.Adagrad", decomposeOptimizer},
      {"onnx.Adam", decomposeOptimizer},
      {"onnx.Binarizer", decomposeBinarizer},
      {"onnx.FlexAttention", decomposeFlexAttention},
      {"onnx.STFT", decomposeStft},
      {"onnx.ArrayFeatureExtractor", decomposeArrayFeatureExtractor},
      {"onnx.Scaler", decomposeMlLinear},
      {"onnx.Normalizer", decomposeMlLinear},
      {"onnx.LinearRegressor", decomposeMlLinear}};
  return table;
}

struct DecomposeOpsPass : public impl::DecomposeOpsBase<DecomposeOpsPass> {
  void runOnOperation() override {
    // In program order, re-typing the ops after a rewrite so that later
    // rewrites see static shapes.
    SmallVector<Operation *> all;
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) { all.push_back(op); });
    bool changed = false;
    llvm::DenseSet<Operation *> erased;
    for (Operation *op : all) {
      // (Before anything reads the op: an erased one is freed.)
      if (erased.contains(op))
        continue;
      StringRef n = op->getName().getStringRef();
      auto found = rewrites().find(n);
      bool (*rewrite)(Operation *) =
          found == rewrites().end() ? nullptr : found->second;
      if (!rewrite) {
        if (changed && failed(inferShapesFor(op)))
          return signalPassFailure();
        continue;
      }
      // A rewrite that gives up part-way leaves the op; the ops it built
      // (all inserted right before it) go again.
      Block *block = op->getBlock();
      Operation *prev = op->getPrevNode();
      // The ops of a rewritten op's regions (Loop's body) go with it.
      SmallVector<Operation *> nested;
      op->walk([&](Operation *inner) {
        if (inner != op)
          nested.push_back(inner);
      });
      if (rewrite(op)) {
        erased.insert(nested.begin(), nested.end());
        changed = true;
        continue;
      }
      SmallVector<Operation *> built;
      for (Operation *it = prev ? prev->getNextNode() : &block->front(); it != op; it = it->getNextNode())
        built.push_back(it);
      for (Operation *dead : llvm::reverse(built))
        dead->erase();
    }
    if (!changed)
      return;
    // Results are typed now; keep the function's signature in step.
    func::FuncOp func = getOperation();
    func.setFunctionType(FunctionType::get(func.getContext(), func.getArgumentTypes(),
                                           func.getBody().front().getTerminator()->getOperandTypes()));
  }
};

} // namespace
} // namespace kiln
