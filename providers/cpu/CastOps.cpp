//===- CastOps.cpp - Cast and CastLike, including storage-only types ------===//
//
// float8 (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ) and 4-/2-bit integers have no
// arithmetic here, only conversions: a float8 value decodes through a
// 256-entry table built with APFloat, and encodes from f32 by rounding to
// the format's quantum (nearest-even) and assembling the bits, with ONNX's
// saturate rules. Floats become sub-byte integers by rounding to
// nearest-even, other integers by truncation toward zero; out of range both
// saturate and NaN gives 0 (undefined in ONNX; see docs/ops.md).
// float4e2m1 (stored as i8 codes) decodes through a 16-entry table and
// encodes by nearest-even thresholds, saturating at 6 (NaN becomes -0, as
// ml_dtypes does); float8e8m0 keeps the f32 exponent, rounded by
// `round_mode` (up, down, nearest) as onnx.numpy_helper.to_float8e8m0.
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/OnnxOps.h"
#include "providers/cpu/Lowering.h"

#include "llvm/ADT/APFloat.h"

#include <limits>

using namespace mlir;
using namespace kiln::onnx;

namespace kiln::cpu {
namespace {

bool isFloat8(Type t) {
  return t.isFloat8E4M3FN() || t.isFloat8E4M3FNUZ() || t.isFloat8E5M2() ||
         t.isFloat8E5M2FNUZ();
}

bool isSubByteInt(Type t) {
  auto it = dyn_cast<IntegerType>(t);
  return it && (it.getWidth() == 4 || it.getWidth() == 2);
}

Value i32c(OpBuilder &b, Location l, int64_t v) {
  return b.create<arith::ConstantIntOp>(l, v, 32);
}

/// The 256 values of a float8 type as f32.
Value float8Table(OpBuilder &b, Location l, FloatType t) {
  SmallVector<float> values;
  for (unsigned i = 0; i < 256; ++i) {
    APFloat v(t.getFloatSemantics(), APInt(8, i));
    bool lossy;
    v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lossy);
    values.push_back(v.convertToFloat());
  }
  auto type = RankedTensorType::get({256}, b.getF32Type());
  return b.create<arith::ConstantOp>(l, DenseElementsAttr::get(type, ArrayRef<float>(values)));
}

Value decodeFloat8(OpBuilder &b, Location l, Value x, Value table) {
  Value byte = b.create<arith::BitcastOp>(l, b.getI8Type(), x);
  Value idx = b.create<arith::IndexCastUIOp>(l, b.getIndexType(), byte);
  return b.create<tensor::ExtractOp>(l, table, ValueRange{idx});
}

/// f32 -> float8 bits: round |x| to the quantum of its binade (or of the
/// subnormal range), then assemble exponent and mantissa.
Value encodeFloat8(OpBuilder &b, Location l, Value x, FloatType to, bool saturate) {
  bool e5 = to.isFloat8E5M2() || to.isFloat8E5M2FNUZ();
  bool fnuz = to.isFloat8E4M3FNUZ() || to.isFloat8E5M2FNUZ();
  int64_t m = e5 ? 2 : 3, bias = (e5 ? 15 : 7) + (fnuz ? 1 : 0), emin = 1 - bias;
  APFloat largest = APFloat::getLargest(to.getFloatSemantics());
  int64_t maxCode = largest.bitcastToAPInt().getZExtValue();
  bool lossy;
  largest.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lossy);
  int64_t nanCode = fnuz ? 0x80 : 0x7f;
  int64_t overflowCode = saturate ? maxCode : (to.isFloat8E5M2() ? 0x7c : nanCode);

  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  auto shr = [&](Value v, int64_t n) { return b.create<arith::ShRUIOp>(l, v, i32c(b, l, n)); };
  auto shl = [&](Value v, int64_t n) { return b.create<arith::ShLIOp>(l, v, i32c(b, l, n)); };
  auto andc = [&](Value v, int64_t n) { return b.create<arith::AndIOp>(l, v, i32c(b, l, n)); };
  auto biasedExp = [&](Value bits) {
    return b.create<arith::SubIOp>(l, andc(shr(bits, 23), 0xff), i32c(b, l, 127));
  };
  Value bits = b.create<arith::BitcastOp>(l, i32, x);
  Value sign = andc(shr(bits, 24), 0x80);
  Value a = b.create<math::AbsFOp>(l, x);
  Value isNan = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNO, a, a);
  Value e = b.create<arith::MaxSIOp>(l, biasedExp(bits), i32c(b, l, emin));
  Value q = b.create<arith::BitcastOp>(
      l, f32, shl(b.create<arith::AddIOp>(l, e, i32c(b, l, 127 - m)), 23));
  Value r = b.create<arith::MulFOp>(
      l, b.create<math::RoundEvenOp>(l, b.create<arith::DivFOp>(l, a, q)), q);
  Value rbits = b.create<arith::BitcastOp>(l, i32, r);
  Value re = biasedExp(rbits);
  Value normal = b.create<arith::OrIOp>(
      l, shl(b.create<arith::AddIOp>(l, re, i32c(b, l, bias)), m), shr(andc(rbits, 0x7fffff), 23 - m));
  Value sub = b.create<arith::FPToUIOp>(
      l, i32, b.create<arith::MulFOp>(l, r, cst(b, l, f32, std::ldexp(1.0, m - emin))));
  Value isNormal = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::sge, re, i32c(b, l, emin));
  Value code = b.create<arith::SelectOp>(l, isNormal, normal, sub);
  Value over = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT, r,
                                       cst(b, l, f32, largest.convertToFloat()));
  code = b.create<arith::SelectOp>(l, over, i32c(b, l, overflowCode), code);
  // FNUZ formats have one NaN (0x80) and no negative zero.
  Value signed_ = b.create<arith::OrIOp>(l, code, sign);
  if (fnuz) {
    Value unsignedCode = b.create<arith::OrIOp>(
        l, b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, code, i32c(b, l, 0)),
        b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, code, i32c(b, l, nanCode)));
    signed_ = b.create<arith::SelectOp>(l, unsignedCode, code, signed_);
  }
  Value nanBits = i32c(b, l, fnuz ? nanCode : 0x7f);
  if (!fnuz)
    nanBits = b.create<arith::OrIOp>(l, nanBits, sign);
  Value out = b.create<arith::SelectOp>(l, isNan, nanBits, signed_);
  return b.create<arith::BitcastOp>(l, to, b.create<arith::TruncIOp>(l, b.getI8Type(), out));
}

constexpr int64_t kFloat4 = 23, kFloat8E8M0 = 24;

/// float4e2m1 code (low 4 bits of an i8) -> f32.
Value decodeFloat4(OpBuilder &b, Location l, Value code, Value table) {
  Value idx = b.create<arith::IndexCastUIOp>(
      l, b.getIndexType(), b.create<arith::AndIOp>(l, code, b.create<arith::ConstantIntOp>(l, 15, 8)));
  return b.create<tensor::ExtractOp>(l, table, ValueRange{idx});
}

Value float4Table(OpBuilder &b, Location l) {
  SmallVector<float> v = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (int i = 0; i < 8; ++i)
    v.push_back(i ? -v[i] : -0.0f);
  auto type = RankedTensorType::get({16}, b.getF32Type());
  return b.create<arith::ConstantOp>(l, DenseElementsAttr::get(type, ArrayRef<float>(v)));
}

/// f32 -> float4e2m1 code: the magnitude code counts the rounding
/// thresholds passed (a tie goes to the even code), the sign is bit 3.
Value encodeFloat4(OpBuilder &b, Location l, Value x) {
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  Value a = b.create<math::AbsFOp>(l, x);
  Value code = i32c(b, l, 0);
  // (threshold, whether reaching it exactly rounds up)
  const std::pair<double, bool> steps[] = {{0.25, false}, {0.75, true}, {1.25, false},
                                           {1.75, true},  {2.5, false}, {3.5, true},
                                           {5.0, false}};
  for (auto [t, inclusive] : steps) {
    Value past = b.create<arith::CmpFOp>(
        l, inclusive ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OGT, a, cst(b, l, f32, t));
    code = b.create<arith::AddIOp>(l, code, b.create<arith::ExtUIOp>(l, i32, past));
  }
  Value bits = b.create<arith::BitcastOp>(l, i32, x);
  Value neg = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, bits, i32c(b, l, 0));
  code = b.create<arith::SelectOp>(l, neg, b.create<arith::OrIOp>(l, code, i32c(b, l, 8)), code);
  Value isNan = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNO, x, x);
  code = b.create<arith::SelectOp>(l, isNan, i32c(b, l, 8), code);
  return b.create<arith::TruncIOp>(l, b.getI8Type(), code);
}

/// float8e8m0 code -> f32: 2^(code - 127); 0xFF is NaN.
Value decodeFloat8E8M0(OpBuilder &b, Location l, Value code) {
  Type i32 = b.getI32Type();
  Value e = b.create<arith::ExtUIOp>(l, i32, code);
  Value bits = b.create<arith::ShLIOp>(l, e, i32c(b, l, 23));
  Value isZero = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, e, i32c(b, l, 0));
  bits = b.create<arith::SelectOp>(l, isZero, i32c(b, l, 0x400000), bits); // 2^-127
  Value isNan = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, e, i32c(b, l, 0xff));
  bits = b.create<arith::SelectOp>(l, isNan, i32c(b, l, 0x7fc00000), bits);
  return b.create<arith::BitcastOp>(l, b.getF32Type(), bits);
}

/// f32 -> float8e8m0 code: the f32 exponent (sign dropped), rounded up by
/// `roundMode`; NaN and infinities give 0xFF, and with `saturate` rounding
/// stops at 0xFE.
Value encodeFloat8E8M0(OpBuilder &b, Location l, Value x, StringRef roundMode, bool saturate) {
  Type i32 = b.getI32Type();
  auto andc = [&](Value v, int64_t n) { return b.create<arith::AndIOp>(l, v, i32c(b, l, n)); };
  auto nonzero = [&](Value v) {
    return b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne, v, i32c(b, l, 0));
  };
  Value bits = b.create<arith::BitcastOp>(l, i32, x);
  Value e = andc(b.create<arith::ShRUIOp>(l, bits, i32c(b, l, 23)), 0xff);
  Value special = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, e, i32c(b, l, 0xff));
  Value up = b.create<arith::ConstantIntOp>(l, 0, 1);
  if (roundMode == "up") {
    up = nonzero(andc(bits, 0x7fffff));
  } else if (roundMode == "nearest") {
    Value g = nonzero(andc(bits, 0x400000));
    Value rest = b.create<arith::OrIOp>(l, nonzero(andc(bits, 0x200000)), nonzero(andc(bits, 0x1fffff)));
    rest = b.create<arith::OrIOp>(l, rest, nonzero(e));
    up = b.create<arith::AndIOp>(l, g, rest);
  }
  if (saturate)
    up = b.create<arith::AndIOp>(
        l, up, b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne, e, i32c(b, l, 0xfe)));
  Value rounded = b.create<arith::AddIOp>(l, e, b.create<arith::ExtUIOp>(l, i32, up));
  Value code = b.create<arith::SelectOp>(l, special, i32c(b, l, 0xff), rounded);
  return b.create<arith::TruncIOp>(l, b.getI8Type(), code);
}

/// Float -> integer where ONNX leaves the result undefined (out of range,
/// NaN): kiln saturates to the target's bounds and gives 0 for NaN, on every
/// CPU and at every optimization level (a plain fptosi/fptoui is poison
/// there, so the answer depended on the instruction LLVM picked). In range
/// it rounds toward zero, as fptosi does.
Value saturatingFloatToInt(OpBuilder &b, Location l, Value x, IntegerType to, bool toUnsigned) {
  // f16/bf16/f8 widen exactly; the bounds below are powers of two, exact in f32.
  if (x.getType().getIntOrFloatBitWidth() < 32)
    x = b.create<arith::ExtFOp>(l, b.getF32Type(), x);
  Type ft = x.getType();
  unsigned w = to.getWidth();
  IntegerType wide = b.getIntegerType(std::max(w, 32u));
  double lowest = toUnsigned ? 0.0 : -std::ldexp(1.0, w - 1);
  if (w < 32) {
    // Narrow targets: clamped in f32 to their bounds (exact there) and
    // converted, 4 instructions where the selects below take 9. maxnum
    // takes the bound for NaN: 0 for unsigned types; signed ones select it.
    double highest = std::ldexp(1.0, toUnsigned ? w : w - 1) - 1;
    Value c = b.create<arith::MinNumFOp>(
        l, b.create<arith::MaxNumFOp>(l, x, cst(b, l, ft, lowest)),
        cst(b, l, ft, highest));
    Value r =
        b.create<arith::TruncIOp>(l, to, b.create<arith::FPToSIOp>(l, wide, c));
    if (toUnsigned)
      return r;
    Value isNan = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNO, x, x);
    return b.create<arith::SelectOp>(
        l, isNan, b.create<arith::ConstantOp>(l, b.getIntegerAttr(to, 0)), r);
  }
  // Only the lanes in range are selected, so the conversion may be poison
  // in the others.
  Value r = toUnsigned && w >= 32 ? (Value)b.create<arith::FPToUIOp>(l, wide, x)
                                  : (Value)b.create<arith::FPToSIOp>(l, wide, x);
  if (wide != to)
    r = b.create<arith::TruncIOp>(l, to, r);
  auto intc = [&](const APInt &v) {
    return b.create<arith::ConstantOp>(l, b.getIntegerAttr(to, v)).getResult();
  };
  auto cmp = [&](arith::CmpFPredicate p, Value y, double c) {
    return b.create<arith::CmpFOp>(l, p, x, y ? y : cst(b, l, ft, c)).getResult();
  };
  double above = std::ldexp(1.0, toUnsigned ? w : w - 1);
  APInt maxV = toUnsigned ? APInt::getMaxValue(w) : APInt::getSignedMaxValue(w);
  APInt minV = toUnsigned ? APInt::getMinValue(w) : APInt::getSignedMinValue(w);
  r = b.create<arith::SelectOp>(l, cmp(arith::CmpFPredicate::OGE, {}, above), intc(maxV), r);
  r = b.create<arith::SelectOp>(l, cmp(arith::CmpFPredicate::OLT, {}, lowest), intc(minV), r);
  return b.create<arith::SelectOp>(l, cmp(arith::CmpFPredicate::UNO, x, 0), intc(APInt(w, 0)), r);
}

/// To a 4- or 2-bit integer: floats round to nearest-even and saturate (as
/// ONNX Runtime does); integers wrap to the target's width, as ONNX says.
Value encodeSubByte(OpBuilder &b, Location l, Value x, IntegerType to, bool fromUnsigned,
                    bool toUnsigned) {
  if (isFloat(x.getType()))
    return saturatingFloatToInt(
        b, l, b.create<math::RoundEvenOp>(l, castScalar(b, l, x, b.getF32Type())), to,
        toUnsigned);
  return b.create<arith::TruncIOp>(l, to, castScalar(b, l, x, b.getI64Type(), fromUnsigned));
}

Results lowerCast(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  Value in = op->getOperand(0);
  Type from = typeOf(in).getElementType(), to = resultType(op).getElementType();
  Value table = isFloat8(from) ? float8Table(b, loc, cast<FloatType>(from)) : Value();
  int64_t fromDtype = castDtype(op, false), toDtype = castDtype(op, true);
  Value f4Table = fromDtype == kFloat4 ? float4Table(b, loc) : Value();
  bool saturate = getIntAttr(op, "saturate", 1) != 0;
  StringRef roundMode = getStrAttr(op, "round_mode", "up");
  bool fromU = wasUnsigned(op), toU = resultWasUnsigned(op);
  Value r = elementwise(b, loc, resultType(op), ValueRange{in},
                        [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                          Value x = a[0];
                          if (table)
                            x = decodeFloat8(nb, l, x, table);
                          if (f4Table)
                            x = decodeFloat4(nb, l, x, f4Table);
                          if (fromDtype == kFloat8E8M0)
                            x = decodeFloat8E8M0(nb, l, x);
                          if (toDtype == kFloat4)
                            return encodeFloat4(nb, l, castScalar(nb, l, x, nb.getF32Type(), fromU));
                          if (toDtype == kFloat8E8M0)
                            return encodeFloat8E8M0(
                                nb, l, castScalar(nb, l, x, nb.getF32Type(), fromU), roundMode,
                                saturate);
                          if (isFloat8(to))
                            return encodeFloat8(nb, l, castScalar(nb, l, x, nb.getF32Type(), fromU),
                                                cast<FloatType>(to), saturate);
                          if (isSubByteInt(to))
                            return encodeSubByte(nb, l, x, cast<IntegerType>(to), fromU, toU);
                          if (isFloat(x.getType()) && to.isSignlessInteger() &&
                              !to.isInteger(1))
                            return saturatingFloatToInt(nb, l, x, cast<IntegerType>(to), toU);
                          return castScalar(nb, l, x, to, fromU, toU);
                        });
  return SmallVector<Value>{r};
}

} // namespace

bool isStorageOnlyType(Type t) {
  return isFloat8(t) || isSubByteInt(t) || isa<Float4E2M1Type, Float8E8M0Type>(t);
}

void registerCastOps(LoweringTable &m) {
  // The importer types an unknown `to` as f32: refuse anything but the
  // dtypes this provider converts.
  m["Cast"] = {lowerCast, false, [](Operation *op, std::string &why) {
                 int64_t to = getIntAttr(op, "to", 1);
                 if ((to >= 1 && to <= 7) || (to >= 9 && to <= 13) || (to >= 16 && to <= 26))
                   return true;
                 why = "cast to ONNX dtype " + std::to_string(to) + " is not supported";
                 return false;
               }};
  m["CastLike"] = {lowerCast, false};
}

} // namespace kiln::cpu
