//===- DecomposeRecurrent.cpp - LSTM/GRU/RNN as onnx ops --------*- C++ -*-===//
//
// A recurrent op becomes onnx ops that every provider already lowers: the
// input projections of all steps as one MatMul, then per step h times R
// and the gate math (Gather, MatMul, Add, Slice, the activations). A short
// static sequence is unrolled (straight-line code that the static arena
// planner and the CUDA offload see as ordinary ops); a longer or run-time
// one is an onnx.Loop over the steps that keeps its loop (kKeepLoopAttr),
// each step's row written into the output in place (ScatterND).
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/OnnxOps.h"
#include "dialects/onnx/ShapeInference.h"
#include "passes/GraphBuilder.h"
#include "passes/NodeName.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace kiln::onnx;

namespace kiln {
#define GEN_PASS_DEF_DECOMPOSERECURRENT
#include "passes/Passes.h.inc"

namespace {

struct Activation {
  std::string name;
  float alpha = 0, beta = 0;
  bool hasAlpha = false, hasBeta = false;
};

LogicalResult applyActivation(GraphBuilder &g, const Activation &a, Value x, Value &out) {
  StringRef n = a.name;
  SmallVector<NamedAttribute> attrs;
  if (a.hasAlpha)
    attrs.push_back(g.attr("alpha", a.alpha));
  if (a.hasBeta)
    attrs.push_back(g.attr("beta", a.beta));
  if (n.equals_insensitive("sigmoid") || n.equals_insensitive("tanh") ||
      n.equals_insensitive("relu") || n.equals_insensitive("softsign") ||
      n.equals_insensitive("softplus")) {
    std::string canon = n.equals_insensitive("sigmoid")    ? "Sigmoid"
                        : n.equals_insensitive("tanh")     ? "Tanh"
                        : n.equals_insensitive("relu")     ? "Relu"
                        : n.equals_insensitive("softsign") ? "Softsign"
                                                           : "Softplus";
    out = g.op(canon, {x});
    return success();
  }
  for (StringRef withParams : {"HardSigmoid", "LeakyRelu", "ThresholdedRelu", "Elu"})
    if (n.equals_insensitive(withParams)) {
      out = g.op(withParams, {x}, attrs);
      return success();
    }
  if (n.equals_insensitive("affine")) {
    out = g.op("Add", {g.op("Mul", {x, g.scalar(a.alpha)}), g.scalar(a.beta)});
    return success();
  }
  if (n.equals_insensitive("scaledtanh")) {
    out = g.op("Mul", {g.op("Tanh", {g.op("Mul", {x, g.scalar(a.beta)})}), g.scalar(a.alpha)});
    return success();
  }
  return failure();
}

enum class Kind { RNN, GRU, LSTM };

// Longer static sequences run as a Loop over their steps, as run-time ones
// do: unrolled, a 2-layer LSTM over 100 steps took 31 s to compile (0.7 s
// as a loop) and ran no faster.
constexpr int64_t kMaxUnrolledSteps = 16;

bool isStatic(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape();
}

/// Whether X, W and R have static shapes. The initial states need not:
/// their shape follows from X's and W's, and a state computed from the
/// previous layer's output (PyTorch's exports Expand zeros to a Shape of it)
/// is reshaped to it, so that stacked layers unroll in one round.
bool hasStaticInputs(Operation *op, Kind kind) {
  for (unsigned i : {0u, 1u, 2u})
    if (i < op->getNumOperands() && !isNone(op->getOperand(i)) && !isStatic(op->getOperand(i)))
      return false;
  return true;
}

/// With run-time sizes, X (and the initial states) may have a sequence and
/// batch of run-time size: the weights and X's feature dim stay static.
bool runtimeSizesOk(Operation *op) {
  auto module = op->getParentOfType<ModuleOp>();
  if (!module || !module->hasAttr("kiln.runtime_sizes"))
    return false;
  auto x = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (!x || x.getRank() != 3 || x.isDynamicDim(2))
    return false;
  for (unsigned i : {1u, 2u, 3u, 7u})
    if (i < op->getNumOperands() && !isNone(op->getOperand(i)) && !isStatic(op->getOperand(i)))
      return false;
  for (unsigned i : {5u, 6u})
    if (i < op->getNumOperands() && !isNone(op->getOperand(i)) &&
        !isa<RankedTensorType>(op->getOperand(i).getType()))
      return false;
  return true;
}

LogicalResult decompose(Operation *op, Kind kind) {
  auto fail = [&](const Twine &why) { return emitNodeError(op) << why; };
  if (!hasStaticInputs(op, kind) && !runtimeSizesOk(op))
    return fail("needs static shapes for X, W, R and the initial states (with run-time sizes: "
                "static W, R, B and input size)");
  auto x0 = cast<RankedTensorType>(op->getOperand(0).getType());
  auto w = cast<RankedTensorType>(op->getOperand(1).getType());
  Type elt = x0.getElementType();
  if (!elt.isF32())
    return fail("only float32 is supported");
  int64_t layout = getIntAttr(op, "layout", 0);
  int64_t hidden = getIntAttr(op, "hidden_size", w.getDimSize(1) / (kind == Kind::LSTM ? 4 : kind == Kind::GRU ? 3 : 1));
  StringRef direction = getStrAttr(op, "direction", "forward");
  int64_t dirs = direction == "bidirectional" ? 2 : 1;
  int64_t gates = kind == Kind::LSTM ? 4 : kind == Kind::GRU ? 3 : 1;
  float clip = getFloatAttr(op, "clip", 0.0f);
  bool hasClip = op->hasAttr("clip");
  bool inputForget = getIntAttr(op, "input_forget", 0) != 0;
  bool linearBeforeReset = getIntAttr(op, "linear_before_reset", 0) != 0;
  auto operand = [&](unsigned i) {
    return i < op->getNumOperands() && !isNone(op->getOperand(i)) ? op->getOperand(i) : Value();
  };
  // Per-batch lengths: full lengths need nothing; otherwise forward
  // directions mask finished rows (their state stops, their outputs are 0).
  Value lens = operand(4);
  if (lens) {
    auto v = getConstantInts(lens);
    int64_t seqLen = x0.getDimSize(layout == 0 ? 0 : 1);
    if (v && llvm::all_of(*v, [&](int64_t l) { return l == seqLen; }))
      lens = Value();
    else if (getStrAttr(op, "direction", "forward") != "forward")
      return fail("sequence_lens with reverse or bidirectional directions is not supported");
  }

  // Activations: per direction, `gates==4 ? 3 : 2 : 1` functions.
  int64_t perDir = kind == Kind::LSTM ? 3 : kind == Kind::GRU ? 2 : 1;
  SmallVector<Activation> acts;
  auto names = op->getAttrOfType<ArrayAttr>("activations");
  auto alphas = op->getAttrOfType<ArrayAttr>("activation_alpha");
  auto betas = op->getAttrOfType<ArrayAttr>("activation_beta");
  for (int64_t i = 0; i < perDir * dirs; ++i) {
    Activation a;
    if (names && (int64_t)names.size() > i)
      a.name = cast<StringAttr>(names[i]).str();
    else
      a.name = (i % perDir == 0) ? (kind == Kind::RNN ? "Tanh" : "Sigmoid") : "Tanh";
    if (alphas && (int64_t)alphas.size() > i) {
      a.alpha = cast<FloatAttr>(alphas[i]).getValueAsDouble();
      a.hasAlpha = true;
    }
    if (betas && (int64_t)betas.size() > i) {
      a.beta = cast<FloatAttr>(betas[i]).getValueAsDouble();
      a.hasBeta = true;
    }
    acts.push_back(a);
  }

  OpBuilder b(op);
  GraphBuilder g(b, op->getLoc(), elt);
  if (lens && !cast<ShapedType>(lens.getType()).getElementType().isInteger(64))
    lens = g.op("Cast", {lens}, {g.attr("to", (int64_t)7 /*INT64*/)}, b.getI64Type());
  Value x = op->getOperand(0);
  if (layout == 1)
    x = g.op("Transpose", {x}, {g.perm({1, 0, 2})});
  int64_t seq = x0.getDimSize(layout == 0 ? 0 : 1);
  int64_t batch = x0.getDimSize(layout == 0 ? 1 : 0);
  Value r = op->getOperand(2), bias = operand(3), h0 = operand(5);
  Value c0 = kind == Kind::LSTM ? operand(6) : Value();
  Value peep = kind == Kind::LSTM ? operand(7) : Value();
  auto staticState = [&](Value s) {
    if (!s || isStatic(s) || ShapedType::isDynamic(batch))
      return s;
    return g.op("Reshape", {s, layout == 0 ? g.ints({dirs, batch, hidden})
                                           : g.ints({batch, dirs, hidden})});
  };
  h0 = staticState(h0);
  c0 = staticState(c0);
  if (layout == 1) {
    if (h0)
      h0 = g.op("Transpose", {h0}, {g.perm({1, 0, 2})});
    if (c0)
      c0 = g.op("Transpose", {c0}, {g.perm({1, 0, 2})});
  }

  Type i64 = b.getI64Type();
  // [batch, hidden] zeros; a batch of run-time size reads X's shape.
  auto zerosBH = [&](GraphBuilder &gb) -> Value {
    if (!ShapedType::isDynamic(batch))
      return gb.zeros({batch, hidden});
    Value shape = gb.op("Concat",
                        {gb.op("Slice", {gb.op("Shape", {x}, {}, i64), gb.ints({1}), gb.ints({2}),
                                         gb.ints({0}), gb.ints({1})},
                               {}, i64),
                         gb.ints({hidden})},
                        {gb.attr("axis", (int64_t)0)}, i64);
    auto zero = DenseElementsAttr::get(RankedTensorType::get({1}, elt), b.getZeroAttr(elt));
    Value z = gb.op("ConstantOfShape", {shape}, {b.getNamedAttr("value", zero)});
    // (Inference cannot see the constant hidden size in a computed shape.)
    z.setType(RankedTensorType::get({batch, hidden}, elt));
    return z;
  };
  SmallVector<Value> ys, hs, cs;
  for (int64_t d = 0; d < dirs; ++d) {
    bool reverse = direction == "reverse" || d == 1;
    Value wT = g.op("Transpose", {g.pick(op->getOperand(1), d)}, {g.perm({1, 0})});
    Value rd = g.pick(r, d);
    Value rT = g.op("Transpose", {rd}, {g.perm({1, 0})});
    Value wb, rb;
    if (bias) {
      Value bd = g.pick(bias, d);
      wb = g.slice(bd, 0, gates * hidden, 0);
      rb = g.slice(bd, gates * hidden, 2 * gates * hidden, 0);
    }
    // The input projections of every step at once, before the steps: one
    // GEMM over [seq * batch, input] where each step would read all of W
    // for one row; R's bias joins W's wherever it is added to the sum
    // as is (GRU's linear_before_reset keeps the h gate's inside the
    // product that the reset gate scales).
    Value xwAll = g.op("MatMul", {x, wT});
    Value rbKept;
    if (bias) {
      Value rbJoined = rb;
      if (kind == Kind::GRU && linearBeforeReset) {
        rbJoined =
            g.op("Concat", {g.slice(rb, 0, 2 * hidden, 0), g.zeros({hidden})},
                 {g.attr("axis", (int64_t)0)});
        rbKept = g.slice(rb, 2 * hidden, 3 * hidden, 0);
      }
      xwAll = g.op("Add", {xwAll, g.op("Add", {wb, rbJoined})});
    }
    Value h = h0 ? g.pick(h0, d) : zerosBH(g);
    Value c = kind == Kind::LSTM ? (c0 ? g.pick(c0, d) : zerosBH(g)) : Value();
    Value pi, po, pf;
    if (peep) {
      Value pd = g.pick(peep, d);
      pi = g.slice(pd, 0, hidden, 0);
      po = g.slice(pd, hidden, 2 * hidden, 0);
      pf = g.slice(pd, 2 * hidden, 3 * hidden, 0);
    }
    const Activation *f = &acts[d * perDir];
    const Activation *gAct = perDir > 1 ? &acts[d * perDir + 1] : nullptr;
    const Activation *hAct = perDir > 2 ? &acts[d * perDir + 2] : nullptr;
    auto act = [&](GraphBuilder &g, const Activation *a, Value v, Value &out) -> LogicalResult {
      if (hasClip)
        v = g.op("Clip", {v, g.scalar(-clip), g.scalar(clip)});
      if (failed(applyActivation(g, *a, v, out)))
        return fail("activation \"" + a->name + "\" is not supported");
      return success();
    };
    // One time step on `g`'s insertion point: h (and c) advance; `out` is
    // the step's output row. `tScalar` is the step's index (i64 scalar).
    // `xw` is the step's row of xwAll: [batch, gates * hidden].
    auto step = [&](GraphBuilder &g, Value xw, Value tScalar, Value &out) -> LogicalResult {
      Value prevH = h, prevC = c;
      auto part = [&](Value v, int64_t k) { return g.slice(v, k * hidden, (k + 1) * hidden, 1); };
      if (kind == Kind::LSTM) {
        Value sum = g.op("Add", {xw, g.op("MatMul", {h, rT})});
        Value i = part(sum, 0), o = part(sum, 1), fg = part(sum, 2), cc = part(sum, 3);
        if (pi) {
          i = g.op("Add", {i, g.op("Mul", {pi, c})});
          fg = g.op("Add", {fg, g.op("Mul", {pf, c})});
        }
        if (failed(act(g, f, i, i)) || failed(act(g, gAct, cc, cc)))
          return failure();
        if (inputForget)
          fg = g.op("Sub", {g.scalar(1.0), i});
        else if (failed(act(g, f, fg, fg)))
          return failure();
        c = g.op("Add", {g.op("Mul", {fg, c}), g.op("Mul", {i, cc})});
        if (po)
          o = g.op("Add", {o, g.op("Mul", {po, c})});
        Value hc;
        if (failed(act(g, f, o, o)) || failed(applyActivation(g, *hAct, c, hc)))
          return fail("activation \"" + hAct->name + "\" is not supported");
        h = g.op("Mul", {o, hc});
      } else if (kind == Kind::GRU) {
        // Gates z, r, h. h times R's z and r parts is one product (with
        // linear_before_reset all three are): one pass over the weights.
        auto rT2 = [&](int64_t k0, int64_t k1) {
          return g.op("Transpose", {g.slice(rd, k0 * hidden, k1 * hidden, 0)}, {g.perm({1, 0})});
        };
        Value hr = g.op("MatMul", {h, linearBeforeReset ? rT : rT2(0, 2)});
        Value z = g.op("Add", {part(xw, 0), part(hr, 0)});
        Value rr = g.op("Add", {part(xw, 1), part(hr, 1)});
        if (failed(act(g, f, z, z)) || failed(act(g, f, rr, rr)))
          return failure();
        Value hh;
        if (linearBeforeReset) {
          Value hrh = part(hr, 2);
          if (rbKept)
            hrh = g.op("Add", {hrh, rbKept});
          hh = g.op("Add", {part(xw, 2), g.op("Mul", {rr, hrh})});
        } else {
          hh = g.op("Add", {part(xw, 2), g.op("MatMul", {g.op("Mul", {rr, h}), rT2(2, 3)})});
        }
        if (failed(act(g, gAct, hh, hh)))
          return failure();
        h = g.op("Add", {g.op("Mul", {g.op("Sub", {g.scalar(1.0), z}), hh}), g.op("Mul", {z, h})});
      } else {
        Value sum = g.op("Add", {xw, g.op("MatMul", {h, rT})});
        if (failed(act(g, f, sum, h)))
          return failure();
      }
      out = h;
      if (lens) {
        // Rows whose sequence ended keep their state and emit zeros.
        Value alive = g.op("Unsqueeze", {g.op("Less", {tScalar, lens}), g.ints({1})});
        h = g.op("Where", {alive, h, prevH});
        if (c)
          c = g.op("Where", {alive, c, prevC});
        out = g.op("Where", {alive, h, zerosBH(g)});
      }
      return success();
    };
    if (!ShapedType::isDynamic(seq) && seq <= kMaxUnrolledSteps) {
      SmallVector<Value> steps(seq);
      for (int64_t s = 0; s < seq; ++s) {
        int64_t t = reverse ? seq - 1 - s : s;
        Value out;
        if (failed(step(g, g.pick(xwAll, t), g.ints({t}, true), out)))
          return failure();
        steps[t] = g.op("Unsqueeze", {out, g.ints({0})});
      }
      ys.push_back(g.op("Unsqueeze", {g.op("Concat", steps, {g.attr("axis", (int64_t)0)}), g.ints({1})}));
    } else {
      // A sequence of run-time length: a Loop over its steps carrying h
      // (and c) and the output [seq, batch, hidden], each step's row
      // written by ScatterND.
      Value shape = g.op("Shape", {x}, {}, i64);
      Value trip = g.op("Gather", {shape, g.ints({0}, true)}, {g.attr("axis", (int64_t)0)}, i64);
      Value yShape = g.op("Concat",
                          {g.op("Slice", {shape, g.ints({0}), g.ints({2}), g.ints({0}), g.ints({1})},
                                {}, i64),
                           g.ints({hidden})},
                          {g.attr("axis", (int64_t)0)}, i64);
      auto zero = DenseElementsAttr::get(RankedTensorType::get({1}, elt), b.getZeroAttr(elt));
      Value y0 = g.op("ConstantOfShape", {yShape}, {b.getNamedAttr("value", zero)});
      y0.setType(RankedTensorType::get({seq, batch, hidden}, elt));
      SmallVector<Value> carried = {h};
      if (c)
        carried.push_back(c);
      carried.push_back(y0);
      SmallVector<Value> operands = {trip, g.none()};
      operands.append(carried);
      OperationState state(op->getLoc(), "onnx.Loop");
      state.addOperands(operands);
      for (Value v : carried)
        state.addTypes(v.getType());
      state.addRegion();
      Operation *loop = b.create(state);
      loop->setAttr(kKeepLoopAttr, b.getUnitAttr());
      Block *body = new Block();
      loop->getRegion(0).push_back(body);
      Value iter = body->addArgument(RankedTensorType::get({}, i64), op->getLoc());
      Value cond = body->addArgument(RankedTensorType::get({}, b.getI1Type()), op->getLoc());
      for (Value v : carried)
        body->addArgument(v.getType(), op->getLoc());
      OpBuilder bb = OpBuilder::atBlockBegin(body);
      GraphBuilder gb(bb, op->getLoc(), elt);
      h = body->getArgument(2);
      if (c)
        c = body->getArgument(3);
      Value yAcc = body->getArgument(body->getNumArguments() - 1);
      Value t = reverse ? gb.op("Sub", {gb.op("Sub", {trip, gb.ints({1}, true)}, {}, i64), iter}, {}, i64)
                        : iter;
      Value out;
      if (failed(step(gb, gb.op("Gather", {xwAll, t}, {gb.attr("axis", (int64_t)0)}), t, out)))
        return failure();
      Value at = gb.op("Reshape", {t, gb.ints({1, 1})}, {}, i64);
      Value yNext = gb.op("ScatterND", {yAcc, at, gb.op("Unsqueeze", {out, gb.ints({0})})});
      SmallVector<Value> yields = {cond, h};
      if (c)
        yields.push_back(c);
      yields.push_back(yNext);
      OperationState y(op->getLoc(), "onnx.Yield");
      y.addOperands(yields);
      bb.create(y);
      if (failed(inferShapesFor(loop)))
        return failure();
      h = loop->getResult(0);
      if (c)
        c = loop->getResult(1);
      ys.push_back(g.op("Unsqueeze", {loop->getResults().back(), g.ints({1})}));
    }

    hs.push_back(g.op("Unsqueeze", {h, g.ints({0})}));
    if (c)
      cs.push_back(g.op("Unsqueeze", {c, g.ints({0})}));
  }
  auto join = [&](ArrayRef<Value> vs, int64_t axis) {
    return vs.size() == 1 ? vs[0] : g.op("Concat", vs, {g.attr("axis", axis)});
  };
  Value y = join(ys, 1), yh = join(hs, 0), yc = cs.empty() ? Value() : join(cs, 0);
  if (layout == 1) {
    y = g.op("Transpose", {y}, {g.perm({2, 0, 1, 3})});
    yh = g.op("Transpose", {yh}, {g.perm({1, 0, 2})});
    if (yc)
      yc = g.op("Transpose", {yc}, {g.perm({1, 0, 2})});
  }
  Value results[] = {y, yh, yc};
  for (unsigned i = 0; i < op->getNumResults(); ++i)
    if (!op->getResult(i).use_empty())
      op->getResult(i).replaceAllUsesWith(results[i]);
  op->erase();
  return success();
}

struct DecomposeRecurrentPass
    : public impl::DecomposeRecurrentBase<DecomposeRecurrentPass> {
  using DecomposeRecurrentBase::DecomposeRecurrentBase;
  void runOnOperation() override {
    // In program order, re-typing the ops between recurrent ops, so that a
    // second LSTM fed by the first sees its input's shape.
    SmallVector<Operation *> all;
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) { all.push_back(op); });
    bool changed = false;
    for (Operation *op : all) {
      StringRef n = op->getName().getStringRef();
      std::optional<Kind> kind;
      if (n == "onnx.LSTM")
        kind = Kind::LSTM;
      else if (n == "onnx.GRU")
        kind = Kind::GRU;
      else if (n == "onnx.RNN")
        kind = Kind::RNN;
      if (!kind) {
        if (changed && failed(inferShapesFor(op)))
          return signalPassFailure();
        continue;
      }
      // (With run-time sizes an op of dynamic X unrolls into a Loop now:
      // folding will not make X static, and the weights' transposes fold
      // only if they exist before it.)
      if (skipDynamic && !hasStaticInputs(op, *kind) && !runtimeSizesOk(op))
        continue;
      if (failed(decompose(op, *kind)))
        return signalPassFailure();
      changed = true;
    }
    bool ops = changed;
    // Results are typed now; keep the function's signature in step.
    func::FuncOp func = getOperation();
    if (ops)
      func.setFunctionType(FunctionType::get(
          func.getContext(), func.getArgumentTypes(),
          func.getBody().front().getTerminator()->getOperandTypes()));
  }
};

} // namespace
} // namespace kiln
