//===- ProfileKernels.cpp - kiln-profile-kernels --------------------------===//
//
// Brackets each node of a host partition with kiln.profile_begin/end so that
// the profiler reports it under its ONNX name (see Passes.td).
//
//===----------------------------------------------------------------------===//
#include "dialects/kiln/KilnDialect.h"
#include "dialects/onnx/OnnxOps.h"
#include "passes/NodeName.h"
#include "providers/Passes.h"
#include "providers/Provider.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/JSON.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_PROFILEKERNELS
#include "providers/Passes.h.inc"

namespace {

/// ONNX Runtime's name of an element type in `input_type_shape`.
std::string dtypeName(Type t) {
  if (t.isF32())
    return "float";
  if (t.isF64())
    return "double";
  if (t.isF16())
    return "float16";
  if (t.isBF16())
    return "bfloat16";
  if (t.isInteger(1))
    return "bool";
  if (auto i = dyn_cast<IntegerType>(t))
    return (i.isUnsigned() ? "uint" : "int") + std::to_string(i.getWidth());
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

/// Bytes of a tensor as the ABI holds it (sub-byte types one per byte);
/// 0 for values that are not tensors of known size.
int64_t tensorBytes(Type t) {
  auto shaped = dyn_cast<RankedTensorType>(t);
  if (!shaped || !shaped.hasStaticShape() || !shaped.getElementType().isIntOrFloat())
    return 0;
  return shaped.getNumElements() * ((shaped.getElementTypeBitWidth() + 7) / 8);
}

llvm::json::Value typeShape(Type t) {
  llvm::json::Array dims;
  Type element = t;
  if (auto shaped = dyn_cast<ShapedType>(t)) {
    element = shaped.getElementType();
    if (shaped.hasRank())
      for (int64_t d : shaped.getShape())
        dims.push_back(ShapedType::isDynamic(d) ? -1 : d);
  }
  return llvm::json::Object{{dtypeName(element), std::move(dims)}};
}

bool isConstant(Operation *op) {
  return op && (isa<onnx::ConstantOp>(op) || op->hasTrait<OpTrait::ConstantLike>());
}

/// `name \x1f op type \x1f provider \x1f args`, where args is the inside of
/// the event's JSON `args` object.
std::string descriptor(Operation *op, StringRef provider, unsigned index) {
  std::string opType = op->getName().getStringRef().str();
  if (StringRef(opType).starts_with("onnx."))
    opType = opType.substr(5);
  SmallVector<std::string> names = nodeNamesOf(op->getLoc());
  // A decomposition keeps its node's location and so its op type; a fusion
  // (several nodes) is reported as the op it became (Attention).
  if (names.size() == 1)
    if (StringRef imported = importedOpTypeOf(op->getLoc(), names.front()); !imported.empty())
      opType = imported.str();
  std::string name = names.empty() ? opType + "_" + std::to_string(index) : names.front();
  int64_t parameters = 0, activations = 0, outputs = 0;
  llvm::json::Array inputs, results;
  for (Value v : op->getOperands()) {
    if (isa<NoneType>(v.getType()))
      continue;
    (isConstant(v.getDefiningOp()) ? parameters : activations) += tensorBytes(v.getType());
    inputs.push_back(typeShape(v.getType()));
  }
  for (Value v : op->getResults()) {
    outputs += tensorBytes(v.getType());
    results.push_back(typeShape(v.getType()));
  }
  llvm::json::Array fused;
  for (const std::string &n : names)
    fused.push_back(n);
  // Sizes are strings, as ONNX Runtime writes them.
  llvm::json::Object args{{"fused_nodes", std::move(fused)},
                          {"activation_size", std::to_string(activations)},
                          {"parameter_size", std::to_string(parameters)},
                          {"output_size", std::to_string(outputs)},
                          {"input_type_shape", std::move(inputs)},
                          {"output_type_shape", std::move(results)}};
  std::string json;
  llvm::raw_string_ostream os(json);
  os << llvm::json::Value(std::move(args));
  os.flush();
  // Strip the braces: the runtime splices it after op_name and provider.
  StringRef inner = StringRef(json).drop_front().drop_back();
  // The separator and NUL would split or cut the fields the runtime reads.
  auto field = [](std::string f) {
    for (char &c : f)
      if (c == '\x1f' || c == '\0')
        c = '?';
    return f;
  };
  return field(name) + "\x1f" + field(opType) + "\x1f" + field(provider.str()) + "\x1f" +
         inner.str();
}

struct ProfileKernelsPass : public impl::ProfileKernelsBase<ProfileKernelsPass> {
  void runOnOperation() override {
    registerBuiltinProviders();
    unsigned index = 0;
    getOperation().walk([&](PartitionOp partition) {
      const Provider *provider = lookupProvider(partition.getProvider());
      if (!provider || !provider->runsOnHostThread())
        return;
      Block &body = partition.getBody().front();
      for (Operation &op : llvm::make_early_inc_range(body.without_terminator())) {
        ++index;
        // Nodes only: not constants, nor kiln's own ops (checks).
        if (isConstant(&op) || !isa<onnx::ONNXDialect>(op.getDialect()))
          continue;
        std::string desc = descriptor(&op, partition.getProvider(), index);
        OpBuilder b(&op);
        b.create<ProfileBeginOp>(op.getLoc(), desc);
        b.setInsertionPointAfter(&op);
        b.create<ProfileEndOp>(op.getLoc(), desc);
      }
    });
  }
};

} // namespace
} // namespace kiln
