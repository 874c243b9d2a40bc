//===- DropoutOps.cpp - Dropout, inference and training mode --------------===//
//
// Inference mode is the identity with an all-true mask. Training mode is
// made reproducible: the keep mask compares draws of numpy's legacy
// generator (MT19937 seeded with the node's `seed`, 0 when absent) with the
// ratio, as the ONNX reference does (`np.random.seed(seed);
// uniform(0, 1, shape) >= ratio`), so a compiled model drops the same
// elements on every run and matches the reference bit for bit. The draws
// are a constant of the input's shape; training_mode and the ratio may be
// run-time values.
//
//===----------------------------------------------------------------------===//
#include "providers/cpu/Lowering.h"

#include <cmath>
#include <cstdint>
#include <vector>

using namespace mlir;
using namespace kiln::onnx;

namespace kiln::cpu {
namespace {

/// Draws above this many elements would bloat the object file.
constexpr int64_t kMaxDraws = int64_t(1) << 24;

/// MT19937 as numpy's RandomState seeds it from an integer (init_genrand).
class Mt19937 {
public:
  explicit Mt19937(uint32_t seed) {
    state[0] = seed;
    for (unsigned i = 1; i < kN; ++i)
      state[i] = 1812433253u * (state[i - 1] ^ (state[i - 1] >> 30)) + i;
    index = kN;
  }

  uint32_t next() {
    if (index >= kN)
      twist();
    uint32_t y = state[index++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
  }

  /// numpy's random_sample: 53 random bits from two draws.
  double nextDouble() {
    uint32_t a = next() >> 5, b = next() >> 6;
    return (a * 67108864.0 + b) / 9007199254740992.0;
  }

private:
  static constexpr unsigned kN = 624, kM = 397;

  void twist() {
    for (unsigned i = 0; i < kN; ++i) {
      uint32_t y = (state[i] & 0x80000000u) | (state[(i + 1) % kN] & 0x7fffffffu);
      state[i] = state[(i + kM) % kN] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
    }
    index = 0;
  }

  uint32_t state[kN];
  unsigned index;
};

bool staticInput(Operation *op, std::string &why) {
  auto xt = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (!xt || !xt.hasStaticShape()) {
    why = "training-mode dropout needs a static input shape";
    return false;
  }
  if (xt.getNumElements() > kMaxDraws) {
    why = "training-mode dropout on more than 2^24 elements";
    return false;
  }
  return true;
}

/// The uniform draws for `shape`, in `eltType` (f64, or f32 rounded down:
/// then `draw >= ratio` keeps its f64 answer for any f32 ratio).
Value uniformDraws(OpBuilder &b, Location loc, Operation *op, ArrayRef<int64_t> shape,
                   FloatType eltType) {
  Mt19937 gen(static_cast<uint32_t>(getIntAttr(op, "seed", 0)));
  auto type = RankedTensorType::get(shape, eltType);
  int64_t n = type.getNumElements();
  DenseElementsAttr attr;
  if (eltType.isF64()) {
    std::vector<double> draws(n);
    for (double &d : draws)
      d = gen.nextDouble();
    attr = DenseElementsAttr::get(type, ArrayRef<double>(draws));
  } else {
    std::vector<float> draws(n);
    for (float &f : draws) {
      double d = gen.nextDouble();
      f = static_cast<float>(d);
      if (static_cast<double>(f) > d)
        f = std::nextafter(f, -1.0f);
    }
    attr = DenseElementsAttr::get(type, ArrayRef<float>(draws));
  }
  return b.create<arith::ConstantOp>(loc, attr);
}

Results lowerDropout(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  Value x = op->getOperand(0), ratio = op->getOperand(1), training = op->getOperand(2);
  RankedTensorType xt = typeOf(x);
  auto maskType = dyn_cast<RankedTensorType>(op->getResult(1).getType());
  if (isIdentityDropout(op))
    return SmallVector<Value>{x, maskType ? filledTensor(b, loc, maskType, 1) : Value()};

  // keep = !training || draw >= ratio; y = x * (keep ? scale : 0) with
  // scale = training ? 1 / (1 - ratio) : 1, in the ratio's type as numpy.
  auto ratioElt = isNone(ratio) ? b.getF32Type() : cast<FloatType>(typeOf(ratio).getElementType());
  FloatType drawElt = ratioElt.isF64() ? b.getF64Type() : b.getF32Type();
  Value r = isNone(ratio) ? cst(b, loc, drawElt, 0.5)
                          : castScalar(b, loc, b.create<tensor::ExtractOp>(loc, ratio, ValueRange{}),
                                       drawElt);
  Value on = b.create<tensor::ExtractOp>(loc, training, ValueRange{});
  Value one = cst(b, loc, drawElt, 1.0);
  Value scale = b.create<arith::SelectOp>(
      loc, on, b.create<arith::DivFOp>(loc, one, b.create<arith::SubFOp>(loc, one, r)), one);
  Value off = b.create<arith::XOrIOp>(loc, on, b.create<arith::ConstantIntOp>(loc, 1, 1));
  Value draws = uniformDraws(b, loc, op, xt.getShape(), drawElt);
  auto keepOf = [&](OpBuilder &b, Location l, Value draw) -> Value {
    return b.create<arith::OrIOp>(l, off, b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGE, draw, r));
  };
  Type xElt = xt.getElementType();
  Value y = elementwise(b, loc, xt, ValueRange{x, draws}, [&](OpBuilder &b, Location l, ValueRange a) {
    Value zero = cst(b, l, drawElt, 0.0);
    Value factor = b.create<arith::SelectOp>(l, keepOf(b, l, a[1]), scale, zero);
    return b.create<arith::MulFOp>(l, a[0], castScalar(b, l, factor, xElt)).getResult();
  });
  Value mask;
  if (maskType)
    mask = elementwise(b, loc, maskType, ValueRange{draws},
                       [&](OpBuilder &b, Location l, ValueRange a) { return keepOf(b, l, a[0]); });
  return SmallVector<Value>{y, mask};
}

bool dropoutSupported(Operation *op, std::string &why) {
  Value ratio = op->getOperand(1);
  if (isIdentityDropout(op))
    return true;
  if (!isNone(ratio) && !isa<FloatType>(typeOf(ratio).getElementType())) {
    why = "the ratio must be a floating-point scalar";
    return false;
  }
  if (!isFloat(typeOf(op->getOperand(0)).getElementType())) {
    why = "training-mode dropout needs a floating-point input";
    return false;
  }
  return staticInput(op, why);
}

} // namespace

void registerDropoutOps(LoweringTable &m) {
  m["Dropout"] = {lowerDropout, false, dropoutSupported};
}

} // namespace kiln::cpu
