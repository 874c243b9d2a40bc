//===- Simplify.cpp - graph cleanups before partitioning ------------------===//
//
// Canonicalization-style rewrites of the onnx graph: no-op ops disappear,
// back-to-back Transposes and Reshapes compose. The greedy driver also
// erases dead (Pure) ops. Each rewrite counts into `kiln.report.simplify.*`.
//
//===----------------------------------------------------------------------===//
#include "dialects/kiln/Report.h"
#include "dialects/onnx/ShapeInference.h"
#include "passes/GraphBuilder.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_SIMPLIFY
#include "passes/Passes.h.inc"

namespace {

using Counts = llvm::StringMap<int64_t>;

bool isStatic(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  return rt && rt.hasStaticShape();
}

/// A pattern on one onnx op name that records how often it fired.
struct OnnxPattern : public RewritePattern {
  OnnxPattern(StringRef opName, StringRef counter, MLIRContext *ctx, Counts &counts)
      : RewritePattern(opName, /*benefit=*/1, ctx), counter(counter.str()),
        counts(counts) {}

  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const final {
    if (failed(apply(op, rewriter)))
      return failure();
    ++counts[counter];
    return success();
  }
  virtual LogicalResult apply(Operation *op, PatternRewriter &rewriter) const = 0;

  std::string counter;
  Counts &counts;
};

/// Identity, Cast to the same type, and shape ops whose static result type
/// is their input's type: the result is the input.
struct RemoveNoOp : OnnxPattern {
  using OnnxPattern::OnnxPattern;
  LogicalResult apply(Operation *op, PatternRewriter &rewriter) const override {
    if (op->getNumOperands() < 1 || op->getNumResults() != 1)
      return failure();
    Value in = op->getOperand(0);
    Value out = op->getResult(0);
    if (in.getType() != out.getType())
      return failure();
    StringRef name = op->getName().getStringRef();
    bool alwaysNoOp = name == "onnx.Identity" || name == "onnx.Cast";
    if (!alwaysNoOp) {
      // Same dynamic type does not mean same shape.
      if (!isStatic(in.getType()))
        return failure();
      // A shape input known only at run time must still be checked against
      // the compiled shape (RuntimeShapeInputs), so the op stays.
      for (Value v : op->getOperands().drop_front())
        if (!onnx::isNone(v) && !onnx::getConstantInts(v))
          return failure();
      // A full-size Slice may still reverse or start elsewhere.
      if (name == "onnx.Slice") {
        SmallVector<int64_t> start, step, size;
        auto shape = cast<RankedTensorType>(in.getType()).getShape();
        if (failed(onnx::resolveSlice(op, shape, start, step, size)))
          return failure();
        for (auto [s, st] : llvm::zip(start, step))
          if (s != 0 || st != 1)
            return failure();
      }
    }
    rewriter.replaceOp(op, in);
    return success();
  }
};

/// Dropout is the identity when training_mode is absent or false (the ratio
/// does not matter) or the ratio is a constant 0, and the mask is unused. Dropout is not
/// Pure (training mode is random), so the pattern erases it itself.
struct RemoveDropout : OnnxPattern {
  using OnnxPattern::OnnxPattern;
  LogicalResult apply(Operation *op, PatternRewriter &rewriter) const override {
    if (op->getNumOperands() < 1)
      return failure();
    if (!onnx::isIdentityDropout(op))
      return failure();
    for (Value r : op->getResults().drop_front())
      if (!r.use_empty())
        return failure();
    Value in = op->getOperand(0);
    if (in.getType() != op->getResult(0).getType())
      return failure();
    rewriter.replaceAllUsesWith(op->getResult(0), in);
    rewriter.eraseOp(op);
    return success();
  }
};

/// If with a constant condition: the taken branch's ops, inlined. (Expanded
/// ONNX functions branch on facts that folding makes constant, such as an
/// input's rank; the branch not taken may not even compile.)
struct InlineConstantIf : OnnxPattern {
  using OnnxPattern::OnnxPattern;
  LogicalResult apply(Operation *op, PatternRewriter &rewriter) const override {
    auto cond = onnx::getConstantInts(op->getOperand(0));
    if (!cond || cond->size() != 1)
      return failure();
    // Regions are in attribute-name order: else_branch, then_branch.
    Region &taken = op->getRegion((*cond)[0] ? 1 : 0);
    if (taken.empty())
      return failure();
    Block &block = taken.front();
    Operation *yield = block.getTerminator();
    // A more precise yielded type may not reach a return typed by the If.
    for (auto [v, r] : llvm::zip(yield->getOperands(), op->getResults()))
      if (v.getType() != r.getType() &&
          llvm::any_of(r.getUsers(), [](Operation *u) { return isa<func::ReturnOp>(u); }))
        return failure();
    SmallVector<Value> values(yield->getOperands());
    rewriter.eraseOp(yield);
    rewriter.inlineBlockBefore(&block, op);
    rewriter.replaceOp(op, values);
    return success();
  }
};

SmallVector<int64_t> permOf(Operation *op, int64_t rank) {
  SmallVector<int64_t> perm = onnx::getIntsAttr(op, "perm");
  if (perm.empty())
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  return perm;
}

/// Transpose(Transpose(x, p1), p2) = Transpose(x, p1[p2[i]]); an identity
/// permutation (composed or alone) is removed.
struct ComposeTransposes : OnnxPattern {
  using OnnxPattern::OnnxPattern;
  LogicalResult apply(Operation *op, PatternRewriter &rewriter) const override {
    auto outType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!outType)
      return failure();
    int64_t rank = outType.getRank();
    Value x = op->getOperand(0);
    SmallVector<int64_t> perm = permOf(op, rank);
    Operation *inner = x.getDefiningOp();
    bool composed = false;
    if (inner && inner->getName() == op->getName() &&
        isa<RankedTensorType>(inner->getOperand(0).getType())) {
      SmallVector<int64_t> p1 = permOf(inner, rank);
      if (p1.size() != perm.size())
        return failure();
      SmallVector<int64_t> q;
      for (int64_t p : perm) {
        if (p < 0 || p >= (int64_t)p1.size())
          return failure();
        q.push_back(p1[p]);
      }
      perm = q;
      x = inner->getOperand(0);
      composed = true;
    }
    bool identity = true;
    for (auto [i, p] : llvm::enumerate(perm))
      identity &= (int64_t)i == p;
    if (identity) {
      if (x.getType() != outType)
        return failure();
      rewriter.replaceOp(op, x);
      return success();
    }
    if (!composed)
      return failure();
    Operation *newOp = rewriter.clone(*op);
    newOp->setOperand(0, x);
    newOp->setAttr("perm", rewriter.getI64ArrayAttr(perm));
    rewriter.replaceOp(op, newOp->getResults());
    return success();
  }
};

/// A Transpose that moves only dims of size 1 ([S, 1, E] -> [1, S, E], as
/// sequence-first attention at batch 1 has) keeps the data's order: it
/// becomes a Reshape, which costs no copy.
struct TransposeToReshape : OnnxPattern {
  using OnnxPattern::OnnxPattern;
  LogicalResult apply(Operation *op, PatternRewriter &rewriter) const override {
    auto in = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
    auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!in || !out || !out.hasStaticShape() || in.getRank() != out.getRank())
      return failure();
    SmallVector<int64_t> perm = permOf(op, out.getRank());
    int64_t last = -1;
    for (int64_t p : perm) {
      if (p < 0 || p >= in.getRank())
        return failure();
      if (in.getDimSize(p) == 1)
        continue;
      if (p < last)
        return failure();
      last = p;
    }
    rewriter.setInsertionPoint(op);
    GraphBuilder g(rewriter, op->getLoc(), out.getElementType());
    Value shape = g.ints(out.getShape());
    OperationState st(op->getLoc(), "onnx.Reshape");
    st.addOperands({op->getOperand(0), shape});
    st.addTypes(out);
    rewriter.replaceOp(op, rewriter.create(st)->getResults());
    return success();
  }
};

/// Reshape(Reshape(x, s1), s2) = Reshape(x, s2) for a constant s2 that does
/// not copy dimensions of the intermediate (no 0 entries, or allowzero), or
/// when the result is static (then its shape is the new s2).
struct ComposeReshapes : OnnxPattern {
  using OnnxPattern::OnnxPattern;
  LogicalResult apply(Operation *op, PatternRewriter &rewriter) const override {
    if (op->getNumOperands() < 2)
      return failure();
    Operation *inner = op->getOperand(0).getDefiningOp();
    if (!inner || inner->getName() != op->getName())
      return failure();
    Value shape = op->getOperand(1);
    auto s2 = onnx::getConstantInts(shape);
    // A run-time s2 stays: it is checked against the compiled shape.
    if (!s2)
      return failure();
    bool allowZero = onnx::getIntAttr(op, "allowzero", 0) != 0;
    bool needsNewShape = !allowZero && llvm::is_contained(*s2, 0);
    if (needsNewShape) {
      auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
      if (!out || !out.hasStaticShape())
        return failure();
      auto t = RankedTensorType::get({out.getRank()}, rewriter.getI64Type());
      OperationState st(op->getLoc(), "onnx.Constant");
      st.addAttribute("value", DenseElementsAttr::get(t, out.getShape()));
      st.addTypes(t);
      shape = rewriter.create(st)->getResult(0);
    }
    Operation *newOp = rewriter.clone(*op);
    newOp->setOperand(0, inner->getOperand(0));
    newOp->setOperand(1, shape);
    rewriter.replaceOp(op, newOp->getResults());
    return success();
  }
};

/// Reshape(Gemm(Reshape(x, [M, K]), W, C), [p..., N]) where x is [p..., k...]
/// with M = prod(p), K = prod(k): the Gemm of a linear layer applied to the
/// rows of x (PyTorch's addmm, GPT-2's Conv1D) becomes MatMul(x as [p..., K],
/// W) + C, so that epilogue and attention fusions see the model's 3-D shape.
struct UnflattenGemm : OnnxPattern {
  using OnnxPattern::OnnxPattern;
  LogicalResult apply(Operation *op, PatternRewriter &rewriter) const override {
    Operation *gemm = op->getOperand(0).getDefiningOp();
    if (!gemm || gemm->getName().getStringRef() != "onnx.Gemm" ||
        !gemm->getResult(0).hasOneUse() || gemm->getNumOperands() < 2)
      return failure();
    auto f = [&](StringRef name) {
      auto a = gemm->getAttrOfType<FloatAttr>(name);
      return a ? a.getValueAsDouble() : 1.0;
    };
    if (onnx::getIntAttr(gemm, "transA", 0) || f("alpha") != 1.0 || f("beta") != 1.0)
      return failure();
    Operation *flatten = gemm->getOperand(0).getDefiningOp();
    if (!flatten || flatten->getName() != op->getName())
      return failure();
    Value x = flatten->getOperand(0);
    auto xt = dyn_cast<RankedTensorType>(x.getType());
    auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    auto gt = dyn_cast<RankedTensorType>(gemm->getResult(0).getType());
    if (!xt || !out || !gt || !xt.hasStaticShape() || !out.hasStaticShape() ||
        !gt.hasStaticShape() || out.getRank() < 3 || out.getShape().back() != gt.getShape()[1])
      return failure();
    // x's leading dims are the result's, the rest flatten into K.
    ArrayRef<int64_t> lead = out.getShape().drop_back();
    if (xt.getRank() <= (int64_t)lead.size() || xt.getShape().take_front(lead.size()) != lead)
      return failure();
    int64_t k = 1;
    for (int64_t d : xt.getShape().drop_front(lead.size()))
      k *= d;
    auto at = cast<RankedTensorType>(flatten->getResult(0).getType());
    if (!at.hasStaticShape() || at.getRank() != 2 || at.getShape()[1] != k)
      return failure();
    Value c = gemm->getNumOperands() > 2 ? gemm->getOperand(2) : Value();
    if (c && !onnx::isNone(c)) {
      auto ct = dyn_cast<RankedTensorType>(c.getType());
      if (!ct || !ct.hasStaticShape() || ct.getRank() > 2 || ct.getRank() < 1 ||
          ct.getNumElements() != out.getShape().back() || ct.getShape().back() != ct.getNumElements())
        return failure();
    } else {
      c = Value();
    }
    rewriter.setInsertionPoint(op);
    GraphBuilder g(rewriter, gemm->getLoc(), out.getElementType());
    SmallVector<int64_t> rows(lead);
    rows.push_back(k);
    Value a = xt.getRank() == (int64_t)rows.size() ? x : g.op("Reshape", {x, g.ints(rows)});
    Value w = gemm->getOperand(1);
    if (onnx::getIntAttr(gemm, "transB", 0))
      w = g.op("Transpose", {w}, {g.perm({1, 0})});
    Value y = g.op("MatMul", {a, w});
    if (c)
      y = g.op("Add", {y, c});
    if (y.getType() != out)
      return failure();
    rewriter.replaceOp(op, y);
    return success();
  }
};

struct SimplifyPass : public impl::SimplifyBase<SimplifyPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    Counts counts;
    RewritePatternSet patterns(ctx);
    for (const char *name : {"Identity", "Cast", "Reshape", "Expand", "Slice",
                             "Flatten", "Squeeze", "Unsqueeze"})
      patterns.add<RemoveNoOp>((std::string("onnx.") + name),
                               (std::string("noop-") + llvm::StringRef(name).lower()),
                               ctx, counts);
    patterns.add<RemoveDropout>("onnx.Dropout", "dropout", ctx, counts);
    patterns.add<ComposeTransposes>("onnx.Transpose", "transpose", ctx, counts);
    patterns.add<TransposeToReshape>("onnx.Transpose", "transpose-to-reshape", ctx, counts);
    patterns.add<ComposeReshapes>("onnx.Reshape", "reshape-reshape", ctx, counts);
    patterns.add<UnflattenGemm>("onnx.Reshape", "unflatten-gemm", ctx, counts);
    patterns.add<InlineConstantIf>("onnx.If", "constant-if", ctx, counts);
    FrozenRewritePatternSet frozen(std::move(patterns));
    GreedyRewriteConfig config;
    config.maxIterations = 8;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      (void)applyPatternsAndFoldGreedily(func, frozen, config);
    }
    for (auto &kv : counts)
      addReportCount(module, ("simplify." + kv.getKey()).str(), kv.getValue());
  }
};

} // namespace
} // namespace kiln
