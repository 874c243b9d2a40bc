//===- ElementwiseOps.cpp - elementwise onnx ops to linalg.generic ---===//
#include "providers/cpu/Lowering.h"

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

Value clampF(OpBuilder &b, Location l, Value x, Value lo, Value hi) {
  return b.create<arith::MinimumFOp>(l, b.create<arith::MaximumFOp>(l, x, lo), hi);
}

Value castScalarImpl(OpBuilder &b, Location l, Value x, Type to) {
  Type from = x.getType();
  if (from == to)
    return x;
  bool fromF = isFloat(from), toF = isFloat(to);
  auto fromUnsigned = from.isUnsignedInteger();
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
    return b.create<arith::FPToSIOp>(l, to, x);
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

ScalarFn compare(arith::CmpFPredicate fp, arith::CmpIPredicate ip) {
  return [fp, ip](OpBuilder &b, Location l, ValueRange a, Operation *) -> Value {
    if (isFloat(a[0].getType()))
      return b.create<arith::CmpFOp>(l, fp, a[0], a[1]);
    return b.create<arith::CmpIOp>(l, ip, a[0], a[1]);
  };
}

} // namespace

Value castScalar(OpBuilder &b, Location l, Value x, Type to) {
  return castScalarImpl(b, l, x, to);
}

void registerElementwiseOps(LoweringTable &m) {
  auto ew = [&](const char *name, ScalarFn fn, bool floatOnly = true) {
    m[name] = {elementwiseOp(std::move(fn)), floatOnly};
  };
  ew("Add", fold(arithBinary<arith::AddFOp, arith::AddIOp>()), false);
  ew("Sub", arithBinary<arith::SubFOp, arith::SubIOp>(), false);
  ew("Mul", fold(arithBinary<arith::MulFOp, arith::MulIOp>()), false);
  ew("Div", arithBinary<arith::DivFOp, arith::DivSIOp>(), false);
  ew("Sum", fold(arithBinary<arith::AddFOp, arith::AddIOp>()), false);
  ew("Max", fold(arithBinary<arith::MaximumFOp, arith::MaxSIOp>()), false);
  ew("Min", fold(arithBinary<arith::MinimumFOp, arith::MinSIOp>()), false);
  ew("Mean", [](OpBuilder &b, Location l, ValueRange a, Operation *) -> Value {
    Value acc = a[0];
    for (Value v : a.drop_front())
      acc = b.create<arith::AddFOp>(l, acc, v);
    return b.create<arith::DivFOp>(l, acc, cst(b, l, acc.getType(), a.size()));
  });
  ew("Pow", [](OpBuilder &b, Location l, ValueRange a, Operation *) -> Value {
    Value e = castScalar(b, l, a[1], a[0].getType());
    return b.create<math::PowFOp>(l, a[0], e);
  });
  ew("Relu", unaryF([](OpBuilder &b, Location l, Value x, Operation *) -> Value {
    return b.create<arith::MaximumFOp>(l, x, cst(b, l, x.getType(), 0.0));
  }));
  ew("Sigmoid", unaryF([](OpBuilder &b, Location l, Value x, Operation *) { return sigmoid(b, l, x); }));
  ew("Tanh", unaryF([](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::TanhOp>(l, x); }));
  ew("Exp", unaryF([](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::ExpOp>(l, x); }));
  ew("Log", unaryF([](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::LogOp>(l, x); }));
  ew("Sqrt", unaryF([](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::SqrtOp>(l, x); }));
  ew("Erf", unaryF([](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::ErfOp>(l, x); }));
  ew("Abs", unaryF([](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::AbsFOp>(l, x); }));
  ew("Neg", unaryF([](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<arith::NegFOp>(l, x); }));
  ew("Floor", unaryF([](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::FloorOp>(l, x); }));
  ew("Ceil", unaryF([](OpBuilder &b, Location l, Value x, Operation *) -> Value { return b.create<math::CeilOp>(l, x); }));
  ew("Reciprocal", unaryF([](OpBuilder &b, Location l, Value x, Operation *) -> Value {
    return b.create<arith::DivFOp>(l, cst(b, l, x.getType(), 1.0), x);
  }));
  ew("LeakyRelu", unaryF([](OpBuilder &b, Location l, Value x, Operation *op) -> Value {
    Value a = cst(b, l, x.getType(), getFloatAttr(op, "alpha", 0.01f));
    Value neg = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLT, x, cst(b, l, x.getType(), 0.0));
    return b.create<arith::SelectOp>(l, neg, b.create<arith::MulFOp>(l, x, a), x);
  }));
  ew("HardSigmoid", unaryF([](OpBuilder &b, Location l, Value x, Operation *op) -> Value {
    Type t = x.getType();
    Value y = b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, x, cst(b, l, t, getFloatAttr(op, "alpha", 0.2f))),
                                      cst(b, l, t, getFloatAttr(op, "beta", 0.5f)));
    return clampF(b, l, y, cst(b, l, t, 0.0), cst(b, l, t, 1.0));
  }));
  ew("HardSwish", unaryF([](OpBuilder &b, Location l, Value x, Operation *) -> Value {
    Type t = x.getType();
    Value y = b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, x, cst(b, l, t, 1.0 / 6.0)), cst(b, l, t, 0.5));
    return b.create<arith::MulFOp>(l, x, clampF(b, l, y, cst(b, l, t, 0.0), cst(b, l, t, 1.0)));
  }));
  ew("Gelu", unaryF([](OpBuilder &b, Location l, Value x, Operation *op) -> Value {
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
  }));
  ew("Clip", [](OpBuilder &b, Location l, ValueRange a, Operation *op) -> Value {
    // Operands are x and whichever of min/max are present.
    Value x = a[0];
    unsigned next = 1;
    if (!isNone(op->getOperand(1)))
      x = b.create<arith::MaximumFOp>(l, x, a[next++]);
    if (op->getNumOperands() > 2 && !isNone(op->getOperand(2)))
      x = b.create<arith::MinimumFOp>(l, x, a[next]);
    return x;
  });
  ew("Where", [](OpBuilder &b, Location l, ValueRange a, Operation *) -> Value {
    return b.create<arith::SelectOp>(l, a[0], a[1], a[2]);
  }, false);
  ew("Equal", compare(arith::CmpFPredicate::OEQ, arith::CmpIPredicate::eq), false);
  ew("Less", compare(arith::CmpFPredicate::OLT, arith::CmpIPredicate::slt), false);
  ew("Greater", compare(arith::CmpFPredicate::OGT, arith::CmpIPredicate::sgt), false);
  ew("LessOrEqual", compare(arith::CmpFPredicate::OLE, arith::CmpIPredicate::sle), false);
  ew("GreaterOrEqual", compare(arith::CmpFPredicate::OGE, arith::CmpIPredicate::sge), false);
  ew("Not", unaryF([](OpBuilder &b, Location l, Value x, Operation *) -> Value {
    return b.create<arith::XOrIOp>(l, x, cst(b, l, x.getType(), 1));
  }), false);
  ew("And", arithBinary<arith::AndIOp, arith::AndIOp>(), false);
  ew("Or", arithBinary<arith::OrIOp, arith::OrIOp>(), false);
  ew("Xor", arithBinary<arith::XOrIOp, arith::XOrIOp>(), false);
  ew("Cast", [](OpBuilder &b, Location l, ValueRange a, Operation *op) -> Value {
    return castScalar(b, l, a[0], resultType(op).getElementType());
  }, false);
}

} // namespace kiln::cpu
