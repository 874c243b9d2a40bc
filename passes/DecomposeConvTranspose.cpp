//===- DecomposeConvTranspose.cpp - ConvTranspose as a Conv ---------------===//
//
// Part of kiln-decompose-ops: a ConvTranspose of stride s as one ordinary
// Conv over the input with s^d sub-kernels (one per output phase), whose
// output channels are then interleaved into the spatial dims. Output
// position q * s + r takes kernel taps r, r + s, r + 2s, ...: for phase r
// that is a correlation of the input with those taps, reversed, over the
// input padded by ceil(k / s) - 1 on both sides. The Conv runs on the
// providers' conv kernels; lowered as it is defined (the input spread by
// the strides, then a correlation), the products ran on naive loops, most
// of them multiplying zeros (a 64 -> 64 2x2 stride-2 ConvTranspose on an
// 80x80 map: 30 ms against ONNX Runtime's 2).
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/OnnxOps.h"
#include "dialects/onnx/ShapeInference.h"
#include "passes/DecomposeOps.h"

#include <limits>

using namespace mlir;
using namespace kiln::onnx;

namespace kiln::decompose {

bool decomposeConvTranspose(Operation *op) {
  auto ct = dyn_cast<onnx::ConvTransposeOp>(op);
  if (!ct)
    return false;
  // Static shapes but for the batch, which the Reshapes copy (0).
  auto staticButBatch = [](Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t && t.getRank() >= 1 &&
                   llvm::none_of(t.getShape().drop_front(),
                                 ShapedType::isDynamic)
               ? t
               : RankedTensorType();
  };
  RankedTensorType xt = staticButBatch(ct.getX()), wt = staticType(ct.getW()),
                   yt = staticButBatch(ct.getY());
  if (!xt || !wt || !yt || !isFloat(xt.getElementType()) ||
      wt.getElementType() != xt.getElementType())
    return false;
  int64_t sp = xt.getRank() - 2;
  if (sp < 1 || sp > 3 || wt.getRank() != xt.getRank())
    return false;
  ArrayRef<int64_t> kernel = wt.getShape().drop_front(2);
  // (Dilated kernels keep the op's own lowering.)
  if (auto dil = ct.getDilations())
    for (Attribute d : *dil)
      if (cast<IntegerAttr>(d).getInt() != 1)
        return false;
  if (auto ks = ct.getKernelShape())
    for (auto [i, k] : llvm::enumerate(*ks))
      if (cast<IntegerAttr>(k).getInt() != kernel[i])
        return false;
  SmallVector<int64_t> strides(sp, 1);
  if (auto s = ct.getStrides()) {
    if ((int64_t)s->size() != sp)
      return false;
    for (auto [i, v] : llvm::enumerate(*s))
      strides[i] = cast<IntegerAttr>(v).getInt();
  }
  SmallVector<int64_t> pb, pe, outSp;
  if (failed(convTransposePads(op, xt.getShape().drop_front(2), kernel, pb, pe,
                               outSp)))
    return false;
  int64_t group = static_cast<int64_t>(ct.getGroup());
  // (0: Reshape copies the input's batch, static or not.)
  int64_t n = 0, cin = xt.getDimSize(1);
  if (group < 1 || cin % group || wt.getDimSize(0) != cin)
    return false;
  int64_t cig = cin / group, cog = wt.getDimSize(1), cout = cog * group;
  // Per dim: taps per phase, the Conv's output length, and the window of
  // the interleaved output that is the result (pads cut from it).
  SmallVector<int64_t> taps, convOut;
  int64_t perChannel = 1;
  bool cut = false;
  for (int64_t i = 0; i < sp; ++i) {
    int64_t s = strides[i], k = kernel[i];
    if (s < 1 || k < 1)
      return false;
    int64_t t = (k + s - 1) / s, q = xt.getDimSize(2 + i) + t - 1;
    // (Past the interleaved output the result would be the bias alone: an
    // output_padding larger than the kernel's overhang; left as it is.)
    if (pb[i] < 0 || pb[i] + outSp[i] > q * s ||
        yt.getDimSize(2 + i) != outSp[i])
      return false;
    cut |= pb[i] != 0 || outSp[i] != q * s;
    taps.push_back(t);
    convOut.push_back(q);
    perChannel *= s;
  }

  OpBuilder b(op);
  GraphBuilder g(b, op->getLoc(), xt.getElementType());
  // The sub-kernels: W [cin, cog, k...] padded to whole phases, as
  // [group, cig, cog, (taps_i, s_i)...], then [group, cog, s..., cig,
  // taps...] with the taps reversed, then [cout * S, cig, taps...]:
  // output channel (co * S + phase), co in group order.
  Value w = ct.getW();
  bool padW = false;
  SmallVector<int64_t> wPads(2 * wt.getRank(), 0);
  for (int64_t i = 0; i < sp; ++i) {
    wPads[wt.getRank() + 2 + i] = taps[i] * strides[i] - kernel[i];
    padW |= wPads[wt.getRank() + 2 + i] != 0;
  }
  if (padW)
    w = g.op<onnx::PadOp>({w, g.ints(wPads), g.scalar(0.0), g.none()});
  SmallVector<int64_t> split = {group, cig, cog};
  SmallVector<int64_t> perm = {0, 2};
  for (int64_t i = 0; i < sp; ++i) {
    split.append({taps[i], strides[i]});
    perm.push_back(4 + 2 * i);
  }
  perm.push_back(1);
  for (int64_t i = 0; i < sp; ++i)
    perm.push_back(3 + 2 * i);
  w = g.op<onnx::ReshapeOp>({w, g.ints(split)});
  w = g.op<onnx::TransposeOp>({w}, {g.perm(perm)});
  SmallVector<int64_t> flipAxes, flipStarts, flipEnds, flipSteps;
  for (int64_t i = 0; i < sp; ++i)
    if (taps[i] > 1) {
      flipAxes.push_back(3 + sp + i);
      flipStarts.push_back(-1);
      flipEnds.push_back(std::numeric_limits<int64_t>::min());
      flipSteps.push_back(-1);
    }
  if (!flipAxes.empty())
    w = g.op<onnx::SliceOp>({w, g.ints(flipStarts), g.ints(flipEnds),
                             g.ints(flipAxes), g.ints(flipSteps)});
  SmallVector<int64_t> convW = {cout * perChannel, cig};
  convW.append(taps);
  w = g.op<onnx::ReshapeOp>({w, g.ints(convW)});

  // The bias, once per phase.
  Value bias = optionalOperand(op, 2);
  if (bias) {
    bias = g.op<onnx::ReshapeOp>({bias, g.ints({cout, 1})});
    bias = g.op<onnx::ExpandOp>({bias, g.ints({cout, perChannel})});
    bias = g.op<onnx::ReshapeOp>({bias, g.ints({cout * perChannel})});
  } else {
    bias = g.none();
  }
  SmallVector<int64_t> convPads(taps), ones(sp, 1);
  for (int64_t &p : convPads)
    p -= 1;
  convPads.append(convPads);
  Value y = g.op<onnx::ConvOp>(
      {ct.getX(), w, bias},
      {g.attr("group", group),
       g.b.getNamedAttr("pads", g.b.getI64ArrayAttr(convPads)),
       g.b.getNamedAttr("strides", g.b.getI64ArrayAttr(ones)),
       g.b.getNamedAttr("kernel_shape", g.b.getI64ArrayAttr(taps))});

  // [n, cout * S, q...] -> [n, cout, s..., q...] -> [n, cout, (q_i, s_i)...]
  // -> [n, cout, q_i * s_i...], then the pads cut.
  SmallVector<int64_t> spread = {n, cout}, outPerm = {0, 1}, full = {n, cout};
  spread.append(strides);
  spread.append(convOut);
  for (int64_t i = 0; i < sp; ++i) {
    outPerm.append({2 + sp + i, 2 + i});
    full.push_back(convOut[i] * strides[i]);
  }
  y = g.op<onnx::ReshapeOp>({y, g.ints(spread)});
  y = g.op<onnx::TransposeOp>({y}, {g.perm(outPerm)});
  y = g.op<onnx::ReshapeOp>({y, g.ints(full)});
  if (cut) {
    SmallVector<int64_t> starts, ends, axes;
    for (int64_t i = 0; i < sp; ++i) {
      starts.push_back(pb[i]);
      ends.push_back(pb[i] + outSp[i]);
      axes.push_back(2 + i);
    }
    y = g.op<onnx::SliceOp>(
        {y, g.ints(starts), g.ints(ends), g.ints(axes), g.ints(ones)});
  }
  if (y.getType() != yt)
    return false;
  replaceResults(op, {y});
  return true;
}

} // namespace kiln::decompose
