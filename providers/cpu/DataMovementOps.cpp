//===- DataMovementOps.cpp - reshapes, transposes, gathers, constants ---===//
#include "providers/cpu/IndexGeneric.h"
#include "providers/cpu/Lowering.h"

#include "dialects/kiln/KilnDialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace kiln::onnx;

namespace kiln::cpu {
namespace {

Results lowerReshapeLike(OpBuilder &b, Operation *op) {
  return SmallVector<Value>{reshapeTo(b, op->getLoc(), op->getOperand(0), resultType(op))};
}

Results lowerTranspose(OpBuilder &b, Operation *op) {
  Value x = op->getOperand(0);
  auto xt = typeOf(x);
  SmallVector<int64_t> perm = getIntsAttr(op, "perm");
  if (perm.empty())
    for (int64_t i = xt.getRank() - 1; i >= 0; --i)
      perm.push_back(i);
  // MLIR 19 folds an identity linalg.transpose on buffers by erasing it,
  // copy and all (the result would be garbage): it is the input anyway.
  if (llvm::equal(perm, llvm::seq<int64_t>(0, xt.getRank())))
    return SmallVector<Value>{x};
  Value init = emptyTensor(b, op->getLoc(), resultType(op));
  auto t = b.create<linalg::TransposeOp>(op->getLoc(), x, init, perm);
  return SmallVector<Value>{t->getResult(0)};
}

Results lowerConcat(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  auto out = resultType(op);
  int64_t axis = getIntAttr(op, "axis", 0);
  if (axis < 0)
    axis += out.getRank();
  Value acc = emptyTensor(b, loc, out);
  int64_t offset = 0;
  for (Value in : op->getOperands()) {
    auto t = typeOf(in);
    SmallVector<OpFoldResult> offs, sizes, strides;
    for (int64_t i = 0; i < out.getRank(); ++i) {
      offs.push_back(b.getIndexAttr(i == axis ? offset : 0));
      sizes.push_back(b.getIndexAttr(t.getDimSize(i)));
      strides.push_back(b.getIndexAttr(1));
    }
    acc = b.create<tensor::InsertSliceOp>(loc, in, acc, offs, sizes, strides);
    offset += t.getDimSize(axis);
  }
  return SmallVector<Value>{acc};
}

/// Splats above this many bytes are filled at run time: a constant would
/// put every byte in the binary (and 4 TB of zeros would not fit).
constexpr int64_t kMaxSplatConstantBytes = 64 << 10;

/// `value` as a constant, or a large splat as a linalg.fill.
Value constantTensor(OpBuilder &b, Location l, TypedAttr value) {
  auto splat = dyn_cast<SplatElementsAttr>(value);
  auto type = dyn_cast<RankedTensorType>(value.getType());
  std::optional<int64_t> bytes =
      type ? tensorBytes(type.getShape(), type.getElementType()) : std::nullopt;
  if (!splat || !bytes || *bytes <= kMaxSplatConstantBytes)
    return b.create<arith::ConstantOp>(l, value);
  Value scalar =
      b.create<arith::ConstantOp>(l, splat.getSplatValue<TypedAttr>());
  return b.create<linalg::FillOp>(l, scalar, emptyTensor(b, l, type))
      .getResult(0);
}

Results lowerConstant(OpBuilder &b, Operation *op) {
  return SmallVector<Value>{
      constantTensor(b, op->getLoc(), cast<TypedAttr>(op->getAttr("value")))};
}

Results lowerShape(OpBuilder &b, Operation *op) {
  auto xt = typeOf(op->getOperand(0));
  auto out = resultType(op);
  int64_t r = xt.getRank();
  int64_t start = getIntAttr(op, "start", 0);
  if (start < 0) start += r;
  start = std::clamp<int64_t>(start, 0, r);
  SmallVector<int64_t> dims(xt.getShape().begin() + start,
                            xt.getShape().begin() + start + out.getDimSize(0));
  return SmallVector<Value>{b.create<arith::ConstantOp>(
      op->getLoc(), DenseElementsAttr::get(out, ArrayRef<int64_t>(dims)))};
}

Results forward(OpBuilder &, Operation *op) {
  SmallVector<Value> r = {op->getOperand(0)};
  for (unsigned i = 1; i < op->getNumResults(); ++i)
    r.push_back(Value());
  return r;
}



Value zeroOf(OpBuilder &b, Location l, Type elt) { return scalarConst(b, l, elt, 0.0); }

/// Element `j` of a 1-D integer tensor as an i64 scalar.
Value elementI64(OpBuilder &b, Location l, Value t, int64_t j) {
  Value v = b.create<tensor::ExtractOp>(l, t, ValueRange{b.create<arith::ConstantIndexOp>(l, j)});
  return castScalar(b, l, v, b.getI64Type());
}

/// Run-time per-dim offsets of Slice and Pad: i64 arithmetic on values
/// read from their inputs, axes included (constant or not).
struct RuntimeDims {
  OpBuilder &b;
  Location l;
  Operation *op;
  int64_t rank;
  Value ok; // all checks so far

  Value c(int64_t v) { return b.create<arith::ConstantIntOp>(l, v, 64); }
  Value cmp(arith::CmpIPredicate p, Value u, Value v) { return b.create<arith::CmpIOp>(l, p, u, v); }
  Value sel(Value cond, Value u, Value v) { return b.create<arith::SelectOp>(l, cond, u, v); }
  Value clamp(Value v, Value lo, Value hi) {
    return b.create<arith::MaxSIOp>(l, b.create<arith::MinSIOp>(l, v, hi), lo);
  }
  void require(Value cond) { ok = ok ? b.create<arith::AndIOp>(l, ok, cond).getResult() : cond; }

  /// The axes, normalized (operand `i`; all dims when absent), each valid.
  SmallVector<Value> axes(unsigned i, int64_t count) {
    SmallVector<Value> out;
    bool given = i < op->getNumOperands() && !isNone(op->getOperand(i));
    for (int64_t j = 0; j < count; ++j) {
      Value a = given ? elementI64(b, l, op->getOperand(i), j) : c(j);
      a = sel(cmp(arith::CmpIPredicate::slt, a, c(0)), b.create<arith::AddIOp>(l, a, c(rank)), a);
      require(cmp(arith::CmpIPredicate::sge, a, c(0)));
      require(cmp(arith::CmpIPredicate::slt, a, c(rank)));
      out.push_back(a);
    }
    return out;
  }
  /// The size of input dim `a` (a run-time axis).
  Value dimOf(Value a, RankedTensorType t) {
    Value d = c(t.getDimSize(0));
    for (int64_t k = 1; k < rank; ++k)
      d = sel(cmp(arith::CmpIPredicate::eq, a, c(k)), c(t.getDimSize(k)), d);
    return d;
  }
  /// Per dim, the value given for the entry whose axis names it, else `dflt`.
  SmallVector<Value> perDim(ArrayRef<Value> axes, ArrayRef<Value> values, int64_t dflt) {
    SmallVector<Value> out;
    for (int64_t d = 0; d < rank; ++d) {
      Value v = c(dflt);
      for (auto [a, x] : llvm::zip(axes, values))
        v = sel(cmp(arith::CmpIPredicate::eq, a, c(d)), x, v);
      out.push_back(v);
    }
    return out;
  }
  Value index(Value v) { return b.create<arith::IndexCastOp>(l, b.getIndexType(), v); }
  void check(RankedTensorType out, StringRef what) { checkRuntimeShape(b, l, ok, op, what, out); }
};

/// Per dim of a Slice's input: start, step and result size, resolved at
/// run time with ONNX's clamping (any of starts/ends/axes/steps may be
/// computed at run time). A zero step fails `r`'s checks.
struct RuntimeSlice {
  SmallVector<Value> start, step, size;
};

RuntimeSlice resolveRuntimeSlice(RuntimeDims &r) {
  OpBuilder &b = r.b;
  Location l = r.l;
  Operation *op = r.op;
  auto xt = typeOf(op->getOperand(0));
  int64_t k = typeOf(op->getOperand(1)).getNumElements();
  Value steps = op->getNumOperands() > 4 && !isNone(op->getOperand(4)) ? op->getOperand(4) : Value();
  using P = arith::CmpIPredicate;
  SmallVector<Value> axes = r.axes(3, k), starts, stepsV, sizes;
  for (int64_t j = 0; j < k; ++j) {
    Value dimV = r.dimOf(axes[j], xt);
    Value st = elementI64(b, l, op->getOperand(1), j), en = elementI64(b, l, op->getOperand(2), j);
    Value sp = steps ? elementI64(b, l, steps, j) : r.c(1);
    Value pos = r.cmp(P::sgt, sp, r.c(0));
    st = r.sel(r.cmp(P::slt, st, r.c(0)), b.create<arith::AddIOp>(l, st, dimV), st);
    en = r.sel(r.cmp(P::slt, en, r.c(0)), b.create<arith::AddIOp>(l, en, dimV), en);
    Value last = b.create<arith::SubIOp>(l, dimV, r.c(1));
    st = r.sel(pos, r.clamp(st, r.c(0), dimV), r.clamp(st, r.c(0), last));
    en = r.sel(pos, r.clamp(en, r.c(0), dimV), r.clamp(en, r.c(-1), last));
    // ceil((en - st) / sp), at least 0, for either sign of sp.
    Value span = r.sel(pos, b.create<arith::SubIOp>(l, en, st), b.create<arith::SubIOp>(l, st, en));
    Value mag = b.create<arith::MaxSIOp>(l, r.sel(pos, sp, b.create<arith::SubIOp>(l, r.c(0), sp)), r.c(1));
    r.require(r.cmp(P::ne, sp, r.c(0)));
    starts.push_back(st);
    stepsV.push_back(sp);
    // (span >= 0, mag >= 1: no arith.ceildivsi, which LLVM lowering lacks.)
    span = b.create<arith::MaxSIOp>(l, span, r.c(0));
    sizes.push_back(b.create<arith::DivSIOp>(
        l, b.create<arith::AddIOp>(l, span, b.create<arith::SubIOp>(l, mag, r.c(1))), mag));
  }
  RuntimeSlice s{r.perDim(axes, starts, 0), r.perDim(axes, stepsV, 1), {}};
  for (int64_t d = 0; d < xt.getRank(); ++d) {
    Value size = r.c(xt.getDimSize(d));
    for (auto [a, sz] : llvm::zip(axes, sizes))
      size = r.sel(r.cmp(P::eq, a, r.c(d)), sz, size);
    s.size.push_back(size);
  }
  return s;
}

/// Slice with starts/ends (steps, axes) computed at run time and a known
/// result shape: a kiln.check compares the sizes, and reads stay in bounds.
Results lowerRuntimeSlice(OpBuilder &b, Operation *op) {
  Location l = op->getLoc();
  Value x = op->getOperand(0);
  auto xt = typeOf(x), out = resultType(op);
  int64_t rank = xt.getRank();
  RuntimeDims r{b, l, op, rank, Value()};
  RuntimeSlice s = resolveRuntimeSlice(r);
  for (int64_t d = 0; d < rank; ++d)
    r.require(r.cmp(arith::CmpIPredicate::eq, s.size[d], r.c(out.getDimSize(d))));
  r.check(out, "starts/ends/axes/steps");
  SmallVector<Value> startIdx, stepIdx;
  for (int64_t d = 0; d < rank; ++d) {
    startIdx.push_back(r.index(s.start[d]));
    stepIdx.push_back(r.index(s.step[d]));
  }
  return SmallVector<Value>{indexGeneric(b, l, out, [&](IB &ib, ArrayRef<Value> i) {
    SmallVector<Value> src;
    for (size_t d = 0; d < i.size(); ++d)
      src.push_back(ib.clamp(ib.add(ib.mul(i[d], stepIdx[d]), startIdx[d]), 0,
                             xt.getDimSize(d) - 1));
    return ib.b.create<tensor::ExtractOp>(ib.l, x, src).getResult();
  })};
}

/// Slice whose result shape is known only at run time (a Loop body slicing
/// by its counter): the runtime copies it into a boxed tensor, a handle
/// that only sequence ops take (SequenceOps.cpp).
Results lowerBoxedSlice(OpBuilder &b, Operation *op) {
  Location l = op->getLoc();
  int64_t rank = typeOf(op->getOperand(0)).getRank();
  RuntimeDims r{b, l, op, rank, Value()};
  RuntimeSlice s = resolveRuntimeSlice(r);
  if (r.ok)
    b.create<CheckOp>(l, r.ok, describeNode(op) + ": a step is 0 or an axis is out of range");
  auto vec = RankedTensorType::get({rank}, b.getI64Type());
  auto pack = [&](ArrayRef<Value> v) -> Value {
    return b.create<tensor::FromElementsOp>(l, vec, v);
  };
  return SmallVector<Value>{
      boxSlice(b, op, pack(s.start), pack(s.step), pack(s.size))};
}

Results lowerSlice(OpBuilder &b, Operation *op) {
  if (!resultType(op).hasStaticShape())
    return lowerBoxedSlice(b, op);
  Value x = op->getOperand(0);
  auto xt = typeOf(x);
  SmallVector<int64_t> start, step, size;
  if (failed(resolveSlice(op, xt.getShape(), start, step, size)))
    return lowerRuntimeSlice(b, op);
  return SmallVector<Value>{indexGeneric(b, op->getLoc(), resultType(op),
                                         [&](IB &ib, ArrayRef<Value> i) {
    SmallVector<Value> src;
    for (size_t d = 0; d < i.size(); ++d)
      src.push_back(ib.add(ib.mul(i[d], step[d]), start[d]));
    return ib.b.create<tensor::ExtractOp>(ib.l, x, src).getResult();
  })};
}

Results lowerSplit(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  Value x = op->getOperand(0);
  auto xt = typeOf(x);
  int64_t axis = getIntAttr(op, "axis", 0);
  if (axis < 0)
    axis += xt.getRank();
  SmallVector<int64_t> sizes;
  if (failed(resolveSplit(op, xt.getDimSize(axis), sizes)))
    return emitNodeError(op) << "needs a constant split";
  SmallVector<Value> outs;
  int64_t off = 0;
  for (unsigned r = 0; r < op->getNumResults(); ++r) {
    auto rt = resultType(op, r);
    SmallVector<OpFoldResult> offs, szs, strides;
    for (int64_t d = 0; d < xt.getRank(); ++d) {
      offs.push_back(b.getIndexAttr(d == axis ? off : 0));
      szs.push_back(b.getIndexAttr(rt.getDimSize(d)));
      strides.push_back(b.getIndexAttr(1));
    }
    outs.push_back(b.create<tensor::ExtractSliceOp>(loc, rt, x, offs, szs, strides));
    off += sizes[r];
  }
  return outs;
}

Results lowerExpand(OpBuilder &b, Operation *op) {
  return SmallVector<Value>{elementwise(b, op->getLoc(), resultType(op),
                                        ValueRange{op->getOperand(0)},
                                        [](OpBuilder &, Location, ValueRange a) { return a[0]; })};
}

Results lowerTile(OpBuilder &b, Operation *op) {
  Value x = op->getOperand(0);
  auto xt = typeOf(x), out = resultType(op);
  Location loc = op->getLoc();
  // Dims of run-time size: the input's, and the result's as input x
  // repeats (read at run time).
  SmallVector<Value> inDims(xt.getRank()), outSizes;
  for (int64_t d = 0; d < xt.getRank(); ++d) {
    if (xt.isDynamicDim(d))
      inDims[d] = dimSize(b, loc, x, d);
    if (out.isDynamicDim(d))
      outSizes.push_back(b.create<arith::MulIOp>(
          loc, dimSize(b, loc, x, d),
          b.create<arith::IndexCastOp>(loc, b.getIndexType(),
                                       elementI64(b, loc, op->getOperand(1), d))));
  }
  return SmallVector<Value>{indexGeneric(
      b, loc, out,
      [&](IB &ib, ArrayRef<Value> i) {
        SmallVector<Value> src;
        for (size_t d = 0; d < i.size(); ++d)
          src.push_back(inDims[d]                 ? ib.b.create<arith::RemSIOp>(ib.l, i[d], inDims[d])
                        : xt.getDimSize(d) == 1 ? ib.c(0)
                                                : ib.rem(i[d], xt.getDimSize(d)));
        return ib.b.create<tensor::ExtractOp>(ib.l, x, src).getResult();
      },
      outSizes)};
}

Results lowerPad(OpBuilder &b, Operation *op) {
  Value x = op->getOperand(0);
  auto xt = typeOf(x);
  Location loc = op->getLoc();
  int64_t rank = xt.getRank();
  SmallVector<int64_t> low, high;
  // Pads (and axes) computed at run time, with a known result shape: the
  // low pads are read at run time and a kiln.check compares the sizes.
  SmallVector<Value> lowV;
  if (failed(resolvePads(op, rank, low, high))) {
    auto out = resultType(op);
    int64_t k = typeOf(op->getOperand(1)).getNumElements() / 2;
    RuntimeDims r{b, loc, op, rank, Value()};
    SmallVector<Value> axes = r.axes(3, k), lows, highs;
    for (int64_t j = 0; j < k; ++j) {
      lows.push_back(elementI64(b, loc, op->getOperand(1), j));
      highs.push_back(elementI64(b, loc, op->getOperand(1), j + k));
    }
    SmallVector<Value> lowD = r.perDim(axes, lows, 0), highD = r.perDim(axes, highs, 0);
    for (int64_t d = 0; d < rank; ++d) {
      Value total = b.create<arith::AddIOp>(loc, b.create<arith::AddIOp>(loc, lowD[d], highD[d]),
                                            r.c(xt.getDimSize(d)));
      r.require(r.cmp(arith::CmpIPredicate::eq, total, r.c(out.getDimSize(d))));
      lowV.push_back(r.index(lowD[d]));
    }
    r.check(out, "pads/axes");
    // Every dim takes the general path.
    low.assign(rank, 1);
    high.assign(rank, 1);
  }
  StringRef mode = getStrAttr(op, "mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    return emitNodeError(op) << "mode \"" << mode << "\" is not supported";
  Value padV = op->getNumOperands() > 2 && !isNone(op->getOperand(2)) ? op->getOperand(2) : Value();
  Type elt = xt.getElementType();
  // Constant pads that only grow a static shape: the pad value filled, the
  // input copied into the interior (row copies, not a select per element;
  // an 8-bit conv's input is padded so).
  if (mode == "constant" && lowV.empty() && xt.hasStaticShape() &&
      llvm::all_of(llvm::concat<int64_t>(low, high),
                   [](int64_t p) { return p >= 0; })) {
    auto out = resultType(op);
    Value fillV =
        padV ? (Value)b.create<tensor::ExtractOp>(
                   loc, padV,
                   SmallVector<Value>(typeOf(padV).getRank(),
                                      b.create<arith::ConstantIndexOp>(loc, 0)))
             : zeroOf(b, loc, elt);
    Value filled =
        b.create<linalg::FillOp>(loc, fillV, emptyTensor(b, loc, out, {}))
            .getResult(0);
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (int64_t d = 0; d < rank; ++d) {
      offsets.push_back(b.getIndexAttr(low[d]));
      sizes.push_back(b.getIndexAttr(xt.getDimSize(d)));
      strides.push_back(b.getIndexAttr(1));
    }
    return SmallVector<Value>{b.create<tensor::InsertSliceOp>(
        loc, x, filled, offsets, sizes, strides)};
  }
  // Dims of run-time size (constant pads): their sizes, and the result's.
  SmallVector<Value> dynIn(rank), outSizes;
  for (int64_t d = 0; d < rank; ++d)
    if (xt.isDynamicDim(d)) {
      dynIn[d] = dimSize(b, loc, x, d);
      outSizes.push_back(b.create<arith::AddIOp>(
          loc, dynIn[d], b.create<arith::ConstantIndexOp>(loc, low[d] + high[d])));
      // Negative pads crop: never more than the dim holds.
      if (low[d] < 0 || high[d] < 0)
        b.create<CheckOp>(loc,
                          b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, outSizes.back(),
                                                  b.create<arith::ConstantIndexOp>(loc, 0)),
                          describeNode(op) + ": negative pads remove more than dimension " +
                              std::to_string(d) + " holds at run time",
                          /*fatal=*/true);
    }
  return SmallVector<Value>{indexGeneric(
      b, op->getLoc(), resultType(op),
      [&](IB &ib, ArrayRef<Value> i) -> Value {
        SmallVector<Value> src;
        Value inside;
        for (size_t d = 0; d < i.size(); ++d) {
          int64_t n = xt.getDimSize(d);
          Value s = lowV.empty() ? ib.add(i[d], -low[d]) : ib.sub(i[d], lowV[d]);
          if (low[d] == 0 && high[d] <= 0) {
            src.push_back(s);
            continue;
          }
          if (Value nV = dynIn[d]) {
            // The same index maps with the size read at run time.
            auto rem = [&](Value a, Value m) {
              Value r = ib.b.create<arith::RemSIOp>(ib.l, a, m);
              return ib.b.create<arith::RemSIOp>(ib.l, ib.add(r, m), m).getResult();
            };
            if (mode == "constant" || mode == "edge") {
              if (mode == "constant") {
                Value ok = ib.andI(ib.ge(s, 0), ib.lt(s, nV));
                inside = inside ? ib.andI(inside, ok) : ok;
              }
              src.push_back(ib.clampBelow(s, nV));
            } else if (mode == "wrap") {
              src.push_back(rem(s, nV));
            } else {
              // reflect; a dim of size 1 reflects onto 0.
              Value p = ib.b.create<arith::MaxSIOp>(ib.l, ib.mul(ib.sub(nV, ib.c(1)), 2), ib.c(1));
              Value m = rem(s, p);
              src.push_back(ib.sel(ib.lt(m, nV), m, ib.sub(p, m)));
            }
            continue;
          }
          if (mode == "constant" || mode == "edge") {
            if (mode == "constant") {
              Value ok = ib.andI(ib.ge(s, 0), ib.lt(s, n));
              inside = inside ? ib.andI(inside, ok) : ok;
            }
            src.push_back(ib.clamp(s, 0, n - 1));
          } else if (mode == "wrap") {
            src.push_back(ib.mod(s, n));
          } else if (n == 1) {
            src.push_back(ib.c(0));
          } else {
            int64_t p = 2 * (n - 1);
            Value m = ib.mod(s, p);
            src.push_back(ib.sel(ib.lt(m, n), m, ib.sub(ib.c(p), m)));
          }
        }
        Value v = ib.b.create<tensor::ExtractOp>(ib.l, x, src);
        if (!inside)
          return v;
        Value pv = padV ? (Value)ib.b.create<tensor::ExtractOp>(
                              ib.l, padV, SmallVector<Value>(typeOf(padV).getRank(), ib.c(0)))
                        : zeroOf(ib.b, ib.l, elt);
        return ib.sel(inside, v, pv);
      },
      outSizes)};
}

/// CenterCropPad from the input and result shapes (the `shape` input must
/// agree; RuntimeShapeInputs checks it when computed at run time): per
/// axis, crop (dim - size) / 2 from the start or pad (size - dim) / 2.
Results lowerCenterCropPad(OpBuilder &b, Operation *op) {
  Value x = op->getOperand(0);
  auto xt = typeOf(x);
  auto out = resultType(op);
  return SmallVector<Value>{indexGeneric(b, op->getLoc(), out, [&](IB &ib, ArrayRef<Value> i) -> Value {
    SmallVector<Value> src;
    Value inside;
    for (size_t d = 0; d < i.size(); ++d) {
      int64_t dim = xt.getDimSize(d), size = out.getDimSize(d);
      if (size <= dim) {
        src.push_back(ib.add(i[d], (dim - size) / 2));
        continue;
      }
      Value s = ib.add(i[d], -((size - dim) / 2));
      Value ok = ib.andI(ib.ge(s, 0), ib.lt(s, dim));
      inside = inside ? ib.andI(inside, ok) : ok;
      src.push_back(ib.clamp(s, 0, dim - 1));
    }
    Value v = ib.b.create<tensor::ExtractOp>(ib.l, x, src);
    return inside ? ib.sel(inside, v, zeroOf(ib.b, ib.l, xt.getElementType())) : v;
  })};
}

/// RotaryEmbedding, per output element as ONNX's reference defines it:
/// input [B, H, S, D] (or [B, S, H*D] with num_heads), the first
/// rotary_embedding_dim of each head rotated by the cos/sin caches (indexed
/// by position_ids when given), in halves or interleaved pairs.
Results lowerRotaryEmbedding(OpBuilder &b, Operation *op) {
  Value x = op->getOperand(0), cosC = op->getOperand(1), sinC = op->getOperand(2);
  Value pos = op->getNumOperands() > 3 && !isNone(op->getOperand(3)) ? op->getOperand(3) : Value();
  auto xt = typeOf(x);
  bool threeD = xt.getRank() == 3;
  int64_t heads = getIntAttr(op, "num_heads", 0);
  int64_t head = threeD ? (heads > 0 ? xt.getDimSize(2) / heads : 0) : xt.getDimSize(3);
  int64_t rot = getIntAttr(op, "rotary_embedding_dim", 0);
  if (rot == 0)
    rot = head;
  int64_t half = rot / 2;
  bool interleaved = getIntAttr(op, "interleaved", 0) != 0;
  if (head == 0 || rot > head || rot % 2)
    return emitNodeError(op) << "needs num_heads for 3-D input and an even rotary_embedding_dim",
           failure();
  return SmallVector<Value>{indexGeneric(b, op->getLoc(), resultType(op), [&](IB &ib, ArrayRef<Value> i) -> Value {
    // Batch, sequence position and the index within the head.
    Value bi = i[0], si = threeD ? i[1] : i[2];
    Value d = threeD ? ib.rem(i[2], head) : i[3];
    auto at = [&](Value dd) {
      SmallVector<Value> src(i.begin(), i.end());
      if (threeD)
        src[2] = ib.add(ib.sub(i[2], d), dd);
      else
        src[3] = dd;
      return ib.b.create<tensor::ExtractOp>(ib.l, x, src).getResult();
    };
    Value inRot = ib.lt(d, rot);
    Value dc = ib.clamp(d, 0, rot - 1);
    // Pair (x1, x2), cache column and which of real/imag this element is.
    Value col, x1, x2, isImag;
    if (interleaved) {
      col = ib.div(dc, 2);
      x1 = at(ib.mul(col, 2));
      x2 = at(ib.add(ib.mul(col, 2), 1));
      isImag = ib.eq(ib.rem(dc, 2), ib.c(1));
    } else {
      isImag = ib.ge(dc, half);
      col = ib.sel(isImag, ib.add(dc, -half), dc);
      x1 = at(col);
      x2 = at(ib.add(col, half));
    }
    SmallVector<Value> cacheIdx;
    if (pos) {
      Value p = ib.b.create<tensor::ExtractOp>(ib.l, pos, ValueRange{bi, si});
      cacheIdx = {ib.clamp(ib.index(p), 0, typeOf(cosC).getDimSize(0) - 1), col};
    } else {
      cacheIdx = {bi, si, col};
    }
    Value c = ib.b.create<tensor::ExtractOp>(ib.l, cosC, cacheIdx);
    Value sn = ib.b.create<tensor::ExtractOp>(ib.l, sinC, cacheIdx);
    OpBuilder &nb = ib.b;
    Location l = ib.l;
    Value real = nb.create<arith::SubFOp>(l, nb.create<arith::MulFOp>(l, c, x1), nb.create<arith::MulFOp>(l, sn, x2));
    Value imag = nb.create<arith::AddFOp>(l, nb.create<arith::MulFOp>(l, sn, x1), nb.create<arith::MulFOp>(l, c, x2));
    return ib.sel(inRot, ib.sel(isImag, imag, real), at(d));
  })};
}

/// ReverseSequence: along time_axis, the first sequence_lens[b] elements of
/// each batch entry b reversed (lengths read at run time, clamped).
Results lowerReverseSequence(OpBuilder &b, Operation *op) {
  Value x = op->getOperand(0), lens = op->getOperand(1);
  auto xt = typeOf(x);
  int64_t batchAxis = getIntAttr(op, "batch_axis", 1), timeAxis = getIntAttr(op, "time_axis", 0);
  int64_t steps = xt.getDimSize(timeAxis);
  return SmallVector<Value>{indexGeneric(b, op->getLoc(), resultType(op), [&](IB &ib, ArrayRef<Value> i) -> Value {
    Value len = ib.index(ib.b.create<tensor::ExtractOp>(ib.l, lens, ValueRange{i[batchAxis]}));
    len = ib.clamp(len, 0, steps);
    Value t = i[timeAxis];
    SmallVector<Value> src(i.begin(), i.end());
    Value rev = ib.sub(ib.add(len, -1), t);
    src[timeAxis] = ib.sel(ib.lt(t, len), rev, t);
    return ib.b.create<tensor::ExtractOp>(ib.l, x, src).getResult();
  })};
}

Results lowerDepthSpace(OpBuilder &b, Operation *op, bool toSpace) {
  Value x = op->getOperand(0);
  auto xt = typeOf(x);
  int64_t bs = getIntAttr(op, "blocksize", 1);
  bool crd = getStrAttr(op, "mode", "DCR") == "CRD";
  int64_t C = xt.getDimSize(1);
  return SmallVector<Value>{indexGeneric(b, op->getLoc(), resultType(op),
                                         [&](IB &ib, ArrayRef<Value> i) {
    SmallVector<Value> src(4);
    src[0] = i[0];
    if (toSpace) { // DepthToSpace: out (n, c, h, w), C' = C / bs^2
      int64_t oc = C / (bs * bs);
      Value bh = ib.rem(i[2], bs), bw = ib.rem(i[3], bs);
      Value blk = ib.add(ib.mul(bh, bs), bw);
      src[1] = crd ? ib.add(ib.mul(i[1], bs * bs), blk) : ib.add(ib.mul(blk, oc), i[1]);
      src[2] = ib.div(i[2], bs);
      src[3] = ib.div(i[3], bs);
    } else { // SpaceToDepth: out (n, c*bs*bs, h/bs, w/bs)
      Value blk = crd ? ib.rem(i[1], bs * bs) : ib.div(i[1], C);
      src[1] = crd ? ib.div(i[1], bs * bs) : ib.rem(i[1], C);
      src[2] = ib.add(ib.mul(i[2], bs), ib.div(blk, bs));
      src[3] = ib.add(ib.mul(i[3], bs), ib.rem(blk, bs));
    }
    return ib.b.create<tensor::ExtractOp>(ib.l, x, src).getResult();
  })};
}

Results lowerTrilu(OpBuilder &b, Operation *op) {
  Value x = op->getOperand(0);
  Value kV = op->getNumOperands() > 1 && !isNone(op->getOperand(1)) ? op->getOperand(1) : Value();
  bool upper = getIntAttr(op, "upper", 1) != 0;
  auto xt = typeOf(x);
  int64_t r = xt.getRank();
  return SmallVector<Value>{indexGeneric(
      b, op->getLoc(), resultType(op),
      [&](IB &ib, ArrayRef<Value> i) {
        Value k = kV ? ib.index(ib.b.create<tensor::ExtractOp>(ib.l, kV, ValueRange{})) : ib.c(0);
        Value diff = ib.sub(i[r - 1], i[r - 2]); // j - i
        Value keep = upper ? ib.b.create<arith::CmpIOp>(ib.l, arith::CmpIPredicate::sge, diff, k)
                           : ib.b.create<arith::CmpIOp>(ib.l, arith::CmpIPredicate::sle, diff, k);
        Value v = ib.b.create<tensor::ExtractOp>(ib.l, x, i);
        return ib.sel(keep, v, zeroOf(ib.b, ib.l, xt.getElementType()));
      },
      dynamicSizesLike(b, op->getLoc(), resultType(op), x))};
}

Results lowerEyeLike(OpBuilder &b, Operation *op) {
  int64_t k = getIntAttr(op, "k", 0);
  Type elt = resultType(op).getElementType();
  return SmallVector<Value>{indexGeneric(b, op->getLoc(), resultType(op),
                                         [&](IB &ib, ArrayRef<Value> i) {
    Value on = ib.eq(ib.sub(i[1], i[0]), ib.c(k));
    return ib.sel(on, scalarConst(ib.b, ib.l, elt, 1.0), zeroOf(ib.b, ib.l, elt));
  })};
}

/// Checks at run time that Range's scalars give the compiled length.
void checkRangeLength(OpBuilder &b, Operation *op) {
  Location l = op->getLoc();
  Type f64 = b.getF64Type();
  auto scalar = [&](unsigned i) {
    Value v = b.create<tensor::ExtractOp>(l, op->getOperand(i), ValueRange{});
    return castScalar(b, l, v, f64);
  };
  Value s = scalar(0), lim = scalar(1), d = scalar(2);
  Value n = b.create<math::CeilOp>(l, b.create<arith::DivFOp>(
                                          l, b.create<arith::SubFOp>(l, lim, s), d));
  n = b.create<arith::MaximumFOp>(l, n, cst(b, l, f64, 0.0));
  int64_t want = resultType(op).getDimSize(0);
  Value ok = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, n, cst(b, l, f64, want));
  b.create<CheckOp>(l, ok,
                    describeNode(op) + ": start, limit and delta (computed at run time) give a "
                                       "length other than the compiled " + std::to_string(want));
}

Results lowerRange(OpBuilder &b, Operation *op) {
  Value s = op->getOperand(0), d = op->getOperand(2);
  Type elt = resultType(op).getElementType();
  if (!llvm::all_of(op->getOperands(), [](Value v) { return getConstantDoubles(v).has_value(); }))
    checkRangeLength(b, op);
  return SmallVector<Value>{indexGeneric(b, op->getLoc(), resultType(op),
                                         [&](IB &ib, ArrayRef<Value> i) -> Value {
    Value sv = ib.b.create<tensor::ExtractOp>(ib.l, s, ValueRange{});
    Value dv = ib.b.create<tensor::ExtractOp>(ib.l, d, ValueRange{});
    Value n = ib.b.create<arith::IndexCastOp>(ib.l, ib.b.getI64Type(), i[0]);
    if (isFloat(elt)) {
      n = ib.b.create<arith::SIToFPOp>(ib.l, elt, n);
      return ib.b.create<arith::AddFOp>(ib.l, sv, ib.b.create<arith::MulFOp>(ib.l, n, dv));
    }
    if (elt != n.getType())
      n = ib.b.create<arith::TruncIOp>(ib.l, elt, n);
    return ib.b.create<arith::AddIOp>(ib.l, sv, ib.b.create<arith::MulIOp>(ib.l, n, dv));
  })};
}

Results lowerConstantOfShape(OpBuilder &b, Operation *op) {
  auto out = resultType(op);
  Attribute v;
  if (auto a = op->getAttrOfType<DenseElementsAttr>("value"))
    v = a.getSplatValue<Attribute>();
  else
    v = b.getFloatAttr(out.getElementType(), 0.0);
  return SmallVector<Value>{
      constantTensor(b, op->getLoc(), DenseElementsAttr::get(out, v))};
}

Results lowerSize(OpBuilder &b, Operation *op) {
  auto out = resultType(op);
  return SmallVector<Value>{b.create<arith::ConstantOp>(
      op->getLoc(), DenseElementsAttr::get(out, ArrayRef<int64_t>{typeOf(op->getOperand(0)).getNumElements()}))};
}

} // namespace

void registerDataMovementOps(LoweringTable &m) {
  for (const char *k : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"})
    m[k] = {lowerReshapeLike, false};
  m["Transpose"] = {lowerTranspose, false};
  m["Concat"] = {lowerConcat, false};
  // Gather, GatherElements, GatherND, Scatter* and OneHot lower in
  // GatherScatterOps.cpp (index checks).
  m["Constant"] = {lowerConstant, false};
  m["Shape"] = {lowerShape, false};
  m["Identity"] = {forward, false};
  // Optional* and Sequence* lower in SequenceOps.cpp.
  // Dropout lowers in DropoutOps.cpp (mask output, training mode).
  m["Slice"] = {lowerSlice, false};
  m["Split"] = {lowerSplit, false};
  m["Expand"] = {lowerExpand, false};
  m["Tile"] = {lowerTile, false};
  m["Pad"] = {lowerPad, false};
  m["CenterCropPad"] = {lowerCenterCropPad, false};
  m["ReverseSequence"] = {lowerReverseSequence, false};
  // (position_ids are int64.)
  m["RotaryEmbedding"] = {lowerRotaryEmbedding, false, requireFloatInput};
  m["DepthToSpace"] = {[](OpBuilder &b, Operation *op) { return lowerDepthSpace(b, op, true); }, false};
  m["SpaceToDepth"] = {
      [](OpBuilder &b, Operation *op) { return lowerDepthSpace(b, op, false); },
      false};
  m["Trilu"] = {lowerTrilu, false};
  m["EyeLike"] = {lowerEyeLike, false};
  m["Range"] = {lowerRange, false};
  m["ConstantOfShape"] = {lowerConstantOfShape, false};
  m["Size"] = {lowerSize, false};
}

} // namespace kiln::cpu
