//===- WidenHalf.cpp - float16/bfloat16 computed in float32 --------------===//
//
// ONNX's references round a half-precision op's result once, while
// computing each onnx op in half precision rounds after every op of a
// decomposed function (Attention, Celu). Here every half-precision value
// between the model's inputs and outputs becomes float32: the inputs are
// widened on entry, the outputs and explicit Casts to half round there, and
// a Cast out of half rounds its input to half first.
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/DataTypes.h"
#include "dialects/onnx/OnnxDialect.h"
#include "dialects/onnx/ShapeInference.h"
#include "passes/GraphBuilder.h"
#include "passes/Passes.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include <cstring>

using namespace mlir;
using namespace kiln::onnx;

namespace kiln {
#define GEN_PASS_DEF_WIDENHALF
#include "passes/Passes.h.inc"

namespace {

bool isHalf(Type t) {
  auto st = dyn_cast<ShapedType>(t);
  return st && (st.getElementType().isF16() || st.getElementType().isBF16());
}

Type widened(Type t) {
  auto st = cast<ShapedType>(t);
  return st.clone(Float32Type::get(t.getContext()));
}

bool isCast(Operation *op) {
  StringRef n = op->getName().getStringRef();
  return n == "onnx.Cast" || n == "onnx.CastLike";
}

/// A Cast of `v` to `elt`, placed right after its definition.
Value castAfter(Value v, Type elt, Location loc) {
  OpBuilder b(v.getContext());
  if (auto arg = dyn_cast<BlockArgument>(v))
    b.setInsertionPointToStart(arg.getOwner());
  else
    b.setInsertionPointAfter(v.getDefiningOp());
  GraphBuilder g(b, loc, elt);
  return g.op("Cast", {v}, {g.attr("to", dtypeOfElementType(elt))}, elt);
}

/// A half-precision constant (inline or a dense_resource blob) as f32;
/// null for anything else.
Attribute widenedConstant(Attribute value) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || !isHalf(elements.getType()))
    return {};
  auto type = cast<ShapedType>(widened(elements.getType()));
  const llvm::fltSemantics &sem = cast<FloatType>(elements.getElementType()).getFloatSemantics();
  auto toF32 = [&](APFloat v) {
    bool lossy;
    v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lossy);
    return v.convertToFloat();
  };
  if (auto dense = dyn_cast<DenseFPElementsAttr>(value)) {
    SmallVector<float> values;
    for (APFloat v : dense.getValues<APFloat>())
      values.push_back(toF32(v));
    return DenseElementsAttr::get(type, ArrayRef<float>(values));
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(value);
  AsmResourceBlob *blob = resource ? resource.getRawHandle().getBlob() : nullptr;
  if (!blob)
    return {};
  ArrayRef<char> data = blob->getData();
  SmallVector<float> values;
  for (size_t i = 0; i + 1 < data.size(); i += 2) {
    uint16_t bits;
    std::memcpy(&bits, data.data() + i, 2);
    values.push_back(toF32(APFloat(sem, APInt(16, bits))));
  }
  if ((int64_t)values.size() != type.getNumElements())
    return {};
  return DenseResourceElementsAttr::get(
      type, "kiln_widened",
      HeapAsmResourceBlob::allocateAndCopyInferAlign(
          ArrayRef<char>(reinterpret_cast<const char *>(values.data()), values.size() * 4)));
}

struct WidenHalfPass : public impl::WidenHalfBase<WidenHalfPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    Block &entry = func.getBody().front();
    // Subgraphs would need their block arguments widened too, and
    // sequences keep their elements' type: left alone (the CPU computes
    // half ops in f32 per op instead).
    bool keep = false;
    func.walk([&](Operation *op) {
      if (op != func && op->getNumRegions())
        keep = true;
      auto sequence = [](Type t) { return isa<onnx::SeqType, onnx::OptType>(t); };
      keep |= llvm::any_of(op->getOperandTypes(), sequence) ||
              llvm::any_of(op->getResultTypes(), sequence);
    });
    if (keep)
      return;
    Type f32 = Float32Type::get(func.getContext());
    Operation *ret = entry.getTerminator();
    auto redirect = [&](Value from, Value to) {
      from.replaceUsesWithIf(to, [&](OpOperand &use) {
        return use.getOwner() != to.getDefiningOp() && use.getOwner() != ret;
      });
    };
    // Inputs: widened on entry (unless only widening Casts use them).
    for (BlockArgument arg : entry.getArguments())
      if (isHalf(arg.getType()) && !llvm::all_of(arg.getUsers(), isCast))
        redirect(arg, castAfter(arg, f32, func.getLoc()));
    // CastLike ties its result's type to its witness, which is widened:
    // it becomes the Cast it stands for.
    for (Operation &op : llvm::make_early_inc_range(entry.without_terminator())) {
      if (op.getName().getStringRef() != "onnx.CastLike")
        continue;
      Type to = cast<ShapedType>(op.getResult(0).getType()).getElementType();
      OpBuilder b(&op);
      GraphBuilder g(b, op.getLoc(), to);
      SmallVector<NamedAttribute> attrs(op.getAttrs()); // saturate, round_mode
      attrs.push_back(g.attr("to", dtypeOfElementType(to)));
      Value c = g.op("Cast", {op.getOperand(0)}, attrs, to);
      op.getResult(0).replaceAllUsesWith(c);
      op.erase();
    }
    SmallVector<Operation *> ops;
    for (Operation &op : entry.without_terminator())
      ops.push_back(&op);
    for (Operation *op : ops) {
      if (!op->getDialect() || op->getDialect()->getNamespace() != "onnx")
        continue;
      // A Cast out of half rounds its (now f32) input to half first.
      if (isCast(op) && op->getNumOperands() > 0) {
        Value in = op->getOperand(0);
        Operation *def = in.getDefiningOp();
        auto halfAttr = def ? def->getAttrOfType<TypeAttr>("kiln.half") : TypeAttr();
        if (halfAttr) {
          Type half = halfAttr.getValue();
          OpBuilder b(op);
          GraphBuilder g(b, op->getLoc(), half);
          op->setOperand(0, g.op("Cast", {in}, {g.attr("to", dtypeOfElementType(half))}, half));
        }
      }
      for (Value r : op->getResults()) {
        if (!isHalf(r.getType()))
          continue;
        if (isCast(op)) {
          // A rounding point: kept in half, widened for its users.
          if (!llvm::all_of(r.getUsers(), [&](Operation *u) { return u == ret || isCast(u); }))
            redirect(r, castAfter(r, f32, op->getLoc()));
          continue;
        }
        Type half = cast<ShapedType>(r.getType()).getElementType();
        op->setAttr("kiln.half", TypeAttr::get(half));
        r.setType(widened(r.getType()));
      }
      // Half constants become f32 (exactly), inline ones and initializer
      // blobs alike.
      for (NamedAttribute a : op->getAttrs())
        if (Attribute wide = widenedConstant(a.getValue()))
          op->setAttr(a.getName(), wide);
    }
    // Outputs round back to half.
    OpBuilder b(ret);
    for (auto [i, t] : llvm::enumerate(func.getResultTypes())) {
      Value v = ret->getOperand(i);
      if (!isHalf(t) || v.getType() == t)
        continue;
      Type half = cast<ShapedType>(t).getElementType();
      GraphBuilder g(b, ret->getLoc(), half);
      ret->setOperand(i, g.op("Cast", {v}, {g.attr("to", dtypeOfElementType(half))}, half));
    }
    func.walk([](Operation *op) { op->removeAttr("kiln.half"); });
  }
};

} // namespace
} // namespace kiln
