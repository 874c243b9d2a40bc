//===- ResizeOps.cpp - Resize and Upsample on the CPU ---------------------===//
//
// Per resized axis, a table of source indices and tap weights (1 tap
// nearest, 2 linear, 4 cubic, more with antialias when downsampling, where
// the filter stretches by 1/scale) for each output position; one generic
// then combines the taps of all resized axes. The coordinate and weight formulas
// are written once over a small scalar interface: on doubles when scales,
// sizes and roi are constants (the tables become constants, and axes the
// tables leave unchanged are skipped), or on f64 IR when one of them is
// computed at run time (the tables are computed at the start of each run,
// and a kiln.check fails the run when the values give another result shape
// than the compiled one).
//
//===----------------------------------------------------------------------===//
#include "providers/cpu/IndexGeneric.h"
#include "providers/cpu/Lowering.h"
#include "providers/cpu/Vectorize.h"

#include "dialects/kiln/KilnDialect.h"

#include <algorithm>
#include <cmath>
#include <vector>

using namespace mlir;
using namespace kiln::onnx;

namespace kiln::cpu {
namespace {

/// Scalars as C++ doubles.
struct ConstMath {
  using T = double;
  using B = bool;
  T c(double v) { return v; }
  T add(T a, T b) { return a + b; }
  T sub(T a, T b) { return a - b; }
  T mul(T a, T b) { return a * b; }
  T div(T a, T b) { return a / b; }
  T floor(T a) { return std::floor(a); }
  T ceil(T a) { return std::ceil(a); }
  B lt(T a, T b) { return a < b; }
  B le(T a, T b) { return a <= b; }
  B eq(T a, T b) { return a == b; }
  B orB(B a, B b) { return a || b; }
  B no() { return false; }
  T sel(B c, T a, T b) { return c ? a : b; }
  T abs(T a) { return std::fabs(a); }
};

/// Scalars as f64 IR values.
struct IrMath {
  OpBuilder &b;
  Location l;
  using T = Value;
  using B = Value;
  T c(double v) { return b.create<arith::ConstantOp>(l, b.getF64FloatAttr(v)); }
  T add(T x, T y) { return b.create<arith::AddFOp>(l, x, y); }
  T sub(T x, T y) { return b.create<arith::SubFOp>(l, x, y); }
  T mul(T x, T y) { return b.create<arith::MulFOp>(l, x, y); }
  T div(T x, T y) { return b.create<arith::DivFOp>(l, x, y); }
  T floor(T x) { return b.create<math::FloorOp>(l, x); }
  T ceil(T x) { return b.create<math::CeilOp>(l, x); }
  B cmp(arith::CmpFPredicate p, T x, T y) { return b.create<arith::CmpFOp>(l, p, x, y); }
  B lt(T x, T y) { return cmp(arith::CmpFPredicate::OLT, x, y); }
  B le(T x, T y) { return cmp(arith::CmpFPredicate::OLE, x, y); }
  B eq(T x, T y) { return cmp(arith::CmpFPredicate::OEQ, x, y); }
  B orB(B x, B y) { return b.create<arith::OrIOp>(l, x, y); }
  B no() { return b.create<arith::ConstantIntOp>(l, 0, 1); }
  T sel(B c0, T x, T y) { return b.create<arith::SelectOp>(l, c0, x, y); }
  T abs(T x) { return b.create<math::AbsFOp>(l, x); }
};

/// The attributes that shape the tables.
struct ResizeParams {
  StringRef ctm, nm;
  int64_t taps; // of an axis; with antialias, the most its scale may need
  double cubicA;
  bool cubic, exclude, antialias;
};

/// Taps of a linear (support 1) or cubic (support 2) filter stretched by
/// 1/scale when downsampling with antialias, as ONNX's reference counts them.
int64_t antialiasTaps(double scale, double support) {
  return 2 - 2 * ((int64_t)std::floor(-support / std::min(scale, 1.0)) + 1);
}

/// Source indices (-1 outside a tf_crop_and_resize roi) and weights of
/// output position `o` on an axis of `in` -> `on` elements.
/// (`in` and `on` are numbers of M: run-time values for dims of run-time
/// size.)
template <class M>
void tapsAt(M &m, typename M::T o, typename M::T scale, typename M::T s0, typename M::T e0,
            typename M::T in, typename M::T on, const ResizeParams &p,
            SmallVectorImpl<typename M::T> &idx, SmallVectorImpl<typename M::T> &w) {
  using T = typename M::T;
  T half = m.c(0.5), one = m.c(1.0), zero = m.c(0.0), inM1 = m.sub(in, one);
  // ONNX measures the output extent as scale * in (not the rounded size).
  T onf = m.mul(scale, in);
  T centered = m.sub(m.div(m.add(o, half), scale), half);
  T xo;
  StringRef ctm = p.ctm;
  if (ctm == "half_pixel") {
    xo = centered;
  } else if (ctm == "half_pixel_symmetric") {
    T adj = m.div(on, onf);
    xo = m.add(m.mul(m.mul(in, half), m.sub(one, adj)), centered);
  } else if (ctm == "pytorch_half_pixel") {
    xo = m.sel(m.lt(one, onf), centered, zero);
  } else if (ctm == "align_corners") {
    xo = m.sel(m.eq(onf, one), zero, m.div(m.mul(o, inM1), m.sub(onf, one)));
  } else if (ctm == "asymmetric") {
    xo = m.div(o, scale);
  } else { // tf_crop_and_resize
    T span = m.div(m.mul(m.mul(o, m.sub(e0, s0)), inM1), m.sub(onf, one));
    xo = m.sel(m.eq(onf, one), m.mul(m.mul(half, m.add(s0, e0)), inM1),
               m.add(m.mul(s0, inM1), span));
  }
  auto outside = ctm == "tf_crop_and_resize" ? m.orB(m.lt(xo, zero), m.lt(inM1, xo)) : m.no();
  T fl = m.floor(xo);
  T frac = m.sub(xo, fl);
  T base = m.sub(m.ceil(xo), m.c(p.taps / 2));
  SmallVector<T> coeff;
  if (p.antialias && p.taps > 1) {
    // The filter stretched by 1/scale: n = 2 - 2 * start taps from
    // ceil(x) - 1 + start, weights filter((start + t - ratio) * scale)
    // normalized; taps beyond n (a table sized for a smaller scale) weigh 0.
    bool cubic = p.cubic;
    T sc = m.sel(m.lt(scale, one), scale, one);
    T start = m.add(m.floor(m.div(m.c(cubic ? -2.0 : -1.0), sc)), one);
    T n = m.sub(m.c(2), m.mul(m.c(2), start));
    base = m.add(m.sub(m.ceil(xo), one), start);
    T ratio = m.sel(m.eq(xo, fl), one, frac);
    T a = m.c(p.cubicA);
    T sum = zero;
    for (int64_t k = 0; k < p.taps; ++k) {
      T d = m.abs(m.mul(m.sub(m.add(start, m.c(k)), ratio), sc));
      T f;
      if (cubic) {
        T d2 = m.mul(d, d), d3 = m.mul(d2, d);
        T inner = m.add(m.sub(m.mul(m.add(a, m.c(2)), d3), m.mul(m.add(a, m.c(3)), d2)), one);
        T outer = m.sub(m.add(m.sub(m.mul(a, d3), m.mul(m.mul(m.c(5), a), d2)),
                              m.mul(m.mul(m.c(8), a), d)),
                        m.mul(m.c(4), a));
        f = m.sel(m.le(d, one), inner, m.sel(m.lt(d, m.c(2)), outer, zero));
      } else {
        T lin = m.sub(one, d);
        f = m.sel(m.lt(lin, zero), zero, lin);
      }
      f = m.sel(m.lt(m.c(k), n), f, zero);
      coeff.push_back(f);
      sum = m.add(sum, f);
    }
    for (T &c : coeff)
      c = m.div(c, sum);
  } else if (p.taps == 1) {
    if (p.nm == "round_prefer_floor")
      base = m.sel(m.le(frac, half), fl, m.add(fl, one));
    else if (p.nm == "round_prefer_ceil")
      base = m.sel(m.lt(frac, half), fl, m.add(fl, one));
    else if (p.nm == "floor")
      base = fl;
    else
      base = m.ceil(xo);
    coeff = {one};
  } else {
    T t = m.sel(m.eq(xo, fl), one, frac);
    if (p.taps == 2) {
      coeff = {m.sub(one, t), t};
    } else {
      T a = m.c(p.cubicA);
      // Keys' kernel at distances t+1, t, 1-t and 2-t.
      auto far = [&](T d) { // 1 <= d < 2
        return m.sub(m.mul(m.add(m.mul(m.sub(m.mul(a, d), m.mul(m.c(5), a)), d),
                                 m.mul(m.c(8), a)),
                           d),
                     m.mul(m.c(4), a));
      };
      auto near = [&](T d) { // 0 <= d < 1
        return m.add(m.mul(m.mul(m.sub(m.mul(m.add(a, m.c(2)), d), m.add(a, m.c(3))), d), d), one);
      };
      T u = m.sub(one, t);
      coeff = {far(m.add(t, one)), near(t), near(u), far(m.add(u, one))};
    }
  }
  if (p.exclude) {
    T sum = zero;
    for (int64_t k = 0; k < p.taps; ++k) {
      T at = m.add(base, m.c(k));
      coeff[k] = m.sel(m.orB(m.lt(at, zero), m.lt(inM1, at)), zero, coeff[k]);
      sum = m.add(sum, coeff[k]);
    }
    for (T &c : coeff)
      c = m.sel(m.eq(sum, zero), zero, m.div(c, sum));
  }
  for (int64_t k = 0; k < p.taps; ++k) {
    T at = m.add(base, m.c(k));
    T clamped = m.sel(m.lt(at, zero), zero, m.sel(m.lt(inM1, at), inM1, at));
    idx.push_back(m.sel(outside, m.c(-1), clamped));
    w.push_back(coeff[k]);
  }
}

/// What each axis reads: its scale and roi, constants or run-time values.
struct AxisSource {
  double scale = 1.0, s0 = 0.0, e0 = 1.0;
  Value scaleV, s0V, e0V; // set when computed at run time
};

Value f64At(OpBuilder &b, Location l, Value t, int64_t i) {
  Value v = b.create<tensor::ExtractOp>(l, t, ValueRange{b.create<arith::ConstantIndexOp>(l, i)});
  return castScalar(b, l, v, b.getF64Type());
}

/// A resized axis's tables: for each output position, its taps' source
/// indices and weights (none where the axis is left unchanged).
struct Axis {
  bool identity = true;
  int64_t taps = 1;
  Value idxT, wT;
  // Output position o reads input o / repeat (nearest, an integer scale);
  // 0 if not.
  int64_t repeat = 0;
  // Linear upsampling by an integer factor whose two taps depend only on
  // the phase r = o % factor: output o = factor * i + r reads input
  // clamp(i + offsets[2r + t]) with weight weights[2r + t]; 0 if not.
  int64_t factor = 0;
  SmallVector<int64_t> offsets;
  SmallVector<float> weights;
  // A linear axis's constant tables (2 taps per output position), for the
  // marker where the taps do not repeat (align_corners, other scales).
  std::vector<int64_t> linearIdx;
  std::vector<float> linearW;
};

/// Whether linear tables (`idx`, `w`: 2 taps per output position) of an
/// axis of `in` -> `on` elements repeat with the phase: then sets the
/// axis's factor, offsets and weights. Compares what each output position
/// reads, each input's summed weight, so that taps clamped at the edges
/// (an index of -1 read as 0) match whichever way the tables spell them.
void matchLinearPhases(Axis &A, ArrayRef<int64_t> idx, ArrayRef<float> w,
                       int64_t in, int64_t on) {
  int64_t s = on / in;
  if (on % in || s < 2 || in < 3)
    return;
  // The phases' taps from input 1, whose neighbours are all inside.
  SmallVector<int64_t> offsets;
  SmallVector<float> weights;
  for (int64_t r = 0; r < s; ++r)
    for (int64_t t = 0; t < 2; ++t) {
      int64_t off = idx[2 * (s + r) + t] - 1;
      if (off < -1 || off > 1)
        return;
      offsets.push_back(off);
      weights.push_back(w[2 * (s + r) + t]);
    }
  for (int64_t o = 0; o < on; ++o) {
    int64_t i = o / s, r = o % s;
    SmallVector<std::pair<int64_t, double>> got, want;
    auto add = [](SmallVector<std::pair<int64_t, double>> &m, int64_t k,
                  double v) {
      auto it = llvm::find_if(m, [&](auto &e) { return e.first == k; });
      if (it == m.end())
        m.push_back({k, v});
      else
        it->second += v;
    };
    for (int64_t t = 0; t < 2; ++t) {
      add(got, idx[2 * o + t], w[2 * o + t]);
      add(want, std::clamp<int64_t>(i + offsets[2 * r + t], 0, in - 1),
          weights[2 * r + t]);
    }
    for (const auto &g : got) {
      auto it =
          llvm::find_if(want, [&](auto &e) { return e.first == g.first; });
      double other = it == want.end() ? 0.0 : it->second;
      if (std::fabs(g.second - other) > 1e-6)
        return;
    }
    for (const auto &e : want)
      if (llvm::none_of(got, [&](auto &g) { return g.first == e.first; }) &&
          std::fabs(e.second) > 1e-6)
        return;
  }
  A.factor = s;
  A.offsets = std::move(offsets);
  A.weights = std::move(weights);
}

/// Unrolled up to this many tap combinations per output element.
constexpr int64_t kMaxUnrolledTaps = 64;

/// out[i] = sum over the taps t of the resized axes of
/// x[idx(i, t)] * prod w(i, t), as a reduction over one loop per resized
/// axis (the first axis's taps innermost: the unrolled sum's order). The
/// tables are its inputs, which gives the tap loops their extents.
Value tapReduction(OpBuilder &b, Location loc, Value x, RankedTensorType out,
                   ArrayRef<int64_t> resized, ArrayRef<Axis> ax,
                   ValueRange outSizes) {
  int64_t r = out.getRank(), n = r + resized.size();
  Type elt = out.getElementType();
  MLIRContext *ctx = b.getContext();
  Value init = b.create<linalg::FillOp>(loc, scalarConst(b, loc, elt, 0.0),
                                        emptyTensor(b, loc, out, outSizes))
                   .getResult(0);
  SmallVector<Value> tables;
  SmallVector<AffineMap> maps;
  for (auto [j, a] : llvm::enumerate(resized)) {
    AffineMap m = AffineMap::get(
        n, 0, {getAffineDimExpr(a, ctx), getAffineDimExpr(n - 1 - j, ctx)},
        ctx);
    tables.append({ax[a].idxT, ax[a].wT});
    maps.append({m, m});
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(n, ctx).getMajorSubMap(r));
  SmallVector<utils::IteratorType> iters(r, utils::IteratorType::parallel);
  iters.append(resized.size(), utils::IteratorType::reduction);
  auto g = b.create<linalg::GenericOp>(
      loc, TypeRange{out}, tables, ValueRange{init}, maps, iters,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        IB ib{nb, l};
        SmallVector<Value> from;
        for (int64_t a = 0; a < r; ++a)
          from.push_back(nb.create<linalg::IndexOp>(l, a));
        Value w;
        for (auto [j, a] : llvm::enumerate(resized)) {
          from[a] = ib.index(args[2 * j]);
          Value wa = args[2 * j + 1];
          w = w ? (Value)nb.create<arith::MulFOp>(l, w, wa) : wa;
        }
        Value v = nb.create<tensor::ExtractOp>(l, x, from);
        nb.create<linalg::YieldOp>(
            l, ValueRange{nb.create<arith::AddFOp>(
                   l, args.back(), nb.create<arith::MulFOp>(l, v, w))});
      });
  return g.getResult(0);
}

Results lowerResize(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  Value x = op->getOperand(0);
  auto xt = typeOf(x), out = resultType(op);
  Type elt = out.getElementType();
  bool upsample = op->getName().getStringRef() == "onnx.Upsample";
  int64_t r = xt.getRank();
  ResizeParams params;
  ResizeParams &p = params;
  StringRef mode = getStrAttr(op, "mode", "nearest");
  p.ctm = upsample ? "asymmetric" : getStrAttr(op, "coordinate_transformation_mode", "half_pixel");
  p.nm = upsample ? "floor" : getStrAttr(op, "nearest_mode", "round_prefer_floor");
  if (!upsample && getIntAttr(op, "onnx.version", 0) == 10)
    p.ctm = "asymmetric", p.nm = "floor";
  p.taps = mode == "nearest" ? 1 : mode == "cubic" ? 4 : 2;
  p.cubic = mode == "cubic";
  p.cubicA = getFloatAttr(op, "cubic_coeff_a", -0.75);
  p.exclude = getIntAttr(op, "exclude_outside", 0) != 0;
  p.antialias = !upsample && getIntAttr(op, "antialias", 0) && p.taps > 1;
  double extrap = getFloatAttr(op, "extrapolation_value", 0.0);
  bool tfCrop = p.ctm == "tf_crop_and_resize";

  ResizeInputs inputs = resizeInputs(op, r);
  ArrayRef<int64_t> axes = inputs.axes;
  Value scalesV = inputs.scales, sizesV = inputs.sizes, roiV = inputs.roi;
  SmallVector<AxisSource> src(r);
  auto runtime = [](Value v) { return v && !isNone(v) && !getConstantDoubles(v); };

  // A kiln.check for values read at run time: they must give the compiled
  // result shape.
  Value ok;
  auto require = [&](Value cond) {
    ok = ok ? b.create<arith::AndIOp>(loc, ok, cond).getResult() : cond;
  };
  IrMath ir{b, loc};
  // Dims of run-time size: the input's as f64 (inF), the result's as an
  // index (onV, from the scale or the sizes; the shape function agrees).
  bool dynamic = !xt.hasStaticShape() || !out.hasStaticShape();
  SmallVector<Value> inF(r), onV(r);
  for (int64_t a = 0; a < r; ++a)
    inF[a] = xt.isDynamicDim(a)
                 ? b.create<arith::SIToFPOp>(
                       loc, b.getF64Type(),
                       b.create<arith::IndexCastOp>(loc, b.getI64Type(), dimSize(b, loc, x, a)))
                 : ir.c(xt.getDimSize(a));
  auto toIndex = [&](Value f) {
    return b.create<arith::IndexCastOp>(loc, b.getIndexType(),
                                        b.create<arith::FPToSIOp>(loc, b.getI64Type(), f));
  };
  // The result's size on axis a is `n` (f64): checked where it is static.
  auto resultSize = [&](int64_t a, Value n) {
    if (out.isDynamicDim(a))
      onV[a] = toIndex(n);
    else
      require(ir.eq(n, ir.c(out.getDimSize(a))));
  };
  auto constScales = dynamic && scalesV && !isNone(scalesV) ? getConstantDoubles(scalesV)
                                                             : std::nullopt;
  if (constScales && !constScales->empty()) {
    // Constant scales over run-time sizes: floor(in * scale).
    for (auto [j, a] : llvm::enumerate(axes)) {
      src[a].scale = (*constScales)[j];
      if (xt.isDynamicDim(a) || out.isDynamicDim(a))
        resultSize(a, ir.floor(ir.mul(ir.c(src[a].scale), inF[a])));
    }
  } else if (runtime(scalesV)) {
    for (auto [j, a] : llvm::enumerate(axes)) {
      src[a].scaleV = f64At(b, loc, scalesV, j);
      resultSize(a, ir.floor(ir.mul(src[a].scaleV, inF[a])));
    }
  } else if ((runtime(sizesV) || (dynamic && sizesV && !isNone(sizesV))) &&
             (!scalesV || isNone(scalesV) || getConstantDoubles(scalesV)->empty())) {
    // keep_aspect_ratio_policy: one scale, the min (not_larger) or max
    // (not_smaller) of the size ratios; stretch: each axis its own.
    StringRef policy = getStrAttr(op, "keep_aspect_ratio_policy", "stretch");
    SmallVector<Value> ratios;
    for (auto [j, a] : llvm::enumerate(axes))
      ratios.push_back(ir.div(f64At(b, loc, sizesV, j), inF[a]));
    Value common = ratios.empty() ? ir.c(1.0) : ratios.front();
    for (Value q : ratios)
      common = policy == "not_smaller" ? (Value)b.create<arith::MaximumFOp>(loc, common, q)
                                       : (Value)b.create<arith::MinimumFOp>(loc, common, q);
    for (auto [j, a] : llvm::enumerate(axes)) {
      src[a].scaleV = policy == "stretch" ? ratios[j] : common;
      Value n = policy == "stretch"
                    ? f64At(b, loc, sizesV, j)
                    : (Value)b.create<math::RoundOp>(loc, ir.mul(common, inF[a]));
      resultSize(a, n);
    }
  } else if (dynamic) {
    return emitNodeError(op) << "with run-time sizes, needs constant scales or sizes";
  } else {
    SmallVector<int64_t> outShape;
    SmallVector<double> scales;
    if (failed(resolveResize(op, xt.getShape(), outShape, scales)))
      return emitNodeError(op) << "needs constant scales or sizes";
    for (int64_t a = 0; a < r; ++a)
      src[a].scale = scales[a];
  }
  if (tfCrop) {
    auto roi = getConstantDoubles(roiV);
    size_t n = axes.size();
    if (!roi && !runtime(roiV))
      return emitNodeError(op) << "tf_crop_and_resize needs a roi";
    for (auto [j, a] : llvm::enumerate(axes)) {
      if (roi) {
        src[a].s0 = (*roi)[roi->size() == 2 * n ? j : a];
        src[a].e0 = (*roi)[roi->size() == 2 * n ? n + j : r + a];
      } else {
        src[a].s0V = f64At(b, loc, roiV, j);
        src[a].e0V = f64At(b, loc, roiV, n + j);
      }
    }
  }
  if (ok)
    checkRuntimeShape(b, loc, ok, op, "scales, sizes or roi", out);

  SmallVector<Axis> ax(r);
  bool anyOutside = false;
  for (int64_t a = 0; a < r; ++a) {
    int64_t in = xt.getDimSize(a), on = out.getDimSize(a);
    AxisSource &s = src[a];
    Axis &A = ax[a];
    bool runtimeAxis = xt.isDynamicDim(a) || out.isDynamicDim(a);
    // Scale 1 maps every position onto itself in every mode but
    // tf_crop_and_resize (an axis of run-time size keeps its size).
    if (runtimeAxis && !s.scaleV && s.scale == 1.0 && !tfCrop) {
      if (out.isDynamicDim(a))
        onV[a] = dimSize(b, loc, x, a);
      continue;
    }
    if (runtimeAxis && params.antialias && s.scaleV)
      return emitNodeError(op) << "with run-time sizes, antialias needs constant scales";
    // With antialias a downsampled axis needs more taps: as many as its
    // scale asks for, or for a run-time scale, the smallest it can be.
    ResizeParams p = params;
    if (p.antialias) {
      double smallest = s.scaleV ? std::max(on - 0.5, 0.5) / std::max<int64_t>(in, 1) : s.scale;
      p.taps = std::max<int64_t>(p.taps, antialiasTaps(smallest, p.cubic ? 2.0 : 1.0));
    }
    A.taps = p.taps;
    auto it = RankedTensorType::get({on, p.taps}, b.getI64Type());
    auto wt = RankedTensorType::get({on, p.taps}, b.getF32Type());
    if (!s.scaleV && !s.s0V && !runtimeAxis) {
      // Constant tables; an axis they leave unchanged is skipped.
      ConstMath cm;
      SmallVector<int64_t> idx;
      SmallVector<float> w;
      for (int64_t o = 0; o < on; ++o) {
        SmallVector<double> ids, ws;
        tapsAt(cm, (double)o, s.scale, s.s0, s.e0, (double)in, (double)on, p, ids, ws);
        for (int64_t t = 0; t < p.taps; ++t) {
          int64_t k = (int64_t)ids[t];
          anyOutside |= k < 0;
          idx.push_back(k);
          w.push_back(ws[t]);
          bool self = k == o && in == on;
          if ((ws[t] != 0 && !(self && ws[t] == 1.0)) || (ws[t] == 1.0 && !self))
            A.identity = false;
        }
      }
      if (p.taps == 2) {
        matchLinearPhases(A, idx, w, in, on);
        if (!A.factor &&
            llvm::all_of(idx, [&](int64_t k) { return k >= 0 && k < in; })) {
          A.linearIdx.assign(idx.begin(), idx.end());
          A.linearW.assign(w.begin(), w.end());
        }
      }
      if (p.taps == 1 && on % in == 0 && on > in) {
        A.repeat = on / in;
        for (int64_t o = 0; o < on && A.repeat; ++o)
          if (idx[o] != o / A.repeat)
            A.repeat = 0;
      }
      if (!A.identity) {
        A.idxT = b.create<arith::ConstantOp>(loc, DenseElementsAttr::get(it, ArrayRef<int64_t>(idx)));
        A.wT = b.create<arith::ConstantOp>(loc, DenseElementsAttr::get(wt, ArrayRef<float>(w)));
      }
      continue;
    }
    // Tables computed at run time: one generic over (o, tap).
    A.identity = false;
    anyOutside |= tfCrop;
    MLIRContext *ctx = b.getContext();
    AffineMap id = AffineMap::getMultiDimIdentityMap(2, ctx);
    auto par = utils::IteratorType::parallel;
    SmallVector<Value> tableSizes;
    if (out.isDynamicDim(a))
      tableSizes.push_back(onV[a]);
    Value onF = out.isDynamicDim(a)
                    ? b.create<arith::SIToFPOp>(
                          loc, b.getF64Type(),
                          b.create<arith::IndexCastOp>(loc, b.getI64Type(), onV[a]))
                    : ir.c(on);
    auto g = b.create<linalg::GenericOp>(
        loc, TypeRange{it, wt}, ValueRange{},
        ValueRange{emptyTensor(b, loc, it, tableSizes), emptyTensor(b, loc, wt, tableSizes)},
        ArrayRef<AffineMap>{id, id}, ArrayRef<utils::IteratorType>{par, par},
        [&](OpBuilder &nb, Location l, ValueRange) {
          IrMath m{nb, l};
          auto asF64 = [&](Value i) {
            return nb.create<arith::SIToFPOp>(
                l, nb.getF64Type(), nb.create<arith::IndexCastOp>(l, nb.getI64Type(), i));
          };
          Value o = asF64(nb.create<linalg::IndexOp>(l, 0));
          Value t = nb.create<linalg::IndexOp>(l, 1);
          SmallVector<Value> ids, ws;
          tapsAt(m, o, s.scaleV ? s.scaleV : m.c(s.scale), s.s0V ? s.s0V : m.c(s.s0),
                 s.e0V ? s.e0V : m.c(s.e0), inF[a], onF, p, ids, ws);
          Value k = ids[0], wv = ws[0];
          for (int64_t j = 1; j < p.taps; ++j) {
            Value isJ = nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, t,
                                                 nb.create<arith::ConstantIndexOp>(l, j));
            k = m.sel(isJ, ids[j], k);
            wv = m.sel(isJ, ws[j], wv);
          }
          nb.create<linalg::YieldOp>(
              l, ValueRange{nb.create<arith::FPToSIOp>(l, nb.getI64Type(), k),
                            nb.create<arith::TruncFOp>(l, nb.getF32Type(), wv)});
        });
    A.idxT = g.getResult(0);
    A.wT = g.getResult(1);
  }

  SmallVector<int64_t> resized;
  for (int64_t a = 0; a < r; ++a)
    if (!ax[a].identity)
      resized.push_back(a);
  bool weighted = params.taps > 1;
  SmallVector<Value> outSizes, inSizes(r);
  for (int64_t a = 0; a < r; ++a) {
    if (out.isDynamicDim(a))
      outSizes.push_back(onV[a] ? onV[a] : dimSize(b, loc, x, a));
    if (xt.isDynamicDim(a))
      inSizes[a] = dimSize(b, loc, x, a);
  }
  int64_t combos = 1;
  for (int64_t a : resized)
    combos *= ax[a].taps;
  // Nearest upsampling by integer factors (an FPN's, a YOLO neck's): each
  // output element the input's at (o / repeat) on the resized axes, a copy
  // through floordiv maps that kiln-cpu-vectorize-upsample runs as row
  // loads repeated by shuffles (the index tables' gather is scalar).
  if (!weighted && !anyOutside && !resized.empty() && !dynamic &&
      llvm::all_of(resized, [&](int64_t a) { return ax[a].repeat > 0; })) {
    MLIRContext *ctx = b.getContext();
    SmallVector<AffineExpr> from;
    for (int64_t a = 0; a < r; ++a)
      from.push_back(ax[a].identity
                         ? getAffineDimExpr(a, ctx)
                         : getAffineDimExpr(a, ctx).floorDiv(ax[a].repeat));
    auto g = b.create<linalg::GenericOp>(
        loc, TypeRange{out}, ValueRange{x},
        ValueRange{emptyTensor(b, loc, out)},
        ArrayRef<AffineMap>{AffineMap::get(r, 0, from, ctx),
                            AffineMap::getMultiDimIdentityMap(r, ctx)},
        SmallVector<utils::IteratorType>(r, utils::IteratorType::parallel),
        [&](OpBuilder &nb, Location l, ValueRange args) {
          nb.create<linalg::YieldOp>(l, args[0]);
        });
    return SmallVector<Value>{g.getResult(0)};
  }
  // Many tap combinations (antialias tables sized for a run-time scale:
  // 8 taps on 4 axes) reduce over one tap loop per resized axis instead of
  // an unrolled body, whose 4096 products took bufferization a minute.
  if (weighted && !anyOutside && combos > kMaxUnrolledTaps)
    return SmallVector<Value>{
        tapReduction(b, loc, x, out, resized, ax, outSizes)};
  Value result = indexGeneric(
      b, loc, out,
      [&](IB &ib, ArrayRef<Value> i) -> Value {
        OpBuilder &nb = ib.b;
        Location l = ib.l;
        Value acc = scalarConst(nb, l, elt, 0.0);
        Value outsideFlag;
        for (int64_t cmb = 0; cmb < combos; ++cmb) {
          SmallVector<Value> from(i.begin(), i.end());
          Value w;
          int64_t rem = cmb;
          for (int64_t a : resized) {
            int64_t t = rem % ax[a].taps;
            rem /= ax[a].taps;
            Value k = ib.index(nb.create<tensor::ExtractOp>(
                l, ax[a].idxT, ValueRange{i[a], ib.c(t)}));
            if (anyOutside && cmb == 0) {
              Value o = ib.lt(k, 0);
              outsideFlag =
                  outsideFlag
                      ? (Value)nb.create<arith::OrIOp>(l, outsideFlag, o)
                      : o;
            }
            from[a] = !anyOutside  ? k
                      : inSizes[a] ? ib.clampBelow(k, inSizes[a])
                                   : ib.clamp(k, 0, xt.getDimSize(a) - 1);
            if (weighted) {
              Value wa = nb.create<tensor::ExtractOp>(
                  l, ax[a].wT, ValueRange{i[a], ib.c(t)});
              w = w ? (Value)nb.create<arith::MulFOp>(l, w, wa) : wa;
            }
          }
          Value v = nb.create<tensor::ExtractOp>(l, x, from);
          if (!weighted) {
            acc = v;
            break;
          }
          acc = nb.create<arith::AddFOp>(
              l, acc, w ? (Value)nb.create<arith::MulFOp>(l, v, w) : v);
        }
        if (outsideFlag)
          acc = ib.sel(outsideFlag, scalarConst(nb, l, elt, extrap), acc);
        return acc;
      },
      outSizes);
  // Linear resizing of the last axis, or the last two (a segmentation
  // head's 2x to 8x, align_corners or not): the taps as an attribute,
  // which kiln-cpu-vectorize-upsample runs as rows (the tables' gathers
  // are scalar). Per axis, the phases' taps where they repeat with the
  // phase (integer factors in half_pixel or asymmetric mode), else the
  // tables.
  bool lastAxes = !resized.empty() && resized.size() <= 2 &&
                  resized.back() == r - 1 &&
                  (resized.size() == 1 || resized.front() == r - 2);
  if (weighted && !anyOutside && !dynamic && elt.isF32() && lastAxes &&
      llvm::all_of(resized, [&](int64_t a) {
        return ax[a].taps == 2 && (ax[a].factor || !ax[a].linearIdx.empty());
      })) {
    SmallVector<NamedAttribute> phases;
    for (int64_t a : resized) {
      SmallVector<NamedAttribute> fields;
      if (ax[a].factor)
        fields = {
            b.getNamedAttr("factor", b.getI64IntegerAttr(ax[a].factor)),
            b.getNamedAttr("offsets", b.getDenseI64ArrayAttr(ax[a].offsets)),
            b.getNamedAttr("weights", b.getDenseF32ArrayAttr(ax[a].weights))};
      else
        fields = {
            b.getNamedAttr("size", b.getI64IntegerAttr(xt.getDimSize(a))),
            b.getNamedAttr("index", b.getDenseI64ArrayAttr(ax[a].linearIdx)),
            b.getNamedAttr("weights", b.getDenseF32ArrayAttr(ax[a].linearW))};
      phases.push_back(
          b.getNamedAttr(a == r - 1 ? "x" : "y", b.getDictionaryAttr(fields)));
    }
    result.getDefiningOp()->setAttr(vectorize::kLinearUpsample,
                                    b.getDictionaryAttr(phases));
  }
  return SmallVector<Value>{result};
}

/// What the lowering needs beyond shapes, refused up front.
bool canLowerResize(Operation *op, std::string &why) {
  auto t = dyn_cast<ShapedType>(op->getOperand(0).getType());
  bool upsample = op->getName().getStringRef() == "onnx.Upsample";
  StringRef mode = getStrAttr(op, "mode", "nearest");
  StringRef ctm = upsample ? "asymmetric" : getStrAttr(op, "coordinate_transformation_mode", "half_pixel");
  StringRef nm = upsample ? "floor" : getStrAttr(op, "nearest_mode", "round_prefer_floor");
  // (Nearest copies: any data; the other modes weigh taps in float.)
  if (!t || (!isFloat(t.getElementType()) && mode != "nearest"))
    why = ("only float data is supported in mode \"" + mode + "\"").str();
  else if (mode != "nearest" && mode != "linear" && mode != "bilinear" && mode != "cubic")
    why = ("mode \"" + mode + "\" is not supported").str();
  else if (!llvm::is_contained({"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                "align_corners", "asymmetric", "tf_crop_and_resize"},
                               ctm))
    why = ("coordinate_transformation_mode \"" + ctm + "\" is not supported").str();
  else if (!llvm::is_contained({"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}, nm))
    why = ("nearest_mode \"" + nm + "\" is not supported").str();
  else
    return true;
  return false;
}

} // namespace

void registerResizeOps(LoweringTable &m) {
  // Not float-only: sizes/roi are integer inputs; the check looks at data.
  m["Resize"] = {lowerResize, false, canLowerResize};
  m["Upsample"] = {lowerResize, false, canLowerResize};
}

} // namespace kiln::cpu
