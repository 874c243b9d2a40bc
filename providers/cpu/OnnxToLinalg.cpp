//===- OnnxToLinalg.cpp - CPU lowering of onnx ops ------------------------===//
//
// Each supported op becomes linalg/tensor/arith/math on static-shaped
// tensors. Ops are lowered in program order by a table keyed on the ONNX op
// type; the same table answers the CPU provider's capability query, so what
// the partitioner accepts is exactly what lowers.
//
//===----------------------------------------------------------------------===//

#include "providers/cpu/OnnxToLinalg.h"
#include "providers/cpu/Lowering.h"
#include "dialects/kiln/KilnDialect.h"
#include "dialects/onnx/OnnxOps.h"

using namespace mlir;
using namespace kiln::onnx;

namespace kiln::cpu {
namespace {

const LoweringTable &table() {
  static const LoweringTable t = [] {
    LoweringTable m;
    registerElementwiseOps(m);
    registerContractionOps(m);
    registerWindowOps(m);
    registerNormalizationOps(m);
    registerDataMovementOps(m);
    registerGatherScatterOps(m);
    registerControlFlowOps(m);
    registerCastOps(m);
    registerGridOps(m);
    registerSpectralOps(m);
    registerMlOps(m);
    registerAttentionOps(m);
    registerResizeOps(m);
    registerDropoutOps(m);
    registerSequenceOps(m);
    registerDynamicShapeOps(m);
    registerTextOps(m);
    registerRuntimeSizeOps(m);
    return m;
  }();
  return t;
}

bool isStaticTensorOrNone(Type t) {
  // Sequences and optionals are runtime objects (SequenceOps.cpp); once
  // lowered, their users see an i64 handle.
  if (isa<NoneType>(t) || isSequenceValueType(t) || t.isInteger(64))
    return true;
  auto rt = dyn_cast<RankedTensorType>(t);
  return rt && rt.hasStaticShape();
}

/// Ops with subgraphs run on the CPU only if every op inside can.
bool subgraphsLower(Operation *op, std::string &why) {
  for (Region &region : op->getRegions()) {
    WalkResult nested = region.walk([&](Operation *inner) {
      if (isa<onnx::YieldOp>(inner) || !inner->getDialect() ||
          inner->getDialect()->getNamespace() != "onnx")
        return WalkResult::advance();
      std::string innerWhy;
      if (canLowerOnCpu(inner, innerWhy))
        return WalkResult::advance();
      why = "subgraph " + describeNode(inner) + ": " + innerWhy;
      return WalkResult::interrupt();
    });
    if (nested.wasInterrupted())
      return false;
  }
  return true;
}

bool isSupportedElement(Type t, bool floatOnly) {
  // f16 and bf16 compute per op in f32 and round back, as numpy (and
  // ml_dtypes) do.
  if (t.isF32() || t.isF64() || t.isF16() || t.isBF16())
    return true;
  return !floatOnly && (t.isInteger(64) || t.isInteger(32) || t.isInteger(16) ||
                        t.isInteger(8) || t.isInteger(1));
}

} // namespace

bool canLowerOnCpu(Operation *op, std::string &why) {
  StringRef name = op->getName().getStringRef();
  if (name == "onnx.NoValue")
    return true;
  if (!name.consume_front("onnx.")) {
    why = "not an onnx op";
    return false;
  }
  auto it = table().find(name);
  if (it == table().end()) {
    why = "no CPU lowering for this op";
    return false;
  }
  SmallVector<Value> values(op->getOperands());
  for (Value r : op->getResults())
    if (!r.use_empty() || r == op->getResult(0))
      values.push_back(r);
  if (const auto &dyn = it->second.dynamic; dyn.lower && compilesRuntimeSizes(op) &&
                                             hasRuntimeSizes(op)) {
    if ((it->second.check && !it->second.check(op, why)) || (dyn.check && !dyn.check(op, why)))
      return false;
    for (Value v : values)
      if (auto rt = dyn_cast<RankedTensorType>(v.getType());
          rt && !isSupportedElement(rt.getElementType(), it->second.floatOnly) &&
          !(name.starts_with("Cast") && isStorageOnlyType(rt.getElementType()))) {
        llvm::raw_string_ostream os(why);
        os << "element type " << rt.getElementType() << " is not supported";
        return false;
      } else if (v.getType() && !isa<NoneType, RankedTensorType>(v.getType())) {
        why = "with run-time sizes, only ranked tensors are supported";
        return false;
      }
    return subgraphsLower(op, why);
  }
  if (hasRuntimeShapeInput(op))
    return canLowerSpecialized(op, why);
  if (it->second.check && !it->second.check(op, why))
    return false;
  // Inputs that decide a result shape must be compile-time constants.
  static const std::pair<const char *, std::pair<unsigned, const char *>> kShapeInputs[] = {
      {"Reshape", {1, "shape"}},   {"Slice", {1, "starts"}},  {"Slice", {2, "ends"}},
      {"Slice", {3, "axes"}},      {"Slice", {4, "steps"}},   {"Expand", {1, "shape"}},
      {"Tile", {1, "repeats"}},    {"Pad", {1, "pads"}},      {"Pad", {3, "axes"}},
      {"Range", {0, "start"}},     {"Range", {1, "limit"}},   {"Range", {2, "delta"}},
      {"ConstantOfShape", {0, "shape"}}, {"Resize", {2, "scales"}}, {"Resize", {3, "sizes"}},
      {"Upsample", {1, "scales"}}, {"OneHot", {1, "depth"}},  {"Split", {1, "split"}},
      {"Squeeze", {1, "axes"}},    {"Unsqueeze", {1, "axes"}}};
  // Range computes from run-time scalars, Slice and Pad from run-time
  // offsets and axes, Resize its tables from run-time scales, sizes or roi:
  // only the result shape must be known.
  bool staticResult = isStaticTensorOrNone(op->getResult(0).getType());
  bool runtimeValuesOk = (staticResult && (name == "Range" || name == "Slice" || name == "Pad" ||
                                           name == "Resize" || name == "Upsample")) ||
                         (name == "Slice" && isBoxedTensor(op->getResult(0)));
  for (auto &[opName, in] : kShapeInputs) {
    if (name != opName || in.first >= op->getNumOperands() || runtimeValuesOk)
      continue;
    Value v = op->getOperand(in.first);
    if (isNone(v) || getConstantInts(v))
      continue;
    if (auto *def = v.getDefiningOp();
        def && isa_and_nonnull<DenseFPElementsAttr>(def->getAttr("value")))
      continue;
    llvm::raw_string_ostream os(why);
    os << "needs a constant `" << in.second
       << "` input (kiln needs static shapes at compile time); it is a runtime value";
    return false;
  }
  for (Value v : values) {
    Type t = v.getType();
    if (isBoxedTensor(v))
      continue;
    if (!isStaticTensorOrNone(t) && v.getDefiningOp() == op && producesBox(op)) {
      llvm::raw_string_ostream os(why);
      os << "its result shape is known only at run time; sequence ops and the model's "
            "outputs can take it, but not "
         << describeNode(nonBoxUser(v));
      return false;
    }
    if (!isStaticTensorOrNone(t)) {
      llvm::raw_string_ostream os(why);
      os << "needs static shapes, got " << t;
      if (compilesRuntimeSizes(op))
        os << " (kiln has no lowering of this op for run-time sizes yet: pin the shapes "
              "with --input-shape, or compile the sizes it will run at with --dim-values)";
      else
        os << " (pin input shapes with --input-shape)";
      return false;
    }
    // Storage-only types (float8, sub-byte ints) are only converted, or
    // held as a constant (a folded cast).
    bool isCast = name == "Cast" || name == "CastLike" || name == "Constant";
    // Strings (one `const char *` each) are compared by Equal, looked up
    // by LabelEncoder, matched by RegexFullMatch, counted by
    // TfIdfVectorizer and joined by StringConcat only.
    bool stringEqual = (name == "Equal" || name == "LabelEncoder" || name == "RegexFullMatch" ||
                        name == "TfIdfVectorizer" || name == "StringConcat") &&
                       isa<onnx::StringType>(cast<ShapedType>(t).getElementType());
    if (auto rt = dyn_cast<RankedTensorType>(t);
        rt && !isSupportedElement(rt.getElementType(), it->second.floatOnly) &&
        !(isCast && isStorageOnlyType(rt.getElementType())) && !stringEqual) {
      llvm::raw_string_ostream os(why);
      os << "element type " << rt.getElementType() << " is not supported";
      return false;
    }
  }
  // Results the CPU code does not compute must be unused.
  auto unusedBeyond = [&](unsigned n) {
    for (unsigned i = n; i < op->getNumResults(); ++i)
      if (!op->getResult(i).use_empty() && !isa<NoneType>(op->getResult(i).getType()))
        return false;
    return true;
  };
  if (name == "MaxPool" && !unusedBeyond(2)) {
    why = "only the values and indices outputs are supported";
    return false;
  }
  return subgraphsLower(op, why);
}

bool callsRuntime(Operation *op) {
  StringRef name = op->getName().getStringRef();
  if (!name.consume_front("onnx."))
    return false;
  auto it = table().find(name);
  return it != table().end() && it->second.callsRuntime;
}

bool compilesRuntimeSizes(Operation *op) {
  auto module = op->getParentOfType<ModuleOp>();
  return module && module->hasAttr("kiln.runtime_sizes");
}

bool hasRuntimeSizes(Operation *op) {
  auto dynamic = [](Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t && !t.hasStaticShape() && !isBoxedTensor(v);
  };
  return llvm::any_of(op->getOperands(), dynamic) || llvm::any_of(op->getResults(), dynamic);
}

Results lowerOneOp(OpBuilder &b, Operation *op) {
  const OpLowering &entry = table().find(op->getName().getStringRef().drop_front(5))->second;
  if (entry.dynamic.lower && compilesRuntimeSizes(op) && hasRuntimeSizes(op))
    return entry.dynamic.lower(b, op);
  return entry.lower(b, op);
}

bool structuredOnly(Operation *op) {
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
    if (p->hasAttr(kStructuredOnlyAttr))
      return true;
  return false;
}

LogicalResult lowerOnnxToLinalg(Operation *root) {
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) {
    if (op->getDialect() && op->getDialect()->getNamespace() == "onnx" &&
        !isa<onnx::NoValueOp, onnx::YieldOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    std::string why;
    if (!canLowerOnCpu(op, why))
      return emitNodeError(op) << "not supported by provider cpu: " << why;
    OpBuilder b(op);
    currentNodeLabel() = describeNode(op);
    bool dynamic = compilesRuntimeSizes(op) && hasRuntimeSizes(op);
    Results r = hasRuntimeShapeInput(op) && !dynamic ? lowerSpecialized(b, op)
                                                     : lowerOneOp(b, op);
    if (takeBuilderFailure())
      return emitNodeError(op) << "internal error: a run-time size of this op's tensors "
                                  "could not be derived from its inputs";
    if (failed(r))
      return failure();
    for (auto [i, v] : llvm::enumerate(*r))
      if (v)
        op->getResult(i).replaceAllUsesWith(v);
    op->erase();
  }
  // NoValue ops are dead now.
  root->walk([&](Operation *op) {
    if (op->getName().getStringRef() == "onnx.NoValue" && op->use_empty())
      op->erase();
  });
  return success();
}

void checkRuntimeShape(OpBuilder &b, Location l, Value ok, Operation *op, StringRef what,
                       Type compiled) {
  std::string msg;
  llvm::raw_string_ostream os(msg);
  os << describeNode(op) << ": " << what
     << " (computed at run time) give a result shape other than the compiled " << compiled;
  b.create<CheckOp>(l, ok, os.str());
}

} // namespace kiln::cpu
