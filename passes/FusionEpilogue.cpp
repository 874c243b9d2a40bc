//===- FusionEpilogue.cpp - contraction epilogues -------------------------===//
//
// Marks work that the CPU lowering does in a contraction's epilogue:
//  - Conv/MatMul/Gemm -> activation (x * sigmoid(x) included, as "Swish"):
//    the activation becomes the discardable
//    attributes `kiln.activation = "<op>"` and `kiln.activation_params =
//    [f32...]` on the producer (see providers/cpu/ContractionOps.cpp);
//  - the residual Add of a Conv/MatMul/Gemm -> activation (ResNet blocks):
//    the same attributes on the Add, applied in its elementwise body;
//  - 2-D MatMul -> Add(constant bias over the last dim) becomes a Gemm with C;
//    a batched one gets the bias as `kiln.bias` (an f32 tensor of N) that the
//    lowering uses as the accumulator's initial value;
//  - MatMul(a, Transpose(b)) of 2-D operands becomes Gemm(transA/transB).
//
//===----------------------------------------------------------------------===//
#include "passes/FusionUtils.h"
#include "passes/GraphBuilder.h"
#include "passes/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

using namespace mlir;
using namespace kiln::fusion;

namespace kiln {
#define GEN_PASS_DEF_FUSEEPILOGUES
#include "passes/Passes.h.inc"

namespace {

bool isContraction(Operation *op) {
  return isOnnx(op, "Conv") || isOnnx(op, "MatMul") || isOnnx(op, "Gemm");
}

/// Add(contraction, residual): an activation after it is fused into it.
bool isResidualAdd(Operation *op) {
  if (!isOnnx(op, "Add") || op->getNumOperands() != 2 ||
      op->getOperand(0).getType() != op->getOperand(1).getType() ||
      constantAttr(op->getOperand(0)) || constantAttr(op->getOperand(1)))
    return false;
  return llvm::any_of(op->getOperands(), [](Value v) { return isContraction(v.getDefiningOp()); });
}

bool isF32(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.getElementType().isF32();
}

/// The activation's name and parameters, if `act` is one the epilogue does.
std::optional<std::pair<StringRef, SmallVector<float>>> activationOf(Operation *act) {
  auto f = [&](StringRef name, float dflt) {
    if (auto a = act->getAttrOfType<FloatAttr>(name))
      return (float)a.getValueAsDouble();
    return dflt;
  };
  StringRef name = act->getName().getStringRef();
  if (!name.consume_front("onnx."))
    return std::nullopt;
  if (name == "Relu" || name == "Sigmoid" || name == "HardSwish" || name == "Tanh")
    return std::make_pair(name, SmallVector<float>{});
  if (name == "LeakyRelu")
    return std::make_pair(name, SmallVector<float>{f("alpha", 0.01f)});
  if (name == "HardSigmoid")
    return std::make_pair(name, SmallVector<float>{f("alpha", 0.2f), f("beta", 0.5f)});
  if (name == "Gelu") {
    auto approx = act->getAttrOfType<StringAttr>("approximate");
    return std::make_pair(StringRef(approx && approx.getValue() == "tanh" ? "GeluTanh" : "Gelu"),
                          SmallVector<float>{});
  }
  if (name == "Clip") {
    float lo = -std::numeric_limits<float>::infinity(), hi = -lo;
    if (act->getNumOperands() > 1 && !isNoneValue(act->getOperand(1))) {
      auto v = constantScalar(act->getOperand(1));
      if (!v)
        return std::nullopt;
      lo = *v;
    }
    if (act->getNumOperands() > 2 && !isNoneValue(act->getOperand(2))) {
      auto v = constantScalar(act->getOperand(2));
      if (!v)
        return std::nullopt;
      hi = *v;
    }
    return std::make_pair(name, SmallVector<float>{lo, hi});
  }
  return std::nullopt;
}

/// The report counter of an activation fused into `producer`.
StringRef activationCounter(Operation *producer) {
  StringRef kind = producer->getName().getStringRef().drop_front(5);
  return kind == "Conv"   ? "fuse_conv_activation"
         : kind == "Gemm" ? "fuse_gemm_activation"
         : kind == "Add"  ? "fuse_add_activation"
                          : "fuse_matmul_activation";
}

struct ContractionActivation : RewritePattern {
  ContractionActivation(MLIRContext *ctx, Counters &c)
      : RewritePattern(MatchAnyOpTypeTag(), 1, ctx), counters(c) {}
  Counters &counters;

  LogicalResult matchAndRewrite(Operation *act, PatternRewriter &rewriter) const override {
    if (act->getNumOperands() < 1 || act->getNumResults() != 1)
      return failure();
    Operation *producer = act->getOperand(0).getDefiningOp();
    if (!producer || !(isContraction(producer) || isResidualAdd(producer)))
      return failure();
    auto activation = activationOf(act);
    if (!activation)
      return rewriter.notifyMatchFailure(act, "not an epilogue activation");
    if (!producer->getResult(0).hasOneUse() || producer->hasAttr("kiln.activation"))
      return rewriter.notifyMatchFailure(act, "producer has other uses or an activation");
    if (!isF32(producer->getResult(0)) ||
        act->getResult(0).getType() != producer->getResult(0).getType())
      return rewriter.notifyMatchFailure(act, "not an f32 same-type activation");
    rewriter.modifyOpInPlace(producer, [&] {
      producer->setLoc(fusedLoc(producer, {act}));
      producer->setAttr("kiln.activation", rewriter.getStringAttr(activation->first));
      producer->setAttr("kiln.activation_params",
                        rewriter.getF32ArrayAttr(activation->second));
    });
    rewriter.replaceAllUsesWith(act->getResult(0), producer->getResult(0));
    rewriter.eraseOp(act);
    ++counters[activationCounter(producer)];
    return success();
  }
};

/// Mul(y, Sigmoid(y)) of a contraction's result y (SiLU/Swish, as
/// EfficientNet and LLaMA's MLP use it), or Mul(y, Sigmoid(y * a)) with a
/// constant a (CLIP's QuickGELU, a = 1.702), becomes its "Swish" epilogue
/// with parameter a.
struct ContractionSwish : RewritePattern {
  ContractionSwish(MLIRContext *ctx, Counters &c) : RewritePattern("onnx.Mul", 1, ctx), counters(c) {}
  Counters &counters;

  LogicalResult matchAndRewrite(Operation *mul, PatternRewriter &rewriter) const override {
    for (unsigned i = 0; i < 2; ++i) {
      Value y = mul->getOperand(i);
      Operation *sigmoid = mul->getOperand(1 - i).getDefiningOp();
      Operation *producer = y.getDefiningOp();
      if (!isOnnx(sigmoid, "Sigmoid") || !sigmoid->getResult(0).hasOneUse())
        continue;
      // The Sigmoid's input: y, or y scaled by a constant.
      float alpha = 1.0f;
      Operation *scaled = nullptr;
      if (sigmoid->getOperand(0) != y) {
        scaled = sigmoid->getOperand(0).getDefiningOp();
        std::optional<float> a;
        if (isOnnx(scaled, "Mul") && scaled->getResult(0).hasOneUse())
          a = constantScalar(otherOperand(scaled, y));
        if (!a || scaled->getResult(0).getType() != y.getType())
          continue;
        alpha = *a;
      }
      if (!producer ||
          !(isContraction(producer) || isResidualAdd(producer)) ||
          producer->hasAttr("kiln.activation") || !isF32(y) ||
          mul->getResult(0).getType() != y.getType())
        continue;
      // y feeds only the Sigmoid and the Mul.
      Operation *sigmoidUser = scaled ? scaled : sigmoid;
      if (llvm::any_of(y.getUsers(), [&](Operation *u) { return u != sigmoidUser && u != mul; }))
        continue;
      rewriter.modifyOpInPlace(producer, [&] {
        producer->setLoc(fusedLoc(producer, {sigmoid, scaled, mul}));
        producer->setAttr("kiln.activation", rewriter.getStringAttr("Swish"));
        producer->setAttr("kiln.activation_params",
                          rewriter.getF32ArrayAttr(alpha == 1.0f ? ArrayRef<float>{}
                                                                 : ArrayRef<float>{alpha}));
      });
      rewriter.replaceAllUsesWith(mul->getResult(0), y);
      rewriter.eraseOp(mul);
      rewriter.eraseOp(sigmoid);
      if (scaled)
        rewriter.eraseOp(scaled);
      ++counters[activationCounter(producer)];
      return success();
    }
    return rewriter.notifyMatchFailure(mul, "not y * sigmoid(a * y) of a contraction");
  }
};

/// MatMul -> Add(bias over the last dim): Gemm with C for 2-D operands,
/// else `kiln.bias` on the MatMul.
struct MatMulBias : RewritePattern {
  MatMulBias(MLIRContext *ctx, Counters &c) : RewritePattern("onnx.Add", 2, ctx), counters(c) {}
  Counters &counters;

  LogicalResult matchAndRewrite(Operation *add, PatternRewriter &rewriter) const override {
    Operation *mm = nullptr;
    Value other;
    for (unsigned i = 0; i < 2; ++i) {
      Operation *d = add->getOperand(i).getDefiningOp();
      bool gemmNoC = isOnnx(d, "Gemm") && isNoneValue(d->getOperand(2));
      if (isOnnx(d, "MatMul") || gemmNoC) {
        mm = d;
        other = add->getOperand(1 - i);
        break;
      }
    }
    if (!mm || !mm->getResult(0).hasOneUse() || mm->hasAttr("kiln.activation") ||
        add->hasAttr("kiln.activation") ||
        mm->hasAttr("kiln.bias"))
      return rewriter.notifyMatchFailure(add, "no plain single-use MatMul/Gemm operand");
    auto out = dyn_cast<RankedTensorType>(mm->getResult(0).getType());
    auto ct = dyn_cast<RankedTensorType>(other.getType());
    ElementsAttr value = constantAttr(other);
    if (!out || !ct || !value || !out.hasStaticShape() || !out.getElementType().isF32() ||
        out.getRank() < 2 || add->getResult(0).getType() != out)
      return rewriter.notifyMatchFailure(add, "not an f32 constant addend of the same shape");
    int64_t n = out.getShape().back();
    if (ct.getRank() < 1 || ct.getRank() > out.getRank() || ct.getShape().back() != n ||
        ct.getNumElements() != n)
      return rewriter.notifyMatchFailure(add, "addend is not a bias over the last dim");
    auto biasType = RankedTensorType::get({n}, rewriter.getF32Type());
    Attribute bias;
    if (auto dense = dyn_cast<DenseElementsAttr>(value))
      bias = dense.reshape(biasType);
    else if (auto res = dyn_cast<DenseResourceElementsAttr>(value))
      bias = DenseResourceElementsAttr::get(biasType, res.getRawHandle());
    if (!bias)
      return rewriter.notifyMatchFailure(add, "unsupported constant");
    Value a = mm->getOperand(0), b = mm->getOperand(1);
    auto at = cast<RankedTensorType>(a.getType()), bt = cast<RankedTensorType>(b.getType());
    rewriter.setInsertionPoint(add);
    bool isGemm = isOnnx(mm, "Gemm");
    if (at.getRank() == 2 && bt.getRank() == 2) {
      OperationState cst(add->getLoc(), "onnx.Constant");
      cst.addAttribute("value", bias);
      cst.addTypes(biasType);
      Value c = rewriter.create(cst)->getResult(0);
      OperationState gemm(fusedLoc(mm, {add}), "onnx.Gemm");
      gemm.addOperands({a, b, c});
      if (isGemm)
        for (NamedAttribute na : mm->getAttrs())
          if (na.getName() != "beta")
            gemm.addAttribute(na.getName(), na.getValue());
      gemm.addTypes(out);
      Value g = rewriter.create(gemm)->getResult(0);
      rewriter.replaceAllUsesWith(add->getResult(0), g);
      rewriter.eraseOp(add);
      rewriter.eraseOp(mm);
      ++counters["fuse_matmul_bias"];
      return success();
    }
    if (isGemm)
      return rewriter.notifyMatchFailure(add, "Gemm operands are 2-D");
    rewriter.modifyOpInPlace(mm, [&] {
      mm->setLoc(fusedLoc(mm, {add}));
      mm->setAttr("kiln.bias", bias);
    });
    rewriter.replaceAllUsesWith(add->getResult(0), mm->getResult(0));
    rewriter.eraseOp(add);
    ++counters["fuse_matmul_bias"];
    return success();
  }
};

/// 2-D MatMul with a transposed operand -> Gemm with transA/transB.
struct MatMulTranspose : RewritePattern {
  MatMulTranspose(MLIRContext *ctx, Counters &c)
      : RewritePattern("onnx.MatMul", 1, ctx), counters(c) {}
  Counters &counters;

  LogicalResult matchAndRewrite(Operation *mm, PatternRewriter &rewriter) const override {
    if (mm->hasAttr("kiln.activation") || mm->hasAttr("kiln.bias"))
      return failure();
    auto out = dyn_cast<RankedTensorType>(mm->getResult(0).getType());
    if (!out || !out.getElementType().isF32())
      return failure();
    SmallVector<Value> ins;
    bool trans[2] = {false, false};
    for (unsigned i = 0; i < 2; ++i) {
      Value v = mm->getOperand(i);
      auto t = dyn_cast<RankedTensorType>(v.getType());
      if (!t || t.getRank() != 2)
        return rewriter.notifyMatchFailure(mm, "not a 2-D MatMul");
      Operation *tr = v.getDefiningOp();
      if (isOnnx(tr, "Transpose") && tr->getResult(0).hasOneUse()) {
        auto perm = tr->getAttrOfType<ArrayAttr>("perm");
        bool swap = !perm || (perm.size() == 2 && cast<IntegerAttr>(perm[0]).getInt() == 1);
        if (swap) {
          trans[i] = true;
          v = tr->getOperand(0);
        }
      }
      ins.push_back(v);
    }
    if (!trans[0] && !trans[1])
      return rewriter.notifyMatchFailure(mm, "no transposed operand");
    OperationState gemm(mm->getLoc(), "onnx.Gemm");
    rewriter.setInsertionPoint(mm);
    Value c = GraphBuilder(rewriter, mm->getLoc(), rewriter.getF32Type()).none();
    gemm.addOperands({ins[0], ins[1], c});
    if (trans[0])
      gemm.addAttribute("transA", rewriter.getI64IntegerAttr(1));
    if (trans[1])
      gemm.addAttribute("transB", rewriter.getI64IntegerAttr(1));
    gemm.addTypes(out);
    Operation *g = rewriter.create(gemm);
    rewriter.replaceOp(mm, g->getResults());
    ++counters["fuse_matmul_transpose"];
    return success();
  }
};

/// Gemm with transB over constant weights: store the weights transposed at
/// compile time, so the kernel reads B row by row (what the vectorized
/// matmul wants) instead of with strided loads.
struct PretransposeWeights : public RewritePattern {
  PretransposeWeights(MLIRContext *ctx, Counters &counters)
      : RewritePattern("onnx.Gemm", 1, ctx), counters(counters) {}
  LogicalResult matchAndRewrite(Operation *gemm, PatternRewriter &rewriter) const override {
    auto transB = gemm->getAttrOfType<IntegerAttr>("transB");
    Value b = gemm->getOperand(1);
    auto type = dyn_cast<RankedTensorType>(b.getType());
    if (!transB || transB.getInt() != 1 || !type || type.getRank() != 2 ||
        !type.hasStaticShape() || !b.hasOneUse())
      return failure();
    auto values = constantFloats(b);
    if (!values)
      return failure();
    int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
    SmallVector<float> t(values->size());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        t[c * rows + r] = (*values)[r * cols + c];
    auto tType = RankedTensorType::get({cols, rows}, type.getElementType());
    rewriter.setInsertionPoint(gemm);
    Value tb = createConstant(rewriter, b.getLoc(), tType, t);
    rewriter.modifyOpInPlace(gemm, [&] {
      gemm->setOperand(1, tb);
      gemm->setAttr("transB", rewriter.getI64IntegerAttr(0));
    });
    ++counters["pretranspose_weights"];
    return success();
  }
  Counters &counters;
};

struct FuseEpiloguesPass : public impl::FuseEpiloguesBase<FuseEpiloguesPass> {
  void runOnOperation() override {
    Counters counters;
    RewritePatternSet patterns(&getContext());
    patterns.add<ContractionActivation, ContractionSwish, MatMulBias, MatMulTranspose, PretransposeWeights>(
        &getContext(), counters);
    FrozenRewritePatternSet frozen(std::move(patterns));
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(applyPatternsAndFoldGreedily(func, frozen)))
        return signalPassFailure();
    recordCounters(getOperation(), counters,
                   {"fuse_conv_activation", "fuse_matmul_activation", "fuse_gemm_activation", "fuse_add_activation",
                    "fuse_matmul_bias", "fuse_matmul_transpose", "pretranspose_weights"});
  }
};

} // namespace
} // namespace kiln
