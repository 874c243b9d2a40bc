//===- Conv1dAs2d.cpp - kiln-conv1d-as-2d ---------------------------------===//
//
// A 1-D Conv is the 2-D Conv of its input and weights with a height of 1:
// Unsqueeze, Conv, Squeeze. The providers' conv kernels (direct tiles,
// GEMMs, depthwise loops) are 2-D; a 1-D conv went to naive loops (a
// speech encoder's pointwise Conv1d, 144 -> 288 channels over 49 frames:
// 160 us against ONNX Runtime's 27). Runs after the fusions, so the Conv
// keeps its fused activation.
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/OnnxOps.h"
#include "passes/FusionUtils.h"
#include "passes/GraphBuilder.h"
#include "passes/Passes.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_CONV1DAS2D
#include "passes/Passes.h.inc"

namespace {

/// The 1-D `attr` (`fill` where absent) with 1 in front for the height.
ArrayAttr withHeight(Builder &b, std::optional<ArrayAttr> attr, int64_t fill) {
  SmallVector<int64_t> values = {1};
  if (attr)
    for (Attribute a : *attr)
      values.push_back(cast<IntegerAttr>(a).getInt());
  else
    values.push_back(fill);
  return b.getI64ArrayAttr(values);
}

/// W [M, C/group, k] as [M, C/group, 1, k]: a constant reshaped in place
/// (the conv kernels pack constant weights at compile time), else an
/// Unsqueeze.
Value weights2d(GraphBuilder &g, Value w, RankedTensorType wt) {
  auto type = RankedTensorType::get(
      {wt.getDimSize(0), wt.getDimSize(1), 1, wt.getDimSize(2)},
      wt.getElementType());
  ElementsAttr value = fusion::constantAttr(w);
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(value))
    return g.constant(dense.reshape(type));
  if (auto res = dyn_cast_or_null<DenseResourceElementsAttr>(value)) {
    OperationState st(g.loc, "onnx.Constant");
    st.addAttribute("value",
                    DenseResourceElementsAttr::get(type, res.getRawHandle()));
    st.addTypes(type);
    return g.b.create(st)->getResult(0);
  }
  return g.op<onnx::UnsqueezeOp>({w, g.ints({2})});
}

struct Conv1dAs2dPass : public impl::Conv1dAs2dBase<Conv1dAs2dPass> {
  void runOnOperation() override {
    SmallVector<onnx::ConvOp> convs;
    getOperation().walk([&](onnx::ConvOp c) { convs.push_back(c); });
    for (onnx::ConvOp conv : convs) {
      auto xt = dyn_cast<RankedTensorType>(conv.getX().getType());
      auto wt = dyn_cast<RankedTensorType>(conv.getW().getType());
      auto yt = dyn_cast<RankedTensorType>(conv.getY().getType());
      // (Static channels and length; a run-time batch is fine.)
      if (!xt || !wt || !yt || xt.getRank() != 3 || !wt.hasStaticShape() ||
          xt.isDynamicDim(1) || xt.isDynamicDim(2) || yt.getRank() != 3)
        continue;
      OpBuilder b(conv);
      Operation *before = conv->getPrevNode();
      GraphBuilder g(b, conv.getLoc(), xt.getElementType());
      Value x = g.op<onnx::UnsqueezeOp>({conv.getX(), g.ints({2})});
      Value w = weights2d(g, conv.getW(), wt);
      SmallVector<NamedAttribute> attrs;
      for (NamedAttribute a : fusion::opAttributes(conv))
        if (!llvm::is_contained(
                {"kernel_shape", "strides", "dilations", "pads"},
                a.getName().getValue()))
          attrs.push_back(a);
      attrs.push_back(
          b.getNamedAttr("kernel_shape", withHeight(b, conv.getKernelShape(),
                                                    wt.getDimSize(2))));
      attrs.push_back(
          b.getNamedAttr("strides", withHeight(b, conv.getStrides(), 1)));
      attrs.push_back(
          b.getNamedAttr("dilations", withHeight(b, conv.getDilations(), 1)));
      if (auto pads = conv.getPads(); pads && pads->size() == 2) {
        SmallVector<int64_t> p;
        for (Attribute a : *pads)
          p.push_back(cast<IntegerAttr>(a).getInt());
        attrs.push_back(
            b.getNamedAttr("pads", b.getI64ArrayAttr({0, p[0], 0, p[1]})));
      }
      Value y = g.op<onnx::ConvOp>({x, w, conv.getB()}, attrs);
      y = g.op<onnx::SqueezeOp>({y, g.ints({2})});
      if (y.getType() != yt) {
        // (Shape inference disagreed: the conv stays as it was.)
        SmallVector<Operation *> built;
        for (Operation *op = before ? before->getNextNode()
                                    : &conv->getBlock()->front();
             op != conv; op = op->getNextNode())
          built.push_back(op);
        for (Operation *op : llvm::reverse(built))
          op->erase();
        continue;
      }
      conv.getY().replaceAllUsesWith(y);
      conv.erase();
      ++converted;
    }
  }
};

} // namespace
} // namespace kiln
