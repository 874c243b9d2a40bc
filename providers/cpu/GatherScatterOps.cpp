//===- GatherScatterOps.cpp - ops that index data by a tensor's values ---===//
//
// Gather, GatherElements, GatherND, ScatterElements, ScatterND and OneHot.
// Their indices are data: each index is checked against its bound (an
// error at compile time for constant indices, a failed run otherwise), and
// the access itself stays clamped so that the rest of a failing run never
// reads or writes out of bounds.
//
//===----------------------------------------------------------------------===//
#include "providers/cpu/IndexGeneric.h"
#include "providers/cpu/Lowering.h"

#include "dialects/kiln/KilnDialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <limits>

using namespace mlir;
using namespace kiln::onnx;

namespace kiln::cpu {

LogicalResult checkIndexRange(OpBuilder &b, Location l, Operation *op,
                              Value indices, Value n, StringRef what) {
  std::optional<int64_t> bound = getConstantIntValue(n);
  if (bound)
    if (std::optional<SmallVector<int64_t>> known = getConstantInts(indices)) {
      for (int64_t v : *known)
        if (v < -*bound || v >= *bound)
          return emitNodeError(op) << what << " " << v << " is outside [-"
                                   << *bound << ", " << *bound << ")";
      return success();
    }
  // The least and the greatest index, in one pass over the indices.
  auto it = typeOf(indices);
  MLIRContext *ctx = b.getContext();
  Type i64 = b.getI64Type();
  auto scalar = RankedTensorType::get({}, i64);
  auto init = [&](int64_t v) {
    Value empty = b.create<tensor::EmptyOp>(l, scalar.getShape(), i64);
    return b
        .create<linalg::FillOp>(
            l, ValueRange{b.create<arith::ConstantIntOp>(l, v, 64)},
            ValueRange{empty})
        .getResult(0);
  };
  int64_t rank = it.getRank();
  AffineMap all = AffineMap::getMultiDimIdentityMap(rank, ctx),
            none = AffineMap::get(rank, 0, {}, ctx);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::reduction);
  auto extremes = b.create<linalg::GenericOp>(
      l, TypeRange{scalar, scalar}, ValueRange{indices},
      ValueRange{init(std::numeric_limits<int64_t>::max()),
                 init(std::numeric_limits<int64_t>::min())},
      ArrayRef<AffineMap>{all, none, none}, iters,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value v = a[0].getType() == i64
                      ? a[0]
                      : nb.create<arith::ExtSIOp>(nl, i64, a[0]);
        nb.create<linalg::YieldOp>(
            nl, ValueRange{nb.create<arith::MinSIOp>(nl, a[1], v),
                           nb.create<arith::MaxSIOp>(nl, a[2], v)});
      });
  Value lo =
            b.create<tensor::ExtractOp>(l, extremes.getResult(0), ValueRange{}),
        hi =
            b.create<tensor::ExtractOp>(l, extremes.getResult(1), ValueRange{});
  Value nI = b.create<arith::IndexCastOp>(l, i64, n);
  Value minusN =
      b.create<arith::SubIOp>(l, b.create<arith::ConstantIntOp>(l, 0, 64), nI);
  Value above = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::sge, hi, nI);
  Value below =
      b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, lo, minusN);
  Value ok = b.create<arith::XOrIOp>(l, b.create<arith::OrIOp>(l, above, below),
                                     b.create<arith::ConstantIntOp>(l, 1, 1));
  Value bad = b.create<arith::SelectOp>(l, above, hi, lo);
  b.create<CheckOp>(
      l, ok, describeNode(op) + ": " + what.str() + " {} is outside [-{}, {})",
      /*fatal=*/false, ValueRange{bad, nI, nI});
  return success();
}

/// checkIndexRange for the index tuples of GatherND/ScatterND (the last
/// dim of `indices`): component k against `bounds[k]`.
LogicalResult checkIndexTuples(OpBuilder &b, Location l, Operation *op,
                               Value indices, ArrayRef<Value> bounds) {
  auto it = typeOf(indices);
  int64_t last = it.getRank() - 1, width = bounds.size();
  std::optional<SmallVector<int64_t>> known = getConstantInts(indices);
  if (known &&
      llvm::all_of(bounds, [](Value n) { return getConstantIntValue(n); })) {
    for (auto [i, v] : llvm::enumerate(*known)) {
      int64_t n = *getConstantIntValue(bounds[i % width]);
      if (v < -n || v >= n)
        return emitNodeError(op)
               << "index " << v << " is outside [-" << n << ", " << n << ")";
    }
    return success();
  }
  SmallVector<OpFoldResult> offsets(it.getRank(), b.getIndexAttr(0)),
      sizes = tensor::getMixedSizes(b, l, indices),
      strides(it.getRank(), b.getIndexAttr(1));
  sizes[last] = b.getIndexAttr(1);
  for (int64_t k = 0; k < width; ++k) {
    offsets[last] = b.getIndexAttr(k);
    Value column =
        b.create<tensor::ExtractSliceOp>(l, indices, offsets, sizes, strides);
    if (failed(checkIndexRange(b, l, op, column, bounds[k])))
      return failure();
  }
  return success();
}

namespace {

/// Gather along `axis`; with run-time sizes (hidden[:, 0], a row of a
/// table of run-time size) the result's dims are data's around the
/// indices'.
Results lowerGather(OpBuilder &b, Operation *op) {
  Location l = op->getLoc();
  MLIRContext *ctx = b.getContext();
  Value data = op->getOperand(0), indices = op->getOperand(1);
  auto dt = typeOf(data), it = typeOf(indices), out = resultType(op);
  int64_t axis = getIntAttr(op, "axis", 0);
  if (axis < 0)
    axis += dt.getRank();
  int64_t ir = it.getRank();
  SmallVector<Value> sizes;
  for (int64_t j = 0; j < out.getRank(); ++j) {
    if (!out.isDynamicDim(j))
      continue;
    sizes.push_back(j < axis        ? dimSize(b, l, data, j)
                    : j < axis + ir ? dimSize(b, l, indices, j - axis)
                                    : dimSize(b, l, data, j - ir + 1));
  }
  Value axisSize = dimSize(b, l, data, axis);
  if (!op->hasAttr(kIndicesInRangeAttr) &&
      failed(checkIndexRange(b, l, op, indices, axisSize)))
    return failure();
  // One index (a recurrent Loop reading step t's row): a slice of data, a
  // view once bufferized, where the element loop copies it.
  if (ir == 0) {
    IB ib{b, l};
    Value idx = ib.index(b.create<tensor::ExtractOp>(l, indices, ValueRange{}));
    SmallVector<OpFoldResult> offsets, sizes,
        strides(dt.getRank(), b.getIndexAttr(1));
    for (int64_t d = 0; d < dt.getRank(); ++d) {
      if (d == axis) {
        offsets.push_back(ib.clampBelow(ib.wrapNeg(idx, axisSize), axisSize));
        sizes.push_back(b.getIndexAttr(1));
        continue;
      }
      offsets.push_back(b.getIndexAttr(0));
      sizes.push_back(dt.isDynamicDim(d) ? OpFoldResult(dimSize(b, l, data, d))
                                         : b.getIndexAttr(dt.getDimSize(d)));
    }
    auto sliceType =
        tensor::ExtractSliceOp::inferCanonicalRankReducedResultType(
            out.getRank(), dt, offsets, sizes, strides);
    Value r = b.create<tensor::ExtractSliceOp>(l, sliceType, data, offsets,
                                               sizes, strides);
    if (r.getType() != out)
      r = b.create<tensor::CastOp>(l, out, r);
    return SmallVector<Value>{r};
  }
  SmallVector<AffineExpr> idxE;
  for (int64_t i = 0; i < ir; ++i)
    idxE.push_back(getAffineDimExpr(axis + i, ctx));
  AffineMap idxMap = AffineMap::get(out.getRank(), 0, idxE, ctx);
  Value r = mapped(
      b, l, out, ValueRange{indices}, {idxMap},
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value idx = nb.create<arith::IndexCastOp>(nl, nb.getIndexType(), a[0]);
        Value zero = nb.create<arith::ConstantIndexOp>(nl, 0);
        Value neg =
            nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::slt, idx, zero);
        idx = nb.create<arith::SelectOp>(
            nl, neg, nb.create<arith::AddIOp>(nl, idx, axisSize), idx);
        // Out-of-range indices failed the check: clamped, reads stay inside.
        Value maxIdx = nb.create<arith::SubIOp>(
            nl, axisSize, nb.create<arith::ConstantIndexOp>(nl, 1));
        idx = nb.create<arith::MaxSIOp>(
            nl, nb.create<arith::MinSIOp>(nl, idx, maxIdx), zero);
        SmallVector<Value> coords;
        for (int64_t i = 0; i < axis; ++i)
          coords.push_back(nb.create<linalg::IndexOp>(nl, i));
        coords.push_back(idx);
        for (int64_t i = axis + 1; i < dt.getRank(); ++i)
          coords.push_back(nb.create<linalg::IndexOp>(nl, i - 1 + ir));
        return nb.create<tensor::ExtractOp>(nl, data, coords);
      },
      sizes);
  return SmallVector<Value>{r};
}

Results lowerGatherElements(OpBuilder &b, Operation *op) {
  Value x = op->getOperand(0), idx = op->getOperand(1);
  auto xt = typeOf(x);
  int64_t axis = getIntAttr(op, "axis", 0);
  if (axis < 0)
    axis += xt.getRank();
  // The result has the indices' shape; an index is wrapped and clamped by
  // the axis's size (read at run time where it is dynamic). Off the axis
  // the indices may not be larger than the data (checked at run time for
  // sizes the types do not give).
  Location loc = op->getLoc();
  auto itType = typeOf(idx);
  for (int64_t d = 0; d < xt.getRank(); ++d)
    if (d != axis && (xt.isDynamicDim(d) || itType.isDynamicDim(d)))
      b.create<CheckOp>(
          loc,
          b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sle,
                                  dimSize(b, loc, idx, d),
                                  dimSize(b, loc, x, d)),
          describeNode(op) +
              ": the indices are larger than the data in dimension " +
              std::to_string(d) + " at run time",
          /*fatal=*/true);
  Value n = dimSize(b, loc, x, axis);
  if (failed(checkIndexRange(b, loc, op, idx, n)))
    return failure();
  return SmallVector<Value>{indexGeneric(
      b, op->getLoc(), resultType(op),
      [&](IB &ib, ArrayRef<Value> i) {
        SmallVector<Value> src(i.begin(), i.end());
        Value k = ib.index(ib.b.create<tensor::ExtractOp>(ib.l, idx, i));
        src[axis] = ib.clampBelow(ib.wrapNeg(k, n), n);
        return ib.b.create<tensor::ExtractOp>(ib.l, x, src).getResult();
      },
      dynamicSizesLike(b, op->getLoc(), resultType(op), idx))};
}

Results lowerGatherND(OpBuilder &b, Operation *op) {
  Value x = op->getOperand(0), idx = op->getOperand(1);
  auto xt = typeOf(x), it = typeOf(idx);
  int64_t bd = getIntAttr(op, "batch_dims", 0);
  int64_t last = it.getDimSize(it.getRank() - 1);
  int64_t q = it.getRank() - 1; // index tuple dims in the output
  SmallVector<Value> bounds;
  for (int64_t k = 0; k < last; ++k)
    bounds.push_back(dimSize(b, op->getLoc(), x, bd + k));
  if (failed(checkIndexTuples(b, op->getLoc(), op, idx, bounds)))
    return failure();
  return SmallVector<Value>{indexGeneric(
      b, op->getLoc(), resultType(op), [&](IB &ib, ArrayRef<Value> i) {
        SmallVector<Value> src;
        for (int64_t d = 0; d < bd; ++d)
          src.push_back(i[d]);
        for (int64_t k = 0; k < last; ++k) {
          SmallVector<Value> ic(i.begin(), i.begin() + q);
          ic.push_back(ib.c(k));
          Value v = ib.index(ib.b.create<tensor::ExtractOp>(ib.l, idx, ic));
          int64_t n = xt.getDimSize(bd + k);
          src.push_back(ib.clamp(ib.wrapNeg(v, n), 0, n - 1));
        }
        for (int64_t d = q; d < (int64_t)i.size(); ++d)
          src.push_back(i[d]);
        return ib.b.create<tensor::ExtractOp>(ib.l, x, src).getResult();
      })};
}

/// ScatterElements / ScatterND: a loop nest over the updates writing into a
/// copy of data (scf.for with the tensor as iter_arg; bufferizes in place).
Results lowerScatter(OpBuilder &b, Operation *op, bool nd) {
  Location loc = op->getLoc();
  Value data = op->getOperand(0), idx = op->getOperand(1),
        upd = op->getOperand(2);
  auto dt = typeOf(data), it = typeOf(idx), ut = typeOf(upd);
  Type elt = dt.getElementType();
  StringRef red = getStrAttr(op, "reduction", "none");
  int64_t axis = getIntAttr(op, "axis", 0);
  if (axis < 0)
    axis += dt.getRank();
  // Sizes (run-time where the types have none): the data's dims that the
  // indices address, and the updates' loop bounds.
  SmallVector<Value> dataDims, updDims;
  for (int64_t d = 0; d < dt.getRank(); ++d)
    dataDims.push_back(dimSize(b, loc, data, d));
  for (int64_t d = 0; d < ut.getRank(); ++d)
    updDims.push_back(dimSize(b, loc, upd, d));
  // The updates' dims that address the data directly must fit it (the
  // types prove it where they are static).
  if (!dt.hasStaticShape() || !ut.hasStaticShape() || !it.hasStaticShape()) {
    int64_t q = it.getRank() - 1, last = nd ? it.getDimSize(q) : 0;
    for (int64_t d = 0; d < ut.getRank(); ++d) {
      int64_t dd = nd ? (d < q ? -1 : last + d - q) : (d == axis ? -1 : d);
      if (dd < 0 || dd >= dt.getRank())
        continue;
      b.create<CheckOp>(loc,
                        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sle,
                                                updDims[d], dataDims[dd]),
                        describeNode(op) +
                            ": the updates are larger than the data in "
                            "dimension " +
                            std::to_string(dd) + " at run time",
                        /*fatal=*/true);
    }
  }
  if (nd) {
    int64_t last = it.getDimSize(it.getRank() - 1);
    if (failed(checkIndexTuples(b, loc, op, idx,
                                ArrayRef<Value>(dataDims).take_front(last))))
      return failure();
  } else if (failed(checkIndexRange(b, loc, op, idx, dataDims[axis]))) {
    return failure();
  }
  // One index tuple writing a whole slice (a recurrent Loop's output row
  // at step t): an insert_slice, which bufferizes in place into a loop's
  // carried buffer where the copy and element loop cost a copy of all of
  // data per step.
  if (nd && red == "none" && it.hasStaticShape()) {
    int64_t q = it.getDimSize(it.getRank() - 1), lead = it.getRank() - 1;
    bool one = llvm::all_of(it.getShape().drop_back(),
                            [](int64_t d) { return d == 1; });
    if (one && q >= 1 && q < dt.getRank() &&
        ut.getRank() == lead + dt.getRank() - q) {
      IB ib{b, loc};
      SmallVector<OpFoldResult> offsets, sizes,
          strides(dt.getRank(), b.getIndexAttr(1));
      for (int64_t k = 0; k < q; ++k) {
        SmallVector<Value> ic(lead, ib.c(0));
        ic.push_back(ib.c(k));
        Value v = ib.index(b.create<tensor::ExtractOp>(loc, idx, ic));
        offsets.push_back(
            ib.clampBelow(ib.wrapNeg(v, dataDims[k]), dataDims[k]));
        sizes.push_back(b.getIndexAttr(1));
      }
      for (int64_t d = q; d < dt.getRank(); ++d) {
        offsets.push_back(b.getIndexAttr(0));
        int64_t u = lead + d - q;
        sizes.push_back(ut.isDynamicDim(u) ? OpFoldResult(updDims[u])
                                           : b.getIndexAttr(ut.getDimSize(u)));
      }
      // The updates without their leading unit dims (the slice's rank
      // reduced by q).
      Value src = upd;
      if (lead > 0) {
        SmallVector<ReassociationIndices> groups(1);
        for (int64_t d = 0; d <= lead; ++d)
          groups[0].push_back(d);
        for (int64_t d = lead + 1; d < ut.getRank(); ++d)
          groups.push_back({d});
        src = b.create<tensor::CollapseShapeOp>(loc, upd, groups);
      }
      Value out = b.create<tensor::InsertSliceOp>(loc, src, data, offsets,
                                                  sizes, strides);
      return SmallVector<Value>{out};
    }
  }
  // Start from a copy so that data itself is never written.
  Value acc = indexGeneric(
      b, loc, dt,
      [&](IB &ib, ArrayRef<Value> i) {
        return ib.b.create<tensor::ExtractOp>(ib.l, data, i).getResult();
      },
      dynamicSizesLike(b, loc, dt, data));
  SmallVector<Value> ivs;
  std::function<Value(OpBuilder &, Value, int64_t)> nest =
      [&](OpBuilder &nb, Value t, int64_t d) -> Value {
    IB ib{nb, loc};
    if (d == ut.getRank()) {
      SmallVector<Value> dst;
      if (nd) {
        int64_t q = it.getRank() - 1, last = it.getDimSize(q);
        for (int64_t k = 0; k < last; ++k) {
          SmallVector<Value> ic(ivs.begin(), ivs.begin() + q);
          ic.push_back(ib.c(k));
          Value v = ib.index(nb.create<tensor::ExtractOp>(loc, idx, ic));
          dst.push_back(ib.clampBelow(ib.wrapNeg(v, dataDims[k]), dataDims[k]));
        }
        for (int64_t k = q; k < ut.getRank(); ++k)
          dst.push_back(ivs[k]);
      } else {
        dst.assign(ivs.begin(), ivs.end());
        Value v = ib.index(nb.create<tensor::ExtractOp>(loc, idx, ivs));
        dst[axis] =
            ib.clampBelow(ib.wrapNeg(v, dataDims[axis]), dataDims[axis]);
      }
      Value u = nb.create<tensor::ExtractOp>(loc, upd, ivs);
      if (red != "none") {
        Value old = nb.create<tensor::ExtractOp>(loc, t, dst);
        bool fl = isFloat(elt);
        if (red == "add")
          u = fl ? (Value)nb.create<arith::AddFOp>(loc, old, u)
                 : nb.create<arith::AddIOp>(loc, old, u);
        else if (red == "mul")
          u = fl ? (Value)nb.create<arith::MulFOp>(loc, old, u)
                 : nb.create<arith::MulIOp>(loc, old, u);
        else if (red == "max")
          u = fl ? (Value)nb.create<arith::MaximumFOp>(loc, old, u)
                 : nb.create<arith::MaxSIOp>(loc, old, u);
        else
          u = fl ? (Value)nb.create<arith::MinimumFOp>(loc, old, u)
                 : nb.create<arith::MinSIOp>(loc, old, u);
      }
      return nb.create<tensor::InsertOp>(loc, u, t, dst);
    }
    auto f = nb.create<scf::ForOp>(
        loc, ib.c(0), updDims[d], ib.c(1), ValueRange{t},
        [&](OpBuilder &fb, Location, Value iv, ValueRange args) {
          ivs.push_back(iv);
          Value r = nest(fb, args[0], d + 1);
          ivs.pop_back();
          fb.create<scf::YieldOp>(loc, r);
        });
    return f.getResult(0);
  };
  if (red != "none" && red != "add" && red != "mul" && red != "max" &&
      red != "min")
    return emitNodeError(op) << "reduction \"" << red << "\" is not supported";
  return SmallVector<Value>{nest(b, acc, 0)};
}

Results lowerOneHot(OpBuilder &b, Operation *op) {
  Value idx = op->getOperand(0), vals = op->getOperand(2);
  auto out = resultType(op);
  int64_t r = out.getRank();
  int64_t axis = getIntAttr(op, "axis", -1);
  if (axis < 0)
    axis += r;
  int64_t depth = out.getDimSize(axis);
  Type it = typeOf(idx).getElementType();
  return SmallVector<Value>{
      indexGeneric(b, op->getLoc(), out, [&](IB &ib, ArrayRef<Value> i) {
        SmallVector<Value> ic;
        for (int64_t d = 0; d < r; ++d)
          if (d != axis)
            ic.push_back(i[d]);
        Value raw = ib.b.create<tensor::ExtractOp>(ib.l, idx, ic);
        if (isFloat(it))
          raw = ib.b.create<arith::FPToSIOp>(ib.l, ib.b.getI64Type(), raw);
        Value k = ib.wrapNeg(ib.index(raw), depth);
        Value off =
            ib.b.create<tensor::ExtractOp>(ib.l, vals, ValueRange{ib.c(0)});
        Value on =
            ib.b.create<tensor::ExtractOp>(ib.l, vals, ValueRange{ib.c(1)});
        return ib.sel(ib.eq(k, i[axis]), on, off);
      })};
}

} // namespace

void registerGatherScatterOps(LoweringTable &m) {
  m["Gather"] = {lowerGather, false};
  m["GatherElements"] = {lowerGatherElements, false};
  m["GatherND"] = {lowerGatherND, false};
  m["ScatterElements"] = {
      [](OpBuilder &b, Operation *op) { return lowerScatter(b, op, false); },
      false};
  m["Scatter"] = m["ScatterElements"];
  m["ScatterND"] = {
      [](OpBuilder &b, Operation *op) { return lowerScatter(b, op, true); },
      false};
  m["OneHot"] = {lowerOneHot, false};
}

} // namespace kiln::cpu
