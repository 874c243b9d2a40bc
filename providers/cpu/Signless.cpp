//===- Signless.cpp - unsigned ONNX tensors as signless integers ----------===//
//
// arith, linalg and the LLVM lowering want signless integers, while ONNX's
// uint8..uint64 decide how Div, comparisons, shifts and casts behave. Before
// lowering, every unsigned tensor type becomes signless and each onnx op
// keeps which of its operands and results were unsigned, so that the
// lowerings pick the unsigned arith op. float4e2m1 and float8e8m0 (onnx
// dialect types) become i8 the same way; Casts keep their ONNX dtypes.
//
//===----------------------------------------------------------------------===//
#include "providers/cpu/Lowering.h"
#include "dialects/onnx/DataTypes.h"
#include "dialects/onnx/OnnxOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;

namespace kiln::cpu {
namespace {

constexpr StringLiteral kUnsignedIn = "kiln.unsigned_in";
constexpr StringLiteral kUnsignedOut = "kiln.unsigned_out";
constexpr StringLiteral kDtypeIn = "kiln.dtype_in";
constexpr StringLiteral kStrings = "kiln.strings";
constexpr StringLiteral kDtypeOut = "kiln.dtype_out";

bool isUnsignedTensor(Type t) {
  auto st = dyn_cast<ShapedType>(t);
  return st && st.getElementType().isUnsignedInteger();
}

bool isByteFloatTensor(Type t) {
  auto st = dyn_cast<ShapedType>(t);
  return st && isa<onnx::Float4E2M1Type, onnx::Float8E8M0Type>(st.getElementType());
}

bool isStringTensor(Type t) {
  auto st = dyn_cast<ShapedType>(t);
  return st && isa<onnx::StringType>(st.getElementType());
}

Type signless(Type t) {
  // A string element is its `const char *`.
  if (isStringTensor(t))
    return cast<ShapedType>(t).clone(IntegerType::get(t.getContext(), 64));
  if (isByteFloatTensor(t))
    return cast<ShapedType>(t).clone(IntegerType::get(t.getContext(), 8));
  if (!isUnsignedTensor(t))
    return t;
  auto st = cast<ShapedType>(t);
  return st.clone(IntegerType::get(t.getContext(),
                                   st.getElementType().getIntOrFloatBitWidth()));
}

uint64_t unsignedMask(TypeRange types) {
  uint64_t mask = 0;
  for (auto [i, t] : llvm::enumerate(types))
    if (i < 64 && isUnsignedTensor(t))
      mask |= uint64_t(1) << i;
  return mask;
}

Attribute signlessAttr(Attribute a) {
  auto elems = dyn_cast<ElementsAttr>(a);
  if (!elems || !isUnsignedTensor(elems.getShapedType()))
    return a;
  auto type = cast<ShapedType>(signless(elems.getShapedType()));
  if (auto dense = dyn_cast<DenseIntOrFPElementsAttr>(a))
    return dense.bitcast(type.getElementType());
  if (auto res = dyn_cast<DenseResourceElementsAttr>(a))
    return DenseResourceElementsAttr::get(type, res.getRawHandle());
  return a;
}

} // namespace

void makeSignless(Operation *root) {
  MLIRContext *ctx = root->getContext();
  // Record first: retyping a producer would hide its users' operand types.
  root->walk([&](Operation *op) {
    if (!op->getDialect() || op->getDialect()->getNamespace() != "onnx")
      return;
    if (uint64_t in = unsignedMask(op->getOperandTypes()))
      op->setAttr(kUnsignedIn, IntegerAttr::get(IntegerType::get(ctx, 64), in));
    if (uint64_t out = unsignedMask(op->getResultTypes()))
      op->setAttr(kUnsignedOut, IntegerAttr::get(IntegerType::get(ctx, 64), out));
    if (llvm::any_of(op->getOperandTypes(), isStringTensor))
      op->setAttr(kStrings, UnitAttr::get(ctx));
    StringRef name = op->getName().getStringRef();
    if ((name == "onnx.Cast" || name == "onnx.CastLike") && op->getNumResults() &&
        (isByteFloatTensor(op->getOperand(0).getType()) ||
         isByteFloatTensor(op->getResult(0).getType()))) {
      auto dtype = [&](Type t) {
        return IntegerAttr::get(IntegerType::get(ctx, 64),
                                onnx::dtypeOfElementType(cast<ShapedType>(t).getElementType()));
      };
      op->setAttr(kDtypeIn, dtype(op->getOperand(0).getType()));
      op->setAttr(kDtypeOut, dtype(op->getResult(0).getType()));
    }
  });
  root->walk([&](Operation *op) {
    for (Value r : op->getResults())
      r.setType(signless(r.getType()));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          arg.setType(signless(arg.getType()));
    for (NamedAttribute attr : op->getAttrs())
      if (Attribute s = signlessAttr(attr.getValue()); s != attr.getValue())
        op->setAttr(attr.getName(), s);
    if (auto func = dyn_cast<func::FuncOp>(op)) {
      SmallVector<Type> ins, outs;
      for (Type t : func.getArgumentTypes())
        ins.push_back(signless(t));
      for (Type t : func.getResultTypes())
        outs.push_back(signless(t));
      func.setFunctionType(FunctionType::get(ctx, ins, outs));
    }
  });
}

bool wasUnsigned(Operation *op, unsigned operand) {
  auto a = op->getAttrOfType<IntegerAttr>(kUnsignedIn);
  if (operand < op->getNumOperands() && isUnsignedTensor(op->getOperand(operand).getType()))
    return true;
  return a && operand < 64 && (a.getInt() >> operand) & 1;
}

int64_t castDtype(Operation *op, bool result) {
  auto a = op->getAttrOfType<IntegerAttr>(result ? kDtypeOut : kDtypeIn);
  if (a)
    return a.getInt();
  Type t = result ? op->getResult(0).getType() : op->getOperand(0).getType();
  return onnx::dtypeOfElementType(cast<ShapedType>(t).getElementType());
}

bool resultWasUnsigned(Operation *op, unsigned result) {
  auto a = op->getAttrOfType<IntegerAttr>(kUnsignedOut);
  if (result < op->getNumResults() && isUnsignedTensor(op->getResult(result).getType()))
    return true;
  return a && result < 64 && (a.getInt() >> result) & 1;
}

} // namespace kiln::cpu
