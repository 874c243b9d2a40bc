//===- GridOps.cpp - AffineGrid, GridSample, Col2Im -----------------------===//
//
// Image-grid ops, each per output element as ONNX's reference defines it:
// AffineGrid maps base coordinates in [-1, 1] through theta; GridSample
// denormalizes each grid point, applies the padding mode and interpolates
// (nearest, linear or cubic) over the 2-D or 3-D spatial dims; Col2Im sums
// the column entries that land on each image element.
//
//===----------------------------------------------------------------------===//
#include "providers/cpu/IndexGeneric.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace kiln::onnx;

namespace kiln::cpu {
namespace {

/// AffineGrid: grid[n, ..., c] = theta[n, c, :] . (x, y[, z], 1), with the
/// base coordinates in [-1, 1] per align_corners; the result shape is the
/// size input's (RuntimeShapeInputs checks it when computed at run time).
Results lowerAffineGrid(OpBuilder &b, Operation *op) {
  Value theta = op->getOperand(0);
  auto out = resultType(op);
  int64_t rank = out.getRank(), spatial = rank - 2; // [N, (D,) H, W, spatial]
  bool align = getIntAttr(op, "align_corners", 0) != 0;
  Type elt = out.getElementType();
  return SmallVector<Value>{indexGeneric(b, op->getLoc(), out, [&](IB &ib, ArrayRef<Value> i) -> Value {
    OpBuilder &nb = ib.b;
    Location l = ib.l;
    auto f = [&](Value idx) {
      return nb.create<arith::SIToFPOp>(l, elt, nb.create<arith::IndexCastOp>(l, nb.getI64Type(), idx));
    };
    // Base coordinate k (x first) from spatial dim (rank - 2 - 1 - k).
    Value acc;
    for (int64_t k = 0; k <= spatial; ++k) {
      Value coord;
      if (k == spatial) {
        coord = cst(nb, l, elt, 1.0);
      } else {
        int64_t dim = rank - 2 - k, size = out.getDimSize(dim);
        Value p = f(i[dim]);
        coord = align ? (size > 1 ? nb.create<arith::SubFOp>(
                                        l, nb.create<arith::MulFOp>(l, p, cst(nb, l, elt, 2.0 / (size - 1))),
                                        cst(nb, l, elt, 1.0))
                                  : cst(nb, l, elt, 0.0))
                      : nb.create<arith::SubFOp>(
                            l, nb.create<arith::MulFOp>(
                                   l, nb.create<arith::AddFOp>(l, nb.create<arith::MulFOp>(l, p, cst(nb, l, elt, 2.0)),
                                                               cst(nb, l, elt, 1.0)),
                                   cst(nb, l, elt, 1.0 / size)),
                            cst(nb, l, elt, 1.0));
      }
      Value t = nb.create<tensor::ExtractOp>(l, theta, ValueRange{i[0], i[rank - 1], ib.c(k)});
      Value term = nb.create<arith::MulFOp>(l, t, coord);
      acc = acc ? nb.create<arith::AddFOp>(l, acc, term).getResult() : term;
    }
    return acc;
  })};
}

/// Scalar f32 helpers for GridSample's coordinate arithmetic.
struct FB {
  OpBuilder &b;
  Location l;
  Type f;
  Value c(double v) { return cst(b, l, f, v); }
  Value add(Value x, Value y) { return b.create<arith::AddFOp>(l, x, y); }
  Value sub(Value x, Value y) { return b.create<arith::SubFOp>(l, x, y); }
  Value mul(Value x, Value y) { return b.create<arith::MulFOp>(l, x, y); }
  Value div(Value x, Value y) { return b.create<arith::DivFOp>(l, x, y); }
  Value lt(Value x, Value y) { return b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLT, x, y); }
  Value gt(Value x, Value y) { return b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT, x, y); }
  Value sel(Value c0, Value x, Value y) { return b.create<arith::SelectOp>(l, c0, x, y); }
  Value clamp(Value x, double lo, double hi) {
    return b.create<arith::MinimumFOp>(l, b.create<arith::MaximumFOp>(l, x, c(lo)), c(hi));
  }
  Value floor(Value x) { return b.create<math::FloorOp>(l, x); }
  Value abs(Value x) { return b.create<math::AbsFOp>(l, x); }
  /// Reflects x into [lo, hi] by the nearer border, repeatedly.
  Value reflect(Value x, double lo, double hi) {
    double rng = hi - lo;
    if (rng <= 0)
      return c(lo);
    auto side = [&](Value dx, bool below) {
      Value n = b.create<arith::FPToSIOp>(l, b.getI64Type(), div(dx, c(rng)));
      Value r = sub(dx, mul(b.create<arith::SIToFPOp>(l, f, n), c(rng)));
      Value even = b.create<arith::CmpIOp>(
          l, arith::CmpIPredicate::eq,
          b.create<arith::AndIOp>(l, n, b.create<arith::ConstantIntOp>(l, 1, 64)),
          b.create<arith::ConstantIntOp>(l, 0, 64));
      Value fromLo = add(c(lo), r), fromHi = sub(c(hi), r);
      return below ? sel(even, fromLo, fromHi) : sel(even, fromHi, fromLo);
    };
    Value below = side(sub(c(lo), x), true), above = side(sub(x, c(hi)), false);
    return sel(lt(x, c(lo)), below, sel(gt(x, c(hi)), above, x));
  }
};

/// Cubic convolution weights (Keys, A = -0.75) of the four taps around a
/// point at fraction t past the second one.
SmallVector<Value> cubicWeights(FB &fb, Value t) {
  double a = -0.75;
  auto far = [&](Value x) { // 1 < x < 2
    return fb.sub(fb.mul(fb.add(fb.mul(fb.sub(fb.mul(fb.c(a), x), fb.c(5 * a)), x), fb.c(8 * a)), x),
                  fb.c(4 * a));
  };
  auto near = [&](Value x) { // x <= 1
    return fb.add(fb.mul(fb.mul(fb.sub(fb.mul(fb.c(a + 2), x), fb.c(a + 3)), x), x), fb.c(1.0));
  };
  Value one = fb.c(1.0), two = fb.c(2.0);
  return {far(fb.add(t, one)), near(t), near(fb.sub(one, t)), far(fb.sub(two, t))};
}

Results lowerGridSample(OpBuilder &b, Operation *op) {
  Value x = op->getOperand(0), grid = op->getOperand(1);
  auto xt = typeOf(x);
  auto out = resultType(op);
  int64_t k = xt.getRank() - 2;
  StringRef mode = getStrAttr(op, "mode", "linear");
  if (mode == "bilinear")
    mode = "linear";
  else if (mode == "bicubic")
    mode = "cubic";
  StringRef padding = getStrAttr(op, "padding_mode", "zeros");
  bool align = getIntAttr(op, "align_corners", 0) != 0;
  Type elt = out.getElementType();
  SmallVector<int64_t> dims(xt.getShape().drop_front(2));
  return SmallVector<Value>{indexGeneric(b, op->getLoc(), out, [&](IB &ib, ArrayRef<Value> i) -> Value {
    FB fb{ib.b, ib.l, elt};
    // Denormalized coordinate per spatial dim (the grid lists x first).
    SmallVector<Value> coord;
    for (int64_t d = 0; d < k; ++d) {
      SmallVector<Value> gi = {i[0]};
      gi.append(i.begin() + 2, i.end());
      gi.push_back(ib.c(k - 1 - d));
      Value g = ib.b.create<tensor::ExtractOp>(ib.l, grid, gi);
      double n = dims[d];
      Value v = align ? fb.mul(fb.add(g, fb.c(1.0)), fb.c((n - 1) / 2.0))
                      : fb.div(fb.sub(fb.mul(fb.add(g, fb.c(1.0)), fb.c(n)), fb.c(1.0)), fb.c(2.0));
      if (mode == "nearest")
        v = ib.b.create<math::RoundEvenOp>(ib.l, v);
      double lo = align ? 0.0 : -0.5, hi = align ? n - 1 : n - 0.5;
      if (padding == "border")
        v = fb.clamp(v, 0, n - 1);
      else if (padding == "reflection")
        v = fb.reflect(v, lo, hi);
      coord.push_back(v);
    }
    // One tap: the pixel at integer coordinates, or 0 outside (zeros).
    auto pixel = [&](ArrayRef<Value> at) -> Value {
      SmallVector<Value> src = {i[0], i[1]};
      Value inside;
      for (int64_t d = 0; d < k; ++d) {
        Value p = at[d];
        double n = dims[d];
        if (padding == "reflection") {
          double lo = align ? 0.0 : -0.5, hi = align ? n - 1 : n - 0.5;
          p = ib.b.create<arith::FPToSIOp>(
              ib.l, ib.b.getI64Type(),
              fb.reflect(ib.b.create<arith::SIToFPOp>(ib.l, elt, p), lo, hi));
        }
        Value idx = ib.index(p);
        if (padding == "zeros") {
          Value ok = ib.andI(ib.ge(idx, 0), ib.lt(idx, dims[d]));
          inside = inside ? ib.andI(inside, ok) : ok;
        }
        src.push_back(ib.clamp(idx, 0, dims[d] - 1));
      }
      Value v = ib.b.create<tensor::ExtractOp>(ib.l, x, src);
      return inside ? ib.sel(inside, v, fb.c(0.0)) : v;
    };
    auto toInt = [&](Value v) { return ib.b.create<arith::FPToSIOp>(ib.l, ib.b.getI64Type(), v).getResult(); };
    if (mode == "nearest") {
      SmallVector<Value> at;
      for (Value v : coord)
        at.push_back(toInt(v));
      return pixel(at);
    }
    // Linear (2 taps) or cubic (4) per dim: the sum over the tensor product.
    int64_t taps = mode == "cubic" ? 4 : 2, first = mode == "cubic" ? -1 : 0;
    SmallVector<Value> base;
    SmallVector<SmallVector<Value>> weights;
    for (Value v : coord) {
      Value f0 = fb.floor(v);
      Value t = fb.sub(v, f0);
      base.push_back(toInt(f0));
      if (taps == 4)
        weights.push_back(cubicWeights(fb, t));
      else
        weights.push_back({fb.sub(fb.c(1.0), t), t});
    }
    Value acc = fb.c(0.0);
    int64_t count = 1;
    for (int64_t d = 0; d < k; ++d)
      count *= taps;
    for (int64_t tap = 0; tap < count; ++tap) {
      SmallVector<Value> at;
      Value w;
      int64_t rest = tap;
      for (int64_t d = k - 1; d >= 0; --d) {
        int64_t j = rest % taps;
        rest /= taps;
        at.insert(at.begin(), ib.b.create<arith::AddIOp>(
                                  ib.l, base[d], ib.b.create<arith::ConstantIntOp>(ib.l, first + j, 64)));
        w = w ? fb.mul(w, weights[d][j]) : weights[d][j];
      }
      acc = fb.add(acc, fb.mul(w, pixel(at)));
    }
    return acc;
  })};
}

/// Col2Im: each image element sums the columns whose block and kernel tap
/// land on it (kernel taps unrolled; a tap counts when its offset from the
/// padded position is a whole number of strides inside the block grid).
Results lowerCol2Im(OpBuilder &b, Operation *op) {
  auto xt = typeOf(op->getOperand(0));
  auto out = resultType(op);
  auto block = getConstantInts(op->getOperand(2));
  if (!block)
    return emitNodeError(op) << "needs a constant block_shape", failure();
  int64_t nd = out.getRank() - 2, taps = 1;
  SmallVector<int64_t> image(out.getShape().drop_front(2));
  SmallVector<int64_t> dil(nd, 1), stride(nd, 1), padB(nd, 0), padE(nd, 0), blocks(nd);
  SmallVector<int64_t> d = getIntsAttr(op, "dilations"), st = getIntsAttr(op, "strides"),
                       pads = getIntsAttr(op, "pads");
  for (int64_t i = 0; i < nd; ++i) {
    if (i < (int64_t)d.size()) dil[i] = d[i];
    if (i < (int64_t)st.size()) stride[i] = st[i];
    if (2 * nd == (int64_t)pads.size()) padB[i] = pads[i], padE[i] = pads[i + nd];
    blocks[i] = (image[i] + padB[i] + padE[i] - dil[i] * ((*block)[i] - 1) - 1) / stride[i] + 1;
    taps *= (*block)[i];
  }
  Value x = op->getOperand(0);
  Type elt = out.getElementType();
  return SmallVector<Value>{indexGeneric(b, op->getLoc(), out, [&](IB &ib, ArrayRef<Value> i) -> Value {
    OpBuilder &nb = ib.b;
    Value acc = cst(nb, ib.l, elt, 0.0);
    for (int64_t t = 0; t < taps; ++t) {
      // Kernel offsets of tap t (row-major over the block shape).
      SmallVector<int64_t> kOff(nd);
      for (int64_t r = t, dd = nd - 1; dd >= 0; --dd) {
        kOff[dd] = r % (*block)[dd];
        r /= (*block)[dd];
      }
      Value ok, blockIdx = ib.c(0);
      for (int64_t dd = 0; dd < nd; ++dd) {
        Value pos = ib.add(i[2 + dd], padB[dd] - kOff[dd] * dil[dd]);
        Value bq = ib.div(pos, stride[dd]);
        Value cond = ib.andI(ib.ge(pos, 0), ib.eq(ib.rem(pos, stride[dd]), ib.c(0)));
        cond = ib.andI(cond, ib.lt(bq, blocks[dd]));
        ok = ok ? ib.andI(ok, cond) : cond;
        blockIdx = ib.add(ib.mul(blockIdx, blocks[dd]), ib.clamp(bq, 0, blocks[dd] - 1));
      }
      Value col = ib.add(ib.mul(i[1], taps), t);
      Value v = nb.create<tensor::ExtractOp>(ib.l, x, ValueRange{i[0], col, blockIdx});
      acc = nb.create<arith::AddFOp>(ib.l, acc, ib.sel(ok, v, cst(nb, ib.l, elt, 0.0)));
    }
    (void)xt;
    return acc;
  })};
}

/// RoiAlign: each output bin of ROI r averages (or takes the largest of) a
/// grid of bilinear samples of image batch_indices[r], as ONNX's reference
/// and ONNX Runtime compute it: a sample outside [-1, size] counts as 0, the
/// max mode takes the largest of a sample's four weighted taps, and without
/// sampling_ratio the grid is ceil(bin size) per dim, known at run time.
Results lowerRoiAlign(OpBuilder &b, Operation *op) {
  Value x = op->getOperand(0), rois = op->getOperand(1), batch = op->getOperand(2);
  auto xt = typeOf(x);
  auto out = resultType(op);
  int64_t height = xt.getDimSize(2), width = xt.getDimSize(3);
  int64_t outH = out.getDimSize(2), outW = out.getDimSize(3);
  bool halfPixel = getStrAttr(op, "coordinate_transformation_mode", "half_pixel") == "half_pixel";
  bool isMax = getStrAttr(op, "mode", "avg") == "max";
  int64_t ratio = getIntAttr(op, "sampling_ratio", 0);
  double scale = getFloatAttr(op, "spatial_scale", 1.0f);
  Type elt = out.getElementType();
  return SmallVector<Value>{indexGeneric(b, op->getLoc(), out, [&](IB &ib, ArrayRef<Value> i) -> Value {
    OpBuilder &nb = ib.b;
    Location l = ib.l;
    FB fb{nb, l, elt};
    auto roi = [&](int64_t k) {
      Value v = nb.create<tensor::ExtractOp>(l, rois, ValueRange{i[0], ib.c(k)});
      return fb.sub(fb.mul(castScalar(nb, l, v, elt), fb.c(scale)), fb.c(halfPixel ? 0.5 : 0.0));
    };
    Value x0 = roi(0), y0 = roi(1);
    Value roiW = fb.sub(roi(2), x0), roiH = fb.sub(roi(3), y0);
    if (!halfPixel) {
      roiW = nb.create<arith::MaximumFOp>(l, roiW, fb.c(1.0));
      roiH = nb.create<arith::MaximumFOp>(l, roiH, fb.c(1.0));
    }
    Value binH = fb.div(roiH, fb.c(outH)), binW = fb.div(roiW, fb.c(outW));
    auto gridOf = [&](Value bin) -> Value {
      if (ratio > 0)
        return ib.c(ratio);
      Value n = nb.create<arith::FPToSIOp>(l, nb.getI64Type(), nb.create<math::CeilOp>(l, bin));
      return ib.index(nb.create<arith::MaxSIOp>(l, n, nb.create<arith::ConstantIntOp>(l, 0, 64)));
    };
    Value gridH = gridOf(binH), gridW = gridOf(binW);
    auto toF = [&](Value idx) {
      return nb.create<arith::SIToFPOp>(l, elt, nb.create<arith::IndexCastOp>(l, nb.getI64Type(), idx));
    };
    Value img = ib.clamp(ib.index(nb.create<tensor::ExtractOp>(l, batch, ValueRange{i[0]})), 0,
                         xt.getDimSize(0) - 1);
    Value startY = fb.add(y0, fb.mul(toF(i[2]), binH)), startX = fb.add(x0, fb.mul(toF(i[3]), binW));
    Value stepY = fb.div(binH, toF(gridH)), stepX = fb.div(binW, toF(gridW));
    Value init = fb.c(isMax ? -std::numeric_limits<double>::infinity() : 0.0);
    // One coordinate: clamped below at 0, its low and high taps and the
    // fraction past the low one.
    auto taps = [&](OpBuilder &tb, Location tl, Value v, int64_t size) {
      IB ti{tb, tl};
      FB tf{tb, tl, elt};
      v = tb.create<arith::MaximumFOp>(tl, v, tf.c(0.0));
      Value low = ti.index(tb.create<arith::FPToSIOp>(tl, tb.getI64Type(), v));
      Value atEdge = ti.ge(low, size - 1);
      low = ti.sel(atEdge, ti.c(size - 1), low);
      Value high = ti.sel(atEdge, low, ti.add(low, 1));
      Value lowF = tb.create<arith::SIToFPOp>(
          tl, elt, tb.create<arith::IndexCastOp>(tl, tb.getI64Type(), low));
      Value frac = tf.sel(atEdge, tf.c(0.0), tf.sub(v, lowF));
      return std::make_tuple(low, high, frac);
    };
    auto rows = nb.create<scf::ForOp>(
        l, ib.c(0), gridH, ib.c(1), ValueRange{init},
        [&](OpBuilder &rb, Location rl, Value iy, ValueRange accY) {
          FB rf{rb, rl, elt};
          IB ri{rb, rl};
          auto rToF = [&](Value idx) {
            return rb.create<arith::SIToFPOp>(rl, elt, rb.create<arith::IndexCastOp>(rl, rb.getI64Type(), idx));
          };
          Value y = rf.add(startY, rf.mul(rf.add(rToF(iy), rf.c(0.5)), stepY));
          auto cols = rb.create<scf::ForOp>(
              rl, ri.c(0), gridW, ri.c(1), ValueRange{accY[0]},
              [&](OpBuilder &cb, Location cl, Value ix, ValueRange acc) {
                FB cf{cb, cl, elt};
                Value xc = cf.add(startX, cf.mul(cf.add(cb.create<arith::SIToFPOp>(
                                                            cl, elt,
                                                            cb.create<arith::IndexCastOp>(
                                                                cl, cb.getI64Type(), ix)),
                                                        cf.c(0.5)),
                                                 stepX));
                Value outside = cb.create<arith::OrIOp>(
                    cl,
                    cb.create<arith::OrIOp>(cl, cf.lt(y, cf.c(-1.0)), cf.gt(y, cf.c(height))),
                    cb.create<arith::OrIOp>(cl, cf.lt(xc, cf.c(-1.0)), cf.gt(xc, cf.c(width))));
                auto [yLow, yHigh, ly] = taps(cb, cl, y, height);
                auto [xLow, xHigh, lx] = taps(cb, cl, xc, width);
                Value hy = cf.sub(cf.c(1.0), ly), hx = cf.sub(cf.c(1.0), lx);
                auto tap = [&](Value yy, Value xx, Value w) {
                  Value v = cb.create<tensor::ExtractOp>(cl, x, ValueRange{img, i[1], yy, xx});
                  return cf.sel(outside, cf.c(0.0), cf.mul(w, v));
                };
                Value t1 = tap(yLow, xLow, cf.mul(hy, hx)), t2 = tap(yLow, xHigh, cf.mul(hy, lx));
                Value t3 = tap(yHigh, xLow, cf.mul(ly, hx)), t4 = tap(yHigh, xHigh, cf.mul(ly, lx));
                Value next;
                if (isMax) {
                  auto mx = [&](Value a, Value c) { return cb.create<arith::MaximumFOp>(cl, a, c); };
                  next = mx(acc[0], mx(mx(t1, t2), mx(t3, t4)));
                } else {
                  next = cf.add(acc[0], cf.add(cf.add(t1, t2), cf.add(t3, t4)));
                }
                cb.create<scf::YieldOp>(cl, next);
              });
          rb.create<scf::YieldOp>(rl, cols.getResult(0));
        });
    Value total = rows.getResult(0);
    Value count = ib.mul(gridH, gridW);
    Value none = ib.eq(count, ib.c(0));
    if (isMax)
      return fb.sel(none, fb.c(0.0), total);
    return fb.div(total, toF(ib.sel(none, ib.c(1), count)));
  })};
}

/// DeformConv (2-D): a convolution whose taps are sampled (bilinearly,
/// zero outside the image) at positions moved by the offset input and
/// scaled by the optional mask, as ONNX's reference computes it; per output
/// element, a loop over the group's input channels with the kernel taps
/// unrolled.
Results lowerDeformConv(OpBuilder &b, Operation *op) {
  Value x = op->getOperand(0), w = op->getOperand(1), offset = op->getOperand(2);
  Value bias = op->getNumOperands() > 3 && !isNone(op->getOperand(3)) ? op->getOperand(3) : Value();
  Value mask = op->getNumOperands() > 4 && !isNone(op->getOperand(4)) ? op->getOperand(4) : Value();
  auto xt = typeOf(x), wt = typeOf(w);
  auto out = resultType(op);
  Type elt = out.getElementType();
  int64_t height = xt.getDimSize(2), width = xt.getDimSize(3);
  int64_t kh = wt.getDimSize(2), kw = wt.getDimSize(3);
  int64_t group = getIntAttr(op, "group", 1), offsetGroup = getIntAttr(op, "offset_group", 1);
  int64_t icPerGroup = wt.getDimSize(1), ocPerGroup = out.getDimSize(1) / group;
  int64_t icPerOffsetGroup = xt.getDimSize(1) / offsetGroup;
  auto attr2 = [&](StringRef name, int64_t dflt) {
    SmallVector<int64_t> v = getIntsAttr(op, name);
    v.resize(name == "pads" ? 4 : 2, dflt);
    return v;
  };
  SmallVector<int64_t> strides = attr2("strides", 1), dil = attr2("dilations", 1),
                       pads = attr2("pads", 0);
  return SmallVector<Value>{indexGeneric(b, op->getLoc(), out, [&](IB &ib, ArrayRef<Value> i) -> Value {
    OpBuilder &nb = ib.b;
    Location l = ib.l;
    FB fb{nb, l, elt};
    Value init = bias ? Value(nb.create<tensor::ExtractOp>(l, bias, ValueRange{i[1]})) : fb.c(0.0);
    Value g = ib.div(i[1], ocPerGroup);
    auto toF = [&](OpBuilder &ob, Location ol, Value idx) {
      return ob.create<arith::SIToFPOp>(ol, elt,
                                        ob.create<arith::IndexCastOp>(ol, ob.getI64Type(), idx));
    };
    auto loop = nb.create<scf::ForOp>(
        l, ib.c(0), ib.c(icPerGroup), ib.c(1), ValueRange{init},
        [&](OpBuilder &cb, Location cl, Value icl, ValueRange acc) {
          IB ci{cb, cl};
          FB cf{cb, cl, elt};
          Value ic = ci.add(ci.mul(g, icPerGroup), icl);
          Value og = ci.div(ic, icPerOffsetGroup);
          // One tap of X at integer (y, x), 0 outside the image.
          auto pixel = [&](Value y, Value xx) {
            Value inside = ci.andI(ci.andI(ci.ge(y, 0), ci.lt(y, height)),
                                   ci.andI(ci.ge(xx, 0), ci.lt(xx, width)));
            Value v = cb.create<tensor::ExtractOp>(
                cl, x, ValueRange{i[0], ic, ci.clamp(y, 0, height - 1), ci.clamp(xx, 0, width - 1)});
            return cf.sel(inside, v, cf.c(0.0));
          };
          Value sum = acc[0];
          for (int64_t a = 0; a < kh; ++a)
            for (int64_t c = 0; c < kw; ++c) {
              Value tap = ci.add(ci.mul(og, kh * kw), a * kw + c);
              auto off = [&](int64_t k) {
                return cb.create<tensor::ExtractOp>(cl, offset,
                                                    ValueRange{i[0], ci.add(ci.mul(tap, 2), k), i[2], i[3]});
              };
              Value y = cf.add(toF(cb, cl, ci.add(ci.mul(i[2], strides[0]), a * dil[0] - pads[0])), off(0));
              Value xx = cf.add(toF(cb, cl, ci.add(ci.mul(i[3], strides[1]), c * dil[1] - pads[1])), off(1));
              Value y0 = cf.floor(y), x0 = cf.floor(xx);
              Value fy = cf.sub(y, y0), fx = cf.sub(xx, x0);
              auto idx = [&](Value v) {
                return ci.index(cb.create<arith::FPToSIOp>(cl, cb.getI64Type(), v));
              };
              Value iy = idx(y0), ix = idx(x0);
              Value one = cf.c(1.0);
              Value v = cf.add(
                  cf.add(cf.mul(cf.mul(cf.sub(one, fy), cf.sub(one, fx)), pixel(iy, ix)),
                         cf.mul(cf.mul(cf.sub(one, fy), fx), pixel(iy, ci.add(ix, 1)))),
                  cf.add(cf.mul(cf.mul(fy, cf.sub(one, fx)), pixel(ci.add(iy, 1), ix)),
                         cf.mul(cf.mul(fy, fx), pixel(ci.add(iy, 1), ci.add(ix, 1)))));
              if (mask)
                v = cf.mul(v, cb.create<tensor::ExtractOp>(cl, mask, ValueRange{i[0], tap, i[2], i[3]}));
              Value wv = cb.create<tensor::ExtractOp>(cl, w, ValueRange{i[1], icl, ci.c(a), ci.c(c)});
              sum = cf.add(sum, cf.mul(wv, v));
            }
          cb.create<scf::YieldOp>(cl, sum);
        });
    return loop.getResult(0);
  })};
}

} // namespace

void registerGridOps(LoweringTable &m) {
  m["DeformConv"] = {lowerDeformConv, true, [](Operation *op, std::string &why) {
                       auto x = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
                       auto w = dyn_cast<RankedTensorType>(op->getOperand(1).getType());
                       if (!x || !w || x.getRank() != 4 || w.getRank() != 4) {
                         why = "only 2-D DeformConv is supported";
                         return false;
                       }
                       return true;
                     }};
  m["RoiAlign"] = {lowerRoiAlign, false, [](Operation *op, std::string &why) {
                     if (!requireFloatInput(op, why))
                       return false;
                     auto x = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
                     if (!x || x.getRank() != 4 || !x.hasStaticShape()) {
                       why = "needs a static 4-D input";
                       return false;
                     }
                     return true;
                   }};
  m["Col2Im"] = {lowerCol2Im, false, [](Operation *op, std::string &why) {
                   if (!requireFloatInput(op, why))
                     return false;
                   if (!getConstantInts(op->getOperand(1)) || !getConstantInts(op->getOperand(2))) {
                     why = "needs constant image_shape and block_shape inputs";
                     return false;
                   }
                   return true;
                 }};
  m["GridSample"] = {lowerGridSample, true, [](Operation *op, std::string &why) {
                       StringRef mode = getStrAttr(op, "mode", "linear");
                       auto t = dyn_cast<ShapedType>(op->getOperand(0).getType());
                       if (mode == "cubic" || mode == "bicubic") {
                         if (t && t.hasRank() && t.getRank() != 4) {
                           why = "cubic mode needs 2-D spatial input";
                           return false;
                         }
                       }
                       return true;
                     }};
  m["AffineGrid"] = {lowerAffineGrid, false, requireFloatInput};
}

} // namespace kiln::cpu
