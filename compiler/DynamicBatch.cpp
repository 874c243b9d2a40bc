//===- DynamicBatch.cpp - a batch dimension resolved at run time ----------===//
#include "compiler/DynamicBatch.h"
#include "compiler/Importer.h"
#include "dialects/onnx/ShapeInference.h"
#include "passes/FusionUtils.h"
#include "passes/NodeName.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

#include <cstring>

using namespace mlir;

namespace kiln {

static func::FuncOp mainOf(ModuleOp m) {
  return m.lookupSymbol<func::FuncOp>("main");
}

namespace {
struct SymbolicDim {
  std::string input, symbol;
  int64_t axis;
};

/// The symbolic dims of the inputs, in order.
SmallVector<SymbolicDim> symbolicDims(func::FuncOp func) {
  SmallVector<SymbolicDim> dims;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto names = func.getArgAttrOfType<ArrayAttr>(i, "onnx.dim_params");
    auto input = func.getArgAttrOfType<StringAttr>(i, "onnx.name");
    if (!names)
      continue;
    for (auto [axis, a] : llvm::enumerate(names))
      if (StringRef s = cast<StringAttr>(a).getValue(); !s.empty())
        dims.push_back({input ? input.str() : "#" + std::to_string(i), s.str(),
                        static_cast<int64_t>(axis)});
  }
  return dims;
}

/// The batch is the first dimension's symbol.
std::optional<std::string> batchOf(ArrayRef<SymbolicDim> dims) {
  for (const SymbolicDim &d : dims)
    if (d.axis == 0)
      return d.symbol;
  return std::nullopt;
}

bool isBatchDim(const SymbolicDim &d, const std::optional<std::string> &batch) {
  return batch && d.symbol == *batch && (d.axis == 0 || d.symbol != kUnnamedDim.str());
}
} // namespace

bool hasSymbolsBesidesBatch(ModuleOp module) {
  func::FuncOp func = mainOf(module);
  if (!func)
    return false;
  SmallVector<SymbolicDim> dims = symbolicDims(func);
  std::optional<std::string> batch = batchOf(dims);
  return llvm::any_of(dims, [&](const SymbolicDim &d) { return !isBatchDim(d, batch); });
}

FailureOr<std::optional<std::string>> findBatchSymbol(ModuleOp module) {
  func::FuncOp func = mainOf(module);
  if (!func)
    return std::optional<std::string>();
  SmallVector<SymbolicDim> dims = symbolicDims(func);
  if (dims.empty())
    return std::optional<std::string>();
  // Samples are run one by one on slices of tensors; a sequence's elements
  // cannot be sliced that way.
  auto tensorsOnly = [](TypeRange types) {
    return llvm::all_of(types, [](Type t) { return isa<TensorType, NoneType>(t); });
  };
  if (!tensorsOnly(func.getArgumentTypes()) || !tensorsOnly(func.getResultTypes()))
    return emitError(func.getLoc())
           << "input \"" << dims.front().input << "\" dimension " << dims.front().axis
           << " is symbolic: pin it with --input-shape " << dims.front().input
           << "=d0,d1,...; a run-time batch is not supported for a model with "
              "sequence or optional inputs or outputs";
  // Every symbolic dimension other than the batch must be pinned.
  std::optional<std::string> batch = batchOf(dims);
  for (const SymbolicDim &d : dims) {
    if (isBatchDim(d, batch))
      continue;
    auto diag = emitError(func.getLoc())
                << "input \"" << d.input << "\" dimension " << d.axis << " ("
                << (d.symbol == kUnnamedDim.str() ? "unnamed"
                                                  : "\"" + d.symbol + "\"")
                << ") is symbolic: pin it with --input-shape " << d.input << "=d0,d1,...";
    if (d.symbol != kUnnamedDim.str())
      diag << " or compile it for the sizes it will run at with --dim-values " << d.symbol
           << "=V1,V2,...";
    diag << "; ";
    if (batch)
      diag << "kiln resolves only the batch dimension ("
           << (*batch == kUnnamedDim.str() ? "the unnamed first dimension"
                                           : "\"" + *batch + "\"")
           << ") at run time";
    else
      diag << "kiln resolves only a batch dimension, the first of an input, "
              "at run time";
    return failure();
  }
  return batch;
}

namespace {

/// How a value relates to the batch.
struct Batched {
  /// The axis that holds the samples (-1: the same for every sample) and
  /// its extent per batch unit (the axis is k * batch long).
  int axis = -1;
  int64_t k = 0;
  /// How many blocks of samples the axis holds: a reshape of [S, B, E] to
  /// [S*B, E] interleaves them (within = S), each sample's slice being
  /// k / within long in every block.
  int64_t within = 1;
  /// Its values (not its shape) depend on the batch size: a shape computed
  /// from a batched tensor.
  bool byValue = false;
};

int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

/// The bytes of a constant, splats expanded; std::nullopt for data kiln
/// cannot read (bit-packed or missing blobs).
std::optional<std::vector<char>> constantBytes(ElementsAttr attr) {
  Type elt = attr.getElementType();
  if (!elt.isIntOrFloat() || elt.getIntOrFloatBitWidth() % 8 != 0)
    return std::nullopt;
  size_t width = elt.getIntOrFloatBitWidth() / 8;
  size_t n = attr.getNumElements();
  ArrayRef<char> raw;
  bool splat = false;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    raw = dense.getRawData();
    splat = dense.isSplat();
  } else if (auto res = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = res.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    raw = blob->getData();
  } else {
    return std::nullopt;
  }
  if (splat) {
    if (raw.size() < width)
      return std::nullopt;
    std::vector<char> out(n * width);
    for (size_t i = 0; i < n; ++i)
      std::memcpy(out.data() + i * width, raw.data(), width);
    return out;
  }
  if (raw.size() != n * width)
    return std::nullopt;
  return std::vector<char>(raw.begin(), raw.end());
}

/// Whether every sample's slice of a batched constant holds the same data.
bool samplesAgree(ElementsAttr attr, int axis, int64_t k) {
  auto type = cast<ShapedType>(attr.getType());
  if (auto dense = dyn_cast<DenseElementsAttr>(attr); dense && dense.isSplat())
    return true;
  auto bytes = constantBytes(attr);
  if (!bytes)
    return false;
  ArrayRef<int64_t> shape = type.getShape();
  int64_t outer = product(shape.take_front(axis));
  int64_t samples = shape[axis] / k;
  size_t chunk = bytes->size() / (outer * samples);
  for (int64_t o = 0; o < outer; ++o) {
    const char *first = bytes->data() + o * samples * chunk;
    for (int64_t s = 1; s < samples; ++s)
      if (std::memcmp(first, first + s * chunk, chunk) != 0)
        return false;
  }
  return true;
}

class Analysis {
public:
  Analysis(int64_t sizeA, int64_t sizeB) : sizeA(sizeA), sizeB(sizeB) {}

  LogicalResult run(func::FuncOp fa, func::FuncOp fb, BatchPlan &plan);

private:
  LogicalResult classify(Value a, Value b, Operation *op, const Twine &what);
  LogicalResult checkConstant(Operation *a, Operation *b);
  LogicalResult checkOp(Operation *op);
  LogicalResult checkElementwise(Operation *op);

  Batched info(Value v) const {
    auto it = infos.find(v);
    return it == infos.end() ? Batched() : it->second;
  }
  static ArrayRef<int64_t> shapeOf(Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  }
  static int rankOf(Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t ? t.getRank() : 0;
  }
  InFlightDiagnostic fail(Operation *op) {
    return emitNodeError(op) << "the batch dimension cannot be resolved at "
                                "run time: ";
  }
  /// The result must hold the samples along `axis` with `k` per sample.
  LogicalResult expectResult(Operation *op, Value result, int axis, int64_t k);
  /// Every (present) result of `op` holds the samples that way.
  LogicalResult expectResults(Operation *op, int axis, int64_t k) {
    for (Value r : op->getResults())
      if (!isa<NoneType>(r.getType()) && failed(expectResult(op, r, axis, k)))
        return failure();
    return success();
  }
  LogicalResult expectUnbatched(Operation *op, ArrayRef<unsigned> operands);

  int64_t sizeA, sizeB;
  llvm::DenseMap<Value, Batched> infos;
  /// The block count of the op's batched inputs, which its results keep.
  int64_t currentWithin = 1;
};

LogicalResult Analysis::classify(Value a, Value b, Operation *op,
                                 const Twine &what) {
  if (isa<NoneType>(a.getType()))
    return success();
  auto ta = dyn_cast<RankedTensorType>(a.getType());
  auto tb = dyn_cast<RankedTensorType>(b.getType());
  auto error = [&]() {
    return op ? fail(op) : emitError(a.getLoc()) << what << ": ";
  };
  if (!ta || !tb || !ta.hasStaticShape() || !tb.hasStaticShape() ||
      ta.getRank() != tb.getRank())
    return error() << what << " has no static shape at a fixed batch size ("
                   << a.getType() << ")";
  SmallVector<int> differ;
  for (int i = 0; i < ta.getRank(); ++i)
    if (ta.getDimSize(i) != tb.getDimSize(i))
      differ.push_back(i);
  if (differ.empty())
    return success();
  int axis = differ.front();
  int64_t da = ta.getDimSize(axis), db = tb.getDimSize(axis);
  if (differ.size() > 1 || da % sizeA || db % sizeB || da / sizeA != db / sizeB)
    return error() << what << " does not grow in proportion to the batch ("
                   << ta << " at batch " << sizeA << ", " << tb << " at batch "
                   << sizeB << ")";
  Batched batched;
  batched.axis = axis;
  batched.k = da / sizeA;
  infos[a] = batched;
  return success();
}

LogicalResult Analysis::checkConstant(Operation *a, Operation *b) {
  auto va = dyn_cast_or_null<ElementsAttr>(a->getAttr("value"));
  auto vb = dyn_cast_or_null<ElementsAttr>(b->getAttr("value"));
  if (!va || !vb)
    return success();
  Batched bi = info(a->getResult(0));
  if (bi.axis >= 0) {
    // A folded tensor with one slice per sample (zeros expanded to the
    // batch): fine when all slices agree.
    if (!samplesAgree(va, bi.axis, bi.k) || !samplesAgree(vb, bi.axis, bi.k))
      return fail(a) << "a folded constant differs from sample to sample";
    return success();
  }
  if (va == vb)
    return success();
  auto ba = constantBytes(va), bb = constantBytes(vb);
  if (!ba || !bb || *ba != *bb)
    infos[a->getResult(0)].byValue = true;
  return success();
}

LogicalResult Analysis::expectResult(Operation *op, Value result, int axis,
                                     int64_t k) {
  Batched r = info(result);
  if (r.axis == axis && (axis < 0 || r.k == k)) {
    if (axis >= 0)
      infos[result].within = currentWithin;
    return success();
  }
  return fail(op) << "its result holds the samples along axis " << r.axis
                  << ", where kiln expects axis " << axis;
}

LogicalResult Analysis::expectUnbatched(Operation *op,
                                        ArrayRef<unsigned> operands) {
  for (unsigned i : operands) {
    if (i >= op->getNumOperands())
      continue;
    Batched b = info(op->getOperand(i));
    if (b.axis >= 0)
      return fail(op) << "input " << i << " differs from sample to sample";
    if (b.byValue)
      return fail(op) << "input " << i << " is computed from the batch size";
  }
  return success();
}

/// Broadcasting ops: each batched operand holds the samples on the
/// result's batch axis, every other operand has extent 1 there.
LogicalResult Analysis::checkElementwise(Operation *op) {
  Batched r = info(op->getResult(0));
  if (failed(expectResults(op, r.axis, r.k)))
    return failure();
  int rr = rankOf(op->getResult(0));
  for (auto [i, v] : llvm::enumerate(op->getOperands())) {
    if (onnx::isNone(v))
      continue;
    Batched b = info(v);
    if (b.byValue)
      return fail(op) << "input " << i << " is computed from the batch size";
    int aligned = r.axis - (rr - rankOf(v));
    if (b.axis >= 0 ? b.axis != aligned || b.k != r.k
                    : r.axis >= 0 && aligned >= 0 && shapeOf(v)[aligned] != 1)
      return fail(op) << "input " << i
                      << " does not line up with the samples of the result";
  }
  return success();
}

bool isElementwise(StringRef name) {
  static const llvm::StringSet<> names = {
      "Abs", "Acos", "Acosh", "Add", "And", "Asin", "Asinh", "Atan", "Atanh",
      "BitShift", "BitwiseAnd", "BitwiseNot", "BitwiseOr", "BitwiseXor",
      "Cast", "CastLike", "Ceil", "Celu", "Clip", "Cos", "Cosh", "Div",
      "Dropout", "Elu", "Equal", "Erf", "Exp", "Floor", "Gelu", "Greater",
      "GreaterOrEqual", "HardSigmoid", "HardSwish", "Identity", "IsInf",
      "IsNaN", "LeakyRelu", "Less", "LessOrEqual", "Log", "Max", "Mean",
      "Min", "Mish", "Mod", "Mul", "Neg", "Not", "Or", "Pow", "PRelu",
      "Reciprocal", "Relu", "Round", "Selu", "Shrink", "Sigmoid", "Sign",
      "Sin", "Sinh", "Softplus", "Softsign", "Sqrt", "Sub", "Sum", "Swish",
      "Tan", "Tanh", "ThresholdedRelu", "Where", "Xor"};
  return names.contains(name);
}

/// Ops whose first input is NCHW-like: samples along axis 0, computed apart.
bool isPerSampleAlongN(StringRef name) {
  static const llvm::StringSet<> names = {
      "AveragePool", "BatchNormalization", "Conv", "ConvTranspose",
      "DepthToSpace", "GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool",
      "GroupNormalization", "InstanceNormalization", "LpPool", "LRN",
      "MaxPool", "SpaceToDepth"};
  return names.contains(name);
}

int normAxis(int64_t axis, int rank) {
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

LogicalResult Analysis::checkOp(Operation *op) {
  bool batchedIn = false, byValue = false, batchedOut = false;
  currentWithin = 0;
  for (Value v : op->getOperands()) {
    Batched b = info(v);
    batchedIn |= b.axis >= 0;
    byValue |= b.byValue;
    if (b.axis >= 0 && currentWithin && b.within != currentWithin)
      return fail(op) << "its inputs interleave the samples differently (" << b.within
                      << " vs " << currentWithin << ")";
    if (b.axis >= 0)
      currentWithin = b.within;
  }
  if (!currentWithin)
    currentWithin = 1;
  for (Value v : op->getResults())
    batchedOut |= info(v).axis >= 0;
  if (!batchedIn && !byValue && !batchedOut)
    return success();

  StringRef name = op->getName().getStringRef();
  name.consume_front("onnx.");
  Value x = op->getNumOperands() ? op->getOperand(0) : Value();
  Batched in = x ? info(x) : Batched();
  int rank = x ? rankOf(x) : 0;
  auto attr = [&](StringRef a, int64_t dflt) {
    return onnx::getIntAttr(op, a, dflt);
  };
  auto mixes = [&](ArrayRef<int> axes) -> LogicalResult {
    if (llvm::is_contained(axes, in.axis))
      return fail(op) << "it combines values across the batch dimension (axis "
                      << in.axis << ")";
    return success();
  };
  auto allFrom = [](int first, int end) {
    SmallVector<int> v;
    for (int i = first; i < end; ++i)
      v.push_back(i);
    return v;
  };
  // Ops below read their first input's samples; a result that appears
  // batched from unbatched inputs would mean something else.
  auto needsBatchedInput = [&]() -> LogicalResult {
    if (in.axis < 0)
      return fail(op) << "its result differs from sample to sample while its "
                         "data does not";
    return success();
  };

  // Training-mode dropout draws one random number per element of the
  // whole batch: a sample alone would get other draws.
  if (name == "Dropout" && !onnx::isIdentityDropout(op))
    return fail(op) << "training-mode dropout draws across the whole batch";
  if (isElementwise(name))
    return checkElementwise(op);

  if (isPerSampleAlongN(name)) {
    if (failed(needsBatchedInput()))
      return failure();
    if (in.axis != 0)
      return fail(op) << "the samples are on axis " << in.axis
                      << ", not on N (axis 0)";
    if (name == "BatchNormalization" && attr("training_mode", 0))
      return fail(op) << "training-mode statistics mix samples";
    SmallVector<unsigned> rest;
    for (unsigned i = 1; i < op->getNumOperands(); ++i)
      rest.push_back(i);
    if (failed(expectUnbatched(op, rest)))
      return failure();
    return expectResult(op, op->getResult(0), 0, in.k);
  }

  if (name == "Resize" || name == "Upsample") {
    if (failed(needsBatchedInput()) ||
        failed(expectUnbatched(op, name == "Resize" ? ArrayRef<unsigned>{1, 2}
                                                    : ArrayRef<unsigned>{1})))
      return failure();
    if (name == "Resize" && op->getNumOperands() > 3 &&
        info(op->getOperand(3)).axis >= 0)
      return fail(op) << "its sizes differ from sample to sample";
    return expectResult(op, op->getResult(0), in.axis, in.k);
  }

  if (name == "Softmax" || name == "LogSoftmax" || name == "Hardmax" ||
      name == "LayerNormalization" || name == "LpNormalization" ||
      name == "RMSNormalization") {
    if (failed(needsBatchedInput()))
      return failure();
    bool legacy = name.ends_with("max") && attr("onnx.version", 13) < 13;
    int axis = normAxis(attr("axis", legacy ? 1 : -1), rank);
    bool toEnd =
        legacy || (name.ends_with("Normalization") && name != "LpNormalization");
    if (failed(mixes(toEnd ? allFrom(axis, rank) : SmallVector<int>{axis})) ||
        failed(expectUnbatched(op, {1, 2})))
      return failure();
    return expectResult(op, op->getResult(0), in.axis, in.k);
  }

  if (name.starts_with("Reduce") || name == "ArgMax" || name == "ArgMin") {
    if (failed(needsBatchedInput()))
      return failure();
    SmallVector<int64_t> axes;
    bool isArg = name.starts_with("Arg");
    if (isArg) {
      axes.push_back(attr("axis", 0));
    } else if (op->getNumOperands() > 1 && !onnx::isNone(op->getOperand(1))) {
      if (failed(expectUnbatched(op, {1})))
        return failure();
      auto c = onnx::getConstantInts(op->getOperand(1));
      if (!c)
        return fail(op) << "its axes are not constant";
      axes = *c;
    } else {
      axes = onnx::getIntsAttr(op, "axes");
    }
    SmallVector<int> reduced;
    if (axes.empty() && !isArg)
      reduced = attr("noop_with_empty_axes", 0) ? SmallVector<int>()
                                                : allFrom(0, rank);
    for (int64_t a : axes)
      reduced.push_back(normAxis(a, rank));
    if (failed(mixes(reduced)))
      return failure();
    int out = in.axis;
    if (!attr("keepdims", 1))
      out -= llvm::count_if(reduced, [&](int a) { return a < in.axis; });
    return expectResult(op, op->getResult(0), out, in.k);
  }

  if (name == "TopK" || name == "CumSum" || name == "Trilu") {
    if (failed(needsBatchedInput()) || failed(expectUnbatched(op, {1})))
      return failure();
    SmallVector<int> axes;
    if (name == "TopK") {
      axes.push_back(normAxis(attr("axis", -1), rank));
    } else if (name == "Trilu") {
      axes = allFrom(rank - 2, rank);
    } else {
      auto c = onnx::getConstantInts(op->getOperand(1));
      if (!c || c->size() != 1)
        return fail(op) << "its axis is not constant";
      axes.push_back(normAxis((*c)[0], rank));
    }
    if (failed(mixes(axes)))
      return failure();
    return expectResults(op, in.axis, in.k);
  }

  if (name == "Concat") {
    Batched r = info(op->getResult(0));
    int axis = normAxis(attr("axis", 0), rankOf(op->getResult(0)));
    if (r.axis == axis)
      return fail(op) << "it concatenates along the batch dimension";
    for (auto [i, v] : llvm::enumerate(op->getOperands())) {
      Batched b = info(v);
      if (b.byValue || b.axis != r.axis || b.k != r.k)
        return fail(op) << "input " << i
                        << " does not hold its samples like the result";
    }
    return success();
  }

  if (name == "Split") {
    if (failed(needsBatchedInput()) || failed(expectUnbatched(op, {1})) ||
        failed(mixes({normAxis(attr("axis", 0), rank)})))
      return failure();
    return expectResults(op, in.axis, in.k);
  }

  if (name == "Gather") {
    int axis = normAxis(attr("axis", 0), rank);
    Batched idx = info(op->getOperand(1));
    if (in.byValue || idx.byValue || (in.axis >= 0) == (idx.axis >= 0))
      return fail(op) << (in.axis >= 0 && idx.axis >= 0
                              ? "both data and indices differ by sample"
                              : "it gathers by a value computed from the batch "
                                "size");
    if (in.axis >= 0) {
      if (failed(mixes({axis})))
        return failure();
      int out = in.axis < axis ? in.axis : in.axis + rankOf(op->getOperand(1)) - 1;
      return expectResult(op, op->getResult(0), out, in.k);
    }
    return expectResult(op, op->getResult(0), axis + idx.axis, idx.k);
  }

  if (name == "GatherElements") {
    Batched idx = info(op->getOperand(1));
    if (failed(needsBatchedInput()) ||
        failed(mixes({normAxis(attr("axis", 0), rank)})))
      return failure();
    if (idx.byValue || idx.axis != in.axis || idx.k != in.k)
      return fail(op) << "its indices do not hold the samples like its data";
    return expectResult(op, op->getResult(0), in.axis, in.k);
  }

  if (name == "Transpose") {
    if (failed(needsBatchedInput()))
      return failure();
    SmallVector<int64_t> perm = onnx::getIntsAttr(op, "perm");
    if (perm.empty())
      for (int i = rank - 1; i >= 0; --i)
        perm.push_back(i);
    auto *pos = llvm::find(perm, in.axis);
    return expectResult(op, op->getResult(0), pos - perm.begin(), in.k);
  }

  if (name == "Reshape" || name == "Flatten" || name == "Squeeze" ||
      name == "Unsqueeze") {
    // Row-major data keeps each sample contiguous within every slice of
    // the dimensions before the batch, so a reshape that keeps those
    // dimensions' product keeps the samples apart.
    if (failed(needsBatchedInput()) ||
        (name != "Reshape" && failed(expectUnbatched(op, {1}))))
      return failure();
    // A merge of the dimensions before the batch into it (or a split back)
    // interleaves the samples in blocks: fine, as long as the number of
    // blocks before each sample's data stays the same.
    Value out = op->getResult(0);
    Batched r = info(out);
    int64_t blocks = product(shapeOf(x).take_front(in.axis)) * in.within;
    int64_t before = r.axis < 0 ? 0 : product(shapeOf(out).take_front(r.axis));
    if (r.axis < 0 || info(x).byValue || before == 0 || blocks % before ||
        r.k % (blocks / before))
      return fail(op) << "it mixes the batch dimension with the dimensions "
                         "after it";
    infos[out].within = blocks / before;
    return success();
  }

  if (name == "Expand" || name == "Tile") {
    Value out = op->getResult(0);
    Batched r = info(out);
    if (in.byValue || r.axis < 0)
      return fail(op) << "its data or result is computed from the batch size";
    int aligned = r.axis - (rankOf(out) - rank);
    if (in.axis >= 0)
      return in.axis == aligned && shapeOf(x)[aligned] == shapeOf(out)[r.axis]
                 ? success()
                 : fail(op) << "it repeats the samples";
    // Unbatched data repeated to the batch: every sample gets the same.
    if (name == "Expand" && aligned >= 0 && shapeOf(x)[aligned] != 1)
      return fail(op) << "its data does not broadcast along the batch";
    return success();
  }

  if (name == "ConstantOfShape") {
    // A tensor of one value shaped by the batch.
    return success();
  }

  if (name == "Slice" || name == "Pad") {
    if (failed(needsBatchedInput()))
      return failure();
    if (failed(expectUnbatched(op, name == "Slice" ? ArrayRef<unsigned>{1, 3, 4}
                                                   : ArrayRef<unsigned>{1, 2, 3})))
      return failure();
    if (name == "Slice" && info(op->getOperand(2)).axis >= 0)
      return fail(op) << "its ends differ from sample to sample";
    SmallVector<int64_t> start, step, size;
    if (name == "Slice" &&
        (failed(onnx::resolveSlice(op, shapeOf(x), start, step, size)) ||
         start[in.axis] != 0 || step[in.axis] != 1))
      return fail(op) << "it slices the batch dimension";
    if (name == "Pad" &&
        (failed(onnx::resolvePads(op, rank, start, size)) ||
         start[in.axis] != 0 || size[in.axis] != 0))
      return fail(op) << "it pads the batch dimension";
    return expectResult(op, op->getResult(0), in.axis, in.k);
  }

  if (name == "MatMul") {
    Value bv = op->getOperand(1), out = op->getResult(0);
    Batched ib = info(bv);
    int ra = rank, rb = rankOf(bv), ro = rankOf(out);
    if (in.byValue || ib.byValue || ra < 2 || rb < 2)
      return fail(op) << "batched vector products are not split per sample";
    if (in.axis == ra - 1 || ib.axis == rb - 2)
      return fail(op) << "it contracts over the batch dimension";
    int fromA = in.axis < 0 ? -1 : in.axis == ra - 2 ? ro - 2 : in.axis + ro - ra;
    int fromB = ib.axis < 0 ? -1 : ib.axis == rb - 1 ? ro - 1 : ib.axis + ro - rb;
    if (fromA >= 0 && fromB >= 0 && (fromA != fromB || in.k != ib.k))
      return fail(op) << "its two inputs hold the samples differently";
    int axis = fromA >= 0 ? fromA : fromB;
    int64_t k = fromA >= 0 ? in.k : ib.k;
    // A broadcast batch dimension of the other input must be 1.
    if (axis < ro - 2) {
      Value other = fromA >= 0 ? bv : x;
      if (info(other).axis < 0) {
        int aligned = axis - (ro - rankOf(other));
        if (aligned >= 0 && shapeOf(other)[aligned] != 1)
          return fail(op) << "the other input does not broadcast along the batch";
      }
    }
    return expectResult(op, out, axis, k);
  }

  if (name == "Gemm") {
    Batched ib = info(op->getOperand(1));
    if (in.byValue || ib.byValue || (in.axis >= 0 && ib.axis >= 0))
      return fail(op) << "both inputs differ from sample to sample";
    int axis;
    int64_t k;
    if (in.axis >= 0) {
      if (in.axis != (attr("transA", 0) ? 1 : 0))
        return fail(op) << "it contracts over the batch dimension";
      axis = 0, k = in.k;
    } else {
      if (ib.axis != (attr("transB", 0) ? 0 : 1))
        return fail(op) << "it contracts over the batch dimension";
      axis = 1, k = ib.k;
    }
    if (op->getNumOperands() > 2 && !onnx::isNone(op->getOperand(2))) {
      Value c = op->getOperand(2);
      Batched ic = info(c);
      int aligned = axis - (2 - rankOf(c));
      if (ic.byValue || (ic.axis >= 0 ? ic.axis != aligned || ic.k != k
                                      : aligned >= 0 && shapeOf(c)[aligned] != 1))
        return fail(op) << "its C input does not line up with the samples";
    }
    return expectResult(op, op->getResult(0), axis, k);
  }

  if (name == "Attention") {
    // Q, K and V hold the samples on their batch axis (1 for kiln's
    // sequence-first fused blocks); the mask broadcasts to the scores
    // [B, H, S, T] from the right.
    auto layout = op->getAttrOfType<StringAttr>("kiln.layout");
    int batchAxis = layout && layout.getValue() == "seq_first" ? 1 : 0;
    if (failed(needsBatchedInput()) || in.axis != batchAxis)
      return fail(op) << "Q does not hold the samples on axis " << batchAxis;
    for (unsigned i : {1u, 2u})
      if (info(op->getOperand(i)).axis != batchAxis || info(op->getOperand(i)).k != in.k)
        return fail(op) << "input " << i << " does not hold the samples like Q";
    if (Value m = op->getOperand(3); !onnx::isNone(m)) {
      Batched bm = info(m);
      int aligned = 0 - (4 - rankOf(m));
      if (bm.byValue || (bm.axis >= 0 ? bm.axis != aligned || bm.k != in.k
                                      : aligned >= 0 && shapeOf(m)[aligned] != 1))
        return fail(op) << "its mask does not line up with the samples";
    }
    if (failed(expectUnbatched(op, {4, 5, 6})))
      return failure();
    return expectResult(op, op->getResult(0), batchAxis, in.k);
  }

  if (name == "Shape" || name == "Size") {
    infos[op->getResult(0)].byValue = true;
    return success();
  }

  if (byValue && !batchedIn)
    return fail(op) << "it uses the batch size as a value";
  return fail(op) << "kiln does not know whether " << name
                  << " keeps samples apart";
}

LogicalResult Analysis::run(func::FuncOp fa, func::FuncOp fb, BatchPlan &plan) {
  if (fa.getNumArguments() != fb.getNumArguments() ||
      fa.getNumResults() != fb.getNumResults())
    return fa.emitError("internal error: probe compiles disagree on the graph's "
                        "inputs and outputs");
  for (unsigned i = 0; i < fa.getNumArguments(); ++i) {
    auto name = fa.getArgAttrOfType<StringAttr>(i, "onnx.name");
    std::string label = "input \"" + (name ? name.str() : std::to_string(i)) + "\"";
    Value a = fa.getArgument(i);
    if (failed(classify(a, fb.getArgument(i), nullptr, label)))
      return failure();
    Batched b = info(a);
    if (b.axis > 0 && product(shapeOf(a).take_front(b.axis)) != 1)
      return emitError(fa.getLoc())
             << label << ": the batch dimension is axis " << b.axis
             << " after dimensions larger than 1, so samples are not contiguous";
    plan.inputAxes.push_back(b.axis);
  }

  SmallVector<Operation *> opsA, opsB;
  for (Operation &op : fa.getBody().front())
    opsA.push_back(&op);
  for (Operation &op : fb.getBody().front())
    opsB.push_back(&op);
  if (opsA.size() != opsB.size())
    return fa.emitError() << "the optimized graph differs between batch sizes "
                          << sizeA << " and " << sizeB
                          << " (" << opsA.size() << " vs " << opsB.size()
                          << " ops), so kiln cannot split it per sample";
  for (auto [a, b] : llvm::zip(opsA, opsB)) {
    if (a->getName() != b->getName() ||
        a->getNumResults() != b->getNumResults() ||
        a->getNumOperands() != b->getNumOperands())
      return fail(a) << "the optimized graph differs between batch sizes "
                     << sizeA << " and " << sizeB;
    if (isa<func::ReturnOp>(a))
      break;
    for (auto [ra, rb] : llvm::zip(a->getResults(), b->getResults()))
      if (failed(classify(ra, rb, a, "result #" + Twine(ra.getResultNumber()))))
        return failure();
    if (fusion::isOnnx(a, "Constant")) {
      if (failed(checkConstant(a, b)))
        return failure();
      continue;
    }
    if (a->getNumRegions() > 0) {
      // Control flow sees batched values only through its operands and the
      // values its regions capture.
      bool touches = false;
      a->walk([&](Operation *inner) {
        for (Value v : inner->getOperands())
          touches |= info(v).axis >= 0 || info(v).byValue;
      });
      for (Value r : a->getResults())
        touches |= info(r).axis >= 0;
      if (touches)
        return fail(a) << "control flow on per-sample values is not split per "
                          "sample";
      continue;
    }
    if (failed(checkOp(a)))
      return failure();
  }

  Operation *ret = fa.getBody().front().getTerminator();
  for (auto [i, v] : llvm::enumerate(ret->getOperands())) {
    auto name = fa.getResultAttrOfType<StringAttr>(i, "onnx.name");
    std::string label = "output \"" + (name ? name.str() : std::to_string(i)) + "\"";
    Batched b = info(v);
    if (b.byValue)
      return emitError(fa.getLoc()) << label << " is computed from the batch size";
    if ((b.axis >= 0 && b.within != 1) ||
        (b.axis > 0 && product(shapeOf(v).take_front(b.axis)) != 1))
      return emitError(fa.getLoc())
             << label << ": the batch dimension is axis " << b.axis
             << " after dimensions larger than 1, so samples are not contiguous";
    plan.outputAxes.push_back(b.axis);
  }
  if (llvm::all_of(plan.inputAxes, [](int a) { return a < 0; }))
    return fa.emitError("no input holds the batch dimension");
  return success();
}

} // namespace

FailureOr<BatchPlan> analyzeBatch(ModuleOp a, ModuleOp b, int64_t sizeA,
                                  int64_t sizeB) {
  func::FuncOp fa = mainOf(a), fb = mainOf(b);
  if (!fa || !fb)
    return a.emitError("no @main function");
  BatchPlan plan;
  Analysis analysis(sizeA, sizeB);
  if (failed(analysis.run(fa, fb, plan)))
    return failure();
  return plan;
}

void annotateBatch(ModuleOp module, const BatchPlan &plan) {
  func::FuncOp func = mainOf(module);
  Builder b(module.getContext());
  module->setAttr("kiln.batch_symbol", b.getStringAttr(plan.symbol));
  for (auto [i, axis] : llvm::enumerate(plan.inputAxes))
    if (axis >= 0 && i < func.getNumArguments())
      func.setArgAttr(i, "kiln.batch_axis", b.getI64IntegerAttr(axis));
  for (auto [i, axis] : llvm::enumerate(plan.outputAxes))
    if (axis >= 0 && i < func.getNumResults())
      func.setResultAttr(i, "kiln.batch_axis", b.getI64IntegerAttr(axis));
}

} // namespace kiln
