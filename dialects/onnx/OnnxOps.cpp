//===- OnnxOps.cpp - onnx dialect operations ------------------------------===//

#include "dialects/onnx/OnnxOps.h"

#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringMap.h"

#include <limits>

using namespace mlir;
using namespace kiln::onnx;

#include "dialects/onnx/ShapeInferenceInterface.cpp.inc"

//===----------------------------------------------------------------------===//
// Shared schema verifier
//===----------------------------------------------------------------------===//

namespace {
/// Maps the flat operand/result list back to schema parameters. ONNX allows a
/// variadic parameter only in the last position, and ODS keeps exactly one
/// operand per Single/Optional parameter, so the mapping is positional.
struct ParamValues {
  const OnnxParamInfo *param;
  ValueRange values;
};

SmallVector<ParamValues> splitByParam(ArrayRef<OnnxParamInfo> params,
                                      ValueRange values) {
  SmallVector<ParamValues> out;
  unsigned pos = 0;
  for (const OnnxParamInfo &p : params) {
    unsigned n = p.kind == OnnxParamKind::Variadic
                     ? values.size() - std::min<size_t>(pos, values.size())
                     : (pos < values.size() ? 1 : 0);
    out.push_back({&p, values.slice(pos, n)});
    pos += n;
  }
  return out;
}

/// Binding of a type variable to the first tensor value that used it.
struct Binding {
  Type elementType;
  StringRef what; // "operand" / "result"
  StringRef name;
};

LogicalResult checkArity(Operation *op, ArrayRef<ParamValues> groups,
                         StringRef what) {
  for (const ParamValues &g : groups) {
    if (g.param->kind != OnnxParamKind::Variadic)
      continue;
    if (static_cast<int>(g.values.size()) < g.param->minArity)
      return op->emitOpError() << "variadic " << what << " '" << g.param->name
                               << "' needs at least " << g.param->minArity
                               << " value(s), got " << g.values.size();
  }
  return success();
}

LogicalResult checkTypeVars(Operation *op, ArrayRef<ParamValues> groups,
                            StringRef what, llvm::StringMap<Binding> &bound) {
  for (const ParamValues &g : groups) {
    const OnnxParamInfo &p = *g.param;
    // Heterogeneous variadics (Loop/Scan/If carried values) bind each value
    // separately, so there is nothing to compare.
    if (!p.typeVar || (p.kind == OnnxParamKind::Variadic && !p.homogeneous))
      continue;
    for (Value v : g.values) {
      // Absent optionals are `none`; sequences/optionals are not compared.
      auto tensorTy = dyn_cast<TensorType>(v.getType());
      if (!tensorTy)
        continue;
      Type elt = tensorTy.getElementType();
      auto [it, inserted] =
          bound.try_emplace(p.typeVar, Binding{elt, what, p.name});
      if (inserted || it->second.elementType == elt)
        continue;
      return op->emitOpError()
             << what << " '" << p.name << "' has element type " << elt
             << " but " << it->second.what << " '" << it->second.name
             << "' bound to the same type variable '" << p.typeVar
             << "' has element type " << it->second.elementType;
    }
  }
  return success();
}
} // namespace

static LogicalResult checkCount(Operation *op, int count, int min, int max,
                                StringRef what) {
  if (count >= min && count <= max)
    return success();
  InFlightDiagnostic diag = op->emitOpError() << "expects ";
  if (max == std::numeric_limits<int>::max())
    diag << "at least " << min;
  else if (min == max)
    diag << min;
  else
    diag << min << " to " << max;
  return diag << " " << what << "s, got " << count;
}

LogicalResult kiln::onnx::verifyOnnxSchema(Operation *op,
                                           const OnnxSchemaInfo &schema) {
  // Per-parameter arity first: it names the offending variadic.
  SmallVector<ParamValues> ins = splitByParam(schema.inputs, op->getOperands());
  SmallVector<ParamValues> outs =
      splitByParam(schema.outputs, op->getResults());
  if (failed(checkArity(op, ins, "operand")) ||
      failed(checkArity(op, outs, "result")))
    return failure();
  if (failed(checkCount(op, op->getNumOperands(), schema.minInputs,
                        schema.maxInputs, "operand")) ||
      failed(checkCount(op, op->getNumResults(), schema.minOutputs,
                        schema.maxOutputs, "result")))
    return failure();

  llvm::StringMap<Binding> bound;
  if (failed(checkTypeVars(op, ins, "operand", bound)) ||
      failed(checkTypeVars(op, outs, "result", bound)))
    return failure();

  // Graph attributes are single-block subgraphs returning via onnx.Yield;
  // an optional one the node left out is an empty region.
  for (Region &region : op->getRegions()) {
    if (region.empty())
      continue;
    if (!region.hasOneBlock())
      return op->emitOpError() << "region #" << region.getRegionNumber()
                               << " must have exactly one block";
    Block &block = region.front();
    if (block.empty() || !isa<YieldOp>(block.back()))
      return op->emitOpError() << "region #" << region.getRegionNumber()
                               << " must end with 'onnx.Yield'";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// NoValueOp
//===----------------------------------------------------------------------===//

OpFoldResult NoValueOp::fold(FoldAdaptor) {
  return UnitAttr::get(getContext());
}

//===----------------------------------------------------------------------===//
// Generated op definitions
//===----------------------------------------------------------------------===//

#define GET_OP_CLASSES
#include "dialects/onnx/OnnxOps.cpp.inc"
