//===- FusionUtils.h - helpers shared by the graph fusion passes -*- C++ -*-===//
//
// Reading f32 onnx.Constant values (dense or dense_resource), writing new
// constants, and the per-fusion counters recorded on the module as
// `kiln.report.<name> = N : i64` for `kiln compile --report`.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_FUSIONUTILS_H
#define KILN_PASSES_FUSIONUTILS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <cstring>
#include <optional>

namespace kiln::fusion {

inline bool isOnnx(mlir::Operation *op, llvm::StringRef name) {
  return op && op->getName().getStringRef().starts_with("onnx.") &&
         op->getName().getStringRef().drop_front(5) == name;
}

inline bool isNoneValue(mlir::Value v) {
  return !v || mlir::isa<mlir::NoneType>(v.getType());
}

/// The location of `kept` once it has absorbed `absorbed`: all their node
/// names, `kept`'s first, so that messages still name the kept node and the
/// profiler lists every fused node (kiln-profile-kernels' fused_nodes).
inline mlir::Location fusedLoc(mlir::Operation *kept,
                               llvm::ArrayRef<mlir::Operation *> absorbed) {
  llvm::SmallVector<mlir::Location> locs = {kept->getLoc()};
  for (mlir::Operation *op : absorbed)
    if (op)
      locs.push_back(op->getLoc());
  return mlir::FusedLoc::get(kept->getContext(), locs);
}

/// The ops that compute `end` from `from` and constants (a matched
/// subgraph that a fusion replaces), or none if there are more than
/// `maxOps` (the walk left the subgraph).
inline llvm::SmallVector<mlir::Operation *> opsBetween(mlir::Operation *end, mlir::Value from,
                                                       unsigned maxOps = 32) {
  llvm::SmallVector<mlir::Operation *> ops;
  llvm::SmallVector<mlir::Value> work(end->getOperands());
  while (!work.empty()) {
    mlir::Value v = work.pop_back_val();
    mlir::Operation *def = v == from ? nullptr : v.getDefiningOp();
    if (!def || def->hasTrait<mlir::OpTrait::ConstantLike>() || isOnnx(def, "Constant") ||
        llvm::is_contained(ops, def))
      continue;
    if (ops.size() == maxOps)
      return {};
    ops.push_back(def);
    work.append(def->operand_begin(), def->operand_end());
  }
  return ops;
}

/// The `value` attribute of an onnx.Constant producing `v`, if any.
inline mlir::ElementsAttr constantAttr(mlir::Value v) {
  mlir::Operation *def = v ? v.getDefiningOp() : nullptr;
  if (!isOnnx(def, "Constant"))
    return {};
  return mlir::dyn_cast_or_null<mlir::ElementsAttr>(def->getAttr("value"));
}

/// The elements of an f32 dense or dense_resource value.
inline std::optional<llvm::SmallVector<float>>
elementsFloats(mlir::ElementsAttr attr) {
  if (!attr || !attr.getElementType().isF32())
    return std::nullopt;
  int64_t n = attr.getNumElements();
  if (auto dense = mlir::dyn_cast<mlir::DenseElementsAttr>(attr)) {
    auto vals = dense.getValues<float>();
    return llvm::SmallVector<float>(vals.begin(), vals.end());
  }
  if (auto res = mlir::dyn_cast<mlir::DenseResourceElementsAttr>(attr)) {
    mlir::AsmResourceBlob *blob = res.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    llvm::ArrayRef<char> data = blob->getData();
    if ((int64_t)data.size() != n * (int64_t)sizeof(float))
      return std::nullopt;
    llvm::SmallVector<float> out(n);
    std::memcpy(out.data(), data.data(), data.size());
    return out;
  }
  return std::nullopt;
}

/// The op's ONNX attributes (without kiln's `onnx.*` bookkeeping), to
/// carry over to the op that replaces it.
inline llvm::SmallVector<mlir::NamedAttribute> opAttributes(mlir::Operation *op) {
  llvm::SmallVector<mlir::NamedAttribute> attrs;
  for (mlir::NamedAttribute a : op->getAttrs())
    if (!a.getName().getValue().starts_with("onnx."))
      attrs.push_back(a);
  return attrs;
}

/// True for an onnx.Constant of integers that are all zero (dense or
/// dense_resource).
inline bool isZeroIntegerConstant(mlir::Value v) {
  mlir::ElementsAttr attr = constantAttr(v);
  if (!attr || !mlir::isa<mlir::IntegerType>(attr.getElementType()))
    return false;
  if (auto dense = mlir::dyn_cast<mlir::DenseElementsAttr>(attr))
    return llvm::all_of(dense.getValues<llvm::APInt>(),
                        [](const llvm::APInt &x) { return x.isZero(); });
  if (auto res = mlir::dyn_cast<mlir::DenseResourceElementsAttr>(attr))
    if (mlir::AsmResourceBlob *blob = res.getRawHandle().getBlob())
      return llvm::all_of(blob->getData(), [](char c) { return c == 0; });
  return false;
}

/// The elements of an f32 constant, from a dense or dense_resource value.
inline std::optional<llvm::SmallVector<float>> constantFloats(mlir::Value v) {
  return elementsFloats(constantAttr(v));
}

/// A constant whose elements are all (about) one value.
inline std::optional<float> constantScalar(mlir::Value v) {
  auto vals = constantFloats(v);
  if (!vals || vals->empty())
    return std::nullopt;
  for (float x : *vals)
    if (x != (*vals)[0])
      return std::nullopt;
  return (*vals)[0];
}

inline bool isConstantNear(mlir::Value v, double want, double tol = 1e-4) {
  auto s = constantScalar(v);
  return s && std::fabs(*s - want) <= tol * std::max(1.0, std::fabs(want));
}

inline mlir::Value createConstant(mlir::OpBuilder &b, mlir::Location loc,
                                  mlir::RankedTensorType type,
                                  llvm::ArrayRef<float> values) {
  mlir::OperationState st(loc, "onnx.Constant");
  st.addAttribute("value", mlir::DenseElementsAttr::get(type, values));
  st.addTypes(type);
  return b.create(st)->getResult(0);
}

/// Counts of fired fusions, by report key.
using Counters = llvm::StringMap<int64_t>;

/// Adds the counts to `kiln.report.<key>` on the module (counts of zero are
/// not recorded).
inline void recordCounters(mlir::ModuleOp module, const Counters &counters,
                           llvm::ArrayRef<llvm::StringRef> keys) {
  mlir::Builder b(module.getContext());
  for (llvm::StringRef key : keys) {
    if (!counters.lookup(key))
      continue;
    std::string name = ("kiln.report." + key).str();
    int64_t prev = 0;
    if (auto a = module->getAttrOfType<mlir::IntegerAttr>(name))
      prev = a.getInt();
    module->setAttr(name, b.getI64IntegerAttr(prev + counters.lookup(key)));
  }
}

/// The other operand of a binary op, given one of them.
inline mlir::Value otherOperand(mlir::Operation *op, mlir::Value known) {
  if (op->getNumOperands() != 2)
    return {};
  if (op->getOperand(0) == known)
    return op->getOperand(1);
  if (op->getOperand(1) == known)
    return op->getOperand(0);
  return {};
}

/// The single user of `v` (one use), else null.
inline mlir::Operation *singleUser(mlir::Value v) {
  return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
}

} // namespace kiln::fusion

#endif
