//===- Importer.cpp - ONNX ModelProto to the onnx dialect -----------------===//
//
// Walks the protobuf graph once, creating onnx dialect ops generically by
// name (the ODS definitions are generated from the ONNX schemas), so adding
// ops to the dialect needs no importer change. Weights become
// dense_resource blobs: one bulk copy, never per-element attributes.
//
//===----------------------------------------------------------------------===//

#include "compiler/Importer.h"
#include "compiler/GraphRules.h"
#include "compiler/ImportMicrosoft.h"
#include "dialects/onnx/DataTypes.h"
#include "dialects/onnx/OnnxOpVersions.h"
#include "dialects/onnx/OnnxOps.h"
#include "dialects/onnx/ShapeInference.h"
#include "passes/NodeName.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "kiln_onnx.pb.h"

#include <map>
#include <optional>

using namespace mlir;
namespace pb = kiln_onnx;

namespace kiln {
namespace {

Type elementTypeFor(MLIRContext *ctx, int dtype) {
  return onnx::elementTypeOfDtype(ctx, dtype);
}

/// value_info types that are worth keeping as declared result types.
bool isDeclaredType(Type t) {
  return isa<RankedTensorType, onnx::SeqType, onnx::OptType>(t);
}

/// One scope of visible values per (sub)graph; lookups walk outwards so a
/// subgraph sees its parents' values, as ONNX's scoping rules say.
class ValueScopes {
public:
  void push() { scopes.emplace_back(); }
  void pop() { scopes.pop_back(); }
  void define(StringRef name, Value v) { scopes.back()[name] = v; }
  Value lookup(StringRef name) const {
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it)
      if (auto found = it->find(name); found != it->end())
        return found->second;
    return {};
  }

private:
  std::vector<llvm::StringMap<Value>> scopes;
};

class Importer {
public:
  Importer(MLIRContext &ctx, StringRef displayName, StringRef baseDir,
           const ImportOptions &options)
      : ctx(ctx), b(&ctx), displayName(displayName), baseDir(baseDir),
        options(options) {}

  OwningOpRef<ModuleOp> run(const pb::ModelProto &model);

private:
  InFlightDiagnostic error(Location loc) {
    auto diag = emitError(loc);
    diag << displayName << ": ";
    return diag;
  }
  InFlightDiagnostic error() { return error(b.getUnknownLoc()); }
  InFlightDiagnostic nodeError(const pb::NodeProto &node, Location loc) {
    auto diag = error(loc);
    diag << "node \"" << node.name() << "\" (" << node.op_type() << "): ";
    return diag;
  }

  Type importType(const pb::TypeProto &type, StringRef what);
  /// A negative dimension anywhere in `type` is an error.
  LogicalResult checkDims(const pb::TypeProto &type, StringRef what);
  FailureOr<ElementsAttr> importTensor(const pb::TensorProto &tensor,
                                       StringRef what);
  FailureOr<std::string> readExternalData(const pb::TensorProto &tensor,
                                          StringRef what);
  LogicalResult importGraph(const pb::GraphProto &graph, Block &block,
                            bool isMain);
  LogicalResult importNode(const pb::NodeProto &node, int index);
  /// A com.microsoft node, written as default-domain ops.
  LogicalResult importMicrosoftNode(const pb::NodeProto &node, Location loc);
  FailureOr<Attribute> importAttribute(const pb::AttributeProto &attr,
                                       const pb::NodeProto &node, Location loc,
                                       OperationState &state);
  Value noValue();
  Value makeConstant(Location loc, ElementsAttr value);
  Type outputElementType(const onnx::OnnxOpVersionInfo &schema, int i,
                         const pb::NodeProto &node, ArrayRef<Value> operands);

  MLIRContext &ctx;
  OpBuilder b;
  std::string displayName;
  std::string baseDir;
  ImportOptions options;
  ValueScopes scopes;
  llvm::StringMap<Type> valueInfoTypes;
  int64_t opsetVersion = 0;
  // Opsets of the other domains the model imports.
  std::map<std::string, int64_t> domainOpsets;
  int blobCounter = 0;
  Value noneValue;
  Block *mainEntry = nullptr;
  /// Types for the next subgraph's inputs that declare none (a Loop body's
  /// loop-carried values have their initial values' types, a Scan body's
  /// its states' and scanned slices').
  SmallVector<Type> subgraphInputHints;
};

LogicalResult Importer::checkDims(const pb::TypeProto &type, StringRef what) {
  if (type.has_sequence_type())
    return checkDims(type.sequence_type().elem_type(), what);
  if (type.has_optional_type())
    return checkDims(type.optional_type().elem_type(), what);
  if (!type.has_tensor_type() || !type.tensor_type().has_shape())
    return success();
  SmallVector<int64_t> dims;
  for (auto [i, d] : llvm::enumerate(type.tensor_type().shape().dim())) {
    if (d.has_dim_value() && d.dim_value() < 0)
      return error() << "value \"" << what << "\": dimension " << i << " is "
                     << d.dim_value() << " (a dimension is 0 or more)";
    dims.push_back(d.has_dim_value() ? d.dim_value() : 1);
  }
  Type elt = elementTypeFor(&ctx, type.tensor_type().elem_type());
  if (std::string why = onnx::badShape(dims, elt ? elt : b.getI8Type());
      !why.empty())
    return error() << "value \"" << what << "\": " << why;
  return success();
}

Type Importer::importType(const pb::TypeProto &type, StringRef what) {
  if (type.has_sequence_type() || type.has_optional_type()) {
    const pb::TypeProto &elem = type.has_sequence_type()
                                    ? type.sequence_type().elem_type()
                                    : type.optional_type().elem_type();
    Type e = importType(elem, what);
    if (!e)
      return {};
    if (type.has_sequence_type())
      return onnx::SeqType::get(&ctx, e);
    return onnx::OptType::get(&ctx, e);
  }
  if (!type.has_tensor_type()) {
    error() << "value \"" << what << "\": only tensor, sequence and optional types are "
               "supported";
    return {};
  }
  const auto &tt = type.tensor_type();
  Type elt = elementTypeFor(&ctx, tt.elem_type());
  if (!elt) {
    error() << "value \"" << what << "\": unsupported element type "
            << tt.elem_type();
    return {};
  }
  if (!tt.has_shape())
    return UnrankedTensorType::get(elt);
  SmallVector<int64_t> dims;
  for (const auto &d : tt.shape().dim()) {
    if (d.has_dim_value() && d.dim_value() >= 0) {
      dims.push_back(d.dim_value());
      continue;
    }
    if (d.has_dim_param())
      if (auto it = options.dimValues.find(d.dim_param()); it != options.dimValues.end()) {
        dims.push_back(it->second);
        continue;
      }
    dims.push_back(ShapedType::kDynamic);
  }
  return RankedTensorType::get(dims, elt);
}

FailureOr<std::string>
Importer::readExternalData(const pb::TensorProto &tensor, StringRef what) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const auto &kv : tensor.external_data()) {
    if (kv.key() == "location")
      location = kv.value();
    else if (kv.key() == "offset")
      offset = std::stoull(kv.value());
    else if (kv.key() == "length")
      length = std::stoull(kv.value());
  }
  if (location.empty()) {
    error() << "tensor \"" << what << "\": external data without a location";
    return failure();
  }
  // The location must name a file inside the model's folder: a model is
  // untrusted input and must not read /etc/passwd or ../../secret.
  if (llvm::sys::path::is_absolute(location)) {
    error() << "tensor \"" << what << "\": external data location \""
            << location << "\" is absolute; it must stay inside the model's folder";
    return failure();
  }
  SmallString<256> dirReal, fileReal;
  if (llvm::sys::fs::real_path(baseDir.empty() ? "." : baseDir, dirReal)) {
    error() << "cannot resolve the model folder \"" << baseDir << "\"";
    return failure();
  }
  SmallString<256> joined(dirReal);
  llvm::sys::path::append(joined, location);
  if (llvm::sys::fs::real_path(joined, fileReal)) {
    error() << "tensor \"" << what << "\": external data file \"" << location
            << "\" not found next to the model";
    return failure();
  }
  StringRef dirRef(dirReal), fileRef(fileReal);
  if (!fileRef.starts_with(dirRef) || fileRef.size() <= dirRef.size() ||
      !llvm::sys::path::is_separator(fileRef[dirRef.size()])) {
    error() << "tensor \"" << what << "\": external data location \""
            << location << "\" escapes the model's folder";
    return failure();
  }
  auto buffer = llvm::MemoryBuffer::getFile(fileReal, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error() << "tensor \"" << what << "\": cannot read external data \""
            << location << "\": " << buffer.getError().message();
    return failure();
  }
  uint64_t size = (*buffer)->getBufferSize();
  uint64_t len = length.value_or(size > offset ? size - offset : 0);
  if (offset > size || len > size - offset) {
    error() << "tensor \"" << what << "\": external data \"" << location
            << "\" is shorter than offset " << offset << " + length " << len;
    return failure();
  }
  return std::string((*buffer)->getBufferStart() + offset, len);
}

template <typename T, typename Field>
static std::string packTyped(const Field &field) {
  std::string bytes(field.size() * sizeof(T), '\0');
  T *out = reinterpret_cast<T *>(bytes.data());
  for (int i = 0; i < field.size(); ++i)
    out[i] = static_cast<T>(field.Get(i));
  return bytes;
}

FailureOr<ElementsAttr> Importer::importTensor(const pb::TensorProto &tensor,
                                               StringRef what) {
  Type elt = elementTypeFor(&ctx, tensor.data_type());
  if (!elt || isa<onnx::StringType>(elt)) {
    error() << "tensor \"" << what << "\": unsupported element type "
            << tensor.data_type();
    return failure();
  }
  SmallVector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
  if (std::string why = onnx::badShape(dims, elt); !why.empty()) {
    error() << "tensor \"" << what << "\": " << why;
    return failure();
  }
  auto type = RankedTensorType::get(dims, elt);
  int64_t count = type.getNumElements();
  unsigned bits = elt.getIntOrFloatBitWidth();
  if (bits > 1 && bits < 8) {
    error() << "tensor \"" << what << "\": packed " << bits
            << "-bit initializers are not supported";
    return failure();
  }
  int64_t eltBytes = bits == 1 ? 1 : bits / 8;

  std::string bytes;
  if (tensor.data_location() == pb::TensorProto::EXTERNAL) {
    auto ext = readExternalData(tensor, what);
    if (failed(ext))
      return failure();
    bytes = std::move(*ext);
  } else if (tensor.has_raw_data()) {
    bytes = tensor.raw_data();
  } else {
    switch (tensor.data_type()) {
    case pb::TensorProto::FLOAT: bytes = packTyped<float>(tensor.float_data()); break;
    case pb::TensorProto::DOUBLE: bytes = packTyped<double>(tensor.double_data()); break;
    case pb::TensorProto::INT64: bytes = packTyped<int64_t>(tensor.int64_data()); break;
    case pb::TensorProto::UINT64: bytes = packTyped<uint64_t>(tensor.uint64_data()); break;
    case pb::TensorProto::UINT32: bytes = packTyped<uint32_t>(tensor.uint64_data()); break;
    case pb::TensorProto::INT32: bytes = packTyped<int32_t>(tensor.int32_data()); break;
    case pb::TensorProto::INT16: bytes = packTyped<int16_t>(tensor.int32_data()); break;
    case pb::TensorProto::UINT16:
    case pb::TensorProto::FLOAT16:
    case pb::TensorProto::BFLOAT16: bytes = packTyped<uint16_t>(tensor.int32_data()); break;
    case pb::TensorProto::INT8: bytes = packTyped<int8_t>(tensor.int32_data()); break;
    case pb::TensorProto::UINT8:
    case pb::TensorProto::FLOAT8E4M3FN:
    case pb::TensorProto::FLOAT8E4M3FNUZ:
    case pb::TensorProto::FLOAT8E5M2:
    case pb::TensorProto::FLOAT8E5M2FNUZ:
    case pb::TensorProto::BOOL: bytes = packTyped<uint8_t>(tensor.int32_data()); break;
    default:
      error() << "tensor \"" << what << "\": unsupported element type "
              << tensor.data_type();
      return failure();
    }
  }
  if (static_cast<int64_t>(bytes.size()) != count * eltBytes) {
    error() << "tensor \"" << what << "\": holds " << bytes.size()
            << " bytes, but its shape and type need " << count * eltBytes;
    return failure();
  }

  // Small or boolean tensors stay inline so that folders and shape inference
  // can read them; weights go to a blob, copied once.
  if (bits == 1 || static_cast<int64_t>(bytes.size()) < options.resourceThresholdBytes) {
    if (bits == 1) {
      SmallVector<bool> values(bytes.begin(), bytes.end());
      return ElementsAttr(DenseElementsAttr::get(type, ArrayRef<bool>(values)));
    }
    bool isSplat = false;
    if (!DenseElementsAttr::isValidRawBuffer(type, ArrayRef<char>(bytes.data(), bytes.size()), isSplat)) {
      error() << "tensor \"" << what << "\": malformed data";
      return failure();
    }
    return ElementsAttr(DenseElementsAttr::getFromRawBuffer(
        type, ArrayRef<char>(bytes.data(), bytes.size())));
  }
  // Resource keys print bare in the IR: keep them identifier-like so that
  // dumps parse back ("onnx::LSTM_223" -> "onnx__LSTM_223").
  std::string blobName = what.str();
  for (char &ch : blobName)
    if (!isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '.')
      ch = '_';
  if (blobName.empty() || isdigit(static_cast<unsigned char>(blobName[0])))
    blobName = "const_" + std::to_string(blobCounter++) + "_" + blobName;
  AsmResourceBlob blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
      ArrayRef<char>(bytes.data(), bytes.size()), /*align=*/64,
      /*dataIsMutable=*/false);
  return ElementsAttr(
      DenseResourceElementsAttr::get(type, blobName, std::move(blob)));
}

/// The element type of result `i` before shape inference: from the `to`
/// attribute for casts, from the input bound to the same type variable, or
/// the single type the schema allows.
Type Importer::outputElementType(const onnx::OnnxOpVersionInfo &schema, int i,
                                 const pb::NodeProto &node,
                                 ArrayRef<Value> operands) {
  for (const auto &attr : node.attribute()) {
    if ((attr.name() == "to" || attr.name() == "dtype") &&
        attr.type() == pb::AttributeProto::INT)
      return elementTypeFor(&ctx, attr.i());
    // ConstantOfShape and friends take their type from a `value` tensor.
    if (attr.name() == "value" && attr.type() == pb::AttributeProto::TENSOR &&
        schema.numInputs > 0)
      return elementTypeFor(&ctx, attr.t().data_type());
  }
  int resultIndex = schema.variadicOutput ? std::min(i, schema.numOutputs - 1) : i;
  if (resultIndex >= schema.numOutputs)
    return {};
  int src = schema.outputTypeSource[resultIndex];
  if (src >= 0) {
    if (schema.variadicInput && src >= (int)operands.size())
      src = operands.empty() ? -1 : 0;
    if (src >= 0 && src < (int)operands.size())
      if (auto st = dyn_cast<ShapedType>(operands[src].getType()))
        return st.getElementType();
  }
  if (int dtype = schema.outputFixedDtype[resultIndex])
    return elementTypeFor(&ctx, dtype);
  return {};
}

Value Importer::makeConstant(Location loc, ElementsAttr value) {
  OperationState state(loc, onnx::ConstantOp::getOperationName());
  state.addAttribute("value", value);
  state.addTypes(value.getType());
  return b.create(state)->getResult(0);
}

Value Importer::noValue() {
  if (!noneValue) {
    // One `none` at the top of @main serves every (sub)graph; a subgraph's
    // block has no parent op yet while it is being imported.
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(mainEntry);
    noneValue = b.create<onnx::NoValueOp>(b.getUnknownLoc()).getResult();
  }
  return noneValue;
}

FailureOr<Attribute>
Importer::importAttribute(const pb::AttributeProto &attr,
                          const pb::NodeProto &node, Location loc,
                          OperationState &state) {
  switch (attr.type()) {
  case pb::AttributeProto::INT:
    return Attribute(b.getI64IntegerAttr(attr.i()));
  case pb::AttributeProto::FLOAT:
    return Attribute(b.getF32FloatAttr(attr.f()));
  case pb::AttributeProto::STRING:
    return Attribute(b.getStringAttr(attr.s()));
  case pb::AttributeProto::INTS:
    return Attribute(b.getI64ArrayAttr(
        SmallVector<int64_t>(attr.ints().begin(), attr.ints().end())));
  case pb::AttributeProto::FLOATS:
    return Attribute(b.getF32ArrayAttr(
        SmallVector<float>(attr.floats().begin(), attr.floats().end())));
  case pb::AttributeProto::STRINGS: {
    SmallVector<StringRef> strs(attr.strings().begin(), attr.strings().end());
    return Attribute(b.getStrArrayAttr(strs));
  }
  case pb::AttributeProto::TENSOR: {
    // String tensors (LabelEncoder's keys_tensor) are attribute data only:
    // kiln has no string constants at run time.
    if (attr.t().data_type() == pb::TensorProto::STRING && node.op_type() != "Constant") {
      SmallVector<int64_t> dims(attr.t().dims().begin(), attr.t().dims().end());
      SmallVector<StringRef> strs(attr.t().string_data().begin(), attr.t().string_data().end());
      auto type = RankedTensorType::get(dims, onnx::StringType::get(&ctx));
      if (type.getNumElements() != (int64_t)strs.size()) {
        error() << "tensor \"" << node.name() << "." << attr.name() << "\": holds "
                << strs.size() << " strings, but its shape needs " << type.getNumElements();
        return failure();
      }
      return Attribute(DenseStringElementsAttr::get(type, strs));
    }
    auto value = importTensor(attr.t(), node.name() + "." + attr.name());
    if (failed(value))
      return failure();
    return Attribute(*value);
  }
  case pb::AttributeProto::TYPE_PROTO: {
    Type t = importType(attr.tp(), attr.name());
    if (!t)
      return failure();
    return Attribute(TypeAttr::get(t));
  }
  case pb::AttributeProto::TYPE_PROTOS: {
    SmallVector<Attribute> types;
    for (const auto &tp : attr.type_protos()) {
      Type t = importType(tp, attr.name());
      if (!t)
        return failure();
      types.push_back(TypeAttr::get(t));
    }
    return Attribute(b.getArrayAttr(types));
  }
  case pb::AttributeProto::GRAPH:
  case pb::AttributeProto::GRAPHS: {
    // Subgraphs become regions, in the order importNode passes attributes
    // (by name).
    SmallVector<const pb::GraphProto *> graphs;
    if (attr.type() == pb::AttributeProto::GRAPH)
      graphs.push_back(&attr.g());
    for (const auto &g : attr.graphs())
      graphs.push_back(&g);
    for (const pb::GraphProto *g : graphs) {
      Region *region = state.addRegion();
      Block *block = new Block();
      region->push_back(block);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(block);
      if (failed(importGraph(*g, *block, /*isMain=*/false)))
        return failure();
    }
    return Attribute();
  }
  default:
    nodeError(node, loc) << "attribute \"" << attr.name()
                         << "\" has an unsupported kind " << attr.type();
    return failure();
  }
}

/// Older opsets passed some inputs as attributes; the dialect holds the
/// newest form, so such attributes become constant inputs here.
struct AttrToInput {
  const char *op;
  int beforeVersion; // applies when the node's op version is older
  const char *attr;
  int inputIndex;
  enum Kind { Ints, FloatScalar, IntScalar } kind;
};
static const AttrToInput kAttrToInput[] = {
    {"Squeeze", 13, "axes", 1, AttrToInput::Ints},
    {"Unsqueeze", 13, "axes", 1, AttrToInput::Ints},
    {"ReduceSum", 13, "axes", 1, AttrToInput::Ints},
    {"ReduceMean", 18, "axes", 1, AttrToInput::Ints},
    {"ReduceMax", 18, "axes", 1, AttrToInput::Ints},
    {"ReduceMin", 18, "axes", 1, AttrToInput::Ints},
    {"ReduceProd", 18, "axes", 1, AttrToInput::Ints},
    {"ReduceL1", 18, "axes", 1, AttrToInput::Ints},
    {"ReduceL2", 18, "axes", 1, AttrToInput::Ints},
    {"ReduceLogSum", 18, "axes", 1, AttrToInput::Ints},
    {"ReduceLogSumExp", 18, "axes", 1, AttrToInput::Ints},
    {"ReduceSumSquare", 18, "axes", 1, AttrToInput::Ints},
    {"Split", 13, "split", 1, AttrToInput::Ints},
    {"Slice", 10, "starts", 1, AttrToInput::Ints},
    {"Slice", 10, "ends", 2, AttrToInput::Ints},
    {"Slice", 10, "axes", 3, AttrToInput::Ints},
    {"Pad", 11, "pads", 1, AttrToInput::Ints},
    {"Pad", 11, "value", 2, AttrToInput::FloatScalar},
    {"Clip", 11, "min", 1, AttrToInput::FloatScalar},
    {"Clip", 11, "max", 2, AttrToInput::FloatScalar},
    {"DFT", 20, "axis", 2, AttrToInput::IntScalar},
};

/// Attributes of old opsets that the newest form dropped and whose presence
/// does not change the result at inference.
static bool isHarmlessLegacyAttr(StringRef op, StringRef attr) {
  return attr == "consumed_inputs" || attr == "is_test" ||
         (op == "BatchNormalization" && attr == "spatial") ||
         (op == "Dropout" && attr == "ratio");
}

LogicalResult Importer::importNode(const pb::NodeProto &node, int index) {
  std::string nodeName = kiln::nodeName(node, index);
  // The op type rides along (as the metadata of a fused location) so that
  // the profiler can name a node's kernel by the node's own op type after
  // a decomposition rewrote it (kiln-profile-kernels).
  Location loc = NameLoc::get(
      b.getStringAttr(nodeName),
      FusedLoc::get(&ctx, {FileLineColLoc::get(&ctx, displayName, 0, 0)},
                    b.getStringAttr(node.op_type())));
  pb::NodeProto named = node;
  named.set_name(nodeName);

  std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
  if (domain == "com.microsoft")
    return importMicrosoftNode(named, loc);
  if (!onnx::lookupOnnxDomain(domain.c_str()))
    return nodeError(named, loc)
           << "op of domain \"" << domain << "\" is not supported";
  const onnx::OnnxOpVersionInfo *schema =
      onnx::lookupOnnxOpVersions(node.op_type().c_str());
  // An op of another domain under this name is a different op.
  if (schema && domain != schema->domain)
    schema = nullptr;
  auto opsetIt = domainOpsets.find(domain);
  int opset = domain.empty() ? opsetVersion : opsetIt == domainOpsets.end() ? 0 : opsetIt->second;
  if (!domain.empty() && !opset)
    return nodeError(named, loc) << "the model does not import domain \"" << domain << "\"";
  std::string opName = "onnx." + node.op_type();
  auto registered = RegisteredOperationName::lookup(opName, &ctx);
  // A result dtype kiln cannot represent must stop here: typing the result
  // as something else would be a silent wrong answer.
  for (const auto &attr : node.attribute())
    if ((attr.name() == "to" || attr.name() == "dtype") &&
        attr.type() == pb::AttributeProto::INT && !elementTypeFor(&ctx, attr.i()))
      return nodeError(named, loc) << "ONNX element type " << attr.i() << " ("
                                   << pb::TensorProto::DataType_Name(
                                          static_cast<pb::TensorProto::DataType>(attr.i()))
                                   << ") is not supported";
  if (!schema || !registered) {
    // An op kiln knows in another domain than the node's.
    if (auto *other = onnx::lookupOnnxOpVersions(node.op_type().c_str()))
      return nodeError(named, loc)
             << "unknown op in domain \"" << (domain.empty() ? "ai.onnx" : domain)
             << "\" (kiln knows " << node.op_type() << " in domain \""
             << (*other->domain ? other->domain : "ai.onnx") << "\")";
    return nodeError(named, loc) << "unknown op";
  }
  int version = onnx::getOnnxSchemaVersion(node.op_type().c_str(), opset);
  if (version < 0)
    return nodeError(named, loc)
           << "op does not exist at opset " << opset
           << (domain.empty() ? "" : " of domain \"" + domain + "\"");
  // Scan-8 is batched and takes sequence_lens first: another op in all
  // but name, which kiln's Scan (opset 9 on) does not cover.
  if (node.op_type() == "Scan" && version < 9)
    return nodeError(named, loc) << "Scan before opset 9 (batched, with sequence_lens) is not supported";

  OperationState state(loc, opName);
  SmallVector<Value> operands;
  for (const std::string &in : node.input()) {
    if (in.empty()) {
      operands.push_back(noValue());
      continue;
    }
    Value v = scopes.lookup(in);
    if (!v)
      return nodeError(named, loc) << "input \"" << in << "\" is not defined";
    operands.push_back(v);
  }

  llvm::StringSet<> declared;
  for (StringAttr name : registered->getAttributeNames())
    declared.insert(name.getValue());

  SmallVector<NamedAttribute> attrs;
  // By name: subgraphs become regions in the order ODS declares them
  // (If: else_branch, then_branch), whatever order the exporter wrote.
  std::vector<const pb::AttributeProto *> sortedAttrs;
  for (const auto &attr : node.attribute())
    sortedAttrs.push_back(&attr);
  llvm::stable_sort(sortedAttrs, [](const pb::AttributeProto *a, const pb::AttributeProto *b) {
    return a->name() < b->name();
  });
  int regionCursor = 0;
  for (const pb::AttributeProto *attrPtr : sortedAttrs) {
    const pb::AttributeProto &attr = *attrPtr;
    // Legacy attribute that is an input in the newest form.
    const AttrToInput *moved = nullptr;
    for (const auto &rule : kAttrToInput)
      if (node.op_type() == rule.op && attr.name() == rule.attr &&
          version < rule.beforeVersion)
        moved = &rule;
    if (moved) {
      while (static_cast<int>(operands.size()) < moved->inputIndex)
        operands.push_back(noValue());
      DenseElementsAttr value;
      if (moved->kind == AttrToInput::FloatScalar) {
        Type elt = cast<ShapedType>(operands[0].getType()).getElementType();
        value = DenseElementsAttr::get(RankedTensorType::get({}, elt),
                                       b.getFloatAttr(elt, attr.f()));
      } else if (moved->kind == AttrToInput::IntScalar) {
        value = DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                                       ArrayRef<int64_t>{attr.i()});
      } else {
        SmallVector<int64_t> ints(attr.ints().begin(), attr.ints().end());
        value = DenseElementsAttr::get(
            RankedTensorType::get({(int64_t)ints.size()}, b.getI64Type()),
            ArrayRef<int64_t>(ints));
      }
      Value c = makeConstant(loc, value);
      if (static_cast<int>(operands.size()) == moved->inputIndex)
        operands.push_back(c);
      else
        operands[moved->inputIndex] = c;
      continue;
    }
    if (attr.type() != pb::AttributeProto::GRAPH &&
        attr.type() != pb::AttributeProto::GRAPHS &&
        !declared.contains(attr.name())) {
      if (isHarmlessLegacyAttr(node.op_type(), attr.name()))
        continue;
      return nodeError(named, loc)
             << "attribute \"" << attr.name() << "\" is not supported (opset "
             << opsetVersion << ")";
    }
    if (node.op_type() == "Loop" && attr.type() == pb::AttributeProto::GRAPH) {
      subgraphInputHints = {RankedTensorType::get({}, b.getI64Type()),
                            RankedTensorType::get({}, b.getI1Type())};
      for (size_t i = 2; i < operands.size(); ++i)
        subgraphInputHints.push_back(operands[i].getType());
    }
    // A Scan body's state inputs have the initial states' types, its scan
    // inputs one slice of the scanned inputs (the scan axis dropped).
    if (node.op_type() == "Scan" && attr.type() == pb::AttributeProto::GRAPH) {
      int64_t numScan = 0;
      std::vector<int64_t> axes;
      for (const auto &a : node.attribute()) {
        if (a.name() == "num_scan_inputs")
          numScan = a.i();
        else if (a.name() == "scan_input_axes")
          axes.assign(a.ints().begin(), a.ints().end());
      }
      int64_t numState = static_cast<int64_t>(operands.size()) - numScan;
      subgraphInputHints.clear();
      for (int64_t i = 0; i < static_cast<int64_t>(operands.size()); ++i) {
        Type t = operands[i].getType();
        auto ranked = dyn_cast<RankedTensorType>(t);
        if (i >= numState && ranked) {
          size_t k = i - numState;
          int64_t axis = k < axes.size() ? axes[k] : 0;
          if (axis < 0)
            axis += ranked.getRank();
          SmallVector<int64_t> shape(ranked.getShape());
          if (axis >= 0 && axis < ranked.getRank())
            shape.erase(shape.begin() + axis);
          t = RankedTensorType::get(shape, ranked.getElementType());
        } else if (i >= numState) {
          t = Type();
        }
        subgraphInputHints.push_back(t);
      }
    }
    // An optional subgraph the node leaves out is an empty region, so
    // that the ones it has land in their ODS positions.
    if (attr.type() == pb::AttributeProto::GRAPH)
      while (regionCursor < schema->numRegions &&
             attr.name() != schema->regionNames[regionCursor++])
        state.addRegion();
    auto value = importAttribute(attr, named, loc, state);
    if (failed(value))
      return failure();
    if (*value)
      attrs.push_back(b.getNamedAttr(attr.name(), *value));
  }
  if (static_cast<int>(state.regions.size()) <= schema->numRegions)
    while (regionCursor++ < schema->numRegions)
      state.addRegion();

  // Constant's many spellings collapse to `value`, so later code sees one.
  if (node.op_type() == "Constant") {
    for (auto &na : attrs) {
      StringRef n = na.getName().getValue();
      if (n == "value")
        continue;
      DenseElementsAttr dense;
      if (n == "value_float")
        dense = DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()),
                                       cast<FloatAttr>(na.getValue()));
      else if (n == "value_int")
        dense = DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                                       cast<IntegerAttr>(na.getValue()));
      else if (n == "value_floats" || n == "value_ints") {
        auto arr = cast<ArrayAttr>(na.getValue());
        Type elt = n == "value_floats" ? Type(b.getF32Type()) : b.getI64Type();
        dense = DenseElementsAttr::get(
            RankedTensorType::get({(int64_t)arr.size()}, elt), arr.getValue());
      } else
        return nodeError(named, loc)
               << "attribute \"" << n << "\" is not supported";
      na = b.getNamedAttr("value", dense);
    }
  }

  // Missing trailing optional inputs are explicit `none` values so that the
  // operand list always matches the op definition.
  if (!schema->variadicInput)
    while (static_cast<int>(operands.size()) < schema->numInputs)
      operands.push_back(noValue());
  if (static_cast<int>(operands.size()) < schema->minInputs ||
      (!schema->variadicInput &&
       static_cast<int>(operands.size()) > schema->numInputs))
    return nodeError(named, loc)
           << "has " << node.input_size() << " inputs, the op takes "
           << schema->minInputs << ".." << schema->numInputs;

  // Result types: declared value_info when present, refined by shape
  // inference below; absent optional outputs are `none`.
  int numResults = schema->variadicOutput
                       ? std::max(node.output_size(), schema->numOutputs - 1)
                       : schema->numOutputs;
  if (!schema->variadicOutput && node.output_size() > numResults)
    return nodeError(named, loc) << "has " << node.output_size()
                                 << " outputs, the op has " << numResults;
  SmallVector<Type> resultTypes;
  for (int i = 0; i < numResults; ++i) {
    std::string out = i < node.output_size() ? node.output(i) : "";
    if (out.empty() && !schema->variadicOutput) {
      resultTypes.push_back(b.getNoneType());
      continue;
    }
    if (auto it = valueInfoTypes.find(out); it != valueInfoTypes.end()) {
      resultTypes.push_back(it->second);
      continue;
    }
    Type elt = outputElementType(*schema, i, named, operands);
    if (!elt)
      elt = b.getF32Type();
    resultTypes.push_back(UnrankedTensorType::get(elt));
  }

  // Ops kept in their newest form remember an older schema revision when
  // its semantics differ (e.g. Softmax before 13 flattens from `axis`).
  if (version != schema->sinceVersions[schema->numSinceVersions - 1])
    attrs.push_back(b.getNamedAttr("onnx.version", b.getI64IntegerAttr(version)));
  state.addOperands(operands);
  state.addAttributes(attrs);
  state.addTypes(resultTypes);
  Operation *op = b.create(state);
  if (failed(onnx::inferShapesFor(op)))
    return failure();
  for (int i = 0; i < node.output_size(); ++i)
    if (!node.output(i).empty())
      scopes.define(node.output(i), op->getResult(i));
  return success();
}

LogicalResult Importer::importMicrosoftNode(const pb::NodeProto &node,
                                            Location loc) {
  if (!domainOpsets.count("com.microsoft"))
    return nodeError(node, loc)
           << "the model does not import domain \"com.microsoft\"";
  SmallVector<Value> inputs;
  for (const std::string &in : node.input()) {
    Value v = in.empty() ? Value() : scopes.lookup(in);
    if (!in.empty() && !v)
      return nodeError(node, loc) << "input \"" << in << "\" is not defined";
    inputs.push_back(v);
  }
  std::string why;
  FailureOr<SmallVector<Value>> results =
      expandMicrosoftNode(b, loc, node, inputs, why);
  if (failed(results))
    return nodeError(node, loc) << why;
  if (node.output_size() > static_cast<int>(results->size()))
    return nodeError(node, loc) << "has " << node.output_size()
                                << " outputs, the op has " << results->size();
  for (int i = 0; i < node.output_size(); ++i)
    if (!node.output(i).empty())
      scopes.define(node.output(i), (*results)[i]);
  return success();
}

LogicalResult Importer::importGraph(const pb::GraphProto &graph, Block &block,
                                    bool isMain) {
  scopes.push();
  auto popScope = llvm::make_scope_exit([&] { scopes.pop(); });
  // Declared graph outputs are value_info too (their shapes let ops whose
  // shape depends on a runtime input compile against the declared shape).
  // (Types kiln cannot represent, a classifier's map outputs, stay
  // undeclared; a negative dimension is an error anywhere.)
  for (const auto *infos :
       {&graph.input(), &graph.output(), &graph.value_info()})
    for (const auto &vi : *infos) {
      if (failed(checkDims(vi.type(), vi.name())))
        return failure();
      if (infos == &graph.input() || !vi.has_type())
        continue;
      if (Type t = importType(vi.type(), vi.name()); t && isDeclaredType(t))
        valueInfoTypes[vi.name()] = t;
    }

  llvm::StringSet<> initializerNames;
  for (const auto &init : graph.initializer())
    initializerNames.insert(init.name());

  // Graph inputs (initializers listed as inputs are constants, IR < 4).
  SmallVector<Type> hints = std::move(subgraphInputHints);
  subgraphInputHints.clear();
  for (auto [index, in] : llvm::enumerate(graph.input())) {
    if (initializerNames.contains(in.name()))
      continue;
    Type hint = index < hints.size() ? hints[index] : Type();
    Type t = !in.type().has_tensor_type() && hint ? hint
                                                  : importType(in.type(), in.name());
    if (!t)
      return failure();
    // A body input declared with symbolic dims ([a, b]) takes the static
    // shape its initial value has.
    if (hint && t != hint && onnx::joinTypes(hint, t) == t && isa<RankedTensorType>(hint) &&
        cast<RankedTensorType>(hint).hasStaticShape())
      t = hint;
    if (isMain) {
      auto it = options.inputShapes.find(in.name());
      if (it != options.inputShapes.end()) {
        auto ranked = dyn_cast<RankedTensorType>(t);
        ArrayRef<int64_t> given = it->second;
        if (ranked) {
          bool agrees = ranked.getRank() == (int64_t)given.size();
          for (size_t i = 0; agrees && i < given.size(); ++i)
            agrees = ranked.isDynamicDim(i) || ShapedType::isDynamic(given[i]) ||
                     ranked.getDimSize(i) == given[i];
          if (!agrees) {
            error() << "--input-shape for \"" << in.name()
                    << "\" disagrees with the model's declared shape";
            return failure();
          }
        }
        // `?` keeps the model's dimension.
        SmallVector<int64_t> dims(given);
        for (size_t i = 0; i < dims.size(); ++i)
          if (ShapedType::isDynamic(dims[i]) && ranked)
            dims[i] = ranked.getDimSize(i);
        t = RankedTensorType::get(dims, cast<ShapedType>(t).getElementType());
      }
    }
    scopes.define(in.name(), block.addArgument(t, b.getUnknownLoc()));
  }

  for (const auto &init : graph.initializer()) {
    auto value = importTensor(init, init.name());
    if (failed(value))
      return failure();
    Location loc = NameLoc::get(b.getStringAttr(init.name()));
    scopes.define(init.name(), makeConstant(loc, *value));
  }

  std::optional<GraphRuleError> broken;
  std::vector<int> order = orderNodes(graph, broken);
  if (broken) {
    if (broken->node < 0)
      error() << broken->message;
    else
      error() << "node \"" << nodeName(graph.node(broken->node), broken->node)
              << "\" (" << graph.node(broken->node).op_type()
              << "): " << broken->message;
    return failure();
  }
  for (int index : order)
    if (failed(importNode(graph.node(index), index)))
      return failure();

  SmallVector<Value> results;
  for (const auto &out : graph.output()) {
    Value v = scopes.lookup(out.name());
    if (!v) {
      error() << "graph output \"" << out.name() << "\" is not produced by any node";
      return failure();
    }
    results.push_back(v);
  }
  if (isMain)
    b.create<func::ReturnOp>(b.getUnknownLoc(), results);
  else
    b.create<onnx::YieldOp>(b.getUnknownLoc(), results);
  return success();
}

OwningOpRef<ModuleOp> Importer::run(const pb::ModelProto &model) {
  for (const auto &opset : model.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx")
      opsetVersion = opset.version();
    else
      domainOpsets[opset.domain()] = opset.version();
  }
  if (opsetVersion == 0)
    opsetVersion = model.ir_version() >= 3 ? 1 : 1;
  if (opsetVersion > onnx::kMaxOnnxOpset) {
    error() << "opset " << opsetVersion
            << " of the default ONNX domain is newer than kiln supports (max "
            << onnx::kMaxOnnxOpset << ")";
    return {};
  }
  if (!model.has_graph()) {
    error() << "the model has no graph";
    return {};
  }

  auto module = ModuleOp::create(FileLineColLoc::get(&ctx, displayName, 0, 0));
  module->setAttr("onnx.ir_version", b.getI64IntegerAttr(model.ir_version()));
  module->setAttr("onnx.opset", b.getI64IntegerAttr(opsetVersion));
  SmallVector<NamedAttribute> imports;
  for (const auto &opset : model.opset_import())
    imports.push_back(b.getNamedAttr(opset.domain().empty() ? "ai.onnx" : opset.domain(),
                                     b.getI64IntegerAttr(opset.version())));
  module->setAttr("onnx.opset_import", b.getDictionaryAttr(imports));
  if (!model.producer_name().empty())
    module->setAttr("onnx.producer",
                    b.getStringAttr(StringRef(model.producer_name() + " " +
                                              model.producer_version())
                                        .rtrim()));
  b.setInsertionPointToEnd(module.getBody());
  auto func = b.create<func::FuncOp>(module.getLoc(), "main",
                                     b.getFunctionType({}, {}));
  if (!model.graph().name().empty())
    func->setAttr("onnx.graph_name", b.getStringAttr(model.graph().name()));
  Block *entry = func.addEntryBlock();
  mainEntry = entry;
  b.setInsertionPointToStart(entry);
  if (failed(importGraph(model.graph(), *entry, /*isMain=*/true))) {
    module.erase();
    return {};
  }

  // Names of the graph's inputs and outputs travel as argument/result attrs.
  SmallVector<Type> resultTypes(
      entry->getTerminator()->getOperandTypes().begin(),
      entry->getTerminator()->getOperandTypes().end());
  func.setFunctionType(
      b.getFunctionType(entry->getArgumentTypes(), resultTypes));
  int argIndex = 0;
  llvm::StringSet<> initializerNames;
  for (const auto &init : model.graph().initializer())
    initializerNames.insert(init.name());
  for (const auto &in : model.graph().input()) {
    if (initializerNames.contains(in.name()))
      continue;
    // Dimensions still symbolic after import keep their names: inputs
    // that share one must agree at run time.
    if (auto t = dyn_cast<RankedTensorType>(func.getArgumentTypes()[argIndex]);
        t && !t.hasStaticShape() && in.type().has_tensor_type()) {
      SmallVector<Attribute> names;
      const auto &dims = in.type().tensor_type().shape().dim();
      for (int64_t i = 0; i < t.getRank(); ++i)
        names.push_back(b.getStringAttr(
            !t.isDynamicDim(i) ? StringRef()
            : i < dims.size() && !dims[i].dim_param().empty()
                ? StringRef(dims[i].dim_param())
                : StringRef(kUnnamedDim)));
      func.setArgAttr(argIndex, "onnx.dim_params", b.getArrayAttr(names));
    }
    func.setArgAttr(argIndex++, "onnx.name", b.getStringAttr(in.name()));
  }
  for (int i = 0; i < model.graph().output_size(); ++i)
    func.setResultAttr(i, "onnx.name",
                       b.getStringAttr(model.graph().output(i).name()));
  return OwningOpRef<ModuleOp>(module);
}

} // namespace

OwningOpRef<ModuleOp> importOnnxBytes(MLIRContext &ctx, StringRef bytes,
                                      StringRef displayName, StringRef baseDir,
                                      const ImportOptions &options) {
  ctx.loadDialect<onnx::ONNXDialect, func::FuncDialect>();
  pb::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    emitError(UnknownLoc::get(&ctx))
        << displayName
        << ": not a valid ONNX model (protobuf parse failed: truncated or not "
           "an .onnx file)";
    return {};
  }
  if (!model.has_graph() && model.opset_import_size() == 0) {
    emitError(UnknownLoc::get(&ctx))
        << displayName << ": not an ONNX model (no graph, no opset imports)";
    return {};
  }
  return Importer(ctx, displayName, baseDir, options).run(model);
}

OwningOpRef<ModuleOp> importOnnxFile(MLIRContext &ctx, StringRef path,
                                     const ImportOptions &options) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    emitError(UnknownLoc::get(&ctx))
        << path << ": cannot read: " << buffer.getError().message();
    return {};
  }
  StringRef dir = llvm::sys::path::parent_path(path);
  return importOnnxBytes(ctx, (*buffer)->getBuffer(), path, dir, options);
}

std::optional<std::string> leadingBatchSymbol(ModuleOp module) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  std::optional<std::string> batch;
  for (unsigned i = 0; main && i < main.getNumArguments(); ++i) {
    auto shaped = dyn_cast<ShapedType>(main.getArgumentTypes()[i]);
    if (!shaped || !shaped.hasRank() || shaped.hasStaticShape())
      continue;
    auto names = main.getArgAttrOfType<ArrayAttr>(i, "onnx.dim_params");
    for (int64_t d = 0; d < shaped.getRank(); ++d) {
      if (!shaped.isDynamicDim(d))
        continue;
      StringRef name = names && d < int64_t(names.size())
                           ? cast<StringAttr>(names[d]).getValue()
                           : StringRef();
      if (d != 0 || name.empty() || (batch && *batch != name))
        return std::nullopt;
      batch = name.str();
    }
  }
  return batch;
}

bool hasSymbolicInputs(ModuleOp module) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  return main && llvm::any_of(main.getArgumentTypes(), [](Type t) {
           auto shaped = dyn_cast<ShapedType>(t);
           return shaped && !shaped.hasStaticShape();
         });
}

} // namespace kiln
