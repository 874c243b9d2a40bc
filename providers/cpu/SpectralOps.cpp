//===- SpectralOps.cpp - DFT and window functions -------------------------===//
//
// DFT as a contraction with a constant matrix of twiddle factors along the
// axis: forward, inverse, one-sided forward (rfft) and one-sided inverse
// (irfft), following ONNX's reference (numpy.fft). A run-time axis is
// specialized per candidate (RuntimeShapeInputs.cpp). Hann, Hamming and
// Blackman windows are computed per element.
//
//===----------------------------------------------------------------------===//
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

} // namespace

void registerSpectralOps(LoweringTable &m) {
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
