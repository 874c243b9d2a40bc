//===- SpectralOps.cpp - DFT and window functions -------------------------===//
//
// DFT as a contraction with a constant matrix of twiddle factors along the
// axis: forward, inverse, one-sided forward (rfft) and one-sided inverse
// (irfft), following ONNX's reference (numpy.fft). A run-time axis is
// specialized per candidate (RuntimeShapeInputs.cpp). Hann, Hamming and
// Blackman windows are computed per element.
//
//===----------------------------------------------------------------------===//
#include "providers/cpu/IndexGeneric.h"
#include "providers/cpu/Lowering.h"


#include <cmath>

using namespace mlir;
using namespace kiln::onnx;

namespace kiln::cpu {
namespace {

struct DftShape {
  int64_t axis, n, cin, len, bins, cout;
  bool inverse, onesided;
};

std::optional<DftShape> dftShape(Operation *op, std::string &why) {
  auto xt = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (!xt || xt.getRank() < 2) {
    why = "needs a ranked input";
    return std::nullopt;
  }
  // An optional scalar input, which must be a constant.
  auto scalarInput = [&](unsigned i, int64_t &out, const char *what) {
    if (op->getNumOperands() <= i || isNone(op->getOperand(i)))
      return true;
    auto v = getConstantInts(op->getOperand(i));
    if (!v || v->size() != 1) {
      why = std::string("needs a constant ") + what + " input (it is computed at run time)";
      return false;
    }
    out = (*v)[0];
    return true;
  };
  DftShape s;
  int64_t rank = xt.getRank();
  s.cin = xt.getDimSize(rank - 1);
  // DFT-17 defaulted the axis to 1, DFT-20 to -2.
  s.axis = getIntAttr(op, "onnx.version", 20) < 20 ? 1 : -2;
  if (!scalarInput(2, s.axis, "axis"))
    return std::nullopt;
  if (s.axis < 0)
    s.axis += rank;
  s.inverse = getIntAttr(op, "inverse", 0) != 0;
  s.onesided = getIntAttr(op, "onesided", 0) != 0;
  if (s.axis < 0 || s.axis >= rank - 1 || (s.cin != 1 && s.cin != 2)) {
    why = "the axis must not be the last dim, which holds 1 or 2 components";
    return std::nullopt;
  }
  s.n = xt.getDimSize(s.axis);
  s.len = s.inverse && s.onesided ? 2 * (s.n - 1) : s.n;
  if (!scalarInput(1, s.len, "dft_length"))
    return std::nullopt;
  if (s.len <= 0 || s.n <= 0) {
    why = "empty transform";
    return std::nullopt;
  }
  s.bins = !s.inverse && s.onesided ? s.len / 2 + 1 : s.len;
  s.cout = s.inverse && s.onesided ? 1 : 2;
  if (auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType())) {
    SmallVector<int64_t> want(xt.getShape());
    want[s.axis] = s.bins;
    want[rank - 1] = s.cout;
    if (out.getShape() != ArrayRef<int64_t>(want)) {
      why = "the result shape does not match the transform";
      return std::nullopt;
    }
  }
  return s;
}

/// w[i][ci][o][co]: input position i (component ci) to output bin o
/// (component co).
std::vector<double> twiddles(const DftShape &s) {
  std::vector<double> w(s.n * s.cin * s.bins * s.cout, 0.0);
  auto at = [&](int64_t i, int64_t ci, int64_t o, int64_t co) -> double & {
    return w[((i * s.cin + ci) * s.bins + o) * s.cout + co];
  };
  for (int64_t i = 0; i < s.n; ++i)
    for (int64_t o = 0; o < s.bins; ++o) {
      double t = 2 * M_PI * double((i * o) % s.len) / double(s.len);
      double c = std::cos(t), sn = std::sin(t);
      if (!s.inverse || !s.onesided) {
        if (i >= s.len)
          continue; // the signal is cut to dft_length
        double scale = s.inverse ? 1.0 / s.len : 1.0, sign = s.inverse ? 1.0 : -1.0;
        at(i, 0, o, 0) = c * scale;
        at(i, 0, o, 1) = sign * sn * scale;
        if (s.cin == 2) {
          at(i, 1, o, 0) = -sign * sn * scale;
          at(i, 1, o, 1) = c * scale;
        }
      } else {
        // irfft: the bins past len/2 mirror the interior ones, which count
        // twice.
        if (i > s.len / 2)
          continue;
        double weight = (i == 0 || 2 * i == s.len) ? 1.0 : 2.0;
        at(i, 0, o, 0) = weight * c / s.len;
        if (s.cin == 2)
          at(i, 1, o, 0) = -weight * sn / s.len;
      }
    }
  return w;
}

Results lowerDft(OpBuilder &b, Operation *op) {
  std::string why;
  auto s = dftShape(op, why);
  if (!s)
    return emitNodeError(op) << why, failure();
  Location loc = op->getLoc();
  Value x = op->getOperand(0);
  auto out = resultType(op);
  Type elt = out.getElementType();
  int64_t rank = out.getRank();
  std::vector<double> w = twiddles(*s);
  SmallVector<Attribute> values;
  for (double v : w)
    values.push_back(b.getFloatAttr(elt, v));
  auto wt = RankedTensorType::get({s->n, s->cin, s->bins, s->cout}, elt);
  Value wc = b.create<arith::ConstantOp>(loc, DenseElementsAttr::get(wt, values));
  // Loops: the output dims, then i and ci (reductions).
  MLIRContext *ctx = b.getContext();
  int64_t iDim = rank, ciDim = rank + 1;
  SmallVector<AffineExpr> xe, we, oe;
  for (int64_t d = 0; d < rank; ++d) {
    oe.push_back(getAffineDimExpr(d, ctx));
    xe.push_back(getAffineDimExpr(d == s->axis ? iDim : d == rank - 1 ? ciDim : d, ctx));
  }
  we = {getAffineDimExpr(iDim, ctx), getAffineDimExpr(ciDim, ctx), getAffineDimExpr(s->axis, ctx),
        getAffineDimExpr(rank - 1, ctx)};
  SmallVector<AffineMap> maps = {AffineMap::get(rank + 2, 0, xe, ctx), AffineMap::get(rank + 2, 0, we, ctx),
                                 AffineMap::get(rank + 2, 0, oe, ctx)};
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  iters.push_back(utils::IteratorType::reduction);
  iters.push_back(utils::IteratorType::reduction);
  Value init = filledTensor(b, loc, out, 0.0);
  auto g = b.create<linalg::GenericOp>(
      loc, TypeRange{out}, ValueRange{x, wc}, ValueRange{init}, maps, iters,
      [&](OpBuilder &nb, Location l, ValueRange a) {
        Value p = nb.create<arith::MulFOp>(l, a[0], a[1]);
        nb.create<linalg::YieldOp>(l, ValueRange{nb.create<arith::AddFOp>(l, a[2], p)});
      });
  return SmallVector<Value>{g.getResult(0)};
}

/// Hann, Hamming and Blackman windows over the result's length (the size
/// input must agree; RuntimeShapeInputs checks it when computed at run
/// time): a0 - a1 cos(2 pi n / D) + a2 cos(4 pi n / D), computed in f64.
Results lowerWindow(OpBuilder &b, Operation *op, double a0, double a1, double a2) {
  auto out = resultType(op);
  int64_t n = out.getDimSize(0);
  double denom = getIntAttr(op, "periodic", 1) ? n : n - 1;
  Type f64 = b.getF64Type(), elt = out.getElementType();
  Value init = emptyTensor(b, op->getLoc(), out);
  auto g = b.create<linalg::GenericOp>(
      op->getLoc(), TypeRange{out}, ValueRange{}, ValueRange{init},
      ArrayRef<AffineMap>{b.getMultiDimIdentityMap(1)},
      ArrayRef<utils::IteratorType>{utils::IteratorType::parallel},
      [&](OpBuilder &nb, Location l, ValueRange) {
        Value i = nb.create<arith::IndexCastOp>(l, nb.getI64Type(), nb.create<linalg::IndexOp>(l, 0));
        Value t = nb.create<arith::MulFOp>(l, nb.create<arith::SIToFPOp>(l, f64, i),
                                           cst(nb, l, f64, denom > 0 ? 2 * M_PI / denom : 0.0));
        Value w = nb.create<arith::SubFOp>(l, cst(nb, l, f64, a0),
                                           nb.create<arith::MulFOp>(l, cst(nb, l, f64, a1),
                                                                    nb.create<math::CosOp>(l, t)));
        if (a2 != 0.0)
          w = nb.create<arith::AddFOp>(
              l, w,
              nb.create<arith::MulFOp>(l, cst(nb, l, f64, a2),
                                       nb.create<math::CosOp>(
                                           l, nb.create<arith::MulFOp>(l, t, cst(nb, l, f64, 2.0)))));
        nb.create<linalg::YieldOp>(l, castScalar(nb, l, w, elt));
      });
  return SmallVector<Value>{g.getResult(0)};
}

/// MelWeightMatrix from its run-time scalars, as ONNX's reference computes
/// it (in f64): mel_bins + 2 band edges evenly spaced in mel between the
/// two edge frequencies, mapped to spectrogram bins, and a triangle per
/// mel bin. The result shape is the compiled one; a check fails the run if
/// num_mel_bins or dft_length give another.
Results lowerMelWeightMatrix(OpBuilder &b, Operation *op) {
  auto out = resultType(op);
  Location loc = op->getLoc();
  Type f64 = b.getF64Type(), i64 = b.getI64Type();
  auto scalar = [&](unsigned i, Type to) {
    Value t = op->getOperand(i);
    Value v = typeOf(t).getRank() == 0
                  ? b.create<tensor::ExtractOp>(loc, t, ValueRange{}).getResult()
                  : b.create<tensor::ExtractOp>(
                        loc, t, ValueRange{b.create<arith::ConstantIndexOp>(loc, 0)});
    return castScalar(b, loc, v, to);
  };
  Value melBins = scalar(0, i64), dft = scalar(1, i64), rate = scalar(2, f64);
  Value lo = scalar(3, f64), hi = scalar(4, f64);
  auto i64c = [&](int64_t v) { return b.create<arith::ConstantIntOp>(loc, v, 64); };
  Value bins = b.create<arith::AddIOp>(loc, b.create<arith::DivSIOp>(loc, dft, i64c(2)), i64c(1));
  Value ok = b.create<arith::AndIOp>(
      loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, melBins, i64c(out.getDimSize(1))),
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, bins, i64c(out.getDimSize(0))));
  checkRuntimeShape(b, loc, ok, op, "num_mel_bins or dft_length", out);
  Type elt = out.getElementType();
  int64_t edges = out.getDimSize(1) + 2;
  return SmallVector<Value>{indexGeneric(b, loc, out, [&](IB &ib, ArrayRef<Value> i) -> Value {
    OpBuilder &nb = ib.b;
    Location l = ib.l;
    auto c = [&](double v) { return cst(nb, l, f64, v); };
    auto mel = [&](Value hz) {
      return nb.create<arith::DivFOp>(
          l, nb.create<arith::MulFOp>(l, c(2595.0),
                                      nb.create<math::Log1pOp>(l, nb.create<arith::DivFOp>(l, hz, c(700.0)))),
          c(std::log(10.0)));
    };
    Value lowMel = mel(lo);
    Value step = nb.create<arith::DivFOp>(l, nb.create<arith::SubFOp>(l, mel(hi), lowMel), c(edges));
    Value dftPlus1 = nb.create<arith::SIToFPOp>(l, f64, nb.create<arith::AddIOp>(l, dft, i64c(1)));
    // Spectrogram bin of band edge k.
    auto edge = [&](Value k) {
      Value m = nb.create<arith::AddFOp>(
          l, nb.create<arith::MulFOp>(l, nb.create<arith::SIToFPOp>(l, f64, k), step), lowMel);
      Value hz = nb.create<arith::MulFOp>(
          l, c(700.0),
          nb.create<math::ExpM1Op>(
              l, nb.create<arith::MulFOp>(l, nb.create<arith::DivFOp>(l, m, c(2595.0)), c(std::log(10.0)))));
      Value q = nb.create<math::FloorOp>(l, nb.create<arith::DivFOp>(l, nb.create<arith::MulFOp>(l, dftPlus1, hz), rate));
      return nb.create<arith::FPToSIOp>(l, i64, q).getResult();
    };
    Value mi = nb.create<arith::IndexCastOp>(l, i64, i[1]);
    Value j = nb.create<arith::IndexCastOp>(l, i64, i[0]);
    Value left = edge(mi), center = edge(nb.create<arith::AddIOp>(l, mi, i64c(1))),
          right = edge(nb.create<arith::AddIOp>(l, mi, i64c(2)));
    auto cmp = [&](arith::CmpIPredicate p, Value a, Value bb) {
      return nb.create<arith::CmpIOp>(l, p, a, bb).getResult();
    };
    auto both = [&](Value a, Value bb) { return nb.create<arith::AndIOp>(l, a, bb).getResult(); };
    auto ratio = [&](Value num, Value den) {
      return nb.create<arith::DivFOp>(l, nb.create<arith::SIToFPOp>(l, f64, num),
                                      nb.create<arith::SIToFPOp>(l, f64, den));
    };
    Value up = nb.create<arith::SubIOp>(l, center, left), down = nb.create<arith::SubIOp>(l, right, center);
    // Rising side [left, center] (or 1 at the center of an empty one), then
    // the falling side [center, right), which wins at the center.
    Value zero = c(0.0);
    Value rising = nb.create<arith::SelectOp>(
        l, cmp(arith::CmpIPredicate::eq, up, i64c(0)),
        nb.create<arith::SelectOp>(l, cmp(arith::CmpIPredicate::eq, j, center), c(1.0), zero),
        nb.create<arith::SelectOp>(
            l, both(cmp(arith::CmpIPredicate::sge, j, left), cmp(arith::CmpIPredicate::sle, j, center)),
            ratio(nb.create<arith::SubIOp>(l, j, left), up), zero));
    Value falling = both(cmp(arith::CmpIPredicate::sgt, down, i64c(0)),
                         both(cmp(arith::CmpIPredicate::sge, j, center), cmp(arith::CmpIPredicate::slt, j, right)));
    Value v = nb.create<arith::SelectOp>(l, falling, ratio(nb.create<arith::SubIOp>(l, right, j), down), rising);
    return castScalar(nb, l, v, elt);
  })};
}

} // namespace

void registerSpectralOps(LoweringTable &m) {
  m["MelWeightMatrix"] = {lowerMelWeightMatrix, false, [](Operation *op, std::string &why) {
                            auto t = dyn_cast<RankedTensorType>(op->getResult(0).getType());
                            if (t && t.getRank() == 2 && t.hasStaticShape() &&
                                isa<FloatType>(t.getElementType()))
                              return true;
                            why = "needs a known float result shape (declared by the model)";
                            return false;
                          }};
  auto window = [&](const char *name, double a0, double a1, double a2) {
    m[name] = {[=](OpBuilder &b, Operation *op) { return lowerWindow(b, op, a0, a1, a2); }, false,
               [](Operation *op, std::string &why) {
                 auto t = dyn_cast<RankedTensorType>(op->getResult(0).getType());
                 if (t && t.getRank() == 1 && t.hasStaticShape())
                   return true;
                 why = "needs a known window length";
                 return false;
               }};
  };
  window("HannWindow", 0.5, 0.5, 0.0);
  window("HammingWindow", 25.0 / 46.0, 21.0 / 46.0, 0.0);
  window("BlackmanWindow", 0.42, 0.5, 0.08);
  m["DFT"] = {lowerDft, false, [](Operation *op, std::string &why) {
                return requireFloatInput(op, why) && dftShape(op, why).has_value();
              }};
}

} // namespace kiln::cpu
