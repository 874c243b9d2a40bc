//===- GraphBuilder.h - build onnx ops by name, typed by inference -*- C++ -*-===//
//
// A small helper for decomposition passes: creates onnx ops generically by
// name (so no op classes are needed) and types each result with the op's
// shape inference rule right away, so later ops see static shapes.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_GRAPHBUILDER_H
#define KILN_PASSES_GRAPHBUILDER_H

#include "dialects/onnx/ShapeInference.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

namespace kiln {

/// Builds onnx ops by name, typing their results by shape inference.
class GraphBuilder {
public:
  GraphBuilder(mlir::OpBuilder &b, mlir::Location loc, mlir::Type elt) : b(b), loc(loc), elt(elt) {}

  mlir::Value op(llvm::StringRef name, mlir::ValueRange operands, llvm::ArrayRef<mlir::NamedAttribute> attrs = {},
           mlir::Type resultElt = {}) {
    return create(("onnx." + name).str(), operands, attrs, resultElt);
  }
  /// The same by op class (`g.op<onnx::AddOp>(...)`): a typo does not compile.
  template <typename OpT>
  mlir::Value op(mlir::ValueRange operands,
                 llvm::ArrayRef<mlir::NamedAttribute> attrs = {},
                 mlir::Type resultElt = {}) {
    return create(OpT::getOperationName(), operands, attrs, resultElt);
  }
  mlir::Value create(llvm::StringRef fullName, mlir::ValueRange operands,
                     llvm::ArrayRef<mlir::NamedAttribute> attrs,
                     mlir::Type resultElt) {
    mlir::OperationState state(loc, fullName);
    state.addOperands(operands);
    state.addAttributes(attrs);
    // Shape inference fixes the element type too, except for Cast, whose
    // rule trusts the result type it was given.
    state.addTypes(mlir::UnrankedTensorType::get(resultElt ? resultElt : elt));
    mlir::Operation *o = b.create(state);
    (void)onnx::inferShapesFor(o);
    return o->getResult(0);
  }
  mlir::Value ints(llvm::ArrayRef<int64_t> values, bool scalar = false) {
    auto type = mlir::RankedTensorType::get(scalar ? llvm::ArrayRef<int64_t>{} : llvm::ArrayRef<int64_t>{(int64_t)values.size()},
                                      b.getI64Type());
    return constant(mlir::DenseElementsAttr::get(type, values));
  }
  mlir::Value scalar(double v) {
    return constant(mlir::DenseElementsAttr::get(mlir::RankedTensorType::get({}, elt),
                                           b.getFloatAttr(elt, v)));
  }
  mlir::Value zeros(llvm::ArrayRef<int64_t> shape) {
    return constant(mlir::DenseElementsAttr::get(mlir::RankedTensorType::get(shape, elt),
                                           b.getZeroAttr(elt)));
  }
  mlir::Value constant(mlir::DenseElementsAttr value) {
    mlir::OperationState state(loc, "onnx.Constant");
    state.addAttribute("value", value);
    state.addTypes(value.getType());
    return b.create(state)->getResult(0);
  }
  /// An absent optional operand.
  mlir::Value none() {
    mlir::OperationState state(loc, "onnx.NoValue");
    state.addTypes(b.getNoneType());
    return b.create(state)->getResult(0);
  }
  mlir::NamedAttribute attr(llvm::StringRef name, int64_t v) {
    return b.getNamedAttr(name, b.getI64IntegerAttr(v));
  }
  mlir::NamedAttribute attr(llvm::StringRef name, float v) {
    return b.getNamedAttr(name, b.getF32FloatAttr(v));
  }
  mlir::NamedAttribute perm(llvm::ArrayRef<int64_t> p) {
    return b.getNamedAttr("perm", b.getI64ArrayAttr(p));
  }

  /// x[index] along `axis`, that axis dropped.
  mlir::Value pick(mlir::Value x, int64_t index, int64_t axis = 0) {
    return op("Gather", {x, ints({index}, true)}, {attr("axis", axis)});
  }
  /// x[..., begin:end] along `axis`.
  mlir::Value slice(mlir::Value x, int64_t begin, int64_t end, int64_t axis) {
    return op("Slice", {x, ints({begin}), ints({end}), ints({axis}), ints({1})});
  }

  mlir::OpBuilder &b;
  mlir::Location loc;
  mlir::Type elt;
};

} // namespace kiln

#endif // KILN_PASSES_GRAPHBUILDER_H
