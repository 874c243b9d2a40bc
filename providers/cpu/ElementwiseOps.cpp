//===- ElementwiseOps.cpp - elementwise onnx ops to linalg.generic ---===//
#include "providers/cpu/Lowering.h"
#include "passes/GlobalString.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace kiln::onnx;

namespace kiln::cpu {

SmallVector<Value> present(ValueRange vals) {
  SmallVector<Value> out;
  for (Value v : vals)
    if (!isNone(v))
      out.push_back(v);
  return out;
}

namespace {

using ScalarFn = std::function<Value(OpBuilder &, Location, ValueRange, Operation *)>;

LowerFn elementwiseOp(ScalarFn fn) {
  return [fn](OpBuilder &b, Operation *op) -> Results {
    Value r = elementwise(b, op->getLoc(), resultType(op),
                          present(op->getOperands()),
                          [&](OpBuilder &nb, Location l, ValueRange a) {
                            return fn(nb, l, a, op);
                          });
    return SmallVector<Value>{r};
  };
}

template <typename FOp, typename IOp>
ScalarFn arithBinary() {
  return [](OpBuilder &b, Location l, ValueRange a, Operation *) -> Value {
    if (isFloat(a[0].getType()))
      return b.create<FOp>(l, a[0], a[1]);
    return b.create<IOp>(l, a[0], a[1]);
  };
}

/// Like arithBinary, with UOp where the op's inputs were unsigned.
template <typename FOp, typename SOp, typename UOp>
ScalarFn signedBinary() {
  return [](OpBuilder &b, Location l, ValueRange a, Operation *op) -> Value {
    if (isFloat(a[0].getType()))
      return b.create<FOp>(l, a[0], a[1]);
    if (wasUnsigned(op))
      return b.create<UOp>(l, a[0], a[1]);
    return b.create<SOp>(l, a[0], a[1]);
  };
}

/// Folds a variadic op's scalars left to right.
ScalarFn fold(ScalarFn binary) {
  return [binary](OpBuilder &b, Location l, ValueRange a, Operation *op) {
    Value acc = a[0];
    for (Value v : a.drop_front())
      acc = binary(b, l, ValueRange{acc, v}, op);
    return acc;
  };
}

ScalarFn unaryF(std::function<Value(OpBuilder &, Location, Value, Operation *)> f) {
  return [f](OpBuilder &b, Location l, ValueRange a, Operation *op) {
    return f(b, l, a[0], op);
  };
}

Value sigmoid(OpBuilder &b, Location l, Value x) {
  Type t = x.getType();
  Value e = b.create<math::ExpOp>(l, b.create<arith::NegFOp>(l, x));
  return b.create<arith::DivFOp>(l, cst(b, l, t, 1.0),
                                 b.create<arith::AddFOp>(l, cst(b, l, t, 1.0), e));
}

Value castScalarImpl(OpBuilder &b, Location l, Value x, Type to,
                     bool fromUnsigned = false, bool toUnsigned = false) {
  Type from = x.getType();
  if (from == to)
    return x;
  bool fromF = isFloat(from), toF = isFloat(to);
  fromUnsigned |= from.isUnsignedInteger();
  if (fromF && toF)
    return from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()
               ? (Value)b.create<arith::ExtFOp>(l, to, x)
               : (Value)b.create<arith::TruncFOp>(l, to, x);
  if (to.isInteger(1)) {
    if (fromF)
      return b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNE, x,
                                     cst(b, l, from, 0.0));
    return b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne, x,
                                   cst(b, l, from, 0));
  }
  if (fromF)
    return toUnsigned ? (Value)b.create<arith::FPToUIOp>(l, to, x)
                      : (Value)b.create<arith::FPToSIOp>(l, to, x);
  if (toF)
    return from.isInteger(1) || fromUnsigned
               ? (Value)b.create<arith::UIToFPOp>(l, to, x)
               : (Value)b.create<arith::SIToFPOp>(l, to, x);
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (fw < tw)
    return from.isInteger(1) || fromUnsigned
               ? (Value)b.create<arith::ExtUIOp>(l, to, x)
               : (Value)b.create<arith::ExtSIOp>(l, to, x);
  return b.create<arith::TruncIOp>(l, to, x);
}

/// strcmp(a, b) == 0 on two `const char *` held as i64 (string tensors
/// after makeSignless).
Value stringsEqual(OpBuilder &b, Location l, Value x, Value y, Operation *op) {
  auto module = op->getParentOfType<ModuleOp>();
  auto i64 = b.getI64Type(), i32 = b.getI32Type();
  if (!module.lookupSymbol<func::FuncOp>("strcmp")) {
    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    auto decl = mb.create<func::FuncOp>(l, "strcmp", mb.getFunctionType({i64, i64}, {i32}));
    decl.setPrivate();
  }
  Value r = b.create<func::CallOp>(l, "strcmp", TypeRange{i32}, ValueRange{x, y}).getResult(0);
  return b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, r,
                                 b.create<arith::ConstantIntOp>(l, 0, 32));
}

/// LabelEncoder's string keys: keys_strings, or a string keys_tensor.
SmallVector<StringRef> stringKeys(Operation *op) {
  SmallVector<StringRef> keys;
  if (auto a = op->getAttrOfType<ArrayAttr>("keys_strings"))
    for (Attribute k : a)
      keys.push_back(cast<StringAttr>(k).getValue());
  else if (auto t = op->getAttrOfType<DenseStringElementsAttr>("keys_tensor"))
    keys.assign(t.getRawStringData().begin(), t.getRawStringData().end());
  return keys;
}

/// LabelEncoder (ai.onnx.ml) from string keys to numbers: the value of the
/// first key equal to the element, else the default.
Value labelEncode(OpBuilder &b, Location l, ValueRange a, Operation *op) {
  Type elt = resultType(op).getElementType();
  SmallVector<Attribute> values;
  Attribute dflt;
  if (auto ints = op->getAttrOfType<ArrayAttr>("values_int64s")) {
    values.assign(ints.begin(), ints.end());
    dflt = b.getI64IntegerAttr(getIntAttr(op, "default_int64", -1));
  } else if (auto floats = op->getAttrOfType<ArrayAttr>("values_floats")) {
    values.assign(floats.begin(), floats.end());
    dflt = b.getFloatAttr(elt, getFloatAttr(op, "default_float", -0.0f));
  } else if (auto tensor = op->getAttrOfType<ElementsAttr>("values_tensor")) {
    values.assign(tensor.getValues<Attribute>().begin(), tensor.getValues<Attribute>().end());
  }
  if (auto d = op->getAttrOfType<ElementsAttr>("default_tensor"))
    dflt = *d.getValues<Attribute>().begin();
  if (!dflt)
    dflt = isa<FloatType>(elt) ? Attribute(b.getFloatAttr(elt, -0.0)) : b.getIntegerAttr(elt, -1);
  auto scalar = [&](Attribute v) -> Value {
    if (auto f = dyn_cast<FloatAttr>(v))
      return cst(b, l, elt, f.getValueAsDouble());
    return b.create<arith::ConstantOp>(l, b.getIntegerAttr(elt, cast<IntegerAttr>(v).getInt()));
  };
  SmallVector<StringRef> keys = stringKeys(op);
  Value r = scalar(dflt);
  // Last key first, so that the first equal key wins.
  for (int64_t k = (int64_t)keys.size() - 1; k >= 0; --k) {
    Value key = globalStringAddress(b, l, op->getParentOfType<ModuleOp>(), keys[k]);
    r = b.create<arith::SelectOp>(l, stringsEqual(b, l, a[0], key, op), scalar(values[k]), r);
  }
  return r;
}

ScalarFn compare(arith::CmpFPredicate fp, arith::CmpIPredicate ip,
                 arith::CmpIPredicate up) {
  return [fp, ip, up](OpBuilder &b, Location l, ValueRange a, Operation *op) -> Value {
    if (op->hasAttr("kiln.strings"))
      return stringsEqual(b, l, a[0], a[1], op);
    if (isFloat(a[0].getType()))
      return b.create<arith::CmpFOp>(l, fp, a[0], a[1]);
    return b.create<arith::CmpIOp>(l, wasUnsigned(op) ? up : ip, a[0], a[1]);
  };
}

/// Float, signed or unsigned (`uOp`) integer binary op.
template <typename FOp, typename IOp, typename UOp = IOp>
Value fOrI(OpBuilder &b, Location l, Value x, Value y, bool isUnsigned = false) {
  if (isFloat(x.getType()))
    return b.create<FOp>(l, x, y);
  if (isUnsigned)
    return b.create<UOp>(l, x, y);
  return b.create<IOp>(l, x, y);
}

Value selectCmpF(OpBuilder &b, Location l, arith::CmpFPredicate p, Value x,
                 Value y, Value t, Value f) {
  return b.create<arith::SelectOp>(l, b.create<arith::CmpFOp>(l, p, x, y), t, f);
}

using UnaryBody = Value (*)(OpBuilder &, Location, Value, Operation *);

/// ONNX Pow: the result has the base's type; integer bases go through f64
/// (exact for results below 2^53) and truncate back.
Value powScalar(OpBuilder &b, Location l, Value x, Value e, Operation *op) {
  Type t = x.getType();
  bool eU = wasUnsigned(op, 1);
  if (isFloat(t))
    return b.create<math::PowFOp>(l, x, castScalarImpl(b, l, e, t, eU));
  Type f64 = b.getF64Type();
  bool xU = wasUnsigned(op, 0);
  Value r = b.create<math::PowFOp>(l, castScalarImpl(b, l, x, f64, xU),
                                   castScalarImpl(b, l, e, f64, eU));
  return castScalarImpl(b, l, r, t, false, xU);
}

/// ONNX Mod: fmod=1 is C fmod (sign of the dividend); fmod=0 (integers
/// only) is Python's %, the sign of the divisor.
Value modScalar(OpBuilder &b, Location l, Value x, Value y, bool fmod,
                bool isUnsigned) {
  Type t = x.getType();
  if (isUnsigned)
    return b.create<arith::RemUIOp>(l, x, y);
  if (isFloat(t)) {
    Value r = b.create<arith::RemFOp>(l, x, y);
    if (fmod)
      return r;
    // numpy.mod: a nonzero remainder takes the divisor's sign, a zero one
    // the divisor's sign bit.
    Value zero = cst(b, l, t, 0.0);
    Value isZero = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, r, zero);
    Value rNeg = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLT, r, zero);
    Value yNeg = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLT, y, zero);
    Value differ = b.create<arith::XOrIOp>(l, rNeg, yNeg);
    Value fixed = b.create<arith::SelectOp>(l, differ, b.create<arith::AddFOp>(l, r, y), r);
    // copysign(0, y) from y's sign bit (math.copysign does not lower here).
    Type bits = b.getIntegerType(t.getIntOrFloatBitWidth());
    Value ySignBit = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt,
                                             b.create<arith::BitcastOp>(l, bits, y), cst(b, l, bits, 0));
    Value signedZero = b.create<arith::SelectOp>(l, ySignBit, cst(b, l, t, -0.0), zero);
    return b.create<arith::SelectOp>(l, isZero, signedZero, fixed);
  }
  Value r = b.create<arith::RemSIOp>(l, x, y);
  if (fmod)
    return r;
  Value zero = cst(b, l, t, 0);
  Value nonzero = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne, r, zero);
  Value rNeg = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, r, zero);
  Value yNeg = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, y, zero);
  Value differ = b.create<arith::XOrIOp>(l, rNeg, yNeg);
  Value fix = b.create<arith::AndIOp>(l, nonzero, differ);
  return b.create<arith::SelectOp>(l, fix, b.create<arith::AddIOp>(l, r, y), r);
}


} // namespace

bool requireFloatInput(Operation *op, std::string &why) {
  auto t = dyn_cast<ShapedType>(op->getOperand(0).getType());
  if (t && isFloat(t.getElementType()))
    return true;
  why = "the first input must be a float tensor";
  return false;
}

bool rejectUnsigned(Operation *op, std::string &why) {
  SmallVector<Type> types(op->getOperandTypes());
  llvm::append_range(types, op->getResultTypes());
  for (Type t : types)
    if (auto st = dyn_cast<ShapedType>(t))
      if (st.getElementType().isUnsignedInteger()) {
        why = "unsigned element types are not supported";
        return false;
      }
  return true;
}

Value castScalar(OpBuilder &b, Location l, Value x, Type to, bool fromUnsigned,
                 bool toUnsigned) {
  return castScalarImpl(b, l, x, to, fromUnsigned, toUnsigned);
}

void registerElementwiseOps(LoweringTable &m) {
  auto ew = [&](const char *name, ScalarFn fn, bool floatOnly = true) {
    m[name] = {elementwiseOp(std::move(fn)), floatOnly};
    m[name].elementwise = true;
  };
  auto un = [&](const char *name, UnaryBody f, bool floatOnly = true) {
    m[name] = {elementwiseOp(unaryF(f)), floatOnly};
    m[name].elementwise = true;
  };
  // A residual Add may carry the activation that followed it.
  ew("Add",
     [f = fold(arithBinary<arith::AddFOp, arith::AddIOp>())](
         OpBuilder &b, Location l, ValueRange a, Operation *op) -> Value {
       Value sum = f(b, l, a, op);
       Value y = applyFusedActivation(b, l, sum, op);
       return y ? y : sum;
     },
     false);
  ew("Sub", arithBinary<arith::SubFOp, arith::SubIOp>(), false);
  ew("Mul", fold(arithBinary<arith::MulFOp, arith::MulIOp>()), false);
  // Integer division truncates toward zero, as ONNX (and C) define it.
  ew("Div", signedBinary<arith::DivFOp, arith::DivSIOp, arith::DivUIOp>(), false);
  ew("Sum", fold(arithBinary<arith::AddFOp, arith::AddIOp>()), false);
  ew("Max", fold(signedBinary<arith::MaximumFOp, arith::MaxSIOp, arith::MaxUIOp>()), false);
  ew("Min", fold(signedBinary<arith::MinimumFOp, arith::MinSIOp, arith::MinUIOp>()), false);
  ew("Mean", [](OpBuilder &b, Location l, ValueRange a, Operation *) -> Value {
    Value acc = a[0];
    for (Value v : a.drop_front())
      acc = b.create<arith::AddFOp>(l, acc, v);
    return b.create<arith::DivFOp>(l, acc, cst(b, l, acc.getType(), a.size()));
  });
  ew("Pow", [](OpBuilder &b, Location l, ValueRange a, Operation *op) -> Value {
    return powScalar(b, l, a[0], a[1], op);
  }, false);
  ew("Mod", [](OpBuilder &b, Location l, ValueRange a, Operation *op) -> Value {
    return modScalar(b, l, a[0], a[1], getIntAttr(op, "fmod", 0) != 0, wasUnsigned(op));
  }, false);
  // A shift amount outside [0, width) gives 0, or -1 for a right shift of
  // a negative signed value.
  ew("BitShift", [](OpBuilder &b, Location l, ValueRange a, Operation *op) -> Value {
    Type t = a[0].getType();
    Value zero = cst(b, l, t, 0);
    bool u = wasUnsigned(op);
    Value oor = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::uge, a[1],
                                        cst(b, l, t, t.getIntOrFloatBitWidth()));
    // Keep the in-range shift well defined whatever the amount.
    Value amount = b.create<arith::SelectOp>(l, oor, zero, a[1]);
    if (getStrAttr(op, "direction", "LEFT") == "LEFT")
      return b.create<arith::SelectOp>(l, oor, zero, b.create<arith::ShLIOp>(l, a[0], amount));
    if (u)
      return b.create<arith::SelectOp>(l, oor, zero, b.create<arith::ShRUIOp>(l, a[0], amount));
    Value neg = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, a[0], zero);
    Value fill = b.create<arith::SelectOp>(l, neg, cst(b, l, t, -1), zero);
    return b.create<arith::SelectOp>(l, oor, fill, b.create<arith::ShRSIOp>(l, a[0], amount));
  }, false);
  ew("PRelu", [](OpBuilder &b, Location l, ValueRange a, Operation *) -> Value {
    Value x = a[0];
    if (isFloat(x.getType()))
      return selectCmpF(b, l, arith::CmpFPredicate::OLT, x, cst(b, l, x.getType(), 0.0),
                        b.create<arith::MulFOp>(l, x, a[1]), x);
    Value neg = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, x, cst(b, l, x.getType(), 0));
    return b.create<arith::SelectOp>(l, neg, b.create<arith::MulIOp>(l, x, a[1]), x);
  }, false);
  un(
      "Relu",
      [](OpBuilder &b, Location l, Value x, Operation *) -> Value {
        if (isFloat(x.getType()))
          return maxKeepingNaN(b, l, x, cst(b, l, x.getType(), 0));
        return b.create<arith::MaxSIOp>(l, x, cst(b, l, x.getType(), 0));
      },
      false);
  un("Sigmoid", [](OpBuilder &b, Location l, Value x, Operation *) { return sigmoid(b, l, x); });
  un("Tanh", [](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::TanhOp>(l, x); });
  un("Exp", [](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::ExpOp>(l, x); });
  un("Log", [](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::LogOp>(l, x); });
  un("Sqrt", [](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::SqrtOp>(l, x); });
  un("Erf", [](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::ErfOp>(l, x); });
  un("Sin", [](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::SinOp>(l, x); });
  un("Cos", [](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::CosOp>(l, x); });
  un("Tan", [](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::TanOp>(l, x); });
  un("Asin", [](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::AsinOp>(l, x); });
  un("Acos", [](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::AcosOp>(l, x); });
  un("Atan", [](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::AtanOp>(l, x); });
  un("Sinh", [](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::SinhOp>(l, x); });
  un("Cosh", [](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::CoshOp>(l, x); });
  un("Asinh", [](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::AsinhOp>(l, x); });
  un("Acosh", [](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::AcoshOp>(l, x); });
  un("Atanh", [](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::AtanhOp>(l, x); });
  un("Abs", [](OpBuilder &b, Location l, Value x, Operation *op) -> Value {
    if (isFloat(x.getType()))
      return b.create<math::AbsFOp>(l, x);
    if (wasUnsigned(op))
      return x;
    return b.create<math::AbsIOp>(l, x);
  }, false);
  un("Neg", [](OpBuilder &b, Location l, Value x, Operation *) -> Value {
    if (isFloat(x.getType()))
      return b.create<arith::NegFOp>(l, x);
    return b.create<arith::SubIOp>(l, cst(b, l, x.getType(), 0), x);
  }, false);
  un("Sign", [](OpBuilder &b, Location l, Value x, Operation *) -> Value {
    Type t = x.getType();
    Value zero = cst(b, l, t, 0), one = cst(b, l, t, 1), mone = cst(b, l, t, -1);
    if (isFloat(t))
      return selectCmpF(b, l, arith::CmpFPredicate::OGT, x, zero, one,
                        selectCmpF(b, l, arith::CmpFPredicate::OLT, x, zero, mone, zero));
    Value pos = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::sgt, x, zero);
    Value neg = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, x, zero);
    return b.create<arith::SelectOp>(l, pos, one, b.create<arith::SelectOp>(l, neg, mone, zero));
  }, false);
  un("Floor", [](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::FloorOp>(l, x); });
  un("Ceil", [](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::CeilOp>(l, x); });
  // Halves round to even.
  un("Round", [](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::RoundEvenOp>(l, x); });
  un("Reciprocal", [](OpBuilder &b, Location l, Value x, Operation *) -> Value {
    return b.create<arith::DivFOp>(l, cst(b, l, x.getType(), 1.0), x);
  });
  un("LeakyRelu", [](OpBuilder &b, Location l, Value x, Operation *op) -> Value {
    Value a = cst(b, l, x.getType(), getFloatAttr(op, "alpha", 0.01f));
    return selectCmpF(b, l, arith::CmpFPredicate::OLT, x, cst(b, l, x.getType(), 0.0),
                      b.create<arith::MulFOp>(l, x, a), x);
  });
  un("Elu", [](OpBuilder &b, Location l, Value x, Operation *op) -> Value {
    Type t = x.getType();
    Value a = cst(b, l, t, getFloatAttr(op, "alpha", 1.0f));
    Value em1 = b.create<arith::SubFOp>(l, b.create<math::ExpOp>(l, x), cst(b, l, t, 1.0));
    return selectCmpF(b, l, arith::CmpFPredicate::OLT, x, cst(b, l, t, 0.0),
                      b.create<arith::MulFOp>(l, a, em1), x);
  });
  un("Selu", [](OpBuilder &b, Location l, Value x, Operation *op) -> Value {
    Type t = x.getType();
    Value a = cst(b, l, t, getFloatAttr(op, "alpha", 1.67326319217681884765625f));
    Value g = cst(b, l, t, getFloatAttr(op, "gamma", 1.05070102214813232421875f));
    Value neg = b.create<arith::SubFOp>(l, b.create<arith::MulFOp>(l, a, b.create<math::ExpOp>(l, x)), a);
    Value v = selectCmpF(b, l, arith::CmpFPredicate::OLE, x, cst(b, l, t, 0.0), neg, x);
    return b.create<arith::MulFOp>(l, g, v);
  });
  un("Celu", [](OpBuilder &b, Location l, Value x, Operation *op) -> Value {
    Type t = x.getType();
    Value a = cst(b, l, t, getFloatAttr(op, "alpha", 1.0f));
    Value zero = cst(b, l, t, 0.0);
    Value em1 = b.create<arith::SubFOp>(l, b.create<math::ExpOp>(l, b.create<arith::DivFOp>(l, x, a)),
                                        cst(b, l, t, 1.0));
    Value neg = b.create<arith::MinimumFOp>(l, zero, b.create<arith::MulFOp>(l, a, em1));
    return b.create<arith::AddFOp>(l, b.create<arith::MaximumFOp>(l, zero, x), neg);
  });
  un("Swish", [](OpBuilder &b, Location l, Value x, Operation *op) -> Value {
    Value a = cst(b, l, x.getType(), getFloatAttr(op, "alpha", 1.0f));
    return b.create<arith::MulFOp>(l, x, sigmoid(b, l, b.create<arith::MulFOp>(l, a, x)));
  });
  ew("SwiGLU", [](OpBuilder &b, Location l, ValueRange v, Operation *op) -> Value {
    Value a = cst(b, l, v[0].getType(), getFloatAttr(op, "alpha", 1.0f));
    Value gate = b.create<arith::MulFOp>(l, v[0], sigmoid(b, l, b.create<arith::MulFOp>(l, a, v[0])));
    return b.create<arith::MulFOp>(l, gate, v[1]);
  });
  un("Softplus", [](OpBuilder &b, Location l, Value x, Operation *) -> Value {
    return b.create<math::Log1pOp>(l, b.create<math::ExpOp>(l, x));
  });
  un("Mish", [](OpBuilder &b, Location l, Value x, Operation *) -> Value {
    Value sp = b.create<math::Log1pOp>(l, b.create<math::ExpOp>(l, x));
    return b.create<arith::MulFOp>(l, x, b.create<math::TanhOp>(l, sp));
  });
  un("Softsign", [](OpBuilder &b, Location l, Value x, Operation *) -> Value {
    Value d = b.create<arith::AddFOp>(l, cst(b, l, x.getType(), 1.0), b.create<math::AbsFOp>(l, x));
    return b.create<arith::DivFOp>(l, x, d);
  });
  un("ThresholdedRelu", [](OpBuilder &b, Location l, Value x, Operation *op) -> Value {
    Type t = x.getType();
    return selectCmpF(b, l, arith::CmpFPredicate::OGT, x, cst(b, l, t, getFloatAttr(op, "alpha", 1.0f)),
                      x, cst(b, l, t, 0.0));
  });
  un("Shrink", [](OpBuilder &b, Location l, Value x, Operation *op) -> Value {
    Type t = x.getType();
    double lambd = getFloatAttr(op, "lambd", 0.5f), bias = getFloatAttr(op, "bias", 0.0f);
    if (!isFloat(t)) {
      // Integer inputs compare and shift in f64, then convert back.
      Value xf = castScalarImpl(b, l, x, b.getF64Type());
      Type f = xf.getType();
      Value r = selectCmpF(b, l, arith::CmpFPredicate::OLT, xf, cst(b, l, f, -lambd),
                           b.create<arith::AddFOp>(l, xf, cst(b, l, f, bias)),
                           selectCmpF(b, l, arith::CmpFPredicate::OGT, xf, cst(b, l, f, lambd),
                                      b.create<arith::SubFOp>(l, xf, cst(b, l, f, bias)),
                                      cst(b, l, f, 0.0)));
      return b.create<arith::FPToSIOp>(l, t, r);
    }
    return selectCmpF(b, l, arith::CmpFPredicate::OLT, x, cst(b, l, t, -lambd),
                      b.create<arith::AddFOp>(l, x, cst(b, l, t, bias)),
                      selectCmpF(b, l, arith::CmpFPredicate::OGT, x, cst(b, l, t, lambd),
                                 b.create<arith::SubFOp>(l, x, cst(b, l, t, bias)),
                                 cst(b, l, t, 0.0)));
  }, false);
  un("HardSigmoid", [](OpBuilder &b, Location l, Value x, Operation *op) -> Value {
    Type t = x.getType();
    Value y = b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, x, cst(b, l, t, getFloatAttr(op, "alpha", 0.2f))),
                                      cst(b, l, t, getFloatAttr(op, "beta", 0.5f)));
    return clampKeepingNaN(b, l, y, cst(b, l, t, 0.0), cst(b, l, t, 1.0));
  });
  un("HardSwish", [](OpBuilder &b, Location l, Value x, Operation *) -> Value {
    Type t = x.getType();
    Value y = b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, x, cst(b, l, t, 1.0 / 6.0)), cst(b, l, t, 0.5));
    return b.create<arith::MulFOp>(
        l, x, clampKeepingNaN(b, l, y, cst(b, l, t, 0.0), cst(b, l, t, 1.0)));
  });
  un("Gelu", [](OpBuilder &b, Location l, Value x, Operation *op) -> Value {
    Type t = x.getType();
    Value half = cst(b, l, t, 0.5), one = cst(b, l, t, 1.0);
    Value inner;
    if (getStrAttr(op, "approximate", "none") == "tanh") {
      Value x3 = b.create<arith::MulFOp>(l, x, b.create<arith::MulFOp>(l, x, x));
      Value p = b.create<arith::AddFOp>(l, x, b.create<arith::MulFOp>(l, x3, cst(b, l, t, 0.044715)));
      inner = b.create<math::TanhOp>(l, b.create<arith::MulFOp>(l, p, cst(b, l, t, std::sqrt(2.0 / M_PI))));
    } else {
      inner = b.create<math::ErfOp>(l, b.create<arith::MulFOp>(l, x, cst(b, l, t, M_SQRT1_2)));
    }
    return b.create<arith::MulFOp>(l, b.create<arith::MulFOp>(l, x, half), b.create<arith::AddFOp>(l, one, inner));
  });
  ew("Clip", [](OpBuilder &b, Location l, ValueRange a, Operation *op) -> Value {
    // Operands are x and whichever of min/max are present.
    Value x = a[0];
    unsigned next = 1;
    bool u = wasUnsigned(op);
    if (!isNone(op->getOperand(1)))
      x = fOrI<arith::MaximumFOp, arith::MaxSIOp, arith::MaxUIOp>(b, l, x, a[next++], u);
    if (op->getNumOperands() > 2 && !isNone(op->getOperand(2)))
      x = fOrI<arith::MinimumFOp, arith::MinSIOp, arith::MinUIOp>(b, l, x, a[next], u);
    return x;
  }, false);
  ew("Where", [](OpBuilder &b, Location l, ValueRange a, Operation *) -> Value {
    return b.create<arith::SelectOp>(l, a[0], a[1], a[2]);
  }, false);
  using FP = arith::CmpFPredicate;
  using IP = arith::CmpIPredicate;
  ew("Equal", compare(FP::OEQ, IP::eq, IP::eq), false);
  ew("Less", compare(FP::OLT, IP::slt, IP::ult), false);
  ew("Greater", compare(FP::OGT, IP::sgt, IP::ugt), false);
  ew("LessOrEqual", compare(FP::OLE, IP::sle, IP::ule), false);
  ew("GreaterOrEqual", compare(FP::OGE, IP::sge, IP::uge), false);
  un("IsNaN", [](OpBuilder &b, Location l, Value x, Operation *) -> Value {
    return b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNO, x, x);
  }, false);
  un("IsInf", [](OpBuilder &b, Location l, Value x, Operation *op) -> Value {
    Type t = x.getType();
    double inf = std::numeric_limits<double>::infinity();
    Value r = cst(b, l, b.getI1Type(), 0);
    if (getIntAttr(op, "detect_positive", 1))
      r = b.create<arith::OrIOp>(l, r, b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, x, cst(b, l, t, inf)));
    if (getIntAttr(op, "detect_negative", 1))
      r = b.create<arith::OrIOp>(l, r, b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, x, cst(b, l, t, -inf)));
    return r;
  }, false);
  un("Not", [](OpBuilder &b, Location l, Value x, Operation *) -> Value {
    return b.create<arith::XOrIOp>(l, x, cst(b, l, x.getType(), 1));
  }, false);
  ew("And", arithBinary<arith::AndIOp, arith::AndIOp>(), false);
  ew("Or", arithBinary<arith::OrIOp, arith::OrIOp>(), false);
  ew("Xor", arithBinary<arith::XOrIOp, arith::XOrIOp>(), false);
  ew("BitwiseAnd", arithBinary<arith::AndIOp, arith::AndIOp>(), false);
  ew("BitwiseOr", arithBinary<arith::OrIOp, arith::OrIOp>(), false);
  ew("BitwiseXor", arithBinary<arith::XOrIOp, arith::XOrIOp>(), false);
  un("BitwiseNot", [](OpBuilder &b, Location l, Value x, Operation *) -> Value {
    return b.create<arith::XOrIOp>(l, x, cst(b, l, x.getType(), -1));
  }, false);
  // Same-width reinterpretation; a bool is its byte.
  un("BitCast", [](OpBuilder &b, Location l, Value x, Operation *op) -> Value {
    Type to = resultType(op).getElementType();
    if (x.getType().isInteger(1))
      return b.create<arith::ExtUIOp>(l, to, x);
    return b.create<arith::BitcastOp>(l, to, x);
  }, false);
  m["BitCast"].check = [](Operation *op, std::string &why) {
    auto from = cast<ShapedType>(op->getOperand(0).getType()).getElementType();
    auto to = cast<ShapedType>(op->getResult(0).getType()).getElementType();
    unsigned fw = from.isInteger(1) ? 8 : from.getIntOrFloatBitWidth();
    if (fw == to.getIntOrFloatBitWidth() && !to.isInteger(1))
      return true;
    why = "only same-width reinterpretations are supported";
    return false;
  };
  ew("LabelEncoder", labelEncode, false);
  m["LabelEncoder"].check = [](Operation *op, std::string &why) {
    SmallVector<StringRef> keys = stringKeys(op);
    int64_t numValues = -1;
    if (auto v = op->getAttrOfType<ArrayAttr>("values_int64s"))
      numValues = v.size();
    else if (auto v = op->getAttrOfType<ArrayAttr>("values_floats"))
      numValues = v.size();
    else if (auto v = op->getAttrOfType<ElementsAttr>("values_tensor");
             v && isa<IntegerType, FloatType>(v.getElementType()))
      numValues = v.getNumElements();
    Type out = cast<ShapedType>(op->getResult(0).getType()).getElementType();
    if (keys.empty() || numValues != (int64_t)keys.size() || !isa<IntegerType, FloatType>(out)) {
      why = "only string keys to numeric values are supported";
      return false;
    }
    return true;
  };
  // These lowerings follow the signedness of the op's (former) unsigned
  // types; every other integer op refuses unsigned ones.
  static const llvm::StringSet<> unsignedAware = {
      "Add", "Sub", "Mul", "Div", "Sum", "Max", "Min", "Mod", "Pow",
      "BitShift", "Abs", "Clip", "Where", "Equal", "Less", "Greater",
      "LessOrEqual", "GreaterOrEqual", "Cast", "CastLike", "And", "Or", "Xor",
      "Not", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot", "BitCast"};
  for (auto &entry : m)
    if (!entry.second.check && !entry.second.floatOnly &&
        !unsignedAware.contains(entry.getKey()))
      entry.second.check = rejectUnsigned;
}

} // namespace kiln::cpu
