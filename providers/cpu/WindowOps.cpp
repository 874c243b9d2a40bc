//===- WindowOps.cpp - Conv, ConvTranspose and pools to linalg -----------===//
//
// Windowed ops: the input padded once so that every window lies inside it,
// then one generic over (batch, channels, taps, output positions). With
// run-time sizes the result's spatial sizes come from the padded input, and
// a 2-D Conv becomes one GEMM of its weights by the patches gathered at run
// time (im2col), which kiln-cpu-vectorize-contractions tiles.
//
//===----------------------------------------------------------------------===//
#include "passes/FusionUtils.h"
#include "passes/Passes.h"
#include "providers/cpu/IndexGeneric.h"
#include "providers/cpu/Lowering.h"
#include "providers/cpu/Vectorize.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace kiln::onnx;

namespace kiln::cpu {
namespace {

/// The windows of a Conv or pool: resolved pads, strides and dilations,
/// and the input padded with `padValue` so every window lies inside it.
struct Windows {
  SmallVector<int64_t> strides, dilations, padsBegin, padsEnd, outSpatial;
  // auto_pad SAME over a spatial dim of run-time size: its pads, computed
  // at run time (null elsewhere).
  SmallVector<Value> padsBeginV, padsEndV;
  Value padded;
};

FailureOr<Windows> padForWindows(OpBuilder &b, Operation *op, Value x,
                                 ArrayRef<int64_t> kernel, double padValue) {
  auto xt = typeOf(x);
  int64_t sp = xt.getRank() - 2;
  Windows w;
  if (failed(computeWindowPads(op, xt.getShape().drop_front(2), kernel, w.padsBegin,
                               w.padsEnd, w.outSpatial)))
    return failure();
  w.strides = getIntsAttr(op, "strides");
  w.dilations = getIntsAttr(op, "dilations");
  if (w.strides.empty())
    w.strides.assign(sp, 1);
  if (w.dilations.empty())
    w.dilations.assign(sp, 1);
  StringRef autoPad = getStrAttr(op, "auto_pad", "NOTSET");
  bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  Location loc = op->getLoc();
  w.padsBeginV.assign(sp, Value());
  w.padsEndV.assign(sp, Value());
  SmallVector<OpFoldResult> low = {b.getIndexAttr(0), b.getIndexAttr(0)}, high = low;
  for (int64_t i = 0; i < sp; ++i) {
    int64_t eff = w.dilations[i] * (kernel[i] - 1) + 1;
    if (xt.isDynamicDim(2 + i) && same) {
      // out = ceil(in / stride); total = max(0, (out - 1) * stride + eff
      // - in), the larger half at the end (SAME_UPPER) or the start.
      auto c = [&](int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); };
      Value in = dimSize(b, loc, x, 2 + i);
      Value out = ceilDivSigned(b, loc, in, c(w.strides[i]));
      Value need = b.create<arith::AddIOp>(
          loc, b.create<arith::MulIOp>(loc, b.create<arith::SubIOp>(loc, out, c(1)), c(w.strides[i])),
          c(eff));
      Value total = b.create<arith::MaxSIOp>(loc, b.create<arith::SubIOp>(loc, need, in), c(0));
      Value begin = b.create<arith::DivSIOp>(
          loc, autoPad == "SAME_LOWER" ? b.create<arith::AddIOp>(loc, total, c(1)) : total, c(2));
      w.padsBeginV[i] = begin;
      w.padsEndV[i] = b.create<arith::SubIOp>(loc, total, begin);
      low.push_back(begin);
      high.push_back(w.padsEndV[i]);
      continue;
    }
    low.push_back(b.getIndexAttr(w.padsBegin[i]));
    // A run-time size: the explicit end pads, and in ceil mode a stride
    // less one more, so the last partial window is in (no window starts in
    // the padding: windowsWithRuntimeSizes checks ceilModeIsPlainCeil).
    if (xt.isDynamicDim(2 + i)) {
      bool ceil = getIntAttr(op, "ceil_mode", 0) != 0;
      high.push_back(b.getIndexAttr(w.padsEnd[i] + (ceil ? w.strides[i] - 1 : 0)));
      continue;
    }
    int64_t need = (w.outSpatial[i] - 1) * w.strides[i] + eff;
    high.push_back(
        b.getIndexAttr(std::max<int64_t>(0, need - xt.getDimSize(2 + i) - w.padsBegin[i])));
  }
  w.padded = padTensor(b, loc, x, low, high, padValue);
  return w;
}

/// The run-time sizes of a windowed op's result `out` (dynamic dims only):
/// the batch of the input, each spatial dim from the padded input.
SmallVector<Value> windowOutputSizes(OpBuilder &b, Location loc, RankedTensorType out,
                                     Value padded, ArrayRef<int64_t> kernel, const Windows &w) {
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < out.getRank(); ++d) {
    if (!out.isDynamicDim(d))
      continue;
    if (d < 2) {
      sizes.push_back(dimSize(b, loc, padded, d));
      continue;
    }
    int64_t i = d - 2;
    // floor((padded - dilation * (kernel - 1) - 1) / stride) + 1
    Value span = b.create<arith::SubIOp>(
        loc, dimSize(b, loc, padded, d),
        b.create<arith::ConstantIndexOp>(loc, w.dilations[i] * (kernel[i] - 1) + 1));
    Value q = floorDivSigned(b, loc, span, b.create<arith::ConstantIndexOp>(loc, w.strides[i]));
    Value n = b.create<arith::AddIOp>(loc, q, b.create<arith::ConstantIndexOp>(loc, 1));
    sizes.push_back(b.create<arith::MaxSIOp>(loc, n, b.create<arith::ConstantIndexOp>(loc, 0)));
  }
  return sizes;
}

/// A 2-D Conv of run-time size as GEMMs of its weights [m, c * kh * kw] by
/// the patches of a block of output rows, per image: the patches of
/// `rows` output rows ([c * kh * kw, rows * ow], gathered along the input's
/// rows) are sized to stay in L2 while the GEMM reads them, and the GEMM
/// accumulates straight into the image's [m, oh * ow] output columns,
/// followed by the fused activation while the block is hot (null for an
/// unknown activation).
/// kiln-cpu-vectorize-contractions blocks each GEMM's run-time columns into
/// tiles of static size. `sizes` are the result's dynamic dims.
Value im2colConv(OpBuilder &b, Location loc, Value padded, Value w, Operation *op,
                 ArrayRef<Value> sizes, const Windows &win) {
  MLIRContext *ctx = b.getContext();
  auto wt = typeOf(w), out = resultType(op);
  Type elt = out.getElementType();
  // (icg input and ocg output channels per group.)
  int64_t groups = getIntAttr(op, "group", 1);
  int64_t m = wt.getDimSize(0), icg = wt.getDimSize(1), kh = wt.getDimSize(2),
          kw = wt.getDimSize(3);
  int64_t ocg = m / groups, k = icg * kh * kw;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  auto idx = [&](int64_t v) -> Value { return b.create<arith::ConstantIndexOp>(loc, v); };
  SmallVector<Value> dims;
  size_t next = 0;
  for (int64_t i = 0; i < 4; ++i)
    dims.push_back(out.isDynamicDim(i) ? sizes[next++] : idx(out.getDimSize(i)));
  Value n = dims[0], oh = dims[2], ow = dims[3];
  Value positions = b.create<arith::MulIOp>(loc, oh, ow);
  constexpr int64_t kDyn = ShapedType::kDynamic;
  bool known = true;
  // The output as [n, m, oh * ow], starting from the bias (or zero).
  auto flatType = RankedTensorType::get({out.getDimSize(0), m, kDyn}, elt);
  SmallVector<Value> flatSizes;
  if (out.isDynamicDim(0))
    flatSizes.push_back(n);
  flatSizes.push_back(positions);
  Value acc;
  if (op->getNumOperands() > 2 && !isNone(op->getOperand(2)))
    acc = mapped(b, loc, flatType, ValueRange{op->getOperand(2)},
                 {AffineMap::get(3, 0, {d(1)}, ctx)},
                 [](OpBuilder &, Location, ValueRange a) { return a[0]; }, flatSizes);
  else
    acc = filledTensor(b, loc, flatType, 0.0, flatSizes);
  Value weights = b.create<tensor::CollapseShapeOp>(
      loc, w, ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}});
  // Output rows per block: the whole image where its patches take at most
  // 1 MiB; else at least 192 columns (each block reads all the weights)
  // and as many more as keep the patches within 768 KiB, rounded down to
  // a multiple of 32 columns where that keeps 192 (no remainder tiles).
  constexpr int64_t kWholeElements = (1 << 20) / 4, kBlockElements = (768 << 10) / 4;
  constexpr int64_t kMinColumns = 192, kTile = 32;
  auto mul = [&](Value x, Value y) { return b.create<arith::MulIOp>(loc, x, y).getResult(); };
  auto smax = [&](Value x, Value y) { return b.create<arith::MaxSIOp>(loc, x, y).getResult(); };
  auto smin = [&](Value x, Value y) { return b.create<arith::MinSIOp>(loc, x, y).getResult(); };
  auto sle = [&](Value x, Value y) {
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sle, x, y).getResult();
  };
  auto select = [&](Value c, Value x, Value y) {
    return b.create<arith::SelectOp>(loc, c, x, y).getResult();
  };
  Value ow1 = smax(ow, idx(1));
  Value perRow = mul(ow1, idx(k));
  Value rows = smax(ceilDivSigned(b, loc, idx(kMinColumns), ow1),
                    b.create<arith::DivSIOp>(loc, idx(kBlockElements), perRow));
  // Rows per multiple of 32 columns: 32 / (the largest power of two
  // dividing ow, at most 32).
  Value lowBit = smin(b.create<arith::AndIOp>(loc, ow1, b.create<arith::SubIOp>(loc, idx(0), ow1)),
                      idx(kTile));
  Value step = b.create<arith::DivSIOp>(loc, idx(kTile), lowBit);
  Value rounded = mul(b.create<arith::DivSIOp>(loc, rows, step), step);
  rows = select(sle(idx(kMinColumns), mul(rounded, ow1)), rounded, rows);
  Value whole = sle(mul(perRow, oh), idx(kWholeElements));
  Value rowsPerBlock = smax(idx(1), smin(oh, select(whole, oh, rows)));
  bool direct =
      kh == 1 && kw == 1 && win.strides[0] == 1 && win.strides[1] == 1;
  Value stepH = idx(win.strides[0]);
  Value spanExtra = idx(win.dilations[0] * (kh - 1) + 1 - win.strides[0]);
  auto perImage = b.create<scf::ForOp>(
      loc, idx(0), n, idx(1), ValueRange{acc},
      [&](OpBuilder &ib, Location l, Value image, ValueRange imageArgs) {
        auto perBlock = ib.create<scf::ForOp>(
            l, idx(0), oh, rowsPerBlock, imageArgs,
            [&](OpBuilder &bb, Location bl, Value row, ValueRange blockArgs) {
              Value rows = bb.create<arith::MinSIOp>(
                  bl, rowsPerBlock, bb.create<arith::SubIOp>(bl, oh, row));
              // The input rows the block's windows read.
              Value firstIn = bb.create<arith::MulIOp>(bl, row, stepH);
              Value span = bb.create<arith::AddIOp>(
                  bl, bb.create<arith::MulIOp>(bl, rows, stepH), spanExtra);
              Value firstCol = bb.create<arith::MulIOp>(bl, row, ow);
              Value numCols = bb.create<arith::MulIOp>(bl, rows, ow);
              // One group's GEMM of this block: channels [group * icg,
              // +icg) of the input, rows [group * ocg, +ocg) of the
              // weights and of the block's output columns.
              auto groupGemm = [&](OpBuilder &gb, Location gl, Value group, Value accIn) {
                auto at = [&](int64_t stride) -> OpFoldResult {
                  if (!group)
                    return gb.getIndexAttr(0);
                  return gb.create<arith::MulIOp>(gl, group, gb.create<arith::ConstantIndexOp>(
                                                                 gl, stride))
                      .getResult();
                };
                auto pt = typeOf(padded);
                auto sliceType = RankedTensorType::get({icg, kDyn, pt.getDimSize(3)}, elt);
                SmallVector<OpFoldResult> xOff = {image, at(icg), firstIn, gb.getIndexAttr(0)};
                SmallVector<OpFoldResult> xSize = {gb.getIndexAttr(1), gb.getIndexAttr(icg), span,
                                                   tensor::getMixedSize(gb, gl, padded, 3)};
                SmallVector<OpFoldResult> ones(4, gb.getIndexAttr(1));
                Value xs = gb.create<tensor::ExtractSliceOp>(gl, sliceType, padded, xOff, xSize,
                                                             ones);
                Value cols;
                if (direct) {
                  // A 1x1 stride-1 window reads the block's rows as they
                  // lie: they are the patch matrix, no gather.
                  cols = gb.create<tensor::CollapseShapeOp>(
                      gl, xs, ArrayRef<ReassociationIndices>{{0}, {1, 2}});
                } else {
                  // Patches [icg, kh, kw, rows, ow], ow innermost (input rows
                  // read along).
                  auto patchType =
                      RankedTensorType::get({icg, kh, kw, kDyn, kDyn}, elt);
                  Value patchInit =
                      emptyTensor(gb, gl, patchType, ValueRange{rows, ow});
                  AffineMap xMap = AffineMap::get(
                      5, 0,
                      {d(0), d(3) * win.strides[0] + d(1) * win.dilations[0],
                       d(4) * win.strides[1] + d(2) * win.dilations[1]},
                      ctx);
                  auto gather = gb.create<linalg::GenericOp>(
                      gl, TypeRange{patchType}, ValueRange{xs},
                      ValueRange{patchInit},
                      ArrayRef<AffineMap>{
                          xMap, AffineMap::getMultiDimIdentityMap(5, ctx)},
                      SmallVector<utils::IteratorType>(
                          5, utils::IteratorType::parallel),
                      [](OpBuilder &nb, Location yl, ValueRange a) {
                        nb.create<linalg::YieldOp>(yl, a[0]);
                      });
                  cols = gb.create<tensor::CollapseShapeOp>(
                      gl, gather.getResult(0),
                      ArrayRef<ReassociationIndices>{{0, 1, 2}, {3, 4}});
                }
                Value wg = weights;
                if (group)
                  wg = gb.create<tensor::ExtractSliceOp>(
                      gl, RankedTensorType::get({ocg, k}, elt), weights,
                      ArrayRef<OpFoldResult>{at(ocg), gb.getIndexAttr(0)},
                      ArrayRef<OpFoldResult>{gb.getIndexAttr(ocg), gb.getIndexAttr(k)},
                      ArrayRef<OpFoldResult>{gb.getIndexAttr(1), gb.getIndexAttr(1)});
                // The block's columns of this image's output.
                auto blockType = RankedTensorType::get({ocg, kDyn}, elt);
                SmallVector<OpFoldResult> oOff = {image, at(ocg), firstCol};
                SmallVector<OpFoldResult> oSize = {gb.getIndexAttr(1), gb.getIndexAttr(ocg),
                                                   numCols};
                SmallVector<OpFoldResult> oStride(3, gb.getIndexAttr(1));
                Value block = gb.create<tensor::ExtractSliceOp>(gl, blockType, accIn, oOff, oSize,
                                                                oStride);
                // Loops (m, k, n), n innermost as the static lowering.
                auto g = gb.create<linalg::GenericOp>(
                    gl, TypeRange{blockType}, ValueRange{wg, cols}, ValueRange{block},
                    ArrayRef<AffineMap>{AffineMap::get(3, 0, {d(0), d(1)}, ctx),
                                        AffineMap::get(3, 0, {d(1), d(2)}, ctx),
                                        AffineMap::get(3, 0, {d(0), d(2)}, ctx)},
                    ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                                  utils::IteratorType::reduction,
                                                  utils::IteratorType::parallel},
                    [](OpBuilder &nb, Location yl, ValueRange a) {
                      Value p = nb.create<arith::MulFOp>(yl, a[0], a[1]);
                      nb.create<linalg::YieldOp>(
                          yl, ValueRange{nb.create<arith::AddFOp>(yl, a[2], p)});
                    });
                Value result = g.getResult(0);
                // The activation in place, while the block is hot.
                if (op->hasAttr("kiln.activation"))
                  result = gb.create<linalg::GenericOp>(
                                 gl, TypeRange{blockType}, ValueRange{}, ValueRange{result},
                                 ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(2, ctx)},
                                 SmallVector<utils::IteratorType>(2,
                                                                  utils::IteratorType::parallel),
                                 [&](OpBuilder &nb, Location el, ValueRange a) {
                                   Value v = applyFusedActivation(nb, el, a[0], op);
                                   known = known && v;
                                   nb.create<linalg::YieldOp>(el, v ? v : a[0]);
                                 })
                               .getResult(0);
                return gb.create<tensor::InsertSliceOp>(gl, result, accIn, oOff, oSize, oStride)
                    .getResult();
              };
              Value updated;
              if (groups == 1) {
                updated = groupGemm(bb, bl, Value(), blockArgs[0]);
              } else {
                updated = bb.create<scf::ForOp>(
                                bl, idx(0), idx(groups), idx(1), ValueRange{blockArgs[0]},
                                [&](OpBuilder &gb, Location gl, Value group, ValueRange args) {
                                  gb.create<scf::YieldOp>(gl, groupGemm(gb, gl, group, args[0]));
                                })
                              .getResult(0);
              }
              bb.create<scf::YieldOp>(bl, updated);
            });
        ib.create<scf::YieldOp>(l, perBlock.getResults());
      });
  if (!known)
    return Value();
  // Images and blocks of rows are independent (each writes its own output
  // columns): threads take them, each gathering patches into its own
  // scratch; inner loops split instead when there is one.
  auto grain = b.getI64IntegerAttr(1);
  perImage->setAttr(kParallelAttr, grain);
  perImage.getBody()->walk([&](scf::ForOp loop) {
    if (loop->getParentOp() == perImage)
      loop->setAttr(kParallelAttr, grain);
  });
  // (tensor.reshape: MLIR 19 cannot bufferize a dynamic expand_shape.)
  SmallVector<Value> shape;
  for (Value v : {n, idx(m), oh, ow})
    shape.push_back(b.create<arith::IndexCastOp>(loc, b.getI64Type(), v));
  Value shapeTensor = b.create<tensor::FromElementsOp>(
      loc, RankedTensorType::get({4}, b.getI64Type()), shape);
  return b.create<tensor::ReshapeOp>(loc, out, perImage.getResult(0), shapeTensor);
}

/// The multiply-add of a conv's body: f32, or ConvInteger's 8-bit operands
/// widened to i32 (the form the 8-bit kernels match).
static void convMulAdd(OpBuilder &nb, Location l, Operation *op, Type elt,
                       ValueRange args) {
  if (isFloat(elt)) {
    Value p = nb.create<arith::MulFOp>(l, args[0], args[1]);
    nb.create<linalg::YieldOp>(
        l, ValueRange{nb.create<arith::AddFOp>(l, args[2], p)});
    return;
  }
  auto widen = [&](Value v, unsigned i) {
    return castScalar(nb, l, v, elt, wasUnsigned(op, i));
  };
  Value p = nb.create<arith::MulIOp>(l, widen(args[0], 0), widen(args[1], 1));
  nb.create<linalg::YieldOp>(
      l, ValueRange{nb.create<arith::AddIOp>(l, args[2], p)});
}

/// A depthwise Conv (one input and one output channel per group): loops n,
/// m, o_1..o_{sp-1}, k_1..k_sp, o_sp, so that each output row is
/// accumulated over the taps while it stays in cache, the innermost loop a
/// contiguous (stride 1) multiply-add along the row.
Value depthwiseConv(OpBuilder &b, Location loc, Operation *op, Value padded,
                    Value w, Value init, const Windows &win) {
  MLIRContext *ctx = b.getContext();
  auto out = typeOf(init);
  int64_t sp = out.getRank() - 2, nLoops = 2 + 2 * sp;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  // o_i for i < sp-1 at 2 + i; the taps at sp + 1 + i; o_{sp-1} last.
  auto oDim = [&](int64_t i) { return i + 1 == sp ? nLoops - 1 : 2 + i; };
  auto kDim = [&](int64_t i) { return sp + 1 + i; };
  SmallVector<AffineExpr> xE = {d(0), d(1)}, wE = {d(1), getAffineConstantExpr(0, ctx)},
                          oE = {d(0), d(1)};
  SmallVector<utils::IteratorType> iters(nLoops, utils::IteratorType::parallel);
  for (int64_t i = 0; i < sp; ++i) {
    xE.push_back(d(oDim(i)) * win.strides[i] + d(kDim(i)) * win.dilations[i]);
    wE.push_back(d(kDim(i)));
    oE.push_back(d(oDim(i)));
    iters[kDim(i)] = utils::IteratorType::reduction;
  }
  auto g = b.create<linalg::GenericOp>(
      loc, TypeRange{out}, ValueRange{padded, w}, ValueRange{init},
      ArrayRef<AffineMap>{AffineMap::get(nLoops, 0, xE, ctx),
                          AffineMap::get(nLoops, 0, wE, ctx),
                          AffineMap::get(nLoops, 0, oE, ctx)},
      iters, [&](OpBuilder &nb, Location l, ValueRange args) {
        convMulAdd(nb, l, op, out.getElementType(), args);
      });
  return g.getResult(0);
}

Results lowerConv(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  Value x = op->getOperand(0), w = op->getOperand(1);
  auto xt = typeOf(x), wt = typeOf(w), out = resultType(op);
  Type elt = out.getElementType();
  int64_t sp = xt.getRank() - 2;
  int64_t group = getIntAttr(op, "group", 1);
  SmallVector<int64_t> kernel(wt.getShape().begin() + 2, wt.getShape().end());
  auto window = padForWindows(b, op, x, kernel, 0.0);
  if (failed(window))
    return failure();
  SmallVector<int64_t> &strides = window->strides, &dil = window->dilations;
  Value padded = window->padded;
  int64_t ocg = wt.getDimSize(0) / group, icg = wt.getDimSize(1);
  SmallVector<Value> sizes = windowOutputSizes(b, loc, out, padded, kernel, *window);
  // Only the batch of run-time size, on AVX-512, channels in panels of 32:
  // the conv's loops as for static shapes, which kiln-cpu-vectorize-
  // contractions runs as direct tiles over the images (rewriteDirectConv
  // takes the same convs).
  auto vectorBits = op->getParentOfType<ModuleOp>()->getAttrOfType<IntegerAttr>(
      kVectorBitsAttr);
  auto padType = cast<RankedTensorType>(padded.getType());
  bool runtimeBatchOnly =
      !out.hasStaticShape() && out.isDynamicDim(0) &&
      llvm::none_of(out.getShape().drop_front(), ShapedType::isDynamic) &&
      llvm::none_of(padType.getShape().drop_front(), ShapedType::isDynamic);
  // (Constant weights only: the direct tiles read them packed at compile
  // time; other weights keep the GEMMs, not naive loops.)
  bool constantWeights =
      fusion::constantAttr(w) || w.getDefiningOp<arith::ConstantOp>();
  bool direct = runtimeBatchOnly && vectorBits && constantWeights && sp == 2 &&
                wt.hasStaticShape() && elt.isF32() && !structuredOnly(op) &&
                vectorize::directConvShape(
                    vectorBits.getInt(), group, wt.getDimSize(0),
                    wt.getDimSize(1), kernel[0], kernel[1], strides[0],
                    strides[1], out.getDimSize(2) * out.getDimSize(3));
  // (The activation is applied per block.)
  if (!out.hasStaticShape() && !direct &&
      !(icg == 1 && ocg == 1 && group > 1) && sp == 2 && wt.hasStaticShape() &&
      isFloat(elt) && !structuredOnly(op)) {
    if (Value v = im2colConv(b, loc, padded, w, op, sizes, *window))
      return SmallVector<Value>{v};
    return emitNodeError(op) << "unknown fused activation " << op->getAttr("kiln.activation");
  }
  Value init;
  if (op->getNumOperands() > 2 && !isNone(op->getOperand(2))) {
    AffineMap biasMap = AffineMap::get(out.getRank(), 0, {getAffineDimExpr(1, ctx)}, ctx);
    init = mapped(b, loc, out, ValueRange{op->getOperand(2)}, {biasMap},
                  [](OpBuilder &, Location, ValueRange a) { return a[0]; }, sizes);
  } else {
    init = filledTensor(b, loc, out, 0.0, sizes);
  }
  if (icg == 1 && ocg == 1 && group > 1)
    return withEpilogue(b, op,
                        depthwiseConv(b, loc, op, padded, w, init, *window));
  // Loops: n, m, c, k_1..k_sp, o_1..o_sp: output positions innermost, so the
  // inner loop is a contiguous (vectorizable) multiply-add over a row.
  int64_t nLoops = 2 + sp + 1 + sp;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  int64_t cDim = 2;
  auto kDim = [&](int64_t i) { return 3 + i; };
  auto oDim = [&](int64_t i) { return 3 + sp + i; };
  SmallVector<AffineExpr> xE = {d(0), d(1).floorDiv(ocg) * icg + d(cDim)};
  SmallVector<AffineExpr> wE = {d(1), d(cDim)};
  SmallVector<AffineExpr> oE = {d(0), d(1)};
  for (int64_t i = 0; i < sp; ++i) {
    xE.push_back(d(oDim(i)) * strides[i] + d(kDim(i)) * dil[i]);
    wE.push_back(d(kDim(i)));
    oE.push_back(d(oDim(i)));
  }
  if (group == 1)
    xE[1] = d(cDim);
  SmallVector<utils::IteratorType> iters(nLoops, utils::IteratorType::parallel);
  for (int64_t i = cDim; i < oDim(0); ++i)
    iters[i] = utils::IteratorType::reduction;
  auto g = b.create<linalg::GenericOp>(
      loc, TypeRange{out}, ValueRange{padded, w}, ValueRange{init},
      ArrayRef<AffineMap>{AffineMap::get(nLoops, 0, xE, ctx),
                          AffineMap::get(nLoops, 0, wE, ctx),
                          AffineMap::get(nLoops, 0, oE, ctx)},
      iters, [&](OpBuilder &nb, Location l, ValueRange args) {
        convMulAdd(nb, l, op, elt, args);
      });
  return withEpilogue(b, op, g.getResult(0));
}

/// ConvInteger without zero points (kiln-decompose-ops leaves only those):
/// Conv's loops on the widened operands.
Results lowerConvInteger(OpBuilder &b, Operation *op) {
  for (unsigned i = 2; i < op->getNumOperands(); ++i)
    if (!isNone(op->getOperand(i)))
      return emitNodeError(op) << "zero points of this form are not supported";
  return lowerConv(b, op);
}

/// MaxPool's second output: the flat input index of each maximum (the
/// first one), row-major or, with storage_order = 1, with the spatial dims
/// in column-major order. Both come from one generic carrying (max, index).
Results maxPoolWithIndices(OpBuilder &b, Operation *op, Value padded, Value window, Value acc,
                           ArrayRef<AffineExpr> xE, ArrayRef<AffineExpr> kE, ArrayRef<AffineExpr> oE,
                           const Windows &w) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  auto xt = typeOf(op->getOperand(0));
  auto out = resultType(op), idxType = resultType(op, 1);
  Type elt = out.getElementType();
  int64_t sp = xt.getRank() - 2, nLoops = 2 + 2 * sp;
  bool colMajor = getIntAttr(op, "storage_order", 0) != 0;
  bool isInt = !isFloat(elt), isUnsigned = wasUnsigned(op);
  // Strides of the flat index: n, c, then the spatial dims.
  SmallVector<int64_t> dims(xt.getShape());
  SmallVector<int64_t> stride(xt.getRank(), 1);
  int64_t spatial = 1;
  for (int64_t i = 0; i < sp; ++i)
    spatial *= dims[2 + i];
  stride[1] = spatial;
  stride[0] = spatial * dims[1];
  int64_t run = 1;
  for (int64_t i = 0; i < sp; ++i) {
    int64_t d = colMajor ? i : sp - 1 - i;
    stride[2 + d] = run;
    run *= dims[2 + d];
  }
  Value idxInit = filledTensor(b, loc, idxType, -1);
  SmallVector<utils::IteratorType> iters(nLoops, utils::IteratorType::parallel);
  for (int64_t i = 2; i < 2 + sp; ++i)
    iters[i] = utils::IteratorType::reduction;
  auto g = b.create<linalg::GenericOp>(
      loc, TypeRange{out, idxType}, ValueRange{padded, window}, ValueRange{acc, idxInit},
      ArrayRef<AffineMap>{AffineMap::get(nLoops, 0, xE, ctx), AffineMap::get(nLoops, 0, kE, ctx),
                          AffineMap::get(nLoops, 0, oE, ctx), AffineMap::get(nLoops, 0, oE, ctx)},
      iters, [&](OpBuilder &nb, Location l, ValueRange args) {
        Value v = args[0];
        Value better = isInt ? (Value)nb.create<arith::CmpIOp>(
                                   l, isUnsigned ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt, v, args[2])
                             : (Value)nb.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT, v, args[2]);
        // Flat index of this tap in the unpadded input.
        Type i64 = nb.getI64Type();
        auto idx = [&](int64_t loop) {
          return nb.create<arith::IndexCastOp>(l, i64, nb.create<linalg::IndexOp>(l, loop)).getResult();
        };
        auto c64 = [&](int64_t v) { return nb.create<arith::ConstantIntOp>(l, v, 64).getResult(); };
        Value flat = nb.create<arith::AddIOp>(l, nb.create<arith::MulIOp>(l, idx(0), c64(stride[0])),
                                              nb.create<arith::MulIOp>(l, idx(1), c64(stride[1])));
        for (int64_t i = 0; i < sp; ++i) {
          Value pos = nb.create<arith::AddIOp>(
              l, nb.create<arith::MulIOp>(l, idx(2 + sp + i), c64(w.strides[i])),
              nb.create<arith::MulIOp>(l, idx(2 + i), c64(w.dilations[i])));
          pos = nb.create<arith::SubIOp>(l, pos, c64(w.padsBegin[i]));
          flat = nb.create<arith::AddIOp>(l, flat, nb.create<arith::MulIOp>(l, pos, c64(stride[2 + i])));
        }
        nb.create<linalg::YieldOp>(l, ValueRange{nb.create<arith::SelectOp>(l, better, v, args[2]),
                                                 nb.create<arith::SelectOp>(l, better, flat, args[3])});
      });
  return SmallVector<Value>{g.getResult(0), g.getResult(1)};
}

Results lowerPool(OpBuilder &b, Operation *op, bool isMax, int64_t lp = 0) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  Value x = op->getOperand(0);
  auto xt = typeOf(x), out = resultType(op);
  Type elt = out.getElementType();
  int64_t sp = xt.getRank() - 2;
  SmallVector<int64_t> kernel = getIntsAttr(op, "kernel_shape");
  // Max pads with the lowest value of the element type (integer MaxPool
  // included: the type's minimum, 0 for unsigned).
  bool isInt = !isFloat(elt), isUnsigned = wasUnsigned(op);
  double padValue = isMax ? (isInt ? (isUnsigned ? 0.0 : -std::ldexp(1.0, elt.getIntOrFloatBitWidth() - 1))
                                   : -std::numeric_limits<double>::infinity())
                          : 0.0;
  auto windows = padForWindows(b, op, x, kernel, padValue);
  if (failed(windows))
    return failure();
  SmallVector<int64_t> &strides = windows->strides, &dil = windows->dilations;
  SmallVector<int64_t> &pb = windows->padsBegin, &pe = windows->padsEnd,
                       &outSp = windows->outSpatial;
  Value padded = windows->padded;
  // Loops: n, c, k_1..k_sp, o_1..o_sp (output positions innermost).
  int64_t nLoops = 2 + 2 * sp;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> xE = {d(0), d(1)}, kE, oE = {d(0), d(1)};
  for (int64_t i = 0; i < sp; ++i) {
    xE.push_back(d(2 + sp + i) * strides[i] + d(2 + i) * dil[i]);
    kE.push_back(d(2 + i));
    oE.push_back(d(2 + sp + i));
  }
  // The window operand only gives the k loops their extent.
  Value window = emptyTensor(b, loc, RankedTensorType::get(kernel, elt));
  Value acc = filledTensor(b, loc, out, padValue,
                           windowOutputSizes(b, loc, out, padded, kernel, *windows));
  if (isMax && op->getNumResults() > 1 && !op->getResult(1).use_empty())
    return maxPoolWithIndices(b, op, padded, window, acc, xE, kE, oE, *windows);
  SmallVector<utils::IteratorType> iters(nLoops, utils::IteratorType::parallel);
  for (int64_t i = 2; i < 2 + sp; ++i)
    iters[i] = utils::IteratorType::reduction;
  auto g = b.create<linalg::GenericOp>(
      loc, TypeRange{out}, ValueRange{padded, window}, ValueRange{acc},
      ArrayRef<AffineMap>{AffineMap::get(nLoops, 0, xE, ctx),
                          AffineMap::get(nLoops, 0, kE, ctx),
                          AffineMap::get(nLoops, 0, oE, ctx)},
      iters, [&](OpBuilder &nb, Location l, ValueRange args) {
        Value v = args[0];
        if (lp) {
          Value a = nb.create<math::AbsFOp>(l, v);
          v = a;
          for (int64_t k = 1; k < lp; ++k)
            v = nb.create<arith::MulFOp>(l, v, a);
        }
        Value r = !isMax   ? (Value)nb.create<arith::AddFOp>(l, args[2], v)
                  : !isInt ? (Value)nb.create<arith::MaximumFOp>(l, args[2], v)
                  : isUnsigned ? (Value)nb.create<arith::MaxUIOp>(l, args[2], v)
                               : (Value)nb.create<arith::MaxSIOp>(l, args[2], v);
        nb.create<linalg::YieldOp>(l, r);
      });
  Value result = g.getResult(0);
  if (isMax)
    return SmallVector<Value>{result};
  if (lp) {
    if (lp == 1)
      return SmallVector<Value>{result};
    return SmallVector<Value>{elementwise(
        b, loc, out, ValueRange{result}, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
          if (lp == 2)
            return nb.create<math::SqrtOp>(l, a[0]);
          return nb.create<math::PowFOp>(l, a[0], cst(nb, l, elt, 1.0 / lp));
        })};
  }

  // Divisor per output position: the number of window taps inside the
  // input (or inside input+pads with count_include_pad), exactly as ONNX
  // Runtime counts them; decided at compile time, or for spatial dims of
  // run-time size counted per position (the kernel's taps unrolled).
  bool includePad = getIntAttr(op, "count_include_pad", 0) != 0;
  if (llvm::any_of(llvm::seq<int64_t>(2, xt.getRank()),
                   [&](int64_t i) { return xt.isDynamicDim(i); })) {
    SmallVector<Value> inSizes;
    for (int64_t i = 0; i < sp; ++i)
      inSizes.push_back(dimSize(b, loc, x, 2 + i));
    Value avg = indexGeneric(
        b, loc, out,
        [&](IB &ib, ArrayRef<Value> idx) -> Value {
          Value count = ib.c(1);
          for (int64_t i = 0; i < sp; ++i) {
            Value pbV = windows->padsBeginV[i] ? windows->padsBeginV[i] : ib.c(pb[i]);
            Value peV = windows->padsEndV[i] ? windows->padsEndV[i] : ib.c(pe[i]);
            Value lo = includePad ? ib.sub(ib.c(0), pbV) : ib.c(0);
            Value hi = includePad ? ib.b.create<arith::AddIOp>(ib.l, inSizes[i], peV).getResult()
                                  : inSizes[i];
            Value n = ib.c(0);
            for (int64_t k = 0; k < kernel[i]; ++k) {
              Value pos = ib.sub(ib.add(ib.mul(idx[2 + i], strides[i]), k * dil[i]), pbV);
              Value inside = ib.andI(
                  ib.b.create<arith::CmpIOp>(ib.l, arith::CmpIPredicate::sge, pos, lo),
                  ib.lt(pos, hi));
              n = ib.add(n, ib.index(ib.b.create<arith::ExtUIOp>(ib.l, ib.b.getI64Type(), inside)));
            }
            count = ib.mul(count, n);
          }
          Value sum = ib.b.create<tensor::ExtractOp>(ib.l, result, idx);
          Value c = ib.b.create<arith::SIToFPOp>(
              ib.l, elt, ib.b.create<arith::IndexCastOp>(ib.l, ib.b.getI64Type(), count));
          Value q = ib.b.create<arith::DivFOp>(ib.l, sum, c);
          // No tap inside: 0, as the static table gives.
          return ib.sel(ib.eq(count, ib.c(0)), scalarConst(ib.b, ib.l, elt, 0.0), q);
        },
        dynamicSizesLike(b, loc, out, result));
    return SmallVector<Value>{avg};
  }
  SmallVector<float> inv;
  int64_t total = 1;
  for (int64_t o : outSp)
    total *= o;
  inv.resize(total);
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rem = flat, count = 1;
    for (int64_t i = sp - 1; i >= 0; --i) {
      int64_t o = rem % outSp[i];
      rem /= outSp[i];
      int64_t lo = includePad ? -pb[i] : 0;
      int64_t hi = xt.getDimSize(2 + i) + (includePad ? pe[i] : 0);
      int64_t n = 0;
      for (int64_t k = 0; k < kernel[i]; ++k) {
        int64_t pos = o * strides[i] - pb[i] + k * dil[i];
        n += pos >= lo && pos < hi;
      }
      count *= n;
    }
    inv[flat] = count ? 1.0f / count : 0.0f;
  }
  auto invType = RankedTensorType::get(outSp, elt);
  Value invConst = b.create<arith::ConstantOp>(
      loc, DenseElementsAttr::get(invType, ArrayRef<float>(inv)));
  SmallVector<AffineExpr> spatial;
  for (int64_t i = 0; i < sp; ++i)
    spatial.push_back(d(2 + i));
  AffineMap id = AffineMap::getMultiDimIdentityMap(out.getRank(), ctx);
  AffineMap invMap = AffineMap::get(out.getRank(), 0, spatial, ctx);
  Value avg = mapped(b, loc, out, ValueRange{result, invConst}, {id, invMap},
                     [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                       return nb.create<arith::MulFOp>(l, a[0], a[1]);
                     });
  return SmallVector<Value>{avg};
}

Results lowerGlobalPool(OpBuilder &b, Operation *op, bool isMax) {
  Location loc = op->getLoc();
  Value x = op->getOperand(0);
  auto xt = typeOf(x), out = resultType(op);
  Type elt = out.getElementType();
  SmallVector<int64_t> dims;
  int64_t count = 1;
  for (int64_t i = 2; i < xt.getRank(); ++i) {
    dims.push_back(i);
    count *= xt.getDimSize(i);
  }
  // With run-time spatial sizes, 1 / count is computed at run time.
  Value invCount;
  if (!xt.hasStaticShape() && !isMax) {
    Value n = b.create<arith::ConstantIndexOp>(loc, 1);
    for (int64_t i : dims)
      n = b.create<arith::MulIOp>(loc, n, dimSize(b, loc, x, i));
    Value nf = b.create<arith::SIToFPOp>(
        loc, elt, b.create<arith::IndexCastOp>(loc, b.getI64Type(), n));
    invCount = b.create<arith::DivFOp>(loc, cst(b, loc, elt, 1.0), nf);
  }
  double init = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
  Value r = reduce(b, loc, x, dims, init, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
    return isMax ? (Value)nb.create<arith::MaximumFOp>(l, a[1], a[0])
                 : (Value)nb.create<arith::AddFOp>(l, a[1], a[0]);
  });
  if (!isMax)
    r = elementwise(b, loc, typeOf(r), ValueRange{r},
                    [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                      return nb.create<arith::MulFOp>(
                          l, a[0], invCount ? invCount : cst(nb, l, elt, 1.0 / count));
                    });
  return SmallVector<Value>{reshapeTo(b, loc, r, out)};
}


Results lowerConvTranspose(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  Value x = op->getOperand(0), w = op->getOperand(1);
  auto xt = typeOf(x), wt = typeOf(w), out = resultType(op);
  Type elt = out.getElementType();
  int64_t sp = xt.getRank() - 2;
  int64_t group = getIntAttr(op, "group", 1);
  SmallVector<int64_t> kernel(wt.getShape().begin() + 2, wt.getShape().end());
  // (Spatial dims of run-time size: explicit pads, which do not depend on
  // them; convTransposeWithRuntimeSizes checks. Their sizes come at run
  // time.)
  SmallVector<int64_t> inSp;
  for (int64_t i = 0; i < sp; ++i)
    inSp.push_back(xt.isDynamicDim(2 + i) ? 1 : xt.getDimSize(2 + i));
  SmallVector<int64_t> pb, pe, outSp;
  if (failed(convTransposePads(op, inSp, kernel, pb, pe, outSp)))
    return failure();
  SmallVector<int64_t> strides = getIntsAttr(op, "strides"), dil = getIntsAttr(op, "dilations");
  SmallVector<int64_t> outPad = getIntsAttr(op, "output_padding");
  if (strides.empty()) strides.assign(sp, 1);
  if (dil.empty()) dil.assign(sp, 1);
  if (outPad.empty()) outPad.assign(sp, 0);
  auto c = [&](OpBuilder &cb, Location l, int64_t v) {
    return cb.create<arith::ConstantIndexOp>(l, v).getResult();
  };
  // The input's spatial sizes (constants where static) and, for dims of
  // run-time size, the result's: stride * (in - 1) + output_padding +
  // dilation * (kernel - 1) + 1 - pads.
  SmallVector<Value> inV, outV;
  for (int64_t i = 0; i < sp; ++i) {
    if (!xt.isDynamicDim(2 + i)) {
      inV.push_back(Value());
      outV.push_back(c(b, loc, outSp[i]));
      continue;
    }
    Value in = dimSize(b, loc, x, 2 + i);
    inV.push_back(in);
    Value spread = b.create<arith::MulIOp>(loc, b.create<arith::SubIOp>(loc, in, c(b, loc, 1)),
                                           c(b, loc, strides[i]));
    outV.push_back(b.create<arith::AddIOp>(
        loc, spread,
        c(b, loc, outPad[i] + dil[i] * (kernel[i] - 1) + 1 - pb[i] - pe[i])));
  }
  // P: x spread by the strides and padded so that the transpose becomes a
  // plain correlation with the flipped kernel.
  SmallVector<int64_t> pShape = {xt.getDimSize(0), xt.getDimSize(1)}, lowP;
  SmallVector<Value> pSizes, outSizes;
  if (xt.isDynamicDim(0)) {
    pSizes.push_back(dimSize(b, loc, x, 0));
    if (out.isDynamicDim(0))
      outSizes.push_back(pSizes.back());
  }
  for (int64_t i = 0; i < sp; ++i) {
    bool dyn = xt.isDynamicDim(2 + i);
    pShape.push_back(dyn ? ShapedType::kDynamic : outSp[i] + dil[i] * (kernel[i] - 1));
    if (dyn)
      pSizes.push_back(b.create<arith::AddIOp>(loc, outV[i], c(b, loc, dil[i] * (kernel[i] - 1))));
    if (out.isDynamicDim(2 + i))
      outSizes.push_back(outV[i]);
    lowP.push_back(dil[i] * (kernel[i] - 1) - pb[i]);
  }
  auto pType = RankedTensorType::get(pShape, elt);
  Value init0 = emptyTensor(b, loc, pType, pSizes);
  auto pg = b.create<linalg::GenericOp>(
      loc, TypeRange{pType}, ValueRange{}, ValueRange{init0},
      ArrayRef<AffineMap>{b.getMultiDimIdentityMap(pType.getRank())},
      SmallVector<utils::IteratorType>(pType.getRank(), utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange) {
        auto cc = [&](int64_t v) { return c(nb, l, v); };
        SmallVector<Value> src = {nb.create<linalg::IndexOp>(l, 0), nb.create<linalg::IndexOp>(l, 1)};
        Value ok;
        for (int64_t i = 0; i < sp; ++i) {
          Value in = inV[i] ? inV[i] : cc(xt.getDimSize(2 + i));
          Value p = nb.create<linalg::IndexOp>(l, 2 + i);
          Value q = nb.create<arith::SubIOp>(l, p, cc(lowP[i]));
          Value qq = nb.create<arith::DivSIOp>(l, q, cc(strides[i]));
          Value r = nb.create<arith::RemSIOp>(l, q, cc(strides[i]));
          Value good = nb.create<arith::AndIOp>(
              l, nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::sge, q, cc(0)),
              nb.create<arith::AndIOp>(
                  l, nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, r, cc(0)),
                  nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, qq, in)));
          ok = ok ? (Value)nb.create<arith::AndIOp>(l, ok, good) : good;
          src.push_back(nb.create<arith::MaxSIOp>(
              l, nb.create<arith::MinSIOp>(l, qq, nb.create<arith::SubIOp>(l, in, cc(1))), cc(0)));
        }
        Value v = nb.create<tensor::ExtractOp>(l, x, src);
        nb.create<linalg::YieldOp>(l, ValueRange{nb.create<arith::SelectOp>(l, ok, v, cst(nb, l, elt, 0.0))});
      });
  Value padded = pg.getResult(0);
  int64_t icg = xt.getDimSize(1) / group, ocg = wt.getDimSize(1);
  int64_t nLoops = 3 + 2 * sp;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  auto kDim = [&](int64_t i) { return 3 + i; };
  auto oDim = [&](int64_t i) { return 3 + sp + i; };
  AffineExpr chan = d(1).floorDiv(ocg) * icg + d(2);
  SmallVector<AffineExpr> xE = {d(0), chan}, wE = {chan, d(1) % ocg}, oE = {d(0), d(1)};
  for (int64_t i = 0; i < sp; ++i) {
    xE.push_back(d(oDim(i)) + d(kDim(i)) * dil[i]);
    wE.push_back(getAffineConstantExpr(kernel[i] - 1, ctx) - d(kDim(i)));
    oE.push_back(d(oDim(i)));
  }
  Value init;
  if (op->getNumOperands() > 2 && !isNone(op->getOperand(2))) {
    AffineMap biasMap = AffineMap::get(out.getRank(), 0, {d(1)}, ctx);
    init = mapped(b, loc, out, ValueRange{op->getOperand(2)}, {biasMap},
                  [](OpBuilder &, Location, ValueRange a) { return a[0]; }, outSizes);
  } else {
    init = filledTensor(b, loc, out, 0.0, outSizes);
  }
  SmallVector<utils::IteratorType> iters(nLoops, utils::IteratorType::parallel);
  for (int64_t i = 2; i < oDim(0); ++i)
    iters[i] = utils::IteratorType::reduction;
  // The (c, k...) loops appear in no operand as plain dims: a dummy gives
  // them their extent.
  SmallVector<int64_t> redShape = {icg};
  SmallVector<AffineExpr> redE = {d(2)};
  for (int64_t i = 0; i < sp; ++i) {
    redShape.push_back(kernel[i]);
    redE.push_back(d(kDim(i)));
  }
  Value window = emptyTensor(b, loc, RankedTensorType::get(redShape, elt));
  auto g = b.create<linalg::GenericOp>(
      loc, TypeRange{out}, ValueRange{padded, w, window}, ValueRange{init},
      ArrayRef<AffineMap>{AffineMap::get(nLoops, 0, xE, ctx),
                          AffineMap::get(nLoops, 0, wE, ctx),
                          AffineMap::get(nLoops, 0, redE, ctx),
                          AffineMap::get(nLoops, 0, oE, ctx)},
      iters, [&](OpBuilder &nb, Location l, ValueRange args) {
        Value p = nb.create<arith::MulFOp>(l, args[0], args[1]);
        nb.create<linalg::YieldOp>(l, ValueRange{nb.create<arith::AddFOp>(l, args[3], p)});
      });
  return SmallVector<Value>{g.getResult(0)};
}

} // namespace

void registerWindowOps(LoweringTable &m) {
  m["Conv"] = {lowerConv};
  m["ConvInteger"] = {lowerConvInteger, false};
  // Max is exact on integers too (int8/uint8 CNNs).
  m["MaxPool"] = {[](OpBuilder &b, Operation *op) { return lowerPool(b, op, true); }, false,
                  [](Operation *op, std::string &why) {
                    auto t = dyn_cast<ShapedType>(op->getOperand(0).getType());
                    Type e = t ? t.getElementType() : Type();
                    if (e && (isFloat(e) || (e.isInteger() && e.getIntOrFloatBitWidth() > 1)))
                      return true;
                    why = "needs float or integer data";
                    return false;
                  }};
  m["AveragePool"] = {[](OpBuilder &b, Operation *op) { return lowerPool(b, op, false); }};
  m["GlobalAveragePool"] = {[](OpBuilder &b, Operation *op) { return lowerGlobalPool(b, op, false); }};
  m["LpPool"] = {[](OpBuilder &b, Operation *op) {
    return lowerPool(b, op, false, getIntAttr(op, "p", 2));
  }};
  m["ConvTranspose"] = {lowerConvTranspose};
  m["GlobalMaxPool"] = {[](OpBuilder &b, Operation *op) { return lowerGlobalPool(b, op, true); }};
}

} // namespace kiln::cpu
