//===- DecomposeQuantization.cpp - quantization ops as onnx ops ----------===//
//
// Part of kiln-decompose-ops. QuantizeLinear, DequantizeLinear and
// DynamicQuantizeLinear compute in f32 (Cast for the quantized side).
// MatMulInteger (and QLinearMatMul's product) becomes a zero-point-free
// u8 x s8 MatMulInteger plus the zero-point terms, and ConvInteger of u8/s8
// data by s8 weights a zero-point-free, unpadded ConvInteger on data padded
// with its zero point: the forms the CPU lowers and
// kiln-cpu-integer-contractions runs on VNNI. Other forms keep the exact
// reference computations (int32 MatMul, f64 Conv).
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/DataTypes.h"
#include "dialects/onnx/OnnxOps.h"
#include "dialects/onnx/ShapeInference.h"
#include "passes/DecomposeOps.h"
#include "passes/FusionUtils.h"

using namespace mlir;
using namespace kiln::onnx;

namespace kiln::decompose {
namespace {

//===----------------------------------------------------------------------===//
// QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear, computed in f32
// with Cast for the (possibly float8 or 4-bit) quantized side.
//===----------------------------------------------------------------------===//

/// A scale or zero point shaped to broadcast against x: as is when it is a
/// scalar, along `axis` when 1-D, repeated over blocks with block_size.
Value alongAxis(GraphBuilder &g, Value p, RankedTensorType xt, Operation *op) {
  auto pt = staticType(p);
  if (!pt || pt.getNumElements() == 1)
    return p;
  int64_t rank = xt.getRank(), axis = getIntAttr(op, "axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return Value();
  int64_t block = getIntAttr(op, "block_size", 0);
  if (block > 0 && xt.isDynamicDim(axis))
    return Value();
  if (block > 0) {
    SmallVector<int64_t> idx;
    for (int64_t i = 0; i < xt.getDimSize(axis); ++i)
      idx.push_back(i / block);
    return g.op("Gather", {p, g.ints(idx)}, {g.attr("axis", axis)},
                pt.getElementType());
  }
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = pt.getNumElements();
  return g.op("Reshape", {p, g.ints(shape)}, {}, pt.getElementType());
}

/// Integer quantization: round to nearest-even, add the zero point, then
/// Cast, which saturates to the type's range (NaN gives 0: see
/// providers/cpu/CastOps.cpp), as the clamp QuantizeLinear specifies.
Value quantizeInt(GraphBuilder &g, Value v, Value zp, IntegerType qt) {
  v = g.op("Round", {v});
  if (zp)
    v = g.op("Add", {v, zp});
  return castTo(g, v, qt);
}

/// x - zero_point in `elt` (a scalar or, with `perChannel` dims, a 1-D
/// zero point along the leading axis, as ConvInteger's weights use).
Value centered(GraphBuilder &g, Value x, Value zp, Type elt,
               int64_t perChannelRank = 0) {
  Value v = castTo(g, x, elt);
  if (!zp)
    return v;
  Value z = castTo(g, zp, elt);
  auto zt = staticType(z);
  if (perChannelRank && zt && zt.getRank() == 1 && zt.getNumElements() > 1) {
    SmallVector<int64_t> shape(perChannelRank, 1);
    shape[0] = zt.getNumElements();
    z = g.op("Reshape", {z, g.ints(shape)}, {}, elt);
  }
  return g.op("Sub", {v, z});
}

/// A 0-d i32 constant.
Value i32Scalar(GraphBuilder &g, int32_t v) {
  return g.constant(DenseElementsAttr::get(
      RankedTensorType::get({}, g.b.getI32Type()), ArrayRef<int32_t>(v)));
}

/// True for an absent zero point or an inline constant of zeros.
bool isZeroPoint(Value zp) { return !zp || fusion::isZeroIntegerConstant(zp); }

/// sum_k (a - za)(b - zb) in i32 for 8-bit a and b (ranks of 2 or more),
/// as a zero-point-free onnx.MatMulInteger of u8 a' by s8 b'' (what the
/// CPU's integer kernels take) and the zero-point terms:
///   sum_k a' b'' - za' colsum(b'') - zb'' (rowsum(a') - K za')
/// where a' = a + 128 for s8 a (za' too) and b'' = b - 128 for u8 b (zb''
/// too). colsum folds at compile time for constant weights; the rowsum term
/// exists only for a weight zero point that is not a constant zero. za is
/// a scalar, zb a scalar or one per column. Null when the shapes do not fit.
Value integerProduct(GraphBuilder &g, Value a, Value za, Value bm, Value zb) {
  auto at = dyn_cast<RankedTensorType>(a.getType());
  auto bt = staticType(bm);
  if (!at || !bt || at.getRank() < 2 || bt.getRank() < 2)
    return Value();
  int64_t k = bt.getDimSize(bt.getRank() - 2),
          n = bt.getDimSize(bt.getRank() - 1);
  if (za && (!staticType(za) || staticType(za).getNumElements() != 1))
    return Value(); // per-row zero points
  if (zb && (!staticType(zb) || (staticType(zb).getNumElements() != 1 &&
                                 (staticType(zb).getRank() != 1 ||
                                  staticType(zb).getNumElements() != n))))
    return Value();
  MLIRContext *ctx = g.b.getContext();
  Type i32 = g.b.getI32Type();
  auto u8 = IntegerType::get(ctx, 8, IntegerType::Unsigned);
  auto s8 = IntegerType::get(ctx, 8);
  bool aSigned = !at.getElementType().isUnsignedInteger();
  bool bUnsigned = bt.getElementType().isUnsignedInteger();
  // The terms of a zero point that is known to be zero (after the shift).
  bool aZero = isZeroPoint(za) && !aSigned,
       bZero = isZeroPoint(zb) && !bUnsigned;
  Value a32 = castTo(g, a, i32), b32 = castTo(g, bm, i32);
  Value za32 = za ? castTo(g, za, i32) : i32Scalar(g, 0);
  Value zb32 = zb ? castTo(g, zb, i32) : i32Scalar(g, 0);
  if (aSigned) {
    a32 = g.op("Add", {a32, i32Scalar(g, 128)});
    za32 = g.op("Add", {za32, i32Scalar(g, 128)});
  }
  if (bUnsigned) {
    b32 = g.op("Sub", {b32, i32Scalar(g, 128)});
    zb32 = g.op("Sub", {zb32, i32Scalar(g, 128)});
  }
  Value y = g.op("MatMulInteger",
                 {aSigned ? castTo(g, a32, u8) : a,
                  bUnsigned ? castTo(g, b32, s8) : bm, g.none(), g.none()},
                 {}, i32);
  auto sum = [&](Value x, int64_t axis) {
    return g.op("ReduceSum", {x, g.ints({axis})},
                {g.attr("keepdims", int64_t(1))});
  };
  if (!aZero)
    y = g.op("Sub", {y, g.op("Mul", {za32, sum(b32, -2)})});
  if (!bZero) {
    Value rows = sum(a32, -1);
    if (!aZero)
      rows = g.op("Sub", {rows, g.op("Mul", {za32, i32Scalar(g, int32_t(k))})});
    y = g.op("Sub", {y, g.op("Mul", {zb32, rows})});
  }
  return y;
}

/// The Conv of `op` (its attributes) on x - xz and w - wz (per output
/// channel or not) as int32 (`gi` builds i32): in f32 when every sum is
/// exact there (255 * 255 * K < 2^24, K the taps per output: a depthwise
/// conv then takes the float kernels), else in f64, exact for int32 sums.
Value exactConv(GraphBuilder &gi, Operation *op, Value x, Value xz, Value w,
                Value wz) {
  auto wt = cast<ShapedType>(w.getType());
  int64_t k = 1;
  for (int64_t i = 1; i < wt.getRank(); ++i)
    k = wt.isDynamicDim(i) ? (int64_t(1) << 30) : k * wt.getDimSize(i);
  Type elt = 255 * 255 * k < (int64_t(1) << 24) ? Type(gi.b.getF32Type())
                                                 : Type(gi.b.getF64Type());
  GraphBuilder g(gi.b, gi.loc, elt);
  Value conv = g.op("Conv",
                    {centered(g, x, xz, elt),
                     centered(g, w, wz, elt, wt.getRank()), g.none()},
                    fusion::opAttributes(op));
  return castTo(gi, conv, gi.b.getI32Type());
}

/// A 2-D ConvInteger of u8 or s8 data by s8 weights without a weight zero
/// point as the CPU's 8-bit kernels take it: u8 data (s8 shifted by 128,
/// its zero point too) padded with its zero point (a padded tap then adds
/// nothing), a zero-point-free ConvInteger without pads, minus
///   za * (sum of each output channel's weights),
/// which folds at compile time. `op` (ConvInteger or QLinearConv) has the
/// conv's attributes. Null when the op does not fit.
Value integerConv(GraphBuilder &g, Operation *op, Value x, Value za, Value w,
                  Value wz) {
  auto xt = staticType(x), wt = staticType(w);
  if (!xt || !wt || xt.getRank() != 4 ||
      !wt.getElementType().isSignlessInteger(8) || !isZeroPoint(wz) ||
      !integerKernelGroups(op, wt) ||
      (za && staticType(za).getNumElements() != 1))
    return Value();
  if (auto pad = op->getAttrOfType<StringAttr>("auto_pad");
      pad && pad.getValue() != "NOTSET")
    return Value();
  MLIRContext *ctx = g.b.getContext();
  Type i32 = g.b.getI32Type();
  auto u8 = IntegerType::get(ctx, 8, IntegerType::Unsigned);
  bool aSigned = !xt.getElementType().isUnsignedInteger();
  bool aZero = isZeroPoint(za) && !aSigned;
  Value za32 = za ? castTo(g, za, i32) : i32Scalar(g, 0);
  if (aSigned) {
    x = castTo(g, g.op("Add", {castTo(g, x, i32), i32Scalar(g, 128)}), u8);
    za32 = g.op("Add", {za32, i32Scalar(g, 128)});
  }
  SmallVector<int64_t> pads = getIntsAttr(op, "pads");
  SmallVector<NamedAttribute> attrs;
  for (NamedAttribute a : fusion::opAttributes(op))
    if (a.getName() != "pads")
      attrs.push_back(a);
  if (llvm::any_of(pads, [](int64_t p) { return p != 0; })) {
    if (pads.size() != 4)
      return Value();
    Value fill = castTo(g, g.op("Reshape", {za32, g.ints({})}, {}, i32), u8);
    x = g.op("Pad",
             {x, g.ints({0, 0, pads[0], pads[1], 0, 0, pads[2], pads[3]}), fill,
              g.none()},
             {}, u8);
  }
  Value y = g.op("ConvInteger", {x, w, g.none(), g.none()}, attrs, i32);
  if (!aZero) {
    Value sums = g.op("ReduceSum", {castTo(g, w, i32), g.ints({1, 2, 3})},
                      {g.attr("keepdims", int64_t(0))});
    sums = g.op("Reshape", {sums, g.ints({1, wt.getDimSize(0), 1, 1})});
    y = g.op("Sub", {y, g.op("Mul", {za32, sums})});
  }
  return y;
}

/// round(acc * factor) + zero_point in the builder's float type, rounded
/// half to even and saturated to `qt`'s range (quantizeInt). In f32 (f32
/// scales) this is how ONNX Runtime requantizes (a float multiplier per
/// tensor or channel); in f64 as the reference computes it (exact for any
/// int32 sum).
Value requantize(GraphBuilder &g, Value acc, Value factor, Value zeroPoint,
                 IntegerType qt) {
  Type elt = g.elt;
  return quantizeInt(g,
                     g.op("Mul", {castTo(g, acc, elt), castTo(g, factor, elt)}),
                     castTo(g, zeroPoint, elt), qt);
}

/// The float type a QLinear op requantizes in: f32 for f32 scales (as
/// ONNX Runtime does; it vectorizes twice as wide), else f64.
Type requantizeType(OpBuilder &b, Value scale) {
  return staticType(scale).getElementType().isF32() ? b.getF32Type()
                                                    : b.getF64Type();
}

} // namespace

bool integerKernelGroups(Operation *op, RankedTensorType wt) {
  int64_t group = getIntAttr(op, "group", 1);
  if (group == 1)
    return true;
  if (wt.getRank() != 4)
    return false;
  int64_t taps = wt.getDimSize(2) * wt.getDimSize(3);
  return wt.getDimSize(0) == group && wt.getDimSize(1) == 1 &&
         255 * 128 * taps < (int64_t(1) << 24);
}

bool decomposeDequantize(Operation *op) {
  Value x = op->getOperand(0), scale = op->getOperand(1),
        zp = optionalOperand(op, 2);
  // (Elementwise: run-time sizes are fine.)
  auto xt = dyn_cast<RankedTensorType>(x.getType());
  auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!xt || !out || !isFloat(out.getElementType()))
    return false;
  OpBuilder b(op);
  GraphBuilder g(b, op->getLoc(), b.getF32Type());
  Type f32 = b.getF32Type();
  Value y = castTo(g, x, f32);
  if (zp) {
    Value z = alongAxis(g, castTo(g, zp, f32), xt, op);
    if (!z)
      return false;
    y = g.op("Sub", {y, z});
  }
  Value s = alongAxis(g, castTo(g, scale, f32), xt, op);
  if (!s)
    return false;
  y = castTo(g, g.op("Mul", {y, s}), out.getElementType());
  if (!isa<RankedTensorType>(y.getType()))
    return false;
  replaceResults(op, {y});
  return true;
}

bool decomposeQuantize(Operation *op) {
  Value x = op->getOperand(0), scale = op->getOperand(1),
        zp = optionalOperand(op, 2);
  auto xt = dyn_cast<RankedTensorType>(x.getType());
  if (!xt || !isFloat(xt.getElementType()))
    return false;
  OpBuilder b(op);
  Type qt = zp ? cast<ShapedType>(zp.getType()).getElementType()
               : elementTypeOfDtype(op->getContext(), 2);
  if (int64_t dt = getIntAttr(op, "output_dtype", 0))
    qt = elementTypeOfDtype(op->getContext(), dt);
  if (!qt || !dtypeOfElementType(qt))
    return false;
  GraphBuilder g(b, op->getLoc(), b.getF32Type());
  Type f32 = b.getF32Type();
  Value s = alongAxis(g, castTo(g, scale, f32), xt, op);
  Value z = zp ? alongAxis(g, castTo(g, zp, f32), xt, op) : Value();
  if (!s || (zp && !z))
    return false;
  Value v = g.op("Div", {castTo(g, x, f32), s});
  Value y;
  if (auto it = dyn_cast<IntegerType>(qt)) {
    y = quantizeInt(g, v, z, it);
  } else {
    if (z)
      v = g.op("Add", {v, z});
    y = castTo(g, v, qt, {g.attr("saturate", getIntAttr(op, "saturate", 1))});
  }
  if (!isa<RankedTensorType>(y.getType()))
    return false;
  replaceResults(op, {y});
  return true;
}

/// uint8 with scale and zero point from the data's range (extended to 0).
bool decomposeDynamicQuantize(Operation *op) {
  Value x = op->getOperand(0);
  auto xt = dyn_cast<RankedTensorType>(x.getType());
  if (!xt || !xt.getElementType().isF32())
    return false;
  OpBuilder b(op);
  GraphBuilder g(b, op->getLoc(), b.getF32Type());
  auto all = [&](const char *name) {
    return g.op(name, {g.op(std::string("Reduce") + name, {x, g.none()},
                            {g.attr("keepdims", int64_t(0))}),
                       g.scalar(0.0)});
  };
  Value lo = all("Min"), hi = all("Max");
  Value scale = g.op("Div", {g.op("Sub", {hi, lo}), g.scalar(255.0)});
  Value zpF =
      g.op("Round", {g.op("Clip", {g.op("Neg", {g.op("Div", {lo, scale})}),
                                   g.scalar(0.0), g.scalar(255.0)})});
  auto u8 = IntegerType::get(op->getContext(), 8, IntegerType::Unsigned);
  Value zp = castTo(g, zpF, u8);
  Value y = quantizeInt(g, g.op("Div", {x, scale}), zpF, u8);
  if (!isa<RankedTensorType>(y.getType()) || !staticType(zp) || !staticType(scale))
    return false;
  replaceResults(op, {y, scale, zp});
  return true;
}

/// MatMulInteger of 2-D or larger operands: integerProduct, or, for the
/// zero-point-free u8 x s8 product it builds, nothing (the CPU lowers it).
/// 1-D operands: the int32 MatMul of the centered operands.
bool decomposeMatMulInteger(Operation *op) {
  Value a = op->getOperand(0), bm = op->getOperand(1);
  Value za = optionalOperand(op, 2), zb = optionalOperand(op, 3);
  if (!za && !zb &&
      cast<ShapedType>(a.getType()).getElementType().isUnsignedInteger() &&
      cast<ShapedType>(bm.getType()).getElementType().isSignlessInteger(8))
    return false;
  OpBuilder b(op);
  Type i32 = b.getI32Type();
  GraphBuilder g(b, op->getLoc(), i32);
  Value y = integerProduct(g, a, za, bm, zb);
  if (!y) {
    if (!staticType(a) || !staticType(bm))
      return false;
    for (Value z : {za, zb})
      if (z && (!staticType(z) || staticType(z).getNumElements() != 1))
        return false; // per-row/column zero points
    y = g.op("MatMul", {centered(g, a, za, i32), centered(g, bm, zb, i32)});
  }
  if (!isa<RankedTensorType>(y.getType()))
    return false;
  replaceResults(op, {y});
  return true;
}

/// ConvInteger: integerConv, or, for the form it builds, nothing (the CPU
/// lowers it); otherwise the centered operands convolve in f64 (exact for
/// int32 sums), cast back to int32.
bool decomposeConvInteger(Operation *op) {
  auto wt = staticType(op->getOperand(1));
  auto xt = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (!xt || !wt)
    return false;
  // Of run-time size (a batch): exactConv, even in the kernels' form (the
  // integer kernels want static sizes).
  bool isStatic = xt.hasStaticShape();
  SmallVector<int64_t> pads = getIntsAttr(op, "pads");
  if (isStatic && !optionalOperand(op, 2) && !optionalOperand(op, 3) &&
      cast<ShapedType>(op->getOperand(0).getType())
          .getElementType()
          .isUnsignedInteger() &&
      wt.getElementType().isSignlessInteger(8) && integerKernelGroups(op, wt) &&
      llvm::all_of(pads, [](int64_t p) { return p == 0; }))
    return false;
  OpBuilder b(op);
  if (isStatic) {
    GraphBuilder g(b, op->getLoc(), b.getI32Type());
    if (Value y = integerConv(g, op, op->getOperand(0), optionalOperand(op, 2),
                              op->getOperand(1), optionalOperand(op, 3));
        y && isa<RankedTensorType>(y.getType())) {
      replaceResults(op, {y});
      return true;
    }
  }
  GraphBuilder g(b, op->getLoc(), b.getI32Type());
  Value y = exactConv(g, op, op->getOperand(0), optionalOperand(op, 2),
                      op->getOperand(1), optionalOperand(op, 3));
  if (!isa<RankedTensorType>(y.getType()))
    return false;
  replaceResults(op, {y});
  return true;
}

/// QLinearMatMul: an int32 MatMul (integerProduct), scaled by a_scale *
/// b_scale / y_scale (in the scales' type; b's may be per column), rounded,
/// shifted by y_zero_point and clamped (requantize).
bool decomposeQLinearMatMul(Operation *op) {
  Value a = op->getOperand(0), as = op->getOperand(1), az = op->getOperand(2);
  Value bm = op->getOperand(3), bs = op->getOperand(4), bz = op->getOperand(5);
  Value ys = op->getOperand(6), yz = op->getOperand(7);
  // (Rows of run-time count are fine: a transformer's sequence.)
  auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!out || !isa<IntegerType>(out.getElementType()) ||
      (out.getRank() && out.isDynamicDim(out.getRank() - 1)))
    return false;
  for (Value v : {as, az, ys, yz})
    if (!staticType(v) || staticType(v).getNumElements() != 1)
      return false; // per-row parameters
  // b's may be one per column (opset 21), broadcasting along the last dim.
  int64_t n = out.getRank() ? out.getDimSize(out.getRank() - 1) : 1;
  for (Value v : {bs, bz})
    if (auto t = staticType(v);
        !t || (t.getNumElements() != 1 &&
               (t.getRank() != 1 || t.getNumElements() != n)))
      return false;
  OpBuilder b(op);
  Type i32 = b.getI32Type();
  Type scaleElt = staticType(as).getElementType();
  GraphBuilder g(b, op->getLoc(), i32);
  Value c = integerProduct(g, a, az, bm, bz);
  if (!c && staticType(bz).getNumElements() == 1)
    c = g.op("MatMul", {centered(g, a, az, i32), centered(g, bm, bz, i32)});
  if (!c)
    return false;
  GraphBuilder gs(b, op->getLoc(), scaleElt);
  Value factor = gs.op("Div", {gs.op("Mul", {as, bs}), ys});
  GraphBuilder gf(b, op->getLoc(), requantizeType(b, as));
  Value y =
      requantize(gf, c, factor, yz, cast<IntegerType>(out.getElementType()));
  if (!isa<RankedTensorType>(y.getType()))
    return false;
  replaceResults(op, {y});
  return true;
}

/// QLinearConv: the Conv of the centered operands (the integer kernels'
/// form, or exactConv) plus the int32 bias, scaled by x_scale * w_scale
/// / y_scale (w_scale and w_zero_point may be per output channel), then
/// requantized like QLinearMatMul.
bool decomposeQLinearConv(Operation *op) {
  Value x = op->getOperand(0), xs = op->getOperand(1), xz = op->getOperand(2);
  Value w = op->getOperand(3), ws = op->getOperand(4), wz = op->getOperand(5);
  Value ys = op->getOperand(6), yz = op->getOperand(7),
        bias = optionalOperand(op, 8);
  // (A run-time batch or plane takes exactConv: the integer kernels want
  // static sizes.)
  auto ranked = [](Value v) { return dyn_cast<RankedTensorType>(v.getType()); };
  auto wt = staticType(w), out = ranked(op->getResult(0));
  if (!ranked(x) || !wt || !out || !isa<IntegerType>(out.getElementType()))
    return false;
  for (Value v : {xs, xz, ys, yz})
    if (!staticType(v) || staticType(v).getNumElements() != 1)
      return false;
  OpBuilder b(op);
  // The int32 sum (the integer kernels' form when it fits, else the exact
  // conv) plus the bias, requantized in f32 with f32 scales as ONNX Runtime
  // does.
  GraphBuilder gi(b, op->getLoc(), b.getI32Type());
  Value conv = integerConv(gi, op, x, xz, w, wz);
  if (!conv)
    conv = exactConv(gi, op, x, xz, w, wz);
  if (bias) {
    SmallVector<int64_t> shape(out.getRank(), 1);
    shape[1] = wt.getDimSize(0);
    conv = gi.op("Add", {conv, gi.op("Reshape", {bias, gi.ints(shape)})});
  }
  GraphBuilder gd(b, op->getLoc(), requantizeType(b, xs));
  Type scaleElt = staticType(xs).getElementType();
  GraphBuilder gs(b, op->getLoc(), scaleElt);
  Value wScale = ws;
  if (auto st = staticType(ws);
      st && st.getRank() == 1 && st.getNumElements() > 1) {
    SmallVector<int64_t> shape(out.getRank() - 1, 1);
    shape[0] = st.getNumElements();
    wScale = gs.op("Reshape", {ws, gs.ints(shape)});
  }
  Value factor = gs.op("Div", {gs.op("Mul", {xs, wScale}), ys});
  Value y =
      requantize(gd, conv, factor, yz, cast<IntegerType>(out.getElementType()));
  if (!ranked(y))
    return false;
  replaceResults(op, {y});
  return true;
}

} // namespace kiln::decompose
