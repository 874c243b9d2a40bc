//===- ContractionOps.cpp - MatMul, Gemm and Einsum --------------------===//
#include "providers/cpu/Lowering.h"
#include "dialects/kiln/KilnDialect.h"
#include "providers/cpu/IndexGeneric.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace kiln::onnx;

namespace kiln::cpu {
namespace {

/// One element of the activation that kiln-fuse-epilogues folded into a
/// contraction (`kiln.activation`, `kiln.activation_params`).
Value epilogueActivation(OpBuilder &b, Location l, Value x, StringRef kind,
                         ArrayRef<float> p) {
  Type t = x.getType();
  auto c = [&](double v) { return cst(b, l, t, v); };
  auto param = [&](size_t i, double dflt) { return i < p.size() ? (double)p[i] : dflt; };
  if (kind == "Relu")
    return maxKeepingNaN(b, l, x, c(0.0));
  if (kind == "Clip") {
    Value v = x;
    if (!std::isinf(param(0, -INFINITY)))
      v = maxKeepingNaN(b, l, v, c(param(0, 0)));
    if (!std::isinf(param(1, INFINITY)))
      v = minKeepingNaN(b, l, v, c(param(1, 0)));
    return v;
  }
  auto sigmoid = [&](Value v) -> Value {
    return b.create<arith::DivFOp>(
        l, c(1.0), b.create<arith::AddFOp>(l, c(1.0), b.create<math::ExpOp>(l, b.create<arith::NegFOp>(l, v))));
  };
  if (kind == "Sigmoid")
    return sigmoid(x);
  if (kind == "Swish")
    return b.create<arith::MulFOp>(
        l, x, sigmoid(p.empty() ? x : b.create<arith::MulFOp>(l, x, c(param(0, 1.0)))));
  if (kind == "Tanh")
    return b.create<math::TanhOp>(l, x);
  if (kind == "LeakyRelu") {
    Value neg = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLT, x, c(0.0));
    return b.create<arith::SelectOp>(l, neg, b.create<arith::MulFOp>(l, x, c(param(0, 0.01))), x);
  }
  if (kind == "HardSigmoid")
    return clampKeepingNaN(
        b, l,
        b.create<arith::AddFOp>(l,
                                b.create<arith::MulFOp>(l, x, c(param(0, 0.2))),
                                c(param(1, 0.5))),
        c(0.0), c(1.0));
  if (kind == "HardSwish")
    return b.create<arith::MulFOp>(
        l, x,
        clampKeepingNaN(
            b, l,
            b.create<arith::AddFOp>(
                l, b.create<arith::MulFOp>(l, x, c(1.0 / 6.0)), c(0.5)),
            c(0.0), c(1.0)));
  if (kind == "Gelu" || kind == "GeluTanh") {
    Value inner;
    if (kind == "GeluTanh") {
      Value x3 = b.create<arith::MulFOp>(l, x, b.create<arith::MulFOp>(l, x, x));
      Value s = b.create<arith::AddFOp>(l, x, b.create<arith::MulFOp>(l, x3, c(0.044715)));
      inner = b.create<math::TanhOp>(l, b.create<arith::MulFOp>(l, s, c(std::sqrt(2.0 / M_PI))));
    } else {
      inner = b.create<math::ErfOp>(l, b.create<arith::MulFOp>(l, x, c(M_SQRT1_2)));
    }
    return b.create<arith::MulFOp>(l, b.create<arith::MulFOp>(l, x, c(0.5)),
                                   b.create<arith::AddFOp>(l, c(1.0), inner));
  }
  return {};
}

Results lowerMatMul(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  Value a = op->getOperand(0), bb = op->getOperand(1);
  auto at = typeOf(a), bt = typeOf(bb);
  auto out = resultType(op);
  Type elt = out.getElementType();
  // Loop nest: (batch..., m, k, n): the innermost loop walks rows of B and
  // of the result contiguously, so LLVM vectorizes it without reassociating
  // the reduction. 1-D operands lose m or n.
  bool aVec = at.getRank() == 1, bVec = bt.getRank() == 1;
  int64_t batch = out.getRank() - (aVec ? 0 : 1) - (bVec ? 0 : 1);
  int64_t mDim = batch, kDim = batch + 1, nDim = batch + 2, nLoops = batch + 3;
  auto dim = [&](int64_t d) { return getAffineDimExpr(d, ctx); };
  auto zero = getAffineConstantExpr(0, ctx);
  SmallVector<AffineExpr> aExprs, bExprs, oExprs;
  auto batchExprs = [&](RankedTensorType t, int64_t matRank,
                        SmallVector<AffineExpr> &exprs) {
    int64_t tb = t.getRank() - matRank;
    for (int64_t i = 0; i < tb; ++i) {
      int64_t od = batch - tb + i;
      exprs.push_back(t.getDimSize(i) == 1 && out.getDimSize(od) != 1 ? zero
                                                                        : dim(od));
    }
  };
  batchExprs(at, aVec ? 1 : 2, aExprs);
  if (!aVec)
    aExprs.push_back(dim(mDim));
  aExprs.push_back(dim(kDim));
  batchExprs(bt, bVec ? 1 : 2, bExprs);
  bExprs.push_back(dim(kDim));
  if (!bVec)
    bExprs.push_back(dim(nDim));
  for (int64_t i = 0; i < batch; ++i)
    oExprs.push_back(dim(i));
  if (!aVec)
    oExprs.push_back(dim(mDim));
  if (!bVec)
    oExprs.push_back(dim(nDim));
  // A unit m or n loop keeps the nest uniform; its extent comes from a
  // broadcast-free dummy when the operand is a vector.
  SmallVector<Value> ins = {a, bb};
  SmallVector<AffineMap> maps = {AffineMap::get(nLoops, 0, aExprs, ctx),
                                 AffineMap::get(nLoops, 0, bExprs, ctx)};
  if (aVec || bVec) {
    SmallVector<AffineExpr> unit;
    if (aVec)
      unit.push_back(dim(mDim));
    if (bVec)
      unit.push_back(dim(nDim));
    ins.push_back(emptyTensor(b, loc, RankedTensorType::get(
                                          SmallVector<int64_t>(unit.size(), 1), elt)));
    maps.push_back(AffineMap::get(nLoops, 0, unit, ctx));
  }
  maps.push_back(AffineMap::get(nLoops, 0, oExprs, ctx));
  SmallVector<utils::IteratorType> iters(nLoops, utils::IteratorType::parallel);
  iters[kDim] = utils::IteratorType::reduction;
  // Run-time sizes: the result's from the operands, whose shared dims
  // (k, batch) must agree.
  SmallVector<Value> sizes;
  if (!out.hasStaticShape() || !at.hasStaticShape() || !bt.hasStaticShape()) {
    ArrayRef<AffineMap> inMaps = ArrayRef<AffineMap>(maps).drop_back();
    sizes = loopSizes(b, loc, out, ins, inMaps, maps.back());
    checkLoopSizes(b, loc, out, ins, inMaps, currentNodeLabel(), maps.back());
  }
  Value acc = filledTensor(b, loc, out, 0.0, sizes);
  // A bias folded in by kiln-fuse-epilogues starts the accumulator.
  if (auto bias = op->getAttrOfType<ElementsAttr>("kiln.bias")) {
    Value bv = b.create<arith::ConstantOp>(loc, cast<TypedAttr>(bias));
    AffineMap lastDim = AffineMap::get(out.getRank(), 0, {dim(out.getRank() - 1)}, ctx);
    acc = mapped(b, loc, out, ValueRange{bv}, {lastDim},
                 [](OpBuilder &, Location, ValueRange a) { return a[0]; }, sizes);
  }
  bool fl = isFloat(elt);
  // MatMulInteger: 8-bit operands widened to the i32 result (unsigned ones
  // with zero extension), the form kiln-cpu-integer-contractions matches.
  auto widen = [&](OpBuilder &nb, Location l, Value v, unsigned i) {
    return castScalar(nb, l, v, elt, wasUnsigned(op, i));
  };
  auto g = b.create<linalg::GenericOp>(
      loc, TypeRange{out}, ins, ValueRange{acc}, maps, iters,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value x = widen(nb, l, args[0], 0), y = widen(nb, l, args[1], 1);
        Value p = fl ? (Value)nb.create<arith::MulFOp>(l, x, y)
                     : (Value)nb.create<arith::MulIOp>(l, x, y);
        Value s = fl ? (Value)nb.create<arith::AddFOp>(l, args.back(), p)
                     : (Value)nb.create<arith::AddIOp>(l, args.back(), p);
        nb.create<linalg::YieldOp>(l, s);
      });
  return withEpilogue(b, op, g.getResult(0));
}

/// MatMulInteger without zero points (kiln-decompose-ops leaves only
/// those): MatMul's loops on the widened operands.
Results lowerMatMulInteger(OpBuilder &b, Operation *op) {
  for (unsigned i = 2; i < op->getNumOperands(); ++i)
    if (!isNone(op->getOperand(i)))
      return emitNodeError(op)
             << "zero points of this shape (per row) are not supported";
  return lowerMatMul(b, op);
}

Results lowerGemm(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  auto out = resultType(op);
  Type elt = out.getElementType();
  bool ta = getIntAttr(op, "transA", 0), tb = getIntAttr(op, "transB", 0);
  double alpha = getFloatAttr(op, "alpha", 1.0), beta = getFloatAttr(op, "beta", 1.0);
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  // Loops (m, k, n), innermost n as in MatMul.
  AffineMap aMap = AffineMap::get(3, 0, ta ? ArrayRef<AffineExpr>{d(1), d(0)}
                                           : ArrayRef<AffineExpr>{d(0), d(1)}, ctx);
  AffineMap bMap = AffineMap::get(3, 0, tb ? ArrayRef<AffineExpr>{d(2), d(1)}
                                           : ArrayRef<AffineExpr>{d(1), d(2)}, ctx);
  AffineMap oMap = AffineMap::get(3, 0, {d(0), d(2)}, ctx);
  Value init;
  Value c = op->getNumOperands() > 2 ? op->getOperand(2) : Value();
  SmallVector<Value> ab = {op->getOperand(0), op->getOperand(1)};
  SmallVector<Value> sizes;
  if (!out.hasStaticShape() || !typeOf(ab[0]).hasStaticShape() ||
      !typeOf(ab[1]).hasStaticShape()) {
    sizes = loopSizes(b, loc, out, ab, {aMap, bMap}, oMap);
    checkLoopSizes(b, loc, out, ab, {aMap, bMap}, currentNodeLabel(), oMap);
  }
  if (!isNone(c) && beta != 0.0) {
    auto ct = typeOf(c);
    AffineMap cMap = broadcastMap(ctx, out.getShape(), ct);
    auto scaled = [&](OpBuilder &nb, Location l, Value v) -> Value {
      return beta == 1.0 ? v : nb.create<arith::MulFOp>(l, v, cst(nb, l, elt, beta));
    };
    if (ct.hasStaticShape()) {
      init = mapped(b, loc, out, ValueRange{c}, {cMap},
                    [&](OpBuilder &nb, Location l, ValueRange a) { return scaled(nb, l, a[0]); },
                    sizes);
    } else {
      // A C of run-time size broadcasts where it is 1 at run time, and
      // must have the result's size elsewhere (checked).
      int64_t offset = out.getRank() - ct.getRank();
      SmallVector<Value> cDims, outDims;
      for (int64_t i = 0; i < ct.getRank(); ++i) {
        Value cd = dimSize(b, loc, c, i);
        unsigned j = offset + i, k = 0;
        for (unsigned p = 0; p < j; ++p)
          k += out.isDynamicDim(p);
        Value od = out.isDynamicDim(j) ? sizes[k]
                                       : b.create<arith::ConstantIndexOp>(loc, out.getDimSize(j));
        Value one = b.create<arith::ConstantIndexOp>(loc, 1);
        Value ok = b.create<arith::OrIOp>(
            loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, cd, one),
            b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, cd, od));
        b.create<CheckOp>(loc, ok,
                          currentNodeLabel() + ": C's dimension " + std::to_string(i) +
                              " is neither 1 nor the result's at run time",
                          /*fatal=*/true);
        cDims.push_back(cd);
      }
      init = indexGeneric(
          b, loc, out,
          [&](IB &ib, ArrayRef<Value> idx) {
            SmallVector<Value> at;
            for (int64_t i = 0; i < ct.getRank(); ++i)
              at.push_back(ib.sel(ib.eq(cDims[i], ib.c(1)), ib.c(0), idx[offset + i]));
            return scaled(ib.b, ib.l, ib.b.create<tensor::ExtractOp>(ib.l, c, at).getResult());
          },
          sizes);
    }
  } else {
    init = filledTensor(b, loc, out, 0.0, sizes);
  }
  auto g = b.create<linalg::GenericOp>(
      loc, TypeRange{out}, ValueRange{op->getOperand(0), op->getOperand(1)},
      ValueRange{init}, ArrayRef<AffineMap>{aMap, bMap, oMap},
      ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                    utils::IteratorType::reduction,
                                    utils::IteratorType::parallel},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value p = nb.create<arith::MulFOp>(l, args[0], args[1]);
        if (alpha != 1.0)
          p = nb.create<arith::MulFOp>(l, p, cst(nb, l, elt, alpha));
        nb.create<linalg::YieldOp>(l, ValueRange{nb.create<arith::AddFOp>(l, args[2], p)});
      });
  return withEpilogue(b, op, g.getResult(0));
}

Results lowerEinsum(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  SmallVector<SmallVector<char>> ins;
  SmallVector<char> outL;
  if (failed(parseEinsum(op, ins, outL)))
    return emitNodeError(op) << "cannot parse the equation";
  auto out = resultType(op);
  Type elt = out.getElementType();
  SmallVector<char> loops(outL.begin(), outL.end());
  llvm::DenseMap<char, int64_t> size;
  for (auto [i, labels] : llvm::enumerate(ins))
    for (auto [j, l] : llvm::enumerate(labels)) {
      if (!llvm::is_contained(loops, l))
        loops.push_back(l);
      size[l] = std::max<int64_t>(size.lookup(l), typeOf(op->getOperand(i)).getDimSize(j));
    }
  auto pos = [&](char l) { return (unsigned)(llvm::find(loops, l) - loops.begin()); };
  int64_t n = loops.size();
  SmallVector<AffineMap> maps;
  SmallVector<Value> operands;
  for (auto [i, labels] : llvm::enumerate(ins)) {
    auto t = typeOf(op->getOperand(i));
    SmallVector<AffineExpr> e;
    for (auto [j, l] : llvm::enumerate(labels))
      e.push_back(t.getDimSize(j) == 1 && size[l] != 1 ? getAffineConstantExpr(0, ctx)
                                                       : getAffineDimExpr(pos(l), ctx));
    maps.push_back(AffineMap::get(n, 0, e, ctx));
    operands.push_back(op->getOperand(i));
  }
  // Loops only a broadcast operand mentions get their extent from a dummy.
  SmallVector<AffineExpr> all;
  SmallVector<int64_t> allSizes;
  for (int64_t i = (int64_t)outL.size(); i < n; ++i) {
    all.push_back(getAffineDimExpr(i, ctx));
    allSizes.push_back(size[loops[i]]);
  }
  if (!all.empty()) {
    operands.push_back(emptyTensor(b, loc, RankedTensorType::get(allSizes, elt)));
    maps.push_back(AffineMap::get(n, 0, all, ctx));
  }
  SmallVector<AffineExpr> oE;
  for (char l : outL)
    oE.push_back(getAffineDimExpr(pos(l), ctx));
  maps.push_back(AffineMap::get(n, 0, oE, ctx));
  SmallVector<utils::IteratorType> iters(n, utils::IteratorType::parallel);
  for (int64_t i = outL.size(); i < n; ++i)
    iters[i] = utils::IteratorType::reduction;
  Value acc = filledTensor(b, loc, out, 0.0);
  bool fl = isFloat(elt);
  size_t nIn = ins.size();
  auto g = b.create<linalg::GenericOp>(
      loc, TypeRange{out}, operands, ValueRange{acc}, maps, iters,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value p = args[0];
        for (size_t i = 1; i < nIn; ++i)
          p = fl ? (Value)nb.create<arith::MulFOp>(l, p, args[i]) : nb.create<arith::MulIOp>(l, p, args[i]);
        Value s = fl ? (Value)nb.create<arith::AddFOp>(l, args.back(), p)
                     : nb.create<arith::AddIOp>(l, args.back(), p);
        nb.create<linalg::YieldOp>(l, s);
      });
  return SmallVector<Value>{g.getResult(0)};
}

} // namespace

Results withEpilogue(OpBuilder &b, Operation *op, Value result) {
  if (!op->hasAttr("kiln.activation"))
    return SmallVector<Value>{result};
  bool known = true;
  Value out = elementwise(b, op->getLoc(), typeOf(result), ValueRange{result},
                          [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                            Value v = applyFusedActivation(nb, l, a[0], op);
                            known = known && v;
                            return v ? v : a[0];
                          });
  if (!known)
    return emitNodeError(op) << "unknown fused activation "
                             << op->getAttr("kiln.activation");
  return SmallVector<Value>{out};
}

Value applyFusedActivation(OpBuilder &b, Location l, Value x, Operation *op) {
  auto kind = op->getAttrOfType<StringAttr>("kiln.activation");
  if (!kind)
    return x;
  SmallVector<float> params;
  if (auto a = op->getAttrOfType<ArrayAttr>("kiln.activation_params"))
    for (Attribute p : a)
      params.push_back((float)cast<FloatAttr>(p).getValueAsDouble());
  return epilogueActivation(b, l, x, kind.getValue(), params);
}

void registerContractionOps(LoweringTable &m) {
  m["MatMul"] = {lowerMatMul, false};
  m["MatMulInteger"] = {lowerMatMulInteger, false};
  m["Gemm"] = {lowerGemm};
  m["Einsum"] = {lowerEinsum, false};
}

} // namespace kiln::cpu
