//===- ImportMicrosoft.cpp - com.microsoft's ops --------------------------===//
//
// onnxruntime.quantization's QOperator format writes, besides the default
// domain's QLinearConv and QLinearMatMul, ops of ONNX Runtime's own
// com.microsoft domain: QLinearAdd, QGemm, QLinearGlobalAveragePool, ...
// Each is defined as "dequantize the inputs, run the float op, quantize the
// result", so the importer writes it so, with default-domain ops. The graph
// is then what the QDQ format would have written, and kiln-fuse-quantized
// turns its products into integer kernels the same way. The float ops that
// ONNX Runtime's transformer optimizer writes (Gelu, FastGelu, BiasGelu,
// QuickGelu, SkipLayerNormalization, FusedMatMul) are their definitions too.
//
//===----------------------------------------------------------------------===//

#include "compiler/ImportMicrosoft.h"
#include "dialects/onnx/OnnxOps.h"
#include "passes/GraphBuilder.h"

#include "kiln_onnx.pb.h"

using namespace mlir;
namespace pb = kiln_onnx;

namespace kiln {
namespace {

class Expander {
public:
  Expander(OpBuilder &b, Location loc, const pb::NodeProto &node,
           ArrayRef<Value> inputs, std::string &why)
      : g(b, loc, b.getF32Type()), node(node), inputs(inputs), why(why) {}

  FailureOr<SmallVector<Value>> run();

private:
  Value input(unsigned i) const {
    return i < inputs.size() ? inputs[i] : Value();
  }
  const pb::AttributeProto *attribute(StringRef name) const {
    for (const auto &a : node.attribute())
      if (a.name() == name)
        return &a;
    return nullptr;
  }
  int64_t intAttr(StringRef name, int64_t dflt) const {
    const pb::AttributeProto *a = attribute(name);
    return a ? a->i() : dflt;
  }
  /// The named attributes that carry over to the float op unchanged.
  SmallVector<NamedAttribute> passThrough(ArrayRef<StringRef> names) const;
  /// Fails with `why` unless inputs `required` are all present.
  LogicalResult require(ArrayRef<unsigned> required);

  Type elementType(Value v) const {
    return cast<ShapedType>(v.getType()).getElementType();
  }
  Value orNone(Value v) { return v ? v : g.none(); }
  Value dequantize(Value x, Value scale, Value zeroPoint, int64_t axis = 1) {
    return g.op<onnx::DequantizeLinearOp>({x, scale, orNone(zeroPoint)},
                                          {g.attr("axis", axis)});
  }
  /// An absent zero point is 0 of the quantized type `qt`, which then also
  /// names the result's type (QuantizeLinear's default would be uint8).
  Value quantize(Value y, Value scale, Value zeroPoint, Type qt) {
    if (!zeroPoint)
      zeroPoint = g.constant(DenseElementsAttr::get(
          RankedTensorType::get({}, qt), g.b.getZeroAttr(qt)));
    return g.op<onnx::QuantizeLinearOp>({y, scale, zeroPoint}, {}, qt);
  }
  /// NHWC <-> NCHW around a pool that ONNX defines on NCHW only.
  Value channelsFirst(Value x, bool back);

  GraphBuilder g;
  const pb::NodeProto &node;
  ArrayRef<Value> inputs;
  std::string &why;
};

SmallVector<NamedAttribute>
Expander::passThrough(ArrayRef<StringRef> names) const {
  SmallVector<NamedAttribute> attrs;
  OpBuilder &b = g.b;
  for (StringRef name : names) {
    const pb::AttributeProto *a = attribute(name);
    if (!a)
      continue;
    Attribute value;
    switch (a->type()) {
    case pb::AttributeProto::INT:
      value = b.getI64IntegerAttr(a->i());
      break;
    case pb::AttributeProto::FLOAT:
      value = b.getF32FloatAttr(a->f());
      break;
    case pb::AttributeProto::STRING:
      value = b.getStringAttr(a->s());
      break;
    case pb::AttributeProto::INTS:
      value = b.getI64ArrayAttr(
          SmallVector<int64_t>(a->ints().begin(), a->ints().end()));
      break;
    default:
      continue;
    }
    attrs.push_back(b.getNamedAttr(name, value));
  }
  return attrs;
}

LogicalResult Expander::require(ArrayRef<unsigned> required) {
  for (unsigned i : required)
    if (!input(i)) {
      why = "input " + std::to_string(i) + " is required";
      return failure();
    }
  return success();
}

Value Expander::channelsFirst(Value x, bool back) {
  auto t = dyn_cast<RankedTensorType>(x.getType());
  if (!t || t.getRank() < 3)
    return Value();
  int64_t rank = t.getRank();
  SmallVector<int64_t> perm = {0};
  if (back) { // NCHW -> NHWC
    for (int64_t i = 2; i < rank; ++i)
      perm.push_back(i);
    perm.push_back(1);
  } else { // NHWC -> NCHW
    perm.push_back(rank - 1);
    for (int64_t i = 1; i < rank - 1; ++i)
      perm.push_back(i);
  }
  return g.op<onnx::TransposeOp>({x}, {g.perm(perm)}, t.getElementType());
}

FailureOr<SmallVector<Value>> Expander::run() {
  StringRef op = node.op_type();
  // The unary ops: X, X_scale, X_zero_point, Y_scale, Y_zero_point.
  auto unary = [&](auto &&floatOp) -> FailureOr<SmallVector<Value>> {
    if (failed(require({0, 1, 3})))
      return failure();
    Value x = dequantize(input(0), input(1), input(2));
    Value y = floatOp(x);
    if (!y)
      return failure();
    return SmallVector<Value>{
        quantize(y, input(3), input(4), elementType(input(0)))};
  };
  if (op == "QLinearAdd" || op == "QLinearMul") {
    if (failed(require({0, 1, 3, 4, 6})))
      return failure();
    Value a = dequantize(input(0), input(1), input(2));
    Value b = dequantize(input(3), input(4), input(5));
    Value c = op == "QLinearAdd" ? g.op<onnx::AddOp>({a, b})
                                 : g.op<onnx::MulOp>({a, b});
    return SmallVector<Value>{
        quantize(c, input(6), input(7), elementType(input(0)))};
  }
  if (op == "QLinearSigmoid")
    return unary([&](Value x) { return g.op<onnx::SigmoidOp>({x}); });
  if (op == "QLinearLeakyRelu") {
    const pb::AttributeProto *alpha = attribute("alpha");
    float a = alpha ? alpha->f() : 0.01f;
    return unary([&](Value x) {
      return g.op<onnx::LeakyReluOp>({x}, {g.attr("alpha", a)});
    });
  }
  if (op == "QLinearGlobalAveragePool" || op == "QLinearAveragePool") {
    bool last = intAttr("channels_last", 0);
    bool global = op == "QLinearGlobalAveragePool";
    SmallVector<NamedAttribute> attrs =
        global ? SmallVector<NamedAttribute>()
               : passThrough({"auto_pad", "ceil_mode", "count_include_pad",
                              "kernel_shape", "pads", "strides"});
    return unary([&](Value x) -> Value {
      if (last && !(x = channelsFirst(x, false))) {
        why = "channels_last needs a ranked input of rank 3 or more";
        return Value();
      }
      Value y = global ? g.op<onnx::GlobalAveragePoolOp>({x})
                       : g.op<onnx::AveragePoolOp>({x}, attrs);
      return last ? channelsFirst(y, true) : y;
    });
  }
  if (op == "QLinearSoftmax") {
    if (!attribute("opset")) {
      why = "attribute \"opset\" is required";
      return failure();
    }
    SmallVector<NamedAttribute> attrs = {g.attr("axis", intAttr("axis", -1))};
    // Before opset 13, Softmax flattens the input at `axis` into 2-D.
    if (intAttr("opset", 13) < 13)
      attrs.push_back(g.attr("onnx.version", int64_t(11)));
    return unary([&](Value x) { return g.op<onnx::SoftmaxOp>({x}, attrs); });
  }
  if (op == "QLinearReduceMean") {
    const pb::AttributeProto *axes = attribute("axes");
    if (!axes || !attribute("keepdims")) {
      why = "attributes \"axes\" and \"keepdims\" are required";
      return failure();
    }
    SmallVector<int64_t> list(axes->ints().begin(), axes->ints().end());
    return unary([&](Value x) {
      return g.op<onnx::ReduceMeanOp>(
          {x, g.ints(list)}, {g.attr("keepdims", intAttr("keepdims", 1))});
    });
  }
  if (op == "QLinearConcat") {
    // Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) per input.
    if (inputs.size() < 5 || (inputs.size() - 2) % 3 != 0) {
      why = "inputs must be Y_scale, Y_zero_point and triples of X, "
            "X_scale, X_zero_point";
      return failure();
    }
    if (!attribute("axis")) {
      why = "attribute \"axis\" is required";
      return failure();
    }
    SmallVector<Value> parts;
    for (unsigned i = 2; i < inputs.size(); i += 3) {
      if (failed(require({0, 1, i, i + 1})))
        return failure();
      parts.push_back(dequantize(input(i), input(i + 1), input(i + 2)));
    }
    Value y = g.op<onnx::ConcatOp>(parts, {g.attr("axis", intAttr("axis", 0))});
    return SmallVector<Value>{
        quantize(y, input(0), input(1), elementType(input(1)))};
  }
  if (op == "QLinearWhere") {
    if (failed(require({0, 1, 2, 4, 5, 7})))
      return failure();
    Value x = dequantize(input(1), input(2), input(3));
    Value y = dequantize(input(4), input(5), input(6));
    Value z = g.op<onnx::WhereOp>({input(0), x, y});
    return SmallVector<Value>{
        quantize(z, input(7), input(8), elementType(input(1)))};
  }
  if (op == "QGemm") {
    // A, a_scale, a_zero_point, B, b_scale, b_zero_point, C, y_scale,
    // y_zero_point. B's scale may be one per column of the product; C is
    // int32 at scale a_scale * b_scale; without y_scale, Y is float.
    if (failed(require({0, 1, 3, 4})))
      return failure();
    bool transB = intAttr("transB", 0);
    Value a = dequantize(input(0), input(1), input(2));
    Value bm = dequantize(input(3), input(4), input(5), transB ? 0 : 1);
    Value c = input(6);
    if (c)
      c = dequantize(c, g.op<onnx::MulOp>({input(1), input(4)}), Value(), 0);
    SmallVector<NamedAttribute> attrs =
        passThrough({"alpha", "transA", "transB"});
    Value y = g.op<onnx::GemmOp>({a, bm, orNone(c)}, attrs);
    if (input(7))
      y = quantize(y, input(7), input(8),
                   input(8) ? elementType(input(8)) : elementType(input(0)));
    return SmallVector<Value>{y};
  }
  // Float ops that ONNX Runtime's transformer optimizer writes (an
  // "optimized" BERT or GPT-2 export), as their definitions in default-
  // domain ops. (Attention and EmbedLayerNormalization are not.)
  auto like = [&](Value x, double v) {
    Type t = elementType(x);
    return g.constant(DenseElementsAttr::get(RankedTensorType::get({}, t),
                                             g.b.getFloatAttr(t, v)));
  };
  auto gelu = [&](Value x, StringRef approximate) {
    return g.op<onnx::GeluOp>(
        {x}, {g.b.getNamedAttr("approximate", g.b.getStringAttr(approximate))},
        elementType(x));
  };
  auto withBias = [&](Value x, Value bias) {
    return bias ? g.op<onnx::AddOp>({x, bias}, {}, elementType(x)) : x;
  };
  if (op == "Gelu" || op == "BiasGelu" || op == "FastGelu") {
    if (failed(require({0})) || (op == "BiasGelu" && failed(require({1}))))
      return failure();
    Value x = withBias(input(0), input(1));
    return SmallVector<Value>{gelu(x, op == "FastGelu" ? "tanh" : "none")};
  }
  if (op == "QuickGelu") { // x * sigmoid(alpha * x)
    if (failed(require({0})))
      return failure();
    Value x = input(0);
    const pb::AttributeProto *a = attribute("alpha");
    Value scaled = g.op<onnx::MulOp>({x, like(x, a ? a->f() : 1.702)}, {},
                                     elementType(x));
    Value s = g.op<onnx::SigmoidOp>({scaled}, {}, elementType(x));
    return SmallVector<Value>{g.op<onnx::MulOp>({x, s}, {}, elementType(x))};
  }
  if (op == "SkipLayerNormalization" || op == "SkipSimplifiedLayerNormalization") {
    // input, skip, gamma, beta, bias -> output, mean, inv_std_var,
    // input_skip_bias_sum (the simplified form: no beta, RMS).
    bool simplified = op == "SkipSimplifiedLayerNormalization";
    if (failed(require({0, 1, 2})))
      return failure();
    for (int i = 1; i < 3 && i < node.output_size(); ++i)
      if (!node.output(i).empty()) {
        why = "its mean and inverse standard deviation outputs are not "
              "supported";
        return failure();
      }
    Value x = input(0);
    Value sum = withBias(g.op<onnx::AddOp>({x, input(1)}, {}, elementType(x)),
                         simplified ? input(3) : input(4));
    const pb::AttributeProto *e = attribute("epsilon");
    float eps = e ? e->f() : 1e-12f;
    Value y;
    if (simplified) {
      // sum / sqrt(mean(sum^2) + eps) * gamma
      Value sq = g.op<onnx::MulOp>({sum, sum}, {}, elementType(x));
      Value ms = g.op<onnx::ReduceMeanOp>({sq, g.ints({-1})},
                                          {g.attr("keepdims", int64_t(1))},
                                          elementType(x));
      Value rms = g.op<onnx::SqrtOp>(
          {g.op<onnx::AddOp>({ms, like(x, eps)}, {}, elementType(x))}, {},
          elementType(x));
      y = g.op<onnx::MulOp>(
          {g.op<onnx::DivOp>({sum, rms}, {}, elementType(x)), input(2)}, {},
          elementType(x));
    } else {
      // (Three results, Mean and InvStdDev unused: not GraphBuilder's one.)
      OperationState st(g.loc, onnx::LayerNormalizationOp::getOperationName());
      st.addOperands({sum, input(2), orNone(input(3))});
      st.addAttributes({g.attr("axis", int64_t(-1)), g.attr("epsilon", eps)});
      Type u = UnrankedTensorType::get(elementType(x));
      st.addTypes({u, u, u});
      Operation *ln = g.b.create(st);
      (void)onnx::inferShapesFor(ln);
      y = ln->getResult(0);
    }
    return SmallVector<Value>{y, y, y, sum};
  }
  if (op == "FusedMatMul") {
    // alpha * op(A) x op(B), op a transpose of the last two dims.
    if (failed(require({0, 1})))
      return failure();
    if (intAttr("transBatchA", 0) || intAttr("transBatchB", 0)) {
      why = "transBatchA and transBatchB are not supported";
      return failure();
    }
    auto lastTwo = [&](Value v) -> Value {
      auto t = dyn_cast<RankedTensorType>(v.getType());
      if (!t || t.getRank() < 2)
        return Value();
      SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, t.getRank()));
      std::swap(perm[t.getRank() - 2], perm[t.getRank() - 1]);
      return g.op<onnx::TransposeOp>({v}, {g.perm(perm)}, t.getElementType());
    };
    Value a = input(0), bm = input(1);
    if (intAttr("transA", 0))
      a = lastTwo(a);
    if (intAttr("transB", 0))
      bm = lastTwo(bm);
    if (!a || !bm) {
      why = "a transposed operand needs a rank of 2 or more";
      return failure();
    }
    Value y = g.op<onnx::MatMulOp>({a, bm}, {}, elementType(input(0)));
    const pb::AttributeProto *alpha = attribute("alpha");
    if (alpha && alpha->f() != 1.0f)
      y = g.op<onnx::MulOp>({y, like(y, alpha->f())}, {}, elementType(y));
    return SmallVector<Value>{y};
  }
  why = std::string("com.microsoft op is not supported (kiln imports ") +
        microsoftOpsList() + ")";
  return failure();
}

} // namespace

const char *microsoftOpsList() {
  return "BiasGelu, FastGelu, FusedMatMul, Gelu, QGemm, QLinearAdd, "
         "QLinearAveragePool, QLinearConcat, QLinearGlobalAveragePool, "
         "QLinearLeakyRelu, QLinearMul, QLinearReduceMean, QLinearSigmoid, "
         "QLinearSoftmax, QLinearWhere, QuickGelu, SkipLayerNormalization, "
         "SkipSimplifiedLayerNormalization";
}

FailureOr<SmallVector<Value>> expandMicrosoftNode(OpBuilder &b, Location loc,
                                                  const pb::NodeProto &node,
                                                  ArrayRef<Value> inputs,
                                                  std::string &why) {
  return Expander(b, loc, node, inputs, why).run();
}

} // namespace kiln
