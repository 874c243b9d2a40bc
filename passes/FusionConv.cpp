//===- FusionConv.cpp - fold BatchNormalization and bias Adds into Conv ---===//
//
// Conv(x, W, B) -> BatchNormalization(scale, beta, mean, var) with all of
// them constant becomes one Conv with
//   s = scale / sqrt(var + eps),  W' = W * s (per output channel),
//   B' = (B - mean) * s + beta,
// computed here at compile time. Conv -> Add(per-channel constant) folds the
// constant into the Conv's bias. A linear layer (MatMul by constant
// weights, plus an optional constant bias) scaled per output column by a
// constant (ConvNeXt's and CaiT's layer scale) takes the scale into its
// weights and bias.
//
//===----------------------------------------------------------------------===//
#include "passes/FusionUtils.h"
#include "passes/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace kiln::fusion;

namespace kiln {
#define GEN_PASS_DEF_FUSECONV
#include "passes/Passes.h.inc"

namespace {

/// The Conv's output channel count, when its type is static enough.
std::optional<int64_t> convChannels(Operation *conv) {
  auto t = dyn_cast<RankedTensorType>(conv->getResult(0).getType());
  auto wt = dyn_cast<RankedTensorType>(conv->getOperand(1).getType());
  if (!t || !wt || t.getRank() < 3 || !wt.hasStaticShape() ||
      !t.getElementType().isF32())
    return std::nullopt;
  return wt.getDimSize(0);
}

/// A new Conv like `conv` with weights and bias replaced.
Value rebuildConv(PatternRewriter &rewriter, Operation *conv, Type resultType,
                  ArrayRef<float> w, ArrayRef<float> bias) {
  Location loc = conv->getLoc();
  auto wt = cast<RankedTensorType>(conv->getOperand(1).getType());
  Value newW = w.empty() ? conv->getOperand(1) : createConstant(rewriter, loc, wt, w);
  auto bt = RankedTensorType::get({wt.getDimSize(0)}, rewriter.getF32Type());
  Value newB = createConstant(rewriter, loc, bt, bias);
  OperationState st(loc, conv->getName());
  st.addOperands({conv->getOperand(0), newW, newB});
  st.addAttributes(conv->getAttrs());
  st.addTypes(resultType);
  return rewriter.create(st)->getResult(0);
}

/// The Conv's bias as values (zeros when absent), if constant.
std::optional<SmallVector<float>> convBias(Operation *conv, int64_t m) {
  if (conv->getNumOperands() < 3 || isNoneValue(conv->getOperand(2)))
    return SmallVector<float>(m, 0.0f);
  auto b = constantFloats(conv->getOperand(2));
  if (!b || (int64_t)b->size() != m)
    return std::nullopt;
  return b;
}

struct ConvBatchNorm : RewritePattern {
  ConvBatchNorm(MLIRContext *ctx, Counters &c)
      : RewritePattern("onnx.BatchNormalization", 2, ctx), counters(c) {}
  Counters &counters;

  LogicalResult matchAndRewrite(Operation *bn, PatternRewriter &rewriter) const override {
    Operation *conv = bn->getOperand(0).getDefiningOp();
    if (!isOnnx(conv, "Conv") || !conv->getResult(0).hasOneUse())
      return rewriter.notifyMatchFailure(bn, "input is not a single-use Conv");
    if (auto tm = bn->getAttrOfType<IntegerAttr>("training_mode"); tm && tm.getInt())
      return rewriter.notifyMatchFailure(bn, "training mode");
    for (unsigned i = 1; i < bn->getNumResults(); ++i)
      if (!bn->getResult(i).use_empty())
        return rewriter.notifyMatchFailure(bn, "running statistics are used");
    auto m = convChannels(conv);
    if (!m)
      return rewriter.notifyMatchFailure(bn, "Conv is not f32 with static weights");
    auto w = constantFloats(conv->getOperand(1));
    auto scale = constantFloats(bn->getOperand(1)), beta = constantFloats(bn->getOperand(2));
    auto mean = constantFloats(bn->getOperand(3)), var = constantFloats(bn->getOperand(4));
    auto bias = convBias(conv, *m);
    if (!w || !scale || !beta || !mean || !var || !bias)
      return rewriter.notifyMatchFailure(bn, "weights or statistics are not constant");
    for (auto *v : {&*scale, &*beta, &*mean, &*var})
      if ((int64_t)v->size() != *m)
        return rewriter.notifyMatchFailure(bn, "per-channel size mismatch");
    double eps = 1e-5;
    if (auto e = bn->getAttrOfType<FloatAttr>("epsilon"))
      eps = e.getValueAsDouble();
    int64_t per = (int64_t)w->size() / *m;
    SmallVector<float> newW(*w), newB(*m);
    for (int64_t c = 0; c < *m; ++c) {
      double s = (double)(*scale)[c] / std::sqrt((double)(*var)[c] + eps);
      for (int64_t i = 0; i < per; ++i)
        newW[c * per + i] = (float)((double)(*w)[c * per + i] * s);
      newB[c] = (float)(((double)(*bias)[c] - (*mean)[c]) * s + (*beta)[c]);
    }
    rewriter.setInsertionPoint(bn);
    Value fused = rebuildConv(rewriter, conv, bn->getResult(0).getType(), newW, newB);
    fused.getDefiningOp()->setLoc(fusedLoc(conv, {bn}));
    rewriter.replaceAllUsesWith(bn->getResult(0), fused);
    rewriter.eraseOp(bn);
    rewriter.eraseOp(conv);
    ++counters["fuse_conv_bn"];
    return success();
  }
};

struct ConvBiasAdd : RewritePattern {
  ConvBiasAdd(MLIRContext *ctx, Counters &c) : RewritePattern("onnx.Add", 1, ctx), counters(c) {}
  Counters &counters;

  LogicalResult matchAndRewrite(Operation *add, PatternRewriter &rewriter) const override {
    Operation *conv = nullptr;
    Value other;
    for (unsigned i = 0; i < 2; ++i) {
      Operation *d = add->getOperand(i).getDefiningOp();
      if (isOnnx(d, "Conv")) {
        conv = d;
        other = add->getOperand(1 - i);
        break;
      }
    }
    if (!conv || !conv->getResult(0).hasOneUse())
      return rewriter.notifyMatchFailure(add, "no single-use Conv operand");
    if (conv->hasAttr("kiln.activation"))
      return rewriter.notifyMatchFailure(add, "Conv already has an activation");
    if (add->getResult(0).getType() != conv->getResult(0).getType())
      return rewriter.notifyMatchFailure(add, "Add broadcasts the Conv result");
    auto m = convChannels(conv);
    auto ct = dyn_cast<RankedTensorType>(other.getType());
    auto vals = constantFloats(other);
    if (!m || !ct || !vals)
      return rewriter.notifyMatchFailure(add, "not a constant f32 addend");
    // The addend must be per channel: [M,1,...,1] aligned with dim 1 of the
    // output, or a single value.
    auto out = cast<RankedTensorType>(conv->getResult(0).getType());
    int64_t rank = out.getRank(), cr = ct.getRank();
    bool scalar = ct.getNumElements() == 1;
    if (!scalar) {
      if (cr < rank - 1)
        return rewriter.notifyMatchFailure(add, "addend is not per channel");
      for (int64_t i = 0; i < cr; ++i) {
        int64_t outDim = rank - cr + i;
        int64_t want = outDim == 1 ? *m : 1;
        if (ct.getDimSize(i) != want)
          return rewriter.notifyMatchFailure(add, "addend is not per channel");
      }
    }
    auto bias = convBias(conv, *m);
    if (!bias)
      return rewriter.notifyMatchFailure(add, "Conv bias is not constant");
    for (int64_t c = 0; c < *m; ++c)
      (*bias)[c] += scalar ? (*vals)[0] : (*vals)[c];
    rewriter.setInsertionPoint(add);
    Value fused = rebuildConv(rewriter, conv, out, {}, *bias);
    fused.getDefiningOp()->setLoc(fusedLoc(conv, {add}));
    rewriter.replaceAllUsesWith(add->getResult(0), fused);
    rewriter.eraseOp(add);
    rewriter.eraseOp(conv);
    ++counters["fuse_conv_add"];
    return success();
  }
};

/// Mul(MatMul(x, W) [+ b], s) with W, b and s constant and s per output
/// column: MatMul(x, W * s) [+ b * s].
struct LinearScale : RewritePattern {
  LinearScale(MLIRContext *ctx, Counters &c) : RewritePattern("onnx.Mul", 1, ctx), counters(c) {}
  Counters &counters;

  LogicalResult matchAndRewrite(Operation *mul, PatternRewriter &rewriter) const override {
    for (unsigned i = 0; i < 2; ++i) {
      Value y = mul->getOperand(i), scale = mul->getOperand(1 - i);
      auto out = dyn_cast<RankedTensorType>(y.getType());
      auto st = dyn_cast<RankedTensorType>(scale.getType());
      auto s = constantFloats(scale);
      if (!out || !st || !s || out.getRank() < 2 || !out.getElementType().isF32() ||
          mul->getResult(0).getType() != out || !y.hasOneUse())
        continue;
      int64_t n = out.getShape().back();
      if (st.getRank() < 1 || st.getRank() > out.getRank() || st.getShape().back() != n ||
          (int64_t)s->size() != n)
        continue;
      Operation *add = isOnnx(y.getDefiningOp(), "Add") ? y.getDefiningOp() : nullptr;
      Operation *mm = nullptr;
      Value bias;
      if (add) {
        for (unsigned j = 0; j < 2 && !mm; ++j)
          if (isOnnx(add->getOperand(j).getDefiningOp(), "MatMul")) {
            mm = add->getOperand(j).getDefiningOp();
            bias = add->getOperand(1 - j);
          }
      } else if (isOnnx(y.getDefiningOp(), "MatMul")) {
        mm = y.getDefiningOp();
      }
      if (!mm || !mm->getResult(0).hasOneUse())
        continue;
      auto wt = dyn_cast<RankedTensorType>(mm->getOperand(1).getType());
      auto w = constantFloats(mm->getOperand(1));
      if (!wt || !w || wt.getRank() != 2 || wt.getDimSize(1) != n)
        continue;
      std::optional<SmallVector<float>> b;
      if (bias) {
        auto bt = dyn_cast<RankedTensorType>(bias.getType());
        b = constantFloats(bias);
        if (!bt || !b || (int64_t)b->size() != n || bt.getShape().back() != n ||
            add->getResult(0).getType() != out)
          continue;
      }
      for (size_t k = 0; k < w->size(); ++k)
        (*w)[k] *= (*s)[k % n];
      rewriter.setInsertionPoint(mul);
      Location loc = mul->getLoc();
      OperationState newMm(mm->getLoc(), mm->getName());
      newMm.addOperands({mm->getOperand(0), createConstant(rewriter, loc, wt, *w)});
      newMm.addAttributes(mm->getAttrs());
      newMm.addTypes(mm->getResult(0).getType());
      Value r = rewriter.create(newMm)->getResult(0);
      if (bias) {
        for (int64_t j = 0; j < n; ++j)
          (*b)[j] *= (*s)[j];
        OperationState newAdd(add->getLoc(), add->getName());
        newAdd.addOperands({r, createConstant(rewriter, loc, cast<RankedTensorType>(bias.getType()), *b)});
        newAdd.addTypes(out);
        r = rewriter.create(newAdd)->getResult(0);
      }
      rewriter.replaceOp(mul, r);
      ++counters["fold_linear_scale"];
      return success();
    }
    return rewriter.notifyMatchFailure(mul, "not a constant per-column scale of a linear layer");
  }
};

struct FuseConvPass : public impl::FuseConvBase<FuseConvPass> {
  void runOnOperation() override {
    Counters counters;
    RewritePatternSet patterns(&getContext());
    patterns.add<ConvBatchNorm, ConvBiasAdd, LinearScale>(&getContext(), counters);
    FrozenRewritePatternSet frozen(std::move(patterns));
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(applyPatternsAndFoldGreedily(func, frozen)))
        return signalPassFailure();
    recordCounters(getOperation(), counters, {"fuse_conv_bn", "fuse_conv_add", "fold_linear_scale"});
  }
};

} // namespace
} // namespace kiln
