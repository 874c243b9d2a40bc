//===- ShapeInference.cpp - result types of onnx ops ----------------------===//
//
// Static shape and element type rules per op, used by the importer as each
// node is created and by the shape-inference pass. Unknown dimensions stay
// dynamic (`?`); a rule that finds the inputs inconsistent reports the node.
//
//===----------------------------------------------------------------------===//

#include "dialects/onnx/ShapeInference.h"
#include "dialects/onnx/DataTypes.h"
#include "dialects/onnx/OnnxDialect.h"
#include "dialects/onnx/OnnxOps.h"
#include "passes/NodeName.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"

#include <functional>
#include <numeric>
#include <optional>
#include <cmath>
#include <map>

using namespace mlir;

namespace kiln::onnx {

// Op families by how result 0's shape follows from the operands; shape
// inference registers its rules from these, and symbolic analyses
// (kiln-symbolic-shapes) follow them through shapeRuleOf.
const char *const kSameShapeOps[] = {
    "Relu", "Sigmoid", "Tanh", "Identity", "OptionalGetElement", "Abs", "Neg", "Exp", "Log",
    "Sqrt", "Reciprocal", "Floor", "Ceil", "Erf", "LeakyRelu", "Elu", "Selu", "HardSigmoid",
    "HardSwish", "Softplus", "Softsign", "Gelu", "Sin", "Cos", "Round", "Sign", "Not",
    "Softmax", "LogSoftmax", "Clip", "InstanceNormalization", "GroupNormalization", "LRN",
    "Mish", "Celu", "ThresholdedRelu", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh",
    "Acosh", "Atanh", "Shrink", "Hardmax", "LpNormalization", "MeanVarianceNormalization",
    "Swish", "SwiGLU", "RotaryEmbedding", "RMSNormalization", "CumSum", "CumProd",
    "BitwiseNot"};
// Result 0 has the first operand's shape, with rules of their own (other
// results or element types).
const char *const kSameAsDataOps[] = {"ScatterElements", "Scatter", "ScatterND", "Trilu",
                                      "Binarizer", "TensorScatter"};
const char *const kSameShapeOtherRules[] = {
    "IsNaN", "IsInf", "CastLike", "Cast", "Dropout", "BatchNormalization",
    "LayerNormalization", "QuantizeLinear", "DequantizeLinear"};
const char *const kBroadcastOps[] = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min",
                                     "Sum", "Mean", "PRelu", "And", "Or", "Xor", "Mod",
                                     "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor"};
const char *const kComparisonOps[] = {"Equal", "Less", "Greater", "LessOrEqual",
                                      "GreaterOrEqual"};

ShapeRule shapeRuleOf(Operation *op) {
  static const llvm::StringMap<ShapeRule> kinds = [] {
    llvm::StringMap<ShapeRule> m;
    for (const char *o : kSameShapeOps)
      m[(Twine("onnx.") + o).str()] = ShapeRule::SameAsFirst;
    for (const char *o : kSameAsDataOps)
      m[(Twine("onnx.") + o).str()] = ShapeRule::SameAsFirst;
    for (const char *o : kSameShapeOtherRules)
      m[(Twine("onnx.") + o).str()] = ShapeRule::SameAsFirst;
    for (const char *o : kBroadcastOps)
      m[(Twine("onnx.") + o).str()] = ShapeRule::Broadcast;
    for (const char *o : kComparisonOps)
      m[(Twine("onnx.") + o).str()] = ShapeRule::Broadcast;
    m["onnx.Where"] = ShapeRule::Broadcast;
    return m;
  }();
  auto it = kinds.find(op->getName().getStringRef());
  return it == kinds.end() ? ShapeRule::Other : it->second;
}

constexpr int64_t kDyn = ShapedType::kDynamic;

int64_t getIntAttr(Operation *op, StringRef name, int64_t dflt) {
  if (auto a = op->getAttrOfType<IntegerAttr>(name))
    return a.getInt();
  return dflt;
}

float getFloatAttr(Operation *op, StringRef name, float dflt) {
  if (auto a = op->getAttrOfType<FloatAttr>(name))
    return a.getValueAsDouble();
  return dflt;
}

SmallVector<int64_t> getIntsAttr(Operation *op, StringRef name) {
  SmallVector<int64_t> out;
  if (auto a = op->getAttrOfType<ArrayAttr>(name))
    for (Attribute e : a)
      out.push_back(cast<IntegerAttr>(e).getInt());
  return out;
}

StringRef getStrAttr(Operation *op, StringRef name, StringRef dflt) {
  if (auto a = op->getAttrOfType<StringAttr>(name))
    return a.getValue();
  return dflt;
}

bool isNone(Value v) { return !v || isa<NoneType>(v.getType()); }

/// The `value` of a constant defining `v` (onnx.Constant before CPU
/// lowering, arith.constant after), or null.
static Attribute constantValue(Value v) {
  if (isNone(v))
    return {};
  Operation *def = v.getDefiningOp();
  if (!def || (def->getName().getStringRef() != "onnx.Constant" &&
               def->getName().getStringRef() != "arith.constant"))
    return {};
  return def->getAttr("value");
}

std::optional<int64_t> tensorBytes(ArrayRef<int64_t> shape, Type elt) {
  int64_t bits = elt.isIntOrIndexOrFloat() ? elt.getIntOrFloatBitWidth() : 64;
  int64_t n = std::max<int64_t>(1, (bits + 7) / 8);
  for (int64_t d : shape)
    if (d < 0 || llvm::MulOverflow(n, d, n))
      return std::nullopt;
  return n;
}

std::string badShape(ArrayRef<int64_t> shape, Type elt) {
  SmallVector<int64_t> dims;
  for (int64_t d : shape) {
    if (d < 0 && !ShapedType::isDynamic(d))
      return "a dimension is " + std::to_string(d);
    dims.push_back(ShapedType::isDynamic(d) ? 1 : d);
  }
  if (!tensorBytes(dims, elt)) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "a tensor of shape [";
    llvm::interleave(
        shape, os, [&](int64_t d) { os << d; }, ",");
    os << "] and " << elt << " would hold more than 2^63 bytes";
    return s;
  }
  return "";
}

std::optional<SmallVector<int64_t>> getConstantInts(Value v) {
  auto dense = dyn_cast_or_null<DenseIntElementsAttr>(constantValue(v));
  if (!dense)
    return std::nullopt;
  SmallVector<int64_t> out;
  for (const APInt &x : dense.getValues<APInt>())
    out.push_back(x.getSExtValue());
  return out;
}

/// A constant input's values as doubles (float or integer data).
std::optional<SmallVector<double>> getConstantDoubles(Value v) {
  SmallVector<double> out;
  if (auto f = dyn_cast_or_null<DenseFPElementsAttr>(constantValue(v))) {
    for (const APFloat &x : f.getValues<APFloat>())
      out.push_back(x.convertToDouble());
    return out;
  }
  if (auto ints = getConstantInts(v)) {
    for (int64_t x : *ints)
      out.push_back(x);
    return out;
  }
  return std::nullopt;
}

Type joinTypes(Type a, Type b) {
  if (a == b)
    return a;
  if (auto sa = dyn_cast<SeqType>(a))
    if (auto sb = dyn_cast<SeqType>(b))
      if (Type e = joinTypes(sa.getElementType(), sb.getElementType()))
        return SeqType::get(a.getContext(), e);
  if (auto oa = dyn_cast<OptType>(a))
    if (auto ob = dyn_cast<OptType>(b))
      if (Type e = joinTypes(oa.getElementType(), ob.getElementType()))
        return OptType::get(a.getContext(), e);
  auto ta = dyn_cast<TensorType>(a), tb = dyn_cast<TensorType>(b);
  if (!ta || !tb || ta.getElementType() != tb.getElementType())
    return {};
  auto ra = dyn_cast<RankedTensorType>(a), rb = dyn_cast<RankedTensorType>(b);
  if (!ra || !rb || ra.getRank() != rb.getRank())
    return UnrankedTensorType::get(ta.getElementType());
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < ra.getRank(); ++d)
    dims.push_back(ra.getDimSize(d) == rb.getDimSize(d) ? ra.getDimSize(d) : kDyn);
  return RankedTensorType::get(dims, ta.getElementType());
}

std::optional<int64_t> staticSequenceLength(Value seq) {
  Operation *def = seq.getDefiningOp();
  if (!def)
    return std::nullopt;
  StringRef name = def->getName().getStringRef();
  if (name == "onnx.SequenceEmpty")
    return 0;
  if (name == "onnx.SequenceConstruct")
    return def->getNumOperands();
  if (name == "onnx.Identity")
    return staticSequenceLength(def->getOperand(0));
  if (name == "onnx.SequenceInsert" || name == "onnx.SequenceErase") {
    auto n = staticSequenceLength(def->getOperand(0));
    if (!n || (name == "onnx.SequenceErase" && *n == 0))
      return std::nullopt;
    return *n + (name == "onnx.SequenceInsert" ? 1 : -1);
  }
  return std::nullopt;
}

bool isIdentityDropout(Operation *op) {
  if (op->getNumOperands() < 3 || isNone(op->getOperand(2)))
    return true;
  if (auto mode = getConstantInts(op->getOperand(2));
      mode && llvm::all_of(*mode, [](int64_t v) { return v == 0; }))
    return true;
  auto ratio = getConstantDoubles(op->getOperand(1));
  return ratio && llvm::all_of(*ratio, [](double r) { return r == 0.0; });
}

namespace {

struct Ctx {
  Operation *op;
  RankedTensorType in(unsigned i) const {
    if (i >= op->getNumOperands())
      return {};
    return dyn_cast<RankedTensorType>(op->getOperand(i).getType());
  }
  /// Null where input i is missing or not a tensor.
  Type elt(unsigned i) const {
    auto t = i < op->getNumOperands()
                 ? dyn_cast<ShapedType>(op->getOperand(i).getType())
                 : ShapedType();
    return t ? t.getElementType() : Type();
  }
  LogicalResult set(unsigned i, ArrayRef<int64_t> shape, Type elt) const {
    if (!elt)
      return emitNodeError(op) << "a required input is missing or not a tensor";
    if (i >= op->getNumResults())
      return emitNodeError(op)
             << "has " << op->getNumResults() << " outputs, needs " << i + 1;
    if (std::string why = badShape(shape, elt); !why.empty())
      return emitNodeError(op) << "result " << i << ": " << why;
    Value r = op->getResult(i);
    auto newType = RankedTensorType::get(shape, elt);
    if (auto old = dyn_cast<RankedTensorType>(r.getType())) {
      // Keep what the model declared where inference knows less.
      if (old.getRank() == newType.getRank()) {
        SmallVector<int64_t> merged(shape);
        for (int64_t d = 0; d < old.getRank(); ++d) {
          if (merged[d] == kDyn)
            merged[d] = old.getDimSize(d);
          else if (!old.isDynamicDim(d) && old.getDimSize(d) != merged[d])
            return emitNodeError(op)
                   << "inferred result shape " << newType
                   << " disagrees with the model's declared " << old;
        }
        newType = RankedTensorType::get(merged, elt);
      }
    }
    r.setType(newType);
    return success();
  }
  LogicalResult same(unsigned from = 0) const {
    if (auto t = in(from))
      return set(0, t.getShape(), t.getElementType());
    return success();
  }
  InFlightDiagnostic fail() const { return emitNodeError(op); }
};

int64_t normAxis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

/// numpy broadcasting of all ranked operands; nullopt if any is unranked.
FailureOr<std::optional<SmallVector<int64_t>>> broadcastShapes(const Ctx &c,
                                                               ValueRange vals) {
  SmallVector<int64_t> out;
  for (Value v : vals) {
    if (isNone(v))
      continue;
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t)
      return std::optional<SmallVector<int64_t>>();
    ArrayRef<int64_t> s = t.getShape();
    if (s.size() > out.size())
      out.insert(out.begin(), s.size() - out.size(), 1);
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t &o = out[out.size() - s.size() + i];
      int64_t d = s[i];
      if (d == 1)
        continue;
      if (o == 1 || o == d)
        o = d;
      else if (d == kDyn || o == kDyn)
        o = (o == kDyn && d != kDyn) ? d : o;
      else {
        c.fail() << "operand shapes " << vals[0].getType() << " and "
                 << v.getType() << " do not broadcast";
        return failure();
      }
    }
  }
  return std::optional<SmallVector<int64_t>>(out);
}

LogicalResult broadcastRule(const Ctx &c, Type resultElt = {}) {
  auto shape = broadcastShapes(c, c.op->getOperands());
  if (failed(shape))
    return failure();
  if (!*shape)
    return success();
  return c.set(0, **shape, resultElt ? resultElt : c.elt(0));
}

/// Output size of a sliding window along one axis, as ONNX defines it.
int64_t windowOut(int64_t in, int64_t k, int64_t stride, int64_t dil,
                  int64_t padTotal, bool ceilMode) {
  int64_t eff = dil * (k - 1) + 1;
  int64_t num = in + padTotal - eff;
  if (num < 0)
    return -1;
  int64_t out = (ceilMode ? (num + stride - 1) / stride : num / stride) + 1;
  return out;
}

} // namespace

bool ceilModeIsPlainCeil(Operation *op, ArrayRef<int64_t> kernel) {
  size_t n = kernel.size();
  SmallVector<int64_t> strides = getIntsAttr(op, "strides"), dil = getIntsAttr(op, "dilations"),
                       pads = getIntsAttr(op, "pads");
  if (getStrAttr(op, "auto_pad", "NOTSET") != "NOTSET" && getStrAttr(op, "auto_pad", "NOTSET") != "VALID")
    return false;
  for (size_t i = 0; i < n; ++i) {
    int64_t s = strides.size() == n ? strides[i] : 1, d = dil.size() == n ? dil[i] : 1;
    int64_t pe = pads.size() == 2 * n && getStrAttr(op, "auto_pad", "NOTSET") == "NOTSET" ? pads[n + i] : 0;
    if (d * (kernel[i] - 1) + 1 < s + pe)
      return false;
  }
  return true;
}

LogicalResult computeWindowPads(Operation *op, ArrayRef<int64_t> inSpatial,
                                ArrayRef<int64_t> kernel,
                                SmallVectorImpl<int64_t> &padsBegin,
                                SmallVectorImpl<int64_t> &padsEnd,
                                SmallVectorImpl<int64_t> &outSpatial) {
  size_t n = kernel.size();
  SmallVector<int64_t> strides = getIntsAttr(op, "strides");
  SmallVector<int64_t> dil = getIntsAttr(op, "dilations");
  SmallVector<int64_t> pads = getIntsAttr(op, "pads");
  if (strides.empty())
    strides.assign(n, 1);
  if (dil.empty())
    dil.assign(n, 1);
  if (pads.empty())
    pads.assign(2 * n, 0);
  if (strides.size() != n || dil.size() != n || pads.size() != 2 * n ||
      inSpatial.size() != n)
    return emitNodeError(op) << "kernel_shape, strides, dilations and pads "
                                "disagree with the input's spatial rank "
                             << inSpatial.size();
  for (size_t i = 0; i < n; ++i)
    if (kernel[i] < 1 || strides[i] < 1 || dil[i] < 1 || pads[i] < 0 ||
        pads[i + n] < 0)
      return emitNodeError(op)
             << "kernel, strides and dilations must be positive and pads "
                "not negative";
  bool ceilMode = getIntAttr(op, "ceil_mode", 0) != 0;
  StringRef autoPad = getStrAttr(op, "auto_pad", "NOTSET");
  padsBegin.clear();
  padsEnd.clear();
  outSpatial.clear();
  for (size_t i = 0; i < n; ++i) {
    int64_t in = inSpatial[i];
    int64_t pb = pads[i], pe = pads[i + n];
    // An unknown input size gives an unknown output size (not arithmetic on
    // the kDynamic sentinel).
    if (ShapedType::isDynamic(in)) {
      padsBegin.push_back(pb);
      padsEnd.push_back(pe);
      outSpatial.push_back(ShapedType::kDynamic);
      continue;
    }
    int64_t eff = dil[i] * (kernel[i] - 1) + 1;
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t out = (in + strides[i] - 1) / strides[i];
      int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] + eff - in);
      pb = autoPad == "SAME_LOWER" ? (total + 1) / 2 : total / 2;
      pe = total - pb;
    } else if (autoPad == "VALID") {
      pb = pe = 0;
    } else if (autoPad != "NOTSET") {
      return emitNodeError(op) << "auto_pad \"" << autoPad << "\" is not valid";
    }
    int64_t out = windowOut(in, kernel[i], strides[i], dil[i], pb + pe, ceilMode);
    // A window that would start in the right padding alone is dropped.
    if (ceilMode && out > 0 && (out - 1) * strides[i] >= in + pb)
      --out;
    if (out <= 0)
      return emitNodeError(op) << "kernel larger than the padded input";
    padsBegin.push_back(pb);
    padsEnd.push_back(pe);
    outSpatial.push_back(out);
  }
  return success();
}

/// ConvTranspose pads and output spatial sizes (output_shape, auto_pad,
/// output_padding resolved).
LogicalResult convTransposePads(Operation *op, ArrayRef<int64_t> inSpatial,
                                ArrayRef<int64_t> kernelIn,
                                SmallVectorImpl<int64_t> &padsBegin,
                                SmallVectorImpl<int64_t> &padsEnd,
                                SmallVectorImpl<int64_t> &outSpatial) {
  size_t n = inSpatial.size();
  SmallVector<int64_t> kernel = getIntsAttr(op, "kernel_shape");
  if (kernel.empty())
    kernel.assign(kernelIn.begin(), kernelIn.end());
  SmallVector<int64_t> strides = getIntsAttr(op, "strides"), dil = getIntsAttr(op, "dilations"),
                       pads = getIntsAttr(op, "pads"), outPad = getIntsAttr(op, "output_padding"),
                       outShape = getIntsAttr(op, "output_shape");
  if (strides.empty()) strides.assign(n, 1);
  if (dil.empty()) dil.assign(n, 1);
  if (pads.empty()) pads.assign(2 * n, 0);
  if (outPad.empty()) outPad.assign(n, 0);
  if (outShape.size() > n)
    outShape.erase(outShape.begin(), outShape.begin() + (outShape.size() - n));
  if (kernel.size() != n || strides.size() != n || dil.size() != n ||
      pads.size() != 2 * n || outPad.size() != n)
    return emitNodeError(op) << "kernel_shape, strides, dilations, pads or "
                                "output_padding disagree with the spatial rank";
  StringRef autoPad = getStrAttr(op, "auto_pad", "NOTSET");
  padsBegin.clear();
  padsEnd.clear();
  outSpatial.clear();
  for (size_t i = 0; i < n; ++i) {
    int64_t full = strides[i] * (inSpatial[i] - 1) + outPad[i] + (kernel[i] - 1) * dil[i] + 1;
    int64_t pb = pads[i], pe = pads[i + n];
    bool haveOut = !outShape.empty();
    if (haveOut || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t target = haveOut ? outShape[i] : inSpatial[i] * strides[i];
      int64_t total = full - target;
      // Floor division as ONNX writes it (total may be negative: the
      // output then grows by zero rows at the end).
      int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      if (autoPad == "SAME_UPPER") {
        pb = half;
        pe = total - half;
      } else {
        pb = total - half;
        pe = half;
      }
    } else if (autoPad == "VALID") {
      pb = pe = 0;
    }
    padsBegin.push_back(pb);
    padsEnd.push_back(pe);
    outSpatial.push_back(full - pb - pe);
  }
  return success();
}

/// Einsum labels per input and for the output; "..." becomes fresh upper
/// case labels from the operand ranks; an implicit output is the labels
/// used once, alphabetically, after the ellipsis.
LogicalResult parseEinsum(Operation *op, SmallVectorImpl<SmallVector<char>> &ins,
                          SmallVector<char> &out) {
  std::string eq;
  for (char ch : getStrAttr(op, "equation", "").str())
    if (ch != ' ')
      eq.push_back(ch);
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  ins.clear();
  out.clear();
  int64_t ellRank = 0;
  size_t pos = 0;
  unsigned idx = 0;
  while (true) {
    size_t comma = lhs.find(',', pos);
    std::string term = lhs.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (idx >= op->getNumOperands())
      return emitNodeError(op) << "equation has more terms than inputs";
    auto t = dyn_cast<RankedTensorType>(op->getOperand(idx).getType());
    SmallVector<char> labels;
    size_t e = term.find("...");
    int64_t explicitN = term.size() - (e == std::string::npos ? 0 : 3);
    for (size_t k = 0; k < term.size(); ++k) {
      if (e != std::string::npos && k == e) {
        if (!t)
          return failure();
        int64_t n = t.getRank() - explicitN;
        ellRank = std::max(ellRank, n);
        for (int64_t j = 0; j < n; ++j)
          labels.push_back('A' + (26 - n + j) % 26); // right-aligned
        k += 2;
        continue;
      }
      labels.push_back(term[k]);
    }
    ins.push_back(labels);
    ++idx;
    if (comma == std::string::npos)
      break;
    pos = comma + 1;
  }
  if (arrow != std::string::npos) {
    std::string rhs = eq.substr(arrow + 2);
    for (size_t k = 0; k < rhs.size(); ++k) {
      if (rhs.compare(k, 3, "...") == 0) {
        for (int64_t j = 0; j < ellRank; ++j)
          out.push_back('A' + (26 - ellRank + j) % 26);
        k += 2;
        continue;
      }
      out.push_back(rhs[k]);
    }
  } else {
    for (int64_t j = 0; j < ellRank; ++j)
      out.push_back('A' + (26 - ellRank + j) % 26);
    std::map<char, int> count;
    for (auto &l : ins)
      for (char ch : l)
        if (ch >= 'a' && ch <= 'z')
          ++count[ch];
    for (auto [ch, n] : count)
      if (n == 1)
        out.push_back(ch);
  }
  return success();
}

namespace {

using Rule = std::function<LogicalResult(const Ctx &)>;

/// MatMul of operands `ia` x `ib`, the result of element type `elt` (the
/// first operand's when null): MatMul and its integer/quantized kin.
LogicalResult matmulShape(const Ctx &c, unsigned ia, unsigned ib, Type elt) {
  auto a = c.in(ia), b = c.in(ib);
  if (!a || !b)
    return success();
  SmallVector<int64_t> as(a.getShape()), bs(b.getShape());
  if (as.empty() || bs.empty())
    return c.fail() << "MatMul operands must have rank >= 1";
  bool aVec = as.size() == 1, bVec = bs.size() == 1;
  if (aVec)
    as.insert(as.begin(), 1);
  if (bVec)
    bs.push_back(1);
  int64_t k1 = as.back(), k2 = bs[bs.size() - 2];
  if (k1 != kDyn && k2 != kDyn && k1 != k2)
    return c.fail() << "inner dimensions differ: " << a << " x " << b;
  SmallVector<int64_t> batchA(as.begin(), as.end() - 2), batchB(bs.begin(), bs.end() - 2);
  SmallVector<int64_t> batch;
  size_t r = std::max(batchA.size(), batchB.size());
  for (size_t i = 0; i < r; ++i) {
    int64_t x = i + batchA.size() >= r ? batchA[i + batchA.size() - r] : 1;
    int64_t y = i + batchB.size() >= r ? batchB[i + batchB.size() - r] : 1;
    if (x != 1 && y != 1 && x != y && x != kDyn && y != kDyn)
      return c.fail() << "batch dimensions do not broadcast: " << a << " x " << b;
    batch.push_back(x == 1 ? y : x);
  }
  SmallVector<int64_t> out(batch);
  if (!aVec)
    out.push_back(as[as.size() - 2]);
  if (!bVec)
    out.push_back(bs.back());
  return c.set(0, out, elt ? elt : a.getElementType());
}

LogicalResult matmulRule(const Ctx &c) { return matmulShape(c, 0, 1, {}); }

LogicalResult gemmRule(const Ctx &c) {
  auto a = c.in(0), b = c.in(1);
  if (!a || !b)
    return success();
  if (a.getRank() != 2 || b.getRank() != 2)
    return c.fail() << "Gemm operands must be 2-D, got " << a << " and " << b;
  bool ta = getIntAttr(c.op, "transA", 0), tb = getIntAttr(c.op, "transB", 0);
  int64_t m = a.getDimSize(ta ? 1 : 0), k1 = a.getDimSize(ta ? 0 : 1);
  int64_t k2 = b.getDimSize(tb ? 1 : 0), n = b.getDimSize(tb ? 0 : 1);
  if (k1 != kDyn && k2 != kDyn && k1 != k2)
    return c.fail() << "inner dimensions differ: " << a << " x " << b;
  return c.set(0, {m, n}, a.getElementType());
}

/// Conv of input `ix` with weight `iw`, the result of element type `elt`
/// (the input's when null): Conv, ConvInteger and QLinearConv.
LogicalResult convShape(const Ctx &c, unsigned ix, unsigned iw, Type elt) {
  auto x = c.in(ix), w = c.in(iw);
  if (!x || !w)
    return success();
  if (x.getRank() < 3 || w.getRank() != x.getRank())
    return c.fail() << "input " << x << " and weight " << w << " ranks differ";
  int64_t group = getIntAttr(c.op, "group", 1);
  if (x.getDimSize(1) != kDyn && x.getDimSize(1) != w.getDimSize(1) * group)
    return c.fail() << "input channels " << x.getDimSize(1)
                    << " != weight channels " << w.getDimSize(1) << " x group "
                    << group;
  SmallVector<int64_t> kernel = getIntsAttr(c.op, "kernel_shape");
  if (kernel.empty())
    kernel.assign(w.getShape().begin() + 2, w.getShape().end());
  SmallVector<int64_t> pb, pe, outSp;
  if (failed(computeWindowPads(c.op, x.getShape().drop_front(2), kernel, pb, pe, outSp)))
    return failure();
  SmallVector<int64_t> out = {x.getDimSize(0), w.getDimSize(0)};
  out.append(outSp);
  return c.set(0, out, elt ? elt : x.getElementType());
}

LogicalResult convRule(const Ctx &c) { return convShape(c, 0, 1, {}); }

LogicalResult poolRule(const Ctx &c) {
  auto x = c.in(0);
  if (!x)
    return success();
  SmallVector<int64_t> kernel = getIntsAttr(c.op, "kernel_shape");
  if (kernel.size() + 2 != (size_t)x.getRank())
    return c.fail() << "kernel_shape has " << kernel.size()
                    << " dims, the input " << x.getRank() - 2 << " spatial dims";
  SmallVector<int64_t> pb, pe, outSp;
  if (failed(computeWindowPads(c.op, x.getShape().drop_front(2), kernel, pb, pe, outSp)))
    return failure();
  SmallVector<int64_t> out = {x.getDimSize(0), x.getDimSize(1)};
  out.append(outSp);
  if (failed(c.set(0, out, x.getElementType())))
    return failure();
  if (c.op->getNumResults() > 1 && !isa<NoneType>(c.op->getResult(1).getType()))
    return c.set(1, out, IntegerType::get(c.op->getContext(), 64));
  return success();
}

LogicalResult globalPoolRule(const Ctx &c) {
  auto x = c.in(0);
  if (!x)
    return success();
  SmallVector<int64_t> out(x.getShape());
  for (size_t i = 2; i < out.size(); ++i)
    out[i] = 1;
  return c.set(0, out, x.getElementType());
}

LogicalResult flattenRule(const Ctx &c) {
  auto x = c.in(0);
  if (!x)
    return success();
  int64_t axis = normAxis(getIntAttr(c.op, "axis", 1), x.getRank());
  if (axis < 0 || axis > x.getRank())
    return c.fail() << "axis out of range for " << x;
  int64_t a = 1, b = 1;
  for (int64_t i = 0; i < x.getRank(); ++i) {
    int64_t &acc = i < axis ? a : b;
    acc = (acc == kDyn || x.isDynamicDim(i)) ? kDyn : acc * x.getDimSize(i);
  }
  return c.set(0, {a, b}, x.getElementType());
}

LogicalResult reshapeRule(const Ctx &c) {
  auto x = c.in(0);
  auto shape = getConstantInts(c.op->getOperand(1));
  if (!shape) {
    if (auto st = c.in(1); st && st.hasStaticShape())
      return c.set(0, SmallVector<int64_t>(st.getDimSize(0), kDyn),
                   c.elt(0));
    return success();
  }
  bool allowZero = getIntAttr(c.op, "allowzero", 0) != 0;
  SmallVector<int64_t> out(*shape);
  int64_t inferAt = -1, known = 1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0 && !allowZero) {
      if (!x || (int64_t)i >= x.getRank())
        return x ? (LogicalResult)(c.fail() << "shape copies dim " << i
                                            << " that the input lacks")
                 : success();
      out[i] = x.getDimSize(i);
    }
    if (out[i] == -1) {
      if (inferAt >= 0)
        return c.fail() << "shape has more than one -1";
      inferAt = i;
      continue;
    }
    // A copied (0) dimension may be unknown; that is not a negative size.
    if (out[i] < -1 && out[i] != kDyn)
      return c.fail() << "shape has a negative dimension " << out[i];
    known = (known == kDyn || out[i] == kDyn) ? kDyn : known * out[i];
  }
  if (!x)
    return success();
  if (x.hasStaticShape() && known != kDyn) {
    int64_t total = x.getNumElements();
    if (inferAt >= 0) {
      if (known == 0 || total % known)
        return c.fail() << "cannot reshape " << x << " to the requested shape";
      out[inferAt] = total / known;
    } else if (known != total) {
      return c.fail() << "cannot reshape " << x << " (" << total
                      << " elements) to a shape of " << known << " elements";
    }
  } else if (inferAt >= 0) {
    out[inferAt] = kDyn;
    // Dims copied with 0 cancel the same input dims: [s, b, 2, 8] to
    // [0, 0, -1] is [s, b, 16] whatever s and b are (a bidirectional
    // recurrent layer's output flattened for the next).
    if (!allowZero) {
      int64_t rest = 1, other = 1;
      for (int64_t i = 0; i < x.getRank() && rest != kDyn; ++i)
        if (i >= (int64_t)shape->size() || (*shape)[i] != 0)
          rest = x.isDynamicDim(i) ? kDyn : rest * x.getDimSize(i);
      for (size_t i = 0; i < out.size() && other != kDyn; ++i)
        if ((int64_t)i != inferAt && (*shape)[i] != 0)
          other = out[i] == kDyn ? kDyn : other * out[i];
      if (rest != kDyn && other != kDyn && other != 0 && rest % other == 0)
        out[inferAt] = rest / other;
    }
  }
  return c.set(0, out, x.getElementType());
}

LogicalResult transposeRule(const Ctx &c) {
  auto x = c.in(0);
  if (!x)
    return success();
  SmallVector<int64_t> perm = getIntsAttr(c.op, "perm");
  if (perm.empty())
    for (int64_t i = x.getRank() - 1; i >= 0; --i)
      perm.push_back(i);
  if ((int64_t)perm.size() != x.getRank())
    return c.fail() << "perm has " << perm.size() << " entries for rank " << x.getRank();
  SmallVector<int64_t> out;
  SmallVector<bool> seen(x.getRank(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= x.getRank() || seen[p])
      return c.fail() << "perm is not a permutation";
    seen[p] = true;
    out.push_back(x.getDimSize(p));
  }
  return c.set(0, out, x.getElementType());
}

LogicalResult concatRule(const Ctx &c) {
  RankedTensorType first;
  for (Value v : c.op->getOperands())
    if (!isa<RankedTensorType>(v.getType()))
      return success();
  first = c.in(0);
  if (!first)
    return c.fail() << "needs at least one input";
  int64_t rank = first.getRank();
  int64_t axis = normAxis(getIntAttr(c.op, "axis", 0), rank);
  if (axis < 0 || axis >= rank)
    return c.fail() << "axis out of range for rank " << rank;
  SmallVector<int64_t> out(first.getShape());
  out[axis] = 0;
  for (Value v : c.op->getOperands()) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != rank)
      return c.fail() << "inputs have different ranks";
    for (int64_t d = 0; d < rank; ++d) {
      if (d == axis)
        out[d] = (out[d] == kDyn || t.isDynamicDim(d)) ? kDyn : out[d] + t.getDimSize(d);
      else if (!t.isDynamicDim(d) && out[d] != kDyn && t.getDimSize(d) != out[d])
        return c.fail() << "inputs differ in dimension " << d << ": " << first
                        << " vs " << t;
    }
  }
  return c.set(0, out, first.getElementType());
}

LogicalResult squeezeLike(const Ctx &c, bool unsqueeze) {
  auto x = c.in(0);
  if (!x)
    return success();
  std::optional<SmallVector<int64_t>> axes;
  if (c.op->getNumOperands() > 1 && !isNone(c.op->getOperand(1))) {
    axes = getConstantInts(c.op->getOperand(1));
    if (!axes)
      return success();
  }
  SmallVector<int64_t> in(x.getShape()), out;
  if (unsqueeze) {
    if (!axes)
      return c.fail() << "needs axes";
    int64_t r = in.size() + axes->size();
    SmallVector<bool> isNew(r, false);
    for (int64_t a : *axes) {
      a = normAxis(a, r);
      if (a < 0 || a >= r || isNew[a])
        return c.fail() << "axes out of range or repeated";
      isNew[a] = true;
    }
    size_t j = 0;
    for (int64_t i = 0; i < r; ++i)
      out.push_back(isNew[i] ? 1 : in[j++]);
  } else {
    SmallVector<bool> drop(in.size(), false);
    if (axes) {
      for (int64_t a : *axes) {
        a = normAxis(a, in.size());
        if (a < 0 || a >= (int64_t)in.size())
          return c.fail() << "axis out of range";
        if (in[a] != 1 && in[a] != kDyn)
          return c.fail() << "cannot squeeze dimension " << a << " of size " << in[a];
        drop[a] = true;
      }
    } else {
      for (size_t i = 0; i < in.size(); ++i)
        drop[i] = in[i] == 1;
    }
    for (size_t i = 0; i < in.size(); ++i)
      if (!drop[i])
        out.push_back(in[i]);
  }
  return c.set(0, out, x.getElementType());
}

LogicalResult reduceRule(const Ctx &c) {
  auto x = c.in(0);
  if (!x)
    return success();
  SmallVector<int64_t> axes;
  if (c.op->getNumOperands() > 1 && !isNone(c.op->getOperand(1))) {
    auto got = getConstantInts(c.op->getOperand(1));
    if (!got)
      return success();
    axes = *got;
  } else {
    axes = getIntsAttr(c.op, "axes");
  }
  bool keep = getIntAttr(c.op, "keepdims", 1) != 0;
  bool noopEmpty = getIntAttr(c.op, "noop_with_empty_axes", 0) != 0;
  SmallVector<bool> red(x.getRank(), axes.empty() && !noopEmpty);
  for (int64_t a : axes) {
    a = normAxis(a, x.getRank());
    if (a < 0 || a >= x.getRank())
      return c.fail() << "axis out of range";
    red[a] = true;
  }
  SmallVector<int64_t> out;
  for (int64_t i = 0; i < x.getRank(); ++i)
    if (!red[i])
      out.push_back(x.getDimSize(i));
    else if (keep)
      out.push_back(1);
  return c.set(0, out, x.getElementType());
}

LogicalResult gatherRule(const Ctx &c) {
  auto x = c.in(0), idx = c.in(1);
  if (!x || !idx)
    return success();
  int64_t axis = normAxis(getIntAttr(c.op, "axis", 0), x.getRank());
  if (axis < 0 || axis >= x.getRank())
    return c.fail() << "axis out of range";
  SmallVector<int64_t> out(x.getShape().take_front(axis));
  out.append(idx.getShape().begin(), idx.getShape().end());
  out.append(x.getShape().begin() + axis + 1, x.getShape().end());
  return c.set(0, out, x.getElementType());
}

LogicalResult constantRule(const Ctx &c) {
  auto value = c.op->getAttrOfType<ElementsAttr>("value");
  if (!value)
    return c.fail() << "Constant without a value";
  auto t = cast<ShapedType>(value.getType());
  return c.set(0, t.getShape(), t.getElementType());
}

// --- Data movement and contraction rules (Slice, Split, Pad, Resize, ...) ---

/// A constant input's integers, or nullopt (absent or runtime value).
std::optional<SmallVector<int64_t>> constInts(const Ctx &c, unsigned i) {
  if (i >= c.op->getNumOperands())
    return std::nullopt;
  return getConstantInts(c.op->getOperand(i));
}


Type dtypeToType(MLIRContext *ctx, int64_t dtype, Type dflt) {
  Type t = elementTypeOfDtype(ctx, dtype);
  return t ? t : dflt;
}

} // namespace

/// Slice parameters resolved against `shape`: per dim start, step, size.
LogicalResult resolveSlice(Operation *op, ArrayRef<int64_t> shape,
                           SmallVectorImpl<int64_t> &start,
                           SmallVectorImpl<int64_t> &step,
                           SmallVectorImpl<int64_t> &size) {
  int64_t r = shape.size();
  auto starts = getConstantInts(op->getOperand(1));
  auto ends = getConstantInts(op->getOperand(2));
  if (!starts || !ends)
    return failure();
  SmallVector<int64_t> axes, steps;
  if (op->getNumOperands() > 3 && !isNone(op->getOperand(3))) {
    auto a = getConstantInts(op->getOperand(3));
    if (!a)
      return failure();
    axes = *a;
  } else {
    for (size_t i = 0; i < starts->size(); ++i)
      axes.push_back(i);
  }
  if (op->getNumOperands() > 4 && !isNone(op->getOperand(4))) {
    auto s = getConstantInts(op->getOperand(4));
    if (!s)
      return failure();
    steps = *s;
  } else {
    steps.assign(starts->size(), 1);
  }
  if (axes.size() != starts->size() || ends->size() != starts->size() ||
      steps.size() != starts->size())
    return emitNodeError(op) << "starts, ends, axes and steps differ in length";
  start.assign(r, 0);
  step.assign(r, 1);
  size.assign(shape.begin(), shape.end());
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
    if (a < 0 || a >= r)
      return emitNodeError(op) << "axis " << axes[i] << " out of range";
    int64_t d = shape[a], s = (*starts)[i], e = (*ends)[i], st = steps[i];
    if (st == 0)
      return emitNodeError(op) << "step 0";
    if (d == ShapedType::kDynamic) {
      size[a] = ShapedType::kDynamic;
      continue;
    }
    if (s < 0) s += d;
    if (e < 0) e += d;
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
      size[a] = e > s ? (e - s + st - 1) / st : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
      size[a] = s > e ? (s - e + (-st) - 1) / (-st) : 0;
    }
    start[a] = s;
    step[a] = st;
  }
  return success();
}

/// Split sizes along the axis, or failure when they are not known.
LogicalResult resolveSplit(Operation *op, int64_t dim,
                           SmallVectorImpl<int64_t> &sizes) {
  sizes.clear();
  unsigned n = op->getNumResults();
  if (op->getNumOperands() > 1 && !isNone(op->getOperand(1))) {
    auto s = getConstantInts(op->getOperand(1));
    if (!s)
      return failure();
    sizes.assign(s->begin(), s->end());
    return success();
  }
  if (dim == ShapedType::kDynamic)
    return failure();
  int64_t parts = getIntAttr(op, "num_outputs", n);
  if (parts <= 0) // splitRule reports it; nothing to divide by
    return failure();
  int64_t chunk = (dim + parts - 1) / parts;
  if (!op->hasAttr("num_outputs"))
    chunk = dim / parts;
  for (int64_t i = 0; i < parts; ++i)
    sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
  return success();
}

namespace {

LogicalResult sliceRule(const Ctx &c) {
  auto x = c.in(0);
  if (!x)
    return success();
  SmallVector<int64_t> start, step, size;
  if (succeeded(resolveSlice(c.op, x.getShape(), start, step, size)))
    return c.set(0, size, x.getElementType());
  // Run-time starts/ends: the rank stays, and so do dims no axis names.
  SmallVector<int64_t> dims(x.getRank(), kDyn);
  if (c.op->getNumOperands() > 3 && !isNone(c.op->getOperand(3))) {
    auto axes = getConstantInts(c.op->getOperand(3));
    if (axes && llvm::all_of(*axes, [&](int64_t a) {
          return a >= -x.getRank() && a < x.getRank();
        })) {
      dims.assign(x.getShape().begin(), x.getShape().end());
      for (int64_t a : *axes)
        dims[normAxis(a, x.getRank())] = kDyn;
    }
  }
  return c.set(0, dims, x.getElementType());
}

LogicalResult splitRule(const Ctx &c) {
  auto x = c.in(0);
  if (!x)
    return success();
  int64_t axis = normAxis(getIntAttr(c.op, "axis", 0), x.getRank());
  if (axis < 0 || axis >= x.getRank())
    return c.fail() << "axis out of range";
  if (c.op->hasAttr("num_outputs")) {
    int64_t parts = getIntAttr(c.op, "num_outputs", 0);
    if (parts != static_cast<int64_t>(c.op->getNumResults()))
      return c.fail() << "num_outputs is " << parts << " but the node has "
                      << c.op->getNumResults() << " outputs";
  }
  if (c.op->getNumResults() == 0)
    return c.fail() << "has no outputs";
  SmallVector<int64_t> sizes;
  if (failed(resolveSplit(c.op, x.getDimSize(axis), sizes)))
    return success();
  if (sizes.size() != c.op->getNumResults())
    return c.fail() << "splits into " << sizes.size() << " parts but has "
                    << c.op->getNumResults() << " outputs";
  for (unsigned i = 0; i < sizes.size(); ++i) {
    SmallVector<int64_t> s(x.getShape());
    s[axis] = sizes[i];
    if (failed(c.set(i, s, x.getElementType())))
      return failure();
  }
  return success();
}

LogicalResult expandRule(const Ctx &c) {
  auto x = c.in(0);
  auto shape = constInts(c, 1);
  // A shape computed at run time of known length gives the rank: dims of
  // x that are not 1 stay (ONNX broadcasts the two), others are unknown.
  if (auto st = c.in(1); x && !shape && st && st.getRank() == 1 && !st.isDynamicDim(0)) {
    int64_t r = std::max<int64_t>(x.getRank(), st.getDimSize(0));
    SmallVector<int64_t> out(r, kDyn);
    for (int64_t i = 0; i < x.getRank(); ++i)
      if (int64_t d = x.getDimSize(i); d != 1 && d != kDyn)
        out[r - x.getRank() + i] = d;
    return c.set(0, out, x.getElementType());
  }
  if (!x || !shape)
    return success();
  SmallVector<int64_t> s(x.getShape()), out;
  size_t r = std::max(s.size(), shape->size());
  for (size_t i = 0; i < r; ++i) {
    int64_t a = i + s.size() >= r ? s[i + s.size() - r] : 1;
    int64_t b = i + shape->size() >= r ? (*shape)[i + shape->size() - r] : 1;
    // An unknown input dim broadcasts to a requested b > 1 (or was b).
    if (a == kDyn) {
      out.push_back(b == 1 ? kDyn : b);
      continue;
    }
    if (a != 1 && b != 1 && a != b)
      return c.fail() << "cannot expand " << x << " to the requested shape";
    out.push_back(a == 1 ? b : a);
  }
  return c.set(0, out, x.getElementType());
}

LogicalResult tileRule(const Ctx &c) {
  auto x = c.in(0);
  auto rep = constInts(c, 1);
  // Repeats computed at run time: the rank is the input's.
  if (x && !rep)
    return c.set(0, SmallVector<int64_t>(x.getRank(), kDyn), x.getElementType());
  if (!x || !rep)
    return success();
  if ((int64_t)rep->size() != x.getRank())
    return c.fail() << "repeats has " << rep->size() << " entries for rank " << x.getRank();
  SmallVector<int64_t> out;
  for (int64_t i = 0; i < x.getRank(); ++i)
    out.push_back(x.isDynamicDim(i) ? kDyn : x.getDimSize(i) * (*rep)[i]);
  return c.set(0, out, x.getElementType());
}

} // namespace

LogicalResult resolvePads(Operation *op, int64_t rank,
                          SmallVectorImpl<int64_t> &low,
                          SmallVectorImpl<int64_t> &high) {
  auto pads = getConstantInts(op->getOperand(1));
  if (!pads)
    return failure();
  SmallVector<int64_t> axes;
  if (op->getNumOperands() > 3 && !isNone(op->getOperand(3))) {
    auto a = getConstantInts(op->getOperand(3));
    if (!a)
      return failure();
    for (int64_t x : *a)
      axes.push_back(x < 0 ? x + rank : x);
  } else {
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  }
  if (pads->size() != 2 * axes.size())
    return emitNodeError(op) << "pads has " << pads->size() << " entries for "
                             << axes.size() << " axes";
  low.assign(rank, 0);
  high.assign(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= rank)
      return emitNodeError(op) << "axis out of range";
    low[axes[i]] = (*pads)[i];
    high[axes[i]] = (*pads)[i + axes.size()];
  }
  return success();
}

namespace {

LogicalResult padRule(const Ctx &c) {
  auto x = c.in(0);
  if (!x)
    return success();
  SmallVector<int64_t> low, high;
  if (failed(resolvePads(c.op, x.getRank(), low, high)))
    return success();
  SmallVector<int64_t> out;
  for (int64_t i = 0; i < x.getRank(); ++i)
    out.push_back(x.isDynamicDim(i) ? kDyn : x.getDimSize(i) + low[i] + high[i]);
  return c.set(0, out, x.getElementType());
}

LogicalResult depthSpaceRule(const Ctx &c, bool toSpace) {
  auto x = c.in(0);
  if (!x)
    return success();
  if (x.getRank() != 4)
    return c.fail() << "input must be 4-D";
  int64_t bs = getIntAttr(c.op, "blocksize", 1);
  int64_t n = x.getDimSize(0), ch = x.getDimSize(1), h = x.getDimSize(2), w = x.getDimSize(3);
  auto mul = [](int64_t a, int64_t f) { return a == kDyn ? kDyn : a * f; };
  auto div = [](int64_t a, int64_t f) { return a == kDyn ? kDyn : a / f; };
  if (toSpace)
    return c.set(0, {n, div(ch, bs * bs), mul(h, bs), mul(w, bs)}, x.getElementType());
  return c.set(0, {n, mul(ch, bs * bs), div(h, bs), div(w, bs)}, x.getElementType());
}

LogicalResult gatherElementsRule(const Ctx &c) {
  auto x = c.in(0), idx = c.in(1);
  if (!x || !idx)
    return success();
  if (x.getRank() != idx.getRank())
    return c.fail() << "data has rank " << x.getRank() << ", indices rank "
                    << idx.getRank() << " (they must agree)";
  return c.set(0, idx.getShape(), x.getElementType());
}

LogicalResult gatherNDRule(const Ctx &c) {
  auto x = c.in(0), idx = c.in(1);
  if (!x || !idx)
    return success();
  int64_t b = getIntAttr(c.op, "batch_dims", 0);
  if (idx.getRank() < 1 || b < 0 || b >= std::min(x.getRank(), idx.getRank()))
    return c.fail() << "batch_dims " << b << " does not fit data of rank "
                    << x.getRank() << " and indices of rank " << idx.getRank();
  if (idx.isDynamicDim(idx.getRank() - 1))
    return success();
  int64_t last = idx.getDimSize(idx.getRank() - 1);
  if (last < 1 || b + last > x.getRank())
    return c.fail() << "index tuples of " << last
                    << " entries do not fit data of rank " << x.getRank()
                    << " after " << b << " batch dims";
  SmallVector<int64_t> out(idx.getShape().drop_back());
  out.append(x.getShape().begin() + b + last, x.getShape().end());
  return c.set(0, out, x.getElementType());
}

LogicalResult rangeRule(const Ctx &c) {
  auto s = getConstantDoubles(c.op->getOperand(0)), l = getConstantDoubles(c.op->getOperand(1)),
       d = getConstantDoubles(c.op->getOperand(2));
  Type elt = c.elt(0);
  if (!s || !l || !d || s->empty() || l->empty() || d->empty())
    return c.set(0, {kDyn}, elt);
  double n = std::ceil(((*l)[0] - (*s)[0]) / (*d)[0]);
  return c.set(0, {std::max<int64_t>(0, (int64_t)n)}, elt);
}

/// MaxUnpool: the output_shape input (with a run-time one, the model's
/// declared shape), else the shape its attributes give.
LogicalResult maxUnpoolRule(const Ctx &c) {
  auto x = c.in(0);
  if (!x)
    return success();
  if (c.op->getNumOperands() > 2 && !isNone(c.op->getOperand(2))) {
    if (auto shape = constInts(c, 2))
      return c.set(0, *shape, x.getElementType());
    return c.set(0, SmallVector<int64_t>(x.getRank(), kDyn), x.getElementType());
  }
  if (getIntsAttr(c.op, "kernel_shape").size() + 2 != (size_t)x.getRank())
    return c.fail() << "kernel_shape needs one entry per spatial dimension";
  if (auto shape = maxUnpoolDefaultShape(c.op))
    return c.set(0, *shape, x.getElementType());
  return success();
}

LogicalResult oneHotRule(const Ctx &c) {
  auto idx = c.in(0);
  auto depth = getConstantDoubles(c.op->getOperand(1));
  if (!idx || !depth || depth->empty())
    return success();
  int64_t r = idx.getRank() + 1;
  int64_t axis = normAxis(getIntAttr(c.op, "axis", -1), r);
  SmallVector<int64_t> out(idx.getShape());
  out.insert(out.begin() + axis, (int64_t)(*depth)[0]);
  return c.set(0, out, c.elt(2));
}

} // namespace

/// Per-axis output sizes of Resize/Upsample from constant scales or sizes.
ResizeInputs resizeInputs(Operation *op, int64_t rank) {
  ResizeInputs in;
  // Upsample and Resize-10 take (X, scales); Resize-11 on (X, roi, scales, sizes).
  if (op->getName().getStringRef() == "onnx.Upsample" ||
      getIntAttr(op, "onnx.version", 0) == 10) {
    in.scales = op->getOperand(1);
  } else {
    auto at = [&](unsigned i) { return op->getNumOperands() > i ? op->getOperand(i) : Value(); };
    in.roi = at(1), in.scales = at(2), in.sizes = at(3);
  }
  in.axes = getIntsAttr(op, "axes");
  if (in.axes.empty())
    for (int64_t i = 0; i < rank; ++i)
      in.axes.push_back(i);
  for (int64_t &a : in.axes)
    if (a < 0)
      a += rank;
  return in;
}

LogicalResult resolveResize(Operation *op, ArrayRef<int64_t> in,
                            SmallVectorImpl<int64_t> &out,
                            SmallVectorImpl<double> &scales) {
  int64_t r = in.size();
  ResizeInputs inputs = resizeInputs(op, r);
  Value scalesV = inputs.scales, sizesV = inputs.sizes;
  ArrayRef<int64_t> axes = inputs.axes;
  out.assign(in.begin(), in.end());
  scales.assign(r, 1.0);
  auto sc = getConstantDoubles(scalesV);
  if (sc && !sc->empty()) {
    if (sc->size() != axes.size())
      return emitNodeError(op) << "scales has " << sc->size() << " entries for "
                               << axes.size() << " axes";
    for (size_t i = 0; i < axes.size(); ++i) {
      scales[axes[i]] = (*sc)[i];
      out[axes[i]] = (int64_t)std::floor(in[axes[i]] * (*sc)[i]);
    }
    return success();
  }
  auto sz = getConstantInts(sizesV);
  if (!sz)
    return failure();
  if (sz->size() != axes.size())
    return emitNodeError(op) << "sizes has " << sz->size() << " entries for "
                             << axes.size() << " axes";
  StringRef policy = getStrAttr(op, "keep_aspect_ratio_policy", "stretch");
  double common = policy == "not_smaller" ? 0.0 : 1e300;
  for (size_t i = 0; i < axes.size(); ++i) {
    double s = (double)(*sz)[i] / in[axes[i]];
    common = policy == "not_smaller" ? std::max(common, s) : std::min(common, s);
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    if (policy == "stretch") {
      out[axes[i]] = (*sz)[i];
      scales[axes[i]] = (double)(*sz)[i] / in[axes[i]];
    } else {
      out[axes[i]] = (int64_t)std::round(in[axes[i]] * common);
      scales[axes[i]] = common;
    }
  }
  return success();
}

namespace {

LogicalResult resizeRule(const Ctx &c) {
  auto x = c.in(0);
  if (!x)
    return success();
  SmallVector<int64_t> out;
  SmallVector<double> scales;
  if (x.hasStaticShape()) {
    if (failed(resolveResize(c.op, x.getShape(), out, scales)))
      return success();
    return c.set(0, out, x.getElementType());
  }
  // Dims of run-time size: the rank is known; a dim stays static where
  // the input's is and the scales (not the other dims) decide it, or
  // where constant sizes give it; the others are `?` (kiln-symbolic-shapes
  // sizes them).
  int64_t rank = x.getRank();
  ResizeInputs ri = resizeInputs(c.op, rank);
  SmallVector<int64_t> probe(x.getShape());
  for (int64_t &d : probe)
    if (d == kDyn)
      d = 1;
  SmallVector<int64_t> dims(rank, kDyn);
  bool stretch = getStrAttr(c.op, "keep_aspect_ratio_policy", "stretch") == "stretch";
  auto sizes = ri.sizes && !isNone(ri.sizes) ? getConstantInts(ri.sizes) : std::nullopt;
  bool bySizes = sizes && !sizes->empty();
  if (succeeded(resolveResize(c.op, probe, out, scales))) {
    for (int64_t d = 0; d < rank; ++d)
      if ((bySizes && stretch) || (!x.isDynamicDim(d) && (stretch || !llvm::is_contained(ri.axes, d))))
        dims[d] = out[d];
  } else {
    for (int64_t d = 0; d < rank; ++d)
      if (!llvm::is_contained(ri.axes, d))
        dims[d] = x.getDimSize(d);
  }
  return c.set(0, dims, x.getElementType());
}

LogicalResult convTransposeRule(const Ctx &c) {
  auto x = c.in(0), w = c.in(1);
  if (!x || !w || !w.hasStaticShape() || x.getRank() < 3)
    return success();
  // Spatial dims of run-time size stay dynamic (sized by the symbolic
  // shapes and at run time); the rest as for a static input.
  SmallVector<int64_t> inSp;
  for (int64_t i = 2; i < x.getRank(); ++i)
    inSp.push_back(x.isDynamicDim(i) ? 1 : x.getDimSize(i));
  SmallVector<int64_t> pb, pe, outSp;
  if (failed(convTransposePads(c.op, inSp, w.getShape().drop_front(2), pb, pe, outSp)))
    return failure();
  for (int64_t i = 2; i < x.getRank(); ++i)
    if (x.isDynamicDim(i))
      outSp[i - 2] = kDyn;
  SmallVector<int64_t> out = {x.getDimSize(0),
                              w.getDimSize(1) * getIntAttr(c.op, "group", 1)};
  out.append(outSp);
  return c.set(0, out, x.getElementType());
}

LogicalResult einsumRule(const Ctx &c) {
  SmallVector<SmallVector<char>> ins;
  SmallVector<char> outL;
  if (failed(parseEinsum(c.op, ins, outL)))
    return failure();
  llvm::DenseMap<char, int64_t> dims;
  for (auto [i, labels] : llvm::enumerate(ins)) {
    auto t = c.in(i);
    if (!t)
      return success();
    if (t.getRank() != static_cast<int64_t>(labels.size()))
      return c.fail() << "input " << i << " has rank " << t.getRank()
                      << ", the equation gives it " << labels.size()
                      << " labels";
    for (auto [j, l] : llvm::enumerate(labels))
      if (!t.isDynamicDim(j))
        dims[l] = std::max<int64_t>(dims.lookup(l), t.getDimSize(j));
  }
  SmallVector<int64_t> out;
  for (char l : outL)
    out.push_back(dims.count(l) ? dims[l] : kDyn);
  return c.set(0, out, c.elt(0));
}

void addDataMovementRules(llvm::StringMap<Rule> &m) {
  m["Slice"] = sliceRule;
  m["Split"] = splitRule;
  m["Expand"] = expandRule;
  m["Tile"] = tileRule;
  m["Pad"] = padRule;
  m["DepthToSpace"] = [](const Ctx &c) { return depthSpaceRule(c, true); };
  m["SpaceToDepth"] = [](const Ctx &c) { return depthSpaceRule(c, false); };
  m["GatherElements"] = gatherElementsRule;
  m["GatherND"] = gatherNDRule;
  for (const char *op : kSameAsDataOps)
    m[op] = [](const Ctx &c) { return c.same(); };
  m["EyeLike"] = [](const Ctx &c) {
    auto x = c.in(0);
    if (!x)
      return success();
    return c.set(0, x.getShape(),
                 dtypeToType(c.op->getContext(), getIntAttr(c.op, "dtype", 0),
                             x.getElementType()));
  };
  m["Size"] = [](const Ctx &c) {
    return c.set(0, {}, IntegerType::get(c.op->getContext(), 64));
  };
  // Data-dependent result lengths stay `?`.
  m["NonZero"] = [](const Ctx &c) {
    auto x = c.in(0);
    return x ? c.set(0, {x.getRank(), kDyn}, IntegerType::get(c.op->getContext(), 64))
             : success();
  };
  m["NonMaxSuppression"] = [](const Ctx &c) {
    return c.set(0, {kDyn, 3}, IntegerType::get(c.op->getContext(), 64));
  };
  m["Compress"] = [](const Ctx &c) -> LogicalResult {
    auto x = c.in(0);
    if (!x)
      return success();
    auto axis = c.op->getAttrOfType<IntegerAttr>("axis");
    if (!axis)
      return c.set(0, {kDyn}, x.getElementType());
    int64_t a = normAxis(axis.getInt(), x.getRank());
    if (a < 0 || a >= x.getRank())
      return c.fail() << "axis " << axis.getInt() << " is out of range for " << x;
    SmallVector<int64_t> dims(x.getShape());
    dims[a] = kDyn;
    return c.set(0, dims, x.getElementType());
  };
  m["Unique"] = [](const Ctx &c) -> LogicalResult {
    auto x = c.in(0);
    if (!x)
      return success();
    Type i64 = IntegerType::get(c.op->getContext(), 64);
    auto axis = c.op->getAttrOfType<IntegerAttr>("axis");
    SmallVector<int64_t> y = {kDyn};
    int64_t inverse = x.hasStaticShape() ? x.getNumElements() : kDyn;
    if (axis) {
      int64_t a = normAxis(axis.getInt(), x.getRank());
      if (a < 0 || a >= x.getRank())
        return c.fail() << "axis " << axis.getInt() << " is out of range for " << x;
      y.assign(x.getShape().begin(), x.getShape().end());
      y[a] = kDyn;
      inverse = x.getDimSize(a);
    }
    if (failed(c.set(0, y, x.getElementType())))
      return failure();
    for (unsigned i = 1; i < c.op->getNumResults(); ++i)
      if (!isa<NoneType>(c.op->getResult(i).getType()) &&
          failed(c.set(i, {i == 2 ? inverse : kDyn}, i64)))
        return failure();
    return success();
  };
  m["OptionalHasElement"] = [](const Ctx &c) {
    return c.set(0, {}, IntegerType::get(c.op->getContext(), 1));
  };
  m["ConstantOfShape"] = [](const Ctx &c) {
    auto shape = constInts(c, 0);
    Type elt = Float32Type::get(c.op->getContext());
    if (auto v = c.op->getAttrOfType<ElementsAttr>("value"))
      elt = v.getElementType();
    if (!shape) {
      if (auto st = c.in(0); st && st.hasStaticShape())
        return c.set(0, SmallVector<int64_t>(st.getDimSize(0), kDyn), elt);
      return success();
    }
    return c.set(0, *shape, elt);
  };
  m["Range"] = rangeRule;
  m["MaxUnpool"] = maxUnpoolRule;
  // Optimizers (ai.onnx.preview.training): R, T, then groups of n tensors
  // (X, G, V[, H]); the results are the new X, V[, H], each shaped like its
  // input.
  for (auto [name, groups] : {std::pair("Momentum", 3), {"Adagrad", 3}, {"Adam", 4}})
    m[name] = [groups = groups](const Ctx &c) -> LogicalResult {
      int64_t n = ((int64_t)c.op->getNumOperands() - 2) / groups;
      if (n <= 0 || (int64_t)c.op->getNumResults() != n * (groups - 1))
        return c.fail() << "expects R, T and " << groups << " groups of tensors";
      for (int64_t j = 0; j < (int64_t)c.op->getNumResults(); ++j) {
        int64_t group = j / n == 0 ? 0 : j / n + 1;
        if (auto t = c.in(2 + group * n + j % n))
          if (failed(c.set(j, t.getShape(), t.getElementType())))
            return failure();
      }
      return success();
    };
  // Scaler and Normalizer: the input's shape, in float.
  for (const char *name : {"Scaler", "Normalizer"})
    m[name] = [](const Ctx &c) {
      auto x = c.in(0);
      return x ? c.set(0, x.getShape(), Float32Type::get(c.op->getContext())) : success();
    };
  m["LinearRegressor"] = [](const Ctx &c) {
    auto x = c.in(0);
    if (!x || x.getRank() != 2)
      return success();
    return c.set(0, {x.getDimSize(0), getIntAttr(c.op, "targets", 1)},
                 Float32Type::get(c.op->getContext()));
  };
  m["TreeEnsemble"] = [](const Ctx &c) {
    auto x = c.in(0);
    if (!x || x.getRank() != 2)
      return success();
    return c.set(0, {x.getDimSize(0), getIntAttr(c.op, "n_targets", 1)}, x.getElementType());
  };
  // LabelEncoder: the input's shape, the values' type.
  m["LabelEncoder"] = [](const Ctx &c) {
    auto x = c.in(0);
    MLIRContext *ctx = c.op->getContext();
    Type elt;
    if (c.op->hasAttr("values_int64s"))
      elt = IntegerType::get(ctx, 64);
    else if (c.op->hasAttr("values_floats"))
      elt = Float32Type::get(ctx);
    else if (auto t = c.op->getAttrOfType<ElementsAttr>("values_tensor"))
      elt = t.getElementType();
    else if (c.op->hasAttr("values_strings"))
      elt = StringType::get(ctx);
    if (!x || !elt)
      return success();
    return c.set(0, x.getShape(), elt);
  };
  m["ArrayFeatureExtractor"] = [](const Ctx &c) {
    auto x = c.in(0), y = c.in(1);
    if (!x || !y || x.getRank() < 1 || !y.hasStaticShape())
      return success();
    SmallVector<int64_t> shape(x.getShape().drop_back());
    if (shape.empty())
      shape.push_back(1);
    shape.push_back(y.getNumElements());
    return c.set(0, shape, x.getElementType());
  };
  m["DeformConv"] = [](const Ctx &c) {
    auto x = c.in(0), w = c.in(1), offset = c.in(2);
    if (!x || !w || !offset || offset.getRank() < 3)
      return success();
    SmallVector<int64_t> shape = {x.getDimSize(0), w.getDimSize(0)};
    llvm::append_range(shape, offset.getShape().drop_front(2));
    return c.set(0, shape, x.getElementType());
  };
  m["RoiAlign"] = [](const Ctx &c) {
    auto x = c.in(0), rois = c.in(1);
    if (!x || !rois || x.getRank() != 4 || rois.getRank() != 2)
      return success();
    return c.set(0,
                 {rois.getDimSize(0), x.getDimSize(1), getIntAttr(c.op, "output_height", 1),
                  getIntAttr(c.op, "output_width", 1)},
                 x.getElementType());
  };
  m["Det"] = [](const Ctx &c) {
    auto x = c.in(0);
    if (!x || x.getRank() < 2)
      return success();
    return c.set(0, x.getShape().drop_back(2), x.getElementType());
  };
  m["OneHot"] = oneHotRule;
  m["Resize"] = resizeRule;
  m["Upsample"] = resizeRule;
  m["ConvTranspose"] = convTransposeRule;
  m["LpPool"] = poolRule;
  m["Einsum"] = einsumRule;
}

/// seq/optional values: element types joined over what the ops put in.
void addSequenceRules(llvm::StringMap<Rule> &m) {
  auto setType = [](const Ctx &c, unsigned i, Type t) {
    if (t)
      c.op->getResult(i).setType(t);
    return success();
  };
  // A tensor result keeps the model's declared shape where t knows less.
  auto setTensorOrSame = [setType](const Ctx &c, Type t) -> LogicalResult {
    if (auto r = dyn_cast_or_null<RankedTensorType>(t))
      return c.set(0, r.getShape(), r.getElementType());
    if (isa_and_nonnull<TensorType>(t) && isa<RankedTensorType>(c.op->getResult(0).getType()))
      return success();
    return setType(c, 0, t);
  };
  auto elementOf = [](Value v) -> Type {
    if (auto sq = dyn_cast<SeqType>(v.getType()))
      return sq.getElementType();
    return {};
  };
  m["SequenceEmpty"] = [setType](const Ctx &c) {
    MLIRContext *ctx = c.op->getContext();
    Type elt = dtypeToType(ctx, getIntAttr(c.op, "dtype", 1), Float32Type::get(ctx));
    return setType(c, 0, SeqType::get(ctx, UnrankedTensorType::get(elt)));
  };
  m["SequenceConstruct"] = [setType](const Ctx &c) -> LogicalResult {
    Type e = c.op->getOperand(0).getType();
    for (Value v : c.op->getOperands().drop_front())
      if (!(e = joinTypes(e, v.getType())))
        return c.fail() << "the tensors differ in element type";
    return setType(c, 0, SeqType::get(c.op->getContext(), e));
  };
  m["SequenceInsert"] = [setType, elementOf](const Ctx &c) -> LogicalResult {
    Type e = elementOf(c.op->getOperand(0));
    if (!e)
      return success();
    Type t = c.op->getOperand(1).getType();
    // Nothing is in an empty sequence yet, so its elements are the tensor's.
    Type j = staticSequenceLength(c.op->getOperand(0)) == 0 ? t : joinTypes(e, t);
    if (!j)
      return c.fail() << "cannot insert a " << t << " into a sequence of " << e;
    return setType(c, 0, SeqType::get(c.op->getContext(), j));
  };
  m["SequenceErase"] = [setType](const Ctx &c) {
    return isa<SeqType>(c.op->getOperand(0).getType())
               ? setType(c, 0, c.op->getOperand(0).getType())
               : success();
  };
  m["SequenceAt"] = [setTensorOrSame, elementOf](const Ctx &c) {
    return setTensorOrSame(c, elementOf(c.op->getOperand(0)));
  };
  m["SequenceLength"] = [](const Ctx &c) {
    return c.set(0, {}, IntegerType::get(c.op->getContext(), 64));
  };
  m["SplitToSequence"] = [setType](const Ctx &c) -> LogicalResult {
    auto x = c.in(0);
    if (!x)
      return success();
    int64_t axis = normAxis(getIntAttr(c.op, "axis", 0), x.getRank());
    if (axis < 0 || axis >= x.getRank())
      return c.fail() << "axis " << getIntAttr(c.op, "axis", 0) << " is out of range for "
                      << x;
    SmallVector<int64_t> dims(x.getShape());
    if (isNone(c.op->getOperand(1))) {
      if (getIntAttr(c.op, "keepdims", 1))
        dims[axis] = 1;
      else
        dims.erase(dims.begin() + axis);
    } else {
      auto split = getConstantInts(c.op->getOperand(1));
      bool equal = split && !split->empty() &&
                   llvm::all_of(*split, [&](int64_t v) { return v == split->front(); });
      // A scalar chunk that does not divide the axis leaves a shorter last piece.
      bool scalar = c.in(1) && c.in(1).getRank() == 0;
      dims[axis] = equal && (!scalar || (x.getDimSize(axis) != kDyn &&
                                         x.getDimSize(axis) % split->front() == 0))
                       ? split->front()
                       : kDyn;
    }
    return setType(c, 0, SeqType::get(c.op->getContext(),
                                      RankedTensorType::get(dims, x.getElementType())));
  };
  m["ConcatFromSequence"] = [elementOf](const Ctx &c) -> LogicalResult {
    auto e = dyn_cast_or_null<RankedTensorType>(elementOf(c.op->getOperand(0)));
    if (!e)
      return success();
    bool newAxis = getIntAttr(c.op, "new_axis", 0);
    int64_t rank = e.getRank() + (newAxis ? 1 : 0);
    int64_t axis = normAxis(getIntAttr(c.op, "axis", 0), rank);
    if (axis < 0 || axis >= rank)
      return c.fail() << "axis " << getIntAttr(c.op, "axis", 0) << " is out of range for "
                      << "rank " << rank;
    SmallVector<int64_t> dims(e.getShape());
    std::optional<int64_t> n = staticSequenceLength(c.op->getOperand(0));
    if (newAxis)
      dims.insert(dims.begin() + axis, n ? *n : kDyn);
    else
      dims[axis] = n && dims[axis] != kDyn ? *n * dims[axis] : kDyn;
    return c.set(0, dims, e.getElementType());
  };
  m["Optional"] = [setType](const Ctx &c) {
    Type inner;
    if (!isNone(c.op->getOperand(0)))
      inner = c.op->getOperand(0).getType();
    else if (auto t = c.op->getAttrOfType<TypeAttr>("type"))
      inner = t.getValue();
    return inner ? setType(c, 0, OptType::get(c.op->getContext(), inner)) : success();
  };
  // It also takes plain tensors and sequences (onnx 18), and passes them on.
  m["OptionalGetElement"] = [setTensorOrSame](const Ctx &c) {
    Type t = c.op->getOperand(0).getType();
    if (auto o = dyn_cast<OptType>(t))
      t = o.getElementType();
    return setTensorOrSame(c, t);
  };
  m["Identity"] = [setTensorOrSame](const Ctx &c) {
    return setTensorOrSame(c, c.op->getOperand(0).getType());
  };
}

LogicalResult generalizeCarried(Operation *op, unsigned nCarried);

const llvm::StringMap<Rule> &rules() {
  static const llvm::StringMap<Rule> table = [] {
    llvm::StringMap<Rule> m;
    auto same = [](const Ctx &c) { return c.same(); };
    for (const char *op : kSameShapeOps)
      m[op] = same;
    for (const char *op : {"IsNaN", "IsInf"})
      m[op] = [](const Ctx &c) {
        auto x = c.in(0);
        return x ? c.set(0, x.getShape(), IntegerType::get(c.op->getContext(), 1))
                 : success();
      };
    m["CastLike"] = [](const Ctx &c) {
      auto x = c.in(0);
      return x ? c.set(0, x.getShape(), c.elt(1)) : success();
    };
    // Optional extra outputs: set only those the node has.
    auto setIfPresent = [](const Ctx &c, unsigned i, ArrayRef<int64_t> shape,
                           Type elt) -> LogicalResult {
      if (i >= c.op->getNumResults() || isa<NoneType>(c.op->getResult(i).getType()))
        return success();
      return c.set(i, shape, elt);
    };
    m["Dropout"] = [setIfPresent](const Ctx &c) -> LogicalResult {
      auto x = c.in(0);
      if (!x)
        return success();
      if (failed(c.same()))
        return failure();
      return setIfPresent(c, 1, x.getShape(), IntegerType::get(c.op->getContext(), 1));
    };
    m["BatchNormalization"] = [setIfPresent](const Ctx &c) -> LogicalResult {
      if (failed(c.same()))
        return failure();
      for (unsigned i = 1; i < 3; ++i)
        if (auto t = c.in(i + 2); t && failed(setIfPresent(c, i, t.getShape(), t.getElementType())))
          return failure();
      return success();
    };
    m["LayerNormalization"] = [setIfPresent](const Ctx &c) -> LogicalResult {
      auto x = c.in(0);
      if (!x)
        return success();
      if (failed(c.same()))
        return failure();
      int64_t axis = normAxis(getIntAttr(c.op, "axis", -1), x.getRank());
      if (axis < 0 || axis >= x.getRank())
        return c.fail() << "axis out of range for " << x;
      SmallVector<int64_t> stats(x.getShape());
      for (int64_t i = axis; i < x.getRank(); ++i)
        stats[i] = 1;
      Type f32 = Float32Type::get(c.op->getContext());
      if (failed(setIfPresent(c, 1, stats, f32)))
        return failure();
      return setIfPresent(c, 2, stats, f32);
    };
    for (const char *op : {"ArgMax", "ArgMin"})
      m[op] = [](const Ctx &c) -> LogicalResult {
        auto x = c.in(0);
        if (!x)
          return success();
        int64_t axis = normAxis(getIntAttr(c.op, "axis", 0), x.getRank());
        if (axis < 0 || axis >= x.getRank())
          return c.fail() << "axis out of range for " << x;
        SmallVector<int64_t> out(x.getShape());
        if (getIntAttr(c.op, "keepdims", 1))
          out[axis] = 1;
        else
          out.erase(out.begin() + axis);
        return c.set(0, out, IntegerType::get(c.op->getContext(), 64));
      };
    m["TopK"] = [](const Ctx &c) -> LogicalResult {
      auto x = c.in(0);
      if (!x)
        return success();
      int64_t axis = normAxis(getIntAttr(c.op, "axis", -1), x.getRank());
      if (axis < 0 || axis >= x.getRank())
        return c.fail() << "axis out of range for " << x;
      SmallVector<int64_t> out(x.getShape());
      auto k = getConstantInts(c.op->getOperand(1));
      if (k && k->size() != 1)
        return c.fail() << "k must hold one value";
      if (k && x.getDimSize(axis) != kDyn && ((*k)[0] < 0 || (*k)[0] > x.getDimSize(axis)))
        return c.fail() << "k = " << (*k)[0] << " is out of range for " << x;
      out[axis] = k ? (*k)[0] : kDyn;
      if (failed(c.set(0, out, x.getElementType())))
        return failure();
      return c.set(1, out, IntegerType::get(c.op->getContext(), 64));
    };
    for (const char *op : kBroadcastOps)
      m[op] = [](const Ctx &c) { return broadcastRule(c); };
    for (const char *op : kComparisonOps)
      m[op] = [](const Ctx &c) {
        return broadcastRule(c, IntegerType::get(c.op->getContext(), 1));
      };
    m["Where"] = [](const Ctx &c) {
      auto shape = broadcastShapes(c, c.op->getOperands());
      if (failed(shape))
        return failure();
      return *shape ? c.set(0, **shape, c.elt(1)) : success();
    };
    m["If"] = [](const Ctx &c) -> LogicalResult {
      // Both branches must agree on element types; differing dims stay `?`.
      Operation *op = c.op;
      Operation *elseYield = op->getRegion(0).front().getTerminator();
      Operation *thenYield = op->getRegion(1).front().getTerminator();
      if (thenYield->getNumOperands() != op->getNumResults() ||
          elseYield->getNumOperands() != op->getNumResults())
        return c.fail() << "branches yield " << thenYield->getNumOperands()
                        << " and " << elseYield->getNumOperands()
                        << " values for " << op->getNumResults() << " outputs";
      for (unsigned i = 0; i < op->getNumResults(); ++i) {
        Type thenType = thenYield->getOperand(i).getType();
        Type elseType = elseYield->getOperand(i).getType();
        if (!isa<TensorType>(thenType)) {
          Type j = joinTypes(thenType, elseType);
          if (!j)
            return c.fail() << "branches yield " << thenType << " and " << elseType
                            << " for output " << i;
          op->getResult(i).setType(j);
          continue;
        }
        auto a = dyn_cast<RankedTensorType>(thenType);
        auto b = dyn_cast<RankedTensorType>(elseType);
        if (!a || !b)
          continue;
        if (a.getElementType() != b.getElementType())
          return c.fail() << "branches yield " << a << " and " << b << " for output " << i;
        if (a.getRank() != b.getRank()) {
          op->getResult(i).setType(UnrankedTensorType::get(a.getElementType()));
          continue;
        }
        SmallVector<int64_t> dims;
        for (int64_t d = 0; d < a.getRank(); ++d)
          dims.push_back(a.getDimSize(d) == b.getDimSize(d) ? a.getDimSize(d) : kDyn);
        if (failed(c.set(i, dims, a.getElementType())))
          return failure();
      }
      return success();
    };
    m["Loop"] = [](const Ctx &c) -> LogicalResult {
      // A loop-carried value has one type in every iteration: what its
      // initial value and the body's new value agree on. (Scan outputs
      // are typed when a known trip count unrolls the loop.)
      Operation *op = c.op;
      Operation *yield = op->getRegion(0).front().getTerminator();
      unsigned nCarried = op->getNumOperands() - 2;
      if (yield->getNumOperands() < nCarried + 1 || op->getNumResults() < nCarried)
        return success();
      if (failed(generalizeCarried(op, nCarried)))
        return failure();
      for (unsigned k = 0; k < nCarried; ++k) {
        Type j = joinTypes(op->getOperand(2 + k).getType(), yield->getOperand(1 + k).getType());
        if (auto r = dyn_cast_or_null<RankedTensorType>(j)) {
          if (failed(c.set(k, r.getShape(), r.getElementType())))
            return failure();
        } else if (j && !isa<TensorType>(j)) {
          op->getResult(k).setType(j);
        }
      }
      return success();
    };
    m["MatMul"] = matmulRule;
    m["Gemm"] = gemmRule;
    m["Conv"] = convRule;
    // Integer and quantized kin: int32 accumulators, or y_zero_point's type.
    m["ConvInteger"] = [](const Ctx &c) {
      return convShape(c, 0, 1, IntegerType::get(c.op->getContext(), 32));
    };
    m["MatMulInteger"] = [](const Ctx &c) {
      return matmulShape(c, 0, 1, IntegerType::get(c.op->getContext(), 32));
    };
    // (De)quantization keeps x's shape: DequantizeLinear gives the scale's
    // type (or output_dtype), QuantizeLinear the zero point's (or
    // output_dtype, else uint8).
    m["DequantizeLinear"] = [](const Ctx &c) {
      auto x = c.in(0);
      Type elt = dtypeToType(c.op->getContext(), getIntAttr(c.op, "output_dtype", 0), c.elt(1));
      return x && elt ? c.set(0, x.getShape(), elt) : success();
    };
    m["QuantizeLinear"] = [](const Ctx &c) {
      auto x = c.in(0);
      Type zp = c.op->getNumOperands() > 2 && isa<ShapedType>(c.op->getOperand(2).getType())
                    ? c.elt(2)
                    : Type();
      Type elt = dtypeToType(c.op->getContext(), getIntAttr(c.op, "output_dtype", 0),
                             zp ? zp : IntegerType::get(c.op->getContext(), 8, IntegerType::Unsigned));
      return x && elt ? c.set(0, x.getShape(), elt) : success();
    };
    m["QLinearConv"] = [](const Ctx &c) { return convShape(c, 0, 3, c.elt(7)); };
    m["QLinearMatMul"] = [](const Ctx &c) { return matmulShape(c, 0, 3, c.elt(7)); };
    m["MaxPool"] = poolRule;
    m["AveragePool"] = poolRule;
    m["GlobalAveragePool"] = globalPoolRule;
    m["GlobalMaxPool"] = globalPoolRule;
    m["Flatten"] = flattenRule;
    m["Reshape"] = reshapeRule;
    m["Transpose"] = transposeRule;
    m["Concat"] = concatRule;
    m["Squeeze"] = [](const Ctx &c) { return squeezeLike(c, false); };
    m["Unsqueeze"] = [](const Ctx &c) { return squeezeLike(c, true); };
    for (const char *op : {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin",
                           "ReduceProd", "ReduceL1", "ReduceL2",
                           "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"})
      m[op] = reduceRule;
    m["Gather"] = gatherRule;
    m["Constant"] = constantRule;
    addDataMovementRules(m);
    m["Shape"] = [](const Ctx &c) {
      auto x = c.in(0);
      if (!x)
        return success();
      int64_t r = x.getRank();
      int64_t start = normAxis(getIntAttr(c.op, "start", 0), r);
      int64_t end = c.op->hasAttr("end") ? normAxis(getIntAttr(c.op, "end", r), r) : r;
      start = std::clamp<int64_t>(start, 0, r);
      end = std::clamp<int64_t>(end, 0, r);
      return c.set(0, {std::max<int64_t>(0, end - start)},
                   IntegerType::get(c.op->getContext(), 64));
    };
    m["Cast"] = [](const Ctx &c) -> LogicalResult {
      // The importer already set the element type from `to`.
      auto x = c.in(0);
      auto y = dyn_cast<ShapedType>(c.op->getResult(0).getType());
      if (!y)
        return c.fail() << "the output is declared as "
                        << c.op->getResult(0).getType() << ", not a tensor";
      return x ? c.set(0, x.getShape(), y.getElementType()) : success();
    };
    addSequenceRules(m);
    return m;
  }();
  return table;
}

} // namespace

std::optional<SmallVector<int64_t>> maxUnpoolDefaultShape(Operation *op) {
  auto x = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  SmallVector<int64_t> kernel = getIntsAttr(op, "kernel_shape");
  if (!x || !x.hasStaticShape() || x.getRank() < 3 || (int64_t)kernel.size() != x.getRank() - 2)
    return std::nullopt;
  int64_t spatial = x.getRank() - 2;
  SmallVector<int64_t> strides = getIntsAttr(op, "strides"), pads = getIntsAttr(op, "pads");
  strides.resize(spatial, 1);
  pads.resize(2 * spatial, 0);
  SmallVector<int64_t> out(x.getShape().take_front(2));
  for (int64_t d = 0; d < spatial; ++d)
    out.push_back((x.getDimSize(d + 2) - 1) * strides[d] - pads[d] - pads[d + spatial] +
                  kernel[d]);
  return out;
}

namespace {
/// A Loop body typed from the carried values' initial types (the importer
/// gives a body input its initial value's static shape) is wrong for a
/// value whose shape changes per iteration (a growing Concat): such a body
/// input becomes the join of its type and the body's new value, and the
/// body is inferred again from that, with its results' earlier types
/// dropped, until the carried types hold in every iteration.
LogicalResult generalizeCarried(Operation *op, unsigned nCarried) {
  Block &body = op->getRegion(0).front();
  Operation *yield = body.getTerminator();
  for (int round = 0; round < 4; ++round) {
    bool changed = false;
    for (unsigned k = 0; k < nCarried && 2 + k < body.getNumArguments(); ++k) {
      BlockArgument arg = body.getArgument(2 + k);
      Type next = yield->getOperand(1 + k).getType();
      if (!isa<TensorType>(arg.getType()) || !isa<TensorType>(next))
        continue;
      Type j = joinTypes(arg.getType(), next);
      if (j && j != arg.getType()) {
        arg.setType(j);
        changed = true;
      }
    }
    if (!changed)
      return success();
    body.walk([](Operation *inner) {
      if (inner->getName().getStringRef() == "onnx.Constant")
        return;
      for (Value r : inner->getResults())
        if (auto t = dyn_cast<TensorType>(r.getType()))
          r.setType(UnrankedTensorType::get(t.getElementType()));
    });
    if (body.walk([](Operation *inner) {
              return failed(inferShapesFor(inner)) ? WalkResult::interrupt()
                                                   : WalkResult::advance();
            }).wasInterrupted())
      return failure();
  }
  return success();
}
} // namespace

/// Shape inputs that ONNX defines as 1-D lists of dims: the rules read a
/// run-time shape's rank from their dim 0.
LogicalResult checkListInputs(Operation *op, StringRef name) {
  static const llvm::StringMap<SmallVector<unsigned, 1>> lists = {
      {"Reshape", {1}}, {"Expand", {1}}, {"ConstantOfShape", {0}}};
  auto it = lists.find(name);
  if (it == lists.end())
    return success();
  for (unsigned i : it->second) {
    if (i >= op->getNumOperands() || isNone(op->getOperand(i)))
      continue;
    auto t = dyn_cast<RankedTensorType>(op->getOperand(i).getType());
    if (t && t.getRank() != 1)
      return emitNodeError(op)
             << "input " << i << " is " << t << ", not a 1-D tensor";
  }
  return success();
}

LogicalResult inferShapesFor(Operation *op) {
  StringRef name = op->getName().getStringRef();
  if (!name.consume_front("onnx."))
    return success();
  auto it = rules().find(name);
  if (it == rules().end())
    return success();
  if (failed(checkListInputs(op, name)))
    return failure();
  // Control flow: each subgraph attribute given, as a body ending in its
  // onnx.Yield.
  for (Region &r : op->getRegions())
    if (!r.hasOneBlock() || !r.front().mightHaveTerminator())
      return emitNodeError(op) << "a subgraph attribute is missing or empty";
  if (name == "Loop" && op->getNumOperands() < 2)
    return emitNodeError(op)
           << "needs the inputs M and cond (either may be empty)";
  return it->second(Ctx{op});
}

bool hasShapeInference(StringRef opType) { return rules().count(opType); }

} // namespace kiln::onnx
