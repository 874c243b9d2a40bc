//===- RuntimeSizeOps.cpp - onnx ops on tensors with run-time sizes -------===//
//
// A model compiled with symbolic dimensions (kiln compile on a model whose
// inputs keep `dim_param`s) has tensors of type tensor<?x...>. The ops
// listed here lower for such tensors: their sizes are tensor.dim values of
// the operands, computed shapes are read at run time, and every equality
// the op needs and the types cannot prove is a kiln.check. Elementwise
// ops, Softmax, reductions over static dims and the contractions use their
// ordinary lowerings, whose builders size dynamic results from their
// inputs (LinalgBuilders.cpp); the ops below need their own.
//
//===----------------------------------------------------------------------===//

#include "providers/cpu/Lowering.h"
#include "dialects/kiln/KilnDialect.h"
#include "dialects/onnx/OnnxOps.h"

#include "providers/cpu/IndexGeneric.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace kiln::onnx;

namespace kiln::cpu {
namespace {

Value toIndex(OpBuilder &b, Location l, Value v) {
  return b.create<arith::IndexCastOp>(l, b.getIndexType(), v);
}

Value toI64(OpBuilder &b, Location l, Value v) {
  return b.create<arith::IndexCastOp>(l, b.getI64Type(), v);
}

Value product(OpBuilder &b, Location l, ArrayRef<Value> sizes) {
  Value p = b.create<arith::ConstantIndexOp>(l, 1);
  for (Value s : sizes)
    p = b.create<arith::MulIOp>(l, p, s);
  return p;
}

void check(OpBuilder &b, Location l, Value ok, Operation *op, const Twine &what) {
  b.create<CheckOp>(l, ok, (describeNode(op) + ": " + what).str(), /*fatal=*/true);
}

Value eq(OpBuilder &b, Location l, Value x, Value y) {
  return b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, x, y);
}

/// `x` reshaped (row-major) to `outType` whose dims are `dims` (index
/// values, one per dim); the element counts must agree (a run-time check).
Value reshapeToSizes(OpBuilder &b, Location l, Value x, RankedTensorType outType,
                     ArrayRef<Value> dims, Operation *op) {
  auto xt = typeOf(x);
  SmallVector<Value> inSizes;
  for (int64_t i = 0; i < xt.getRank(); ++i)
    inSizes.push_back(dimSize(b, l, x, i));
  check(b, l, eq(b, l, product(b, l, inSizes), product(b, l, dims)), op,
        "the computed shape does not hold the input's elements at run time");
  SmallVector<Value> shape;
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (!outType.isDynamicDim(i))
      check(b, l, eq(b, l, d, b.create<arith::ConstantIndexOp>(l, outType.getDimSize(i))), op,
            "dimension " + Twine(i) + " of the result is not the compiled " +
                Twine(outType.getDimSize(i)) + " at run time");
    shape.push_back(toI64(b, l, d));
  }
  auto shapeType = RankedTensorType::get({outType.getRank()}, b.getI64Type());
  Value shapeTensor = b.create<tensor::FromElementsOp>(l, shapeType, shape);
  return b.create<tensor::ReshapeOp>(l, outType, x, shapeTensor);
}

/// Reshape with a shape read at run time (or a constant one with 0 or -1
/// against dynamic input dims): 0 copies the input's dim (unless
/// allowzero), -1 takes what the others leave.
Results lowerReshape(OpBuilder &b, Operation *op) {
  Location l = op->getLoc();
  Value x = op->getOperand(0), shape = op->getOperand(1);
  auto xt = typeOf(x), out = resultType(op);
  bool allowZero = getIntAttr(op, "allowzero", 0) != 0;
  int64_t rank = out.getRank();
  SmallVector<Value> inSizes;
  for (int64_t i = 0; i < xt.getRank(); ++i)
    inSizes.push_back(dimSize(b, l, x, i));
  Value total = product(b, l, inSizes);
  Value zero = b.create<arith::ConstantIndexOp>(l, 0), one = b.create<arith::ConstantIndexOp>(l, 1);
  Value minusOne = b.create<arith::ConstantIndexOp>(l, -1);
  SmallVector<Value> dims;
  auto known = getConstantInts(shape);
  for (int64_t i = 0; i < rank; ++i) {
    Value s;
    if (known) {
      s = b.create<arith::ConstantIndexOp>(l, (*known)[i]);
    } else {
      Value idx = b.create<arith::ConstantIndexOp>(l, i);
      s = toIndex(b, l, b.create<tensor::ExtractOp>(l, shape, ValueRange{idx}));
    }
    if (!allowZero && i < xt.getRank())
      s = b.create<arith::SelectOp>(l, eq(b, l, s, zero), inSizes[i], s);
    dims.push_back(s);
  }
  // The product of the dims other than -1 gives the -1 dim.
  Value rest = one;
  for (Value d : dims)
    rest = b.create<arith::MulIOp>(l, rest,
                                   b.create<arith::SelectOp>(l, eq(b, l, d, minusOne), one, d));
  Value safeRest = b.create<arith::SelectOp>(l, eq(b, l, rest, zero), one, rest);
  Value inferred = b.create<arith::DivUIOp>(l, total, safeRest);
  for (Value &d : dims) {
    d = b.create<arith::SelectOp>(l, eq(b, l, d, minusOne), inferred, d);
    check(b, l, b.create<arith::CmpIOp>(l, arith::CmpIPredicate::sge, d, zero), op,
          "the shape input has a negative dimension other than one -1");
  }
  return SmallVector<Value>{reshapeToSizes(b, l, x, out, dims, op)};
}

/// Flatten to [prod(dims < axis), prod(dims >= axis)].
Results lowerFlatten(OpBuilder &b, Operation *op) {
  Location l = op->getLoc();
  Value x = op->getOperand(0);
  auto xt = typeOf(x);
  int64_t axis = getIntAttr(op, "axis", 1);
  if (axis < 0)
    axis += xt.getRank();
  SmallVector<Value> lead, tail;
  for (int64_t i = 0; i < xt.getRank(); ++i)
    (i < axis ? lead : tail).push_back(dimSize(b, l, x, i));
  SmallVector<Value> dims = {product(b, l, lead), product(b, l, tail)};
  return SmallVector<Value>{reshapeToSizes(b, l, x, resultType(op), dims, op)};
}

/// The dims of the input as an int64 tensor, computed at run time.
Results lowerShape(OpBuilder &b, Operation *op) {
  Location l = op->getLoc();
  Value x = op->getOperand(0);
  auto xt = typeOf(x);
  auto out = resultType(op);
  int64_t r = xt.getRank();
  int64_t start = getIntAttr(op, "start", 0);
  if (start < 0)
    start += r;
  start = std::clamp<int64_t>(start, 0, r);
  SmallVector<Value> dims;
  for (int64_t i = start; i < start + out.getDimSize(0); ++i)
    dims.push_back(toI64(b, l, dimSize(b, l, x, i)));
  return SmallVector<Value>{b.create<tensor::FromElementsOp>(l, out, dims)};
}

Results lowerTranspose(OpBuilder &b, Operation *op) {
  Location l = op->getLoc();
  Value x = op->getOperand(0);
  auto xt = typeOf(x);
  SmallVector<int64_t> perm = getIntsAttr(op, "perm");
  if (perm.empty())
    for (int64_t i = xt.getRank() - 1; i >= 0; --i)
      perm.push_back(i);
  if (llvm::equal(perm, llvm::seq<int64_t>(0, xt.getRank())))
    return SmallVector<Value>{x};
  auto out = resultType(op);
  SmallVector<Value> sizes;
  for (int64_t i = 0; i < out.getRank(); ++i)
    if (out.isDynamicDim(i))
      sizes.push_back(dimSize(b, l, x, perm[i]));
  Value init = emptyTensor(b, l, out, sizes);
  return SmallVector<Value>{b.create<linalg::TransposeOp>(l, x, init, perm)->getResult(0)};
}

/// Concatenation at run-time offsets; the other dims must agree.
Results lowerConcat(OpBuilder &b, Operation *op) {
  Location l = op->getLoc();
  auto out = resultType(op);
  int64_t axis = getIntAttr(op, "axis", 0);
  if (axis < 0)
    axis += out.getRank();
  SmallVector<Value> ins(op->getOperands());
  Value first = ins.front();
  Value length = b.create<arith::ConstantIndexOp>(l, 0);
  for (Value in : ins)
    length = b.create<arith::AddIOp>(l, length, dimSize(b, l, in, axis));
  SmallVector<Value> sizes;
  for (int64_t i = 0; i < out.getRank(); ++i)
    if (out.isDynamicDim(i))
      sizes.push_back(i == axis ? length : dimSize(b, l, first, i));
  Value acc = emptyTensor(b, l, out, sizes);
  Value offset = b.create<arith::ConstantIndexOp>(l, 0);
  for (Value in : ins) {
    SmallVector<OpFoldResult> offs, inSizes, strides;
    for (int64_t i = 0; i < out.getRank(); ++i) {
      Value size = dimSize(b, l, in, i);
      if (i != axis && (typeOf(in).isDynamicDim(i) || out.isDynamicDim(i)))
        check(b, l, eq(b, l, size, dimSize(b, l, acc, i)), op,
              "the inputs differ in dimension " + Twine(i) + " at run time");
      offs.push_back(i == axis ? OpFoldResult(offset) : b.getIndexAttr(0));
      inSizes.push_back(typeOf(in).isDynamicDim(i) ? OpFoldResult(size)
                                                   : b.getIndexAttr(typeOf(in).getDimSize(i)));
      strides.push_back(b.getIndexAttr(1));
    }
    acc = b.create<tensor::InsertSliceOp>(l, in, acc, offs, inSizes, strides);
    offset = b.create<arith::AddIOp>(l, offset, dimSize(b, l, in, axis));
  }
  return SmallVector<Value>{acc};
}

/// MatMul of [..., M, K] by a 2-D [K, N] (a layer's weights): one GEMM
/// over all rows (batch x sequence), whose run-time M
/// kiln-cpu-vectorize-contractions splits into blocks of static size.
Results lowerMatMul(OpBuilder &b, Operation *op, const LowerFn &matmul) {
  Location l = op->getLoc();
  Value a = op->getOperand(0), w = op->getOperand(1);
  auto at = typeOf(a), wt = typeOf(w), out = resultType(op);
  if (at.getRank() < 3 || wt.getRank() != 2 || out.getRank() != at.getRank())
    return matmul(b, op);
  int64_t r = at.getRank();
  ReassociationIndices lead;
  for (int64_t i = 0; i < r - 1; ++i)
    lead.push_back(i);
  SmallVector<ReassociationIndices> groups = {lead, {r - 1}};
  Value rows = b.create<tensor::CollapseShapeOp>(l, a, groups);
  auto flatOut = RankedTensorType::get({ShapedType::kDynamic, out.getDimSize(r - 1)},
                                       out.getElementType());
  // The same op on the collapsed rows (its attributes: bias, activation).
  OperationState state(l, op->getName(), ValueRange{rows, w}, TypeRange{flatOut},
                       op->getAttrs());
  Operation *flat = b.create(state);
  Results res = matmul(b, flat);
  flat->erase();
  if (failed(res))
    return failure();
  // (tensor.reshape: MLIR 19 cannot bufferize an expand_shape of run-time
  // size.)
  SmallVector<Value> shape;
  for (int64_t i = 0; i < r - 1; ++i)
    shape.push_back(toI64(b, l, dimSize(b, l, a, i)));
  shape.push_back(b.create<arith::ConstantIntOp>(l, out.getDimSize(r - 1), 64));
  auto shapeType = RankedTensorType::get({r}, b.getI64Type());
  Value shapeTensor = b.create<tensor::FromElementsOp>(l, shapeType, shape);
  return SmallVector<Value>{b.create<tensor::ReshapeOp>(l, out, (*res)[0], shapeTensor)};
}

/// Element `i` of a 1-D int tensor (or the scalar) as an index value.
Value elementAt(OpBuilder &b, Location l, Value t, int64_t i) {
  if (auto c = getConstantInts(t))
    return b.create<arith::ConstantIndexOp>(l, (*c)[typeOf(t).getRank() == 0 ? 0 : i]);
  SmallVector<Value> idx;
  if (typeOf(t).getRank() == 1)
    idx.push_back(b.create<arith::ConstantIndexOp>(l, i));
  return toIndex(b, l, b.create<tensor::ExtractOp>(l, t, idx));
}

Value selectLess(OpBuilder &b, Location l, Value x, Value y) {
  return b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, x, y);
}

Value clampIndex(OpBuilder &b, Location l, Value v, Value lo, Value hi) {
  return b.create<arith::MinSIOp>(l, b.create<arith::MaxSIOp>(l, v, lo), hi);
}

/// Range with run-time start/limit/delta: max(ceil((limit - start) /
/// delta), 0) elements.
/// CumSum/CumProd along an axis of run-time length: each element folds
/// its prefix (or suffix, with reverse) in a loop, O(n^2) along the axis,
/// which suits the short scans models have (position ids from a mask).
Results lowerScanRuntime(OpBuilder &b, Operation *op, bool product) {
  Location l = op->getLoc();
  Value x = op->getOperand(0);
  auto xt = typeOf(x);
  int64_t axis = (*getConstantInts(op->getOperand(1)))[0];
  if (axis < 0)
    axis += xt.getRank();
  bool exclusive = getIntAttr(op, "exclusive", 0) != 0;
  bool reverse = getIntAttr(op, "reverse", 0) != 0;
  Type elt = xt.getElementType();
  Value n = dimSize(b, l, x, axis);
  auto out = resultType(op);
  return SmallVector<Value>{indexGeneric(
      b, l, out,
      [&](IB &ib, ArrayRef<Value> i) -> Value {
        Value at = i[axis];
        // [lo, hi) of the folded indices.
        Value lo = reverse ? (exclusive ? ib.add(at, 1) : at) : ib.c(0);
        Value hi = reverse ? n : (exclusive ? at : ib.add(at, 1));
        Value init = scalarConst(ib.b, ib.l, elt, product ? 1.0 : 0.0);
        auto loop = ib.b.create<scf::ForOp>(
            ib.l, lo, hi, ib.c(1), ValueRange{init},
            [&](OpBuilder &nb, Location nl, Value k, ValueRange acc) {
              SmallVector<Value> src(i.begin(), i.end());
              src[axis] = k;
              Value v = nb.create<tensor::ExtractOp>(nl, x, src);
              Value r = isFloat(elt) ? (product ? (Value)nb.create<arith::MulFOp>(nl, acc[0], v)
                                                : (Value)nb.create<arith::AddFOp>(nl, acc[0], v))
                                     : (product ? (Value)nb.create<arith::MulIOp>(nl, acc[0], v)
                                                : (Value)nb.create<arith::AddIOp>(nl, acc[0], v));
              nb.create<scf::YieldOp>(nl, r);
            });
        return loop.getResult(0);
      },
      dynamicSizesLike(b, l, out, x))};
}

Results lowerRange(OpBuilder &b, Operation *op) {
  Location l = op->getLoc();
  auto out = resultType(op);
  Type elt = out.getElementType();
  Value s = b.create<tensor::ExtractOp>(l, op->getOperand(0), ValueRange{});
  Value limit = b.create<tensor::ExtractOp>(l, op->getOperand(1), ValueRange{});
  Value d = b.create<tensor::ExtractOp>(l, op->getOperand(2), ValueRange{});
  Value n;
  if (isFloat(elt)) {
    Value q = b.create<arith::DivFOp>(l, b.create<arith::SubFOp>(l, limit, s), d);
    q = b.create<math::CeilOp>(l, q);
    q = b.create<arith::MaximumFOp>(l, q, cst(b, l, elt, 0.0));
    n = b.create<arith::FPToSIOp>(l, b.getI64Type(), q);
  } else {
    Value diff = b.create<arith::SubIOp>(l, limit, s);
    check(b, l, b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne, d, cst(b, l, elt, 0)), op,
          "delta is 0");
    n = ceilDivSigned(b, l, diff, d);
    n = b.create<arith::MaxSIOp>(l, n, cst(b, l, elt, 0));
    if (!elt.isInteger(64))
      n = b.create<arith::ExtSIOp>(l, b.getI64Type(), n);
  }
  Value count = toIndex(b, l, n);
  Value init = emptyTensor(b, l, out, ValueRange{count});
  MLIRContext *ctx = b.getContext();
  auto g = b.create<linalg::GenericOp>(
      l, TypeRange{out}, ValueRange{}, ValueRange{init},
      ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(1, ctx)},
      ArrayRef<utils::IteratorType>{utils::IteratorType::parallel},
      [&](OpBuilder &nb, Location nl, ValueRange) {
        Value i = nb.create<arith::IndexCastOp>(nl, nb.getI64Type(),
                                                nb.create<linalg::IndexOp>(nl, 0));
        Value v;
        if (isFloat(elt)) {
          v = nb.create<arith::AddFOp>(
              nl, s, nb.create<arith::MulFOp>(nl, nb.create<arith::SIToFPOp>(nl, elt, i), d));
        } else {
          if (!elt.isInteger(64))
            i = nb.create<arith::TruncIOp>(nl, elt, i);
          v = nb.create<arith::AddIOp>(nl, s, nb.create<arith::MulIOp>(nl, i, d));
        }
        nb.create<linalg::YieldOp>(nl, v);
      });
  return SmallVector<Value>{g.getResult(0)};
}

/// Slice with run-time starts/ends (constant axes, positive steps): the
/// ONNX clamping at run time, then an extract_slice.
Results lowerSlice(OpBuilder &b, Operation *op) {
  Location l = op->getLoc();
  Value x = op->getOperand(0);
  auto xt = typeOf(x);
  int64_t rank = xt.getRank();
  Value starts = op->getOperand(1), ends = op->getOperand(2);
  int64_t n = typeOf(starts).getDimSize(0);
  SmallVector<int64_t> axes;
  if (op->getNumOperands() > 3 && !isNone(op->getOperand(3)))
    axes = *getConstantInts(op->getOperand(3));
  else
    for (int64_t i = 0; i < n; ++i)
      axes.push_back(i);
  SmallVector<int64_t> steps(n, 1);
  if (op->getNumOperands() > 4 && !isNone(op->getOperand(4)))
    steps = *getConstantInts(op->getOperand(4));
  SmallVector<OpFoldResult> offs, sizes, strides;
  for (int64_t d = 0; d < rank; ++d) {
    offs.push_back(b.getIndexAttr(0));
    sizes.push_back(xt.isDynamicDim(d) ? OpFoldResult(dimSize(b, l, x, d))
                                       : b.getIndexAttr(xt.getDimSize(d)));
    strides.push_back(b.getIndexAttr(1));
  }
  Value zero = b.create<arith::ConstantIndexOp>(l, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    Value dim = dimSize(b, l, x, a);
    auto norm = [&](Value v) {
      Value neg = selectLess(b, l, v, zero);
      v = b.create<arith::SelectOp>(l, neg, b.create<arith::AddIOp>(l, v, dim), v);
      return clampIndex(b, l, v, zero, dim);
    };
    // Huge int64 ends (INT64_MAX) stay huge as indices: clamping handles them.
    Value st = norm(elementAt(b, l, starts, i)), en = norm(elementAt(b, l, ends, i));
    Value step = b.create<arith::ConstantIndexOp>(l, steps[i]);
    Value len = b.create<arith::MaxSIOp>(
        l, ceilDivSigned(b, l, b.create<arith::SubIOp>(l, en, st), step), zero);
    offs[a] = st;
    sizes[a] = len;
    strides[a] = b.getIndexAttr(steps[i]);
  }
  // A size the result type has static (kiln-symbolic-shapes proved it) is
  // static in the slice too, and checked against the computed one.
  auto out = resultType(op);
  for (int64_t d = 0; d < rank; ++d)
    if (auto v = dyn_cast<Value>(sizes[d]); v && !out.isDynamicDim(d)) {
      check(b, l, eq(b, l, v, b.create<arith::ConstantIndexOp>(l, out.getDimSize(d))), op,
            "dimension " + Twine(d) + " of the slice is not the compiled " +
                Twine(out.getDimSize(d)) + " at run time");
      sizes[d] = b.getIndexAttr(out.getDimSize(d));
    }
  Value r = b.create<tensor::ExtractSliceOp>(l, out, x, offs, sizes, strides);
  return SmallVector<Value>{r};
}

bool sliceStepsPositive(Operation *op, std::string &why) {
  bool axesOk = op->getNumOperands() <= 3 || isNone(op->getOperand(3)) ||
                getConstantInts(op->getOperand(3));
  std::optional<SmallVector<int64_t>> steps;
  if (op->getNumOperands() > 4 && !isNone(op->getOperand(4)))
    steps = getConstantInts(op->getOperand(4));
  bool stepsOk = op->getNumOperands() <= 4 || isNone(op->getOperand(4)) ||
                 (steps && llvm::all_of(*steps, [](int64_t s) { return s > 0; }));
  if (axesOk && stepsOk && typeOf(op->getOperand(1)).hasStaticShape())
    return true;
  why = "with run-time sizes, needs constant axes and positive constant steps";
  return false;
}

/// The result dims of Expand/ConstantOfShape from a run-time shape input
/// (index values, one per result dim).
SmallVector<Value> shapeValues(OpBuilder &b, Location l, Value shape, int64_t rank) {
  SmallVector<Value> dims;
  for (int64_t i = 0; i < rank; ++i)
    dims.push_back(elementAt(b, l, shape, i));
  return dims;
}

/// Expand: numpy broadcast of x against a run-time shape.
Results lowerExpand(OpBuilder &b, Operation *op) {
  Location l = op->getLoc();
  Value x = op->getOperand(0);
  auto xt = typeOf(x), out = resultType(op);
  int64_t rank = out.getRank();
  SmallVector<Value> shape = shapeValues(b, l, op->getOperand(1), typeOf(op->getOperand(1)).getDimSize(0));
  // Align the shape input (it may be shorter than x's rank).
  SmallVector<Value> dims(rank);
  int64_t shapeOffset = rank - static_cast<int64_t>(shape.size());
  int64_t xOffset = rank - xt.getRank();
  Value one = b.create<arith::ConstantIndexOp>(l, 1);
  for (int64_t d = 0; d < rank; ++d) {
    Value s = d >= shapeOffset ? shape[d - shapeOffset] : one;
    Value xd = d >= xOffset ? dimSize(b, l, x, d - xOffset) : one;
    // The larger of the two where one is 1.
    dims[d] = b.create<arith::SelectOp>(l, eq(b, l, s, one), xd, s);
    if (d >= xOffset && xt.isDynamicDim(d - xOffset))
      check(b, l, b.create<arith::OrIOp>(l, eq(b, l, xd, dims[d]), eq(b, l, s, one)), op,
            "a run-time size of 1 would broadcast (kiln broadcasts only dimensions that "
            "are 1 at compile time)");
    else if (d >= xOffset && xt.getDimSize(d - xOffset) != 1)
      check(b, l, b.create<arith::OrIOp>(l, eq(b, l, s, xd), eq(b, l, s, one)), op,
            "the shape does not broadcast with the input");
  }
  SmallVector<Value> dyn;
  for (int64_t d = 0; d < rank; ++d)
    if (out.isDynamicDim(d))
      dyn.push_back(dims[d]);
    else
      check(b, l, eq(b, l, dims[d], b.create<arith::ConstantIndexOp>(l, out.getDimSize(d))), op,
            "dimension " + Twine(d) + " of the result is not the compiled " +
                Twine(out.getDimSize(d)) + " at run time");
  AffineMap map = broadcastMap(b.getContext(), out.getShape(), xt);
  return SmallVector<Value>{mapped(b, l, out, ValueRange{x}, {map},
                                   [](OpBuilder &, Location, ValueRange a) { return a[0]; },
                                   dyn)};
}

Results lowerConstantOfShape(OpBuilder &b, Operation *op) {
  Location l = op->getLoc();
  auto out = resultType(op);
  SmallVector<Value> dims = shapeValues(b, l, op->getOperand(0), out.getRank());
  SmallVector<Value> dyn;
  for (int64_t d = 0; d < out.getRank(); ++d)
    if (out.isDynamicDim(d))
      dyn.push_back(dims[d]);
  TypedAttr v = b.getZeroAttr(out.getElementType());
  if (auto a = op->getAttrOfType<DenseElementsAttr>("value"))
    v = cast<TypedAttr>(a.getSplatValue<Attribute>());
  Value c = b.create<arith::ConstantOp>(l, v);
  return SmallVector<Value>{
      b.create<linalg::FillOp>(l, c, emptyTensor(b, l, out, dyn)).getResult(0)};
}

/// Split along a static axis; the other dims keep their run-time sizes.
Results lowerSplit(OpBuilder &b, Operation *op) {
  Location l = op->getLoc();
  Value x = op->getOperand(0);
  auto xt = typeOf(x);
  int64_t axis = getIntAttr(op, "axis", 0);
  if (axis < 0)
    axis += xt.getRank();
  SmallVector<int64_t> parts;
  if (failed(resolveSplit(op, xt.getDimSize(axis), parts)))
    return emitNodeError(op) << "cannot resolve the split sizes", failure();
  SmallVector<Value> results;
  int64_t offset = 0;
  for (auto [i, partSize] : llvm::enumerate(parts)) {
    SmallVector<OpFoldResult> offs, sizes, strides;
    for (int64_t d = 0; d < xt.getRank(); ++d) {
      offs.push_back(b.getIndexAttr(d == axis ? offset : 0));
      sizes.push_back(d == axis ? b.getIndexAttr(partSize)
                    : xt.isDynamicDim(d) ? OpFoldResult(dimSize(b, l, x, d))
                                         : b.getIndexAttr(xt.getDimSize(d)));
      strides.push_back(b.getIndexAttr(1));
    }
    // The slice knows the static dims; the result type may know fewer.
    Value part = b.create<tensor::ExtractSliceOp>(l, x, offs, sizes, strides);
    if (part.getType() != resultType(op, i))
      part = b.create<tensor::CastOp>(l, resultType(op, i), part);
    results.push_back(part);
    offset += partSize;
  }
  return results;
}

bool staticSplitAxis(Operation *op, std::string &why) {
  auto xt = typeOf(op->getOperand(0));
  int64_t axis = getIntAttr(op, "axis", 0);
  if (axis < 0)
    axis += xt.getRank();
  SmallVector<int64_t> parts;
  if (axis >= 0 && axis < xt.getRank() && !xt.isDynamicDim(axis) &&
      succeeded(resolveSplit(op, xt.getDimSize(axis), parts)))
    return true;
  why = "with run-time sizes, needs a static split axis and constant split sizes";
  return false;
}

bool anyCheck(Operation *, std::string &) { return true; }

bool constantReduceAxes(Operation *op, std::string &why) {
  if (op->getNumOperands() < 2 || isNone(op->getOperand(1)) ||
      getConstantInts(op->getOperand(1)))
    return true;
  why = "with run-time sizes, needs constant axes";
  return false;
}

/// Conv and MaxPool with run-time spatial sizes: explicit pads (or VALID),
/// floor mode, no MaxPool indices.
bool windowsWithRuntimeSizes(Operation *op, std::string &why) {
  auto xt = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  StringRef pad = getStrAttr(op, "auto_pad", "NOTSET");
  bool spatialStatic = true;
  for (int64_t i = 2; xt && i < xt.getRank(); ++i)
    spatialStatic &= !xt.isDynamicDim(i);
  bool ok = xt && xt.getRank() >= 3 &&
            (spatialStatic || pad == "NOTSET" || pad == "VALID" || pad == "SAME_UPPER" ||
             pad == "SAME_LOWER") &&
            (spatialStatic || getIntAttr(op, "ceil_mode", 0) == 0 ||
             ceilModeIsPlainCeil(op, getIntsAttr(op, "kernel_shape"))) &&
            (op->getNumResults() < 2 || op->getResult(1).use_empty()) &&
            (!isa<onnx::ConvOp>(op) || typeOf(op->getOperand(1)).hasStaticShape());
  if (ok)
    return true;
  why = "with run-time sizes, needs ceil_mode 0 (or a kernel that covers a stride and the end "
        "pad), a static weight and no MaxPool indices";
  return false;
}

/// A ConvTranspose needs a static weight and, over spatial dims of run-time
/// size, pads that do not depend on them (no output_shape, auto_pad NOTSET
/// or VALID).
bool convTransposeWithRuntimeSizes(Operation *op, std::string &why) {
  auto xt = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto wt = dyn_cast<RankedTensorType>(op->getOperand(1).getType());
  bool spatialStatic = true;
  for (int64_t i = 2; xt && i < xt.getRank(); ++i)
    spatialStatic &= !xt.isDynamicDim(i);
  StringRef pad = getStrAttr(op, "auto_pad", "NOTSET");
  if (xt && wt && wt.hasStaticShape() &&
      (spatialStatic ||
       ((pad == "NOTSET" || pad == "VALID") && getIntsAttr(op, "output_shape").empty())))
    return true;
  why = "with run-time sizes, needs explicit pads (no output_shape or SAME auto_pad) and a "
        "static weight";
  return false;
}

} // namespace

void registerRuntimeSizeOps(LoweringTable &m) {
  // Lowerings that take run-time sizes as they are.
  for (auto &entry : m)
    if (entry.second.elementwise)
      entry.second.dynamic = {entry.second.lower, anyCheck};
  for (const char *k : {"Gemm", "Softmax", "LogSoftmax", "Identity", "Cast", "CastLike"})
    m[k].dynamic = {m[k].lower, anyCheck};
  m["MatMul"].dynamic = {[matmul = m["MatMul"].lower](OpBuilder &b, Operation *op) {
                           return lowerMatMul(b, op, matmul);
                         },
                         anyCheck};
  m["MatMulInteger"].dynamic = {
      [mmi = m["MatMulInteger"].lower](OpBuilder &b, Operation *op) {
        return lowerMatMul(b, op, mmi);
      },
      anyCheck};
  // (Normalizations count the normalized elements at run time.)
  for (const char *k : {"LayerNormalization", "RMSNormalization"})
    m[k].dynamic = {m[k].lower, anyCheck};
  // Reductions count the reduced elements at run time (NormalizationOps.cpp).
  for (const char *k : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                        "ReduceSumSquare", "ReduceL1", "ReduceL2"})
    m[k].dynamic = {m[k].lower, constantReduceAxes};
  // Squeeze/Unsqueeze only add or drop dims of size 1, which reshapeTo
  // handles with run-time sizes.
  for (const char *k : {"Squeeze", "Unsqueeze"})
    m[k].dynamic = {m[k].lower, anyCheck};
  m["Gather"].dynamic = {m["Gather"].lower, anyCheck};
  m["Reshape"].dynamic = {lowerReshape, anyCheck};
  m["Flatten"].dynamic = {lowerFlatten, anyCheck};
  m["Shape"].dynamic = {lowerShape, anyCheck};
  m["Transpose"].dynamic = {lowerTranspose, anyCheck};
  m["Concat"].dynamic = {lowerConcat, anyCheck};
  m["Range"].dynamic = {lowerRange, anyCheck};
  // CNNs: windows sized at run time (WindowOps.cpp windowOutputSizes).
  for (const char *k : {"Conv", "MaxPool", "AveragePool"})
    m[k].dynamic = {m[k].lower, windowsWithRuntimeSizes};
  m["ConvTranspose"].dynamic = {m["ConvTranspose"].lower, convTransposeWithRuntimeSizes};
  for (const char *k : {"GlobalAveragePool", "GlobalMaxPool"})
    m[k].dynamic = {m[k].lower, anyCheck};
  // Inference only: training statistics count the batch at compile time.
  m["BatchNormalization"].dynamic = {m["BatchNormalization"].lower,
                                     [](Operation *op, std::string &why) {
                                       if (!getIntAttr(op, "training_mode", 0))
                                         return true;
                                       why = "with run-time sizes, inference mode only";
                                       return false;
                                     }};
  m["Split"].dynamic = {lowerSplit, staticSplitAxis};
  m["CumSum"].dynamic = {[](OpBuilder &b, Operation *op) { return lowerScanRuntime(b, op, false); },
                         anyCheck};
  m["CumProd"].dynamic = {[](OpBuilder &b, Operation *op) { return lowerScanRuntime(b, op, true); },
                          anyCheck};
  // Results shaped like an operand, computed per index (DataMovementOps.cpp,
  // GatherScatterOps.cpp, NormalizationOps.cpp argExtreme).
  for (const char *k : {"Trilu", "GatherElements", "ArgMax", "ArgMin"})
    m[k].dynamic = {m[k].lower, anyCheck};
  // ScatterND/ScatterElements: loops over the updates' run-time sizes
  // (ScatterND with a static index tuple length).
  for (const char *k : {"ScatterND", "ScatterElements"})
    m[k].dynamic = {m[k].lower, [](Operation *op, std::string &why) {
                      auto it = dyn_cast<RankedTensorType>(op->getOperand(1).getType());
                      if (!isa<onnx::ScatterNDOp>(op) ||
                          (it && it.getRank() >= 1 && !it.isDynamicDim(it.getRank() - 1)))
                        return true;
                      why = "with run-time sizes, needs the index tuples' length static";
                      return false;
                    }};
  // Tile: the result's run-time sizes are the input's times the repeats
  // (a result dim the types give statically comes from the shape function).
  m["Tile"].dynamic = {m["Tile"].lower, [](Operation *op, std::string &why) {
                         auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
                         auto xt = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
                         for (int64_t d = 0; out && xt && d < out.getRank(); ++d)
                           if (!out.isDynamicDim(d) && xt.isDynamicDim(d)) {
                             why = "with run-time sizes, a static result dim needs a static "
                                   "input dim";
                             return false;
                           }
                         if (out && xt)
                           return true;
                         why = "with run-time sizes, needs ranked tensors";
                         return false;
                       }};
  // TopK with a constant k (the result's other dims are the input's).
  m["TopK"].dynamic = {m["TopK"].lower, [](Operation *op, std::string &why) {
                         auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
                         int64_t axis = getIntAttr(op, "axis", -1);
                         if (out && axis < 0)
                           axis += out.getRank();
                         if (out && getConstantInts(op->getOperand(1)) && axis >= 0 &&
                             axis < out.getRank() && !out.isDynamicDim(axis))
                           return true;
                         why = "with run-time sizes, needs a constant k";
                         return false;
                       }};
  // Resize and Upsample: tables of run-time length from constant scales
  // or from sizes (ResizeOps.cpp).
  for (const char *k : {"Resize", "Upsample"})
    m[k].dynamic = {m[k].lower, anyCheck};
  // Pad by constant pads (any mode): index maps with the sizes read at run
  // time (DataMovementOps.cpp).
  m["Pad"].dynamic = {m["Pad"].lower, [](Operation *op, std::string &why) {
                        SmallVector<int64_t> low, high;
                        if (succeeded(resolvePads(op, typeOf(op->getOperand(0)).getRank(), low,
                                                  high)))
                          return true;
                        why = "with run-time sizes, needs constant pads and axes";
                        return false;
                      }};
  m["Slice"].dynamic = {lowerSlice, sliceStepsPositive};
  m["Expand"].dynamic = {lowerExpand, anyCheck};
  m["ConstantOfShape"].dynamic = {lowerConstantOfShape, anyCheck};
  // An If's branches may compute with other sizes than each other; the
  // results join to run-time sizes (ControlFlowOps.cpp casts them).
  m["If"].dynamic = {m["If"].lower, anyCheck};
  // A run-time Loop whose carried values keep their run-time sizes (each
  // iteration checks them; ControlFlowOps.cpp): the time steps of an LSTM
  // over a sequence of run-time length.
  m["Loop"].dynamic = {m["Loop"].lower, anyCheck};
  // A Dropout that passes its data through (inference).
  m["Dropout"].dynamic = {m["Dropout"].lower, [](Operation *op, std::string &why) {
                            if (isIdentityDropout(op) &&
                                (op->getNumResults() < 2 || op->getResult(1).use_empty()))
                              return true;
                            why = "with run-time sizes, only a Dropout that passes its data "
                                  "through (inference, no mask)";
                            return false;
                          }};
}

} // namespace kiln::cpu
