//===- RuntimeShapeInputs.cpp - shape inputs known only at run time -------===//
//
// kiln compiles static shapes. An op whose result shape depends on an input
// computed at run time (ReduceSum's axes, Reshape's shape, TopK's k) still
// compiles when its result shape is known (inferred or declared by the
// model): the input can then only take the values that give that shape.
// The op is lowered with those values as constants, a kiln.check fails the
// run when the run-time input gives another shape, and where several values
// give the same shape but different results (ReduceSum of 3x2x2 to 3x2 over
// axis 1 or 2) a branch per value picks the right one at run time.
//
//===----------------------------------------------------------------------===//
#include "providers/cpu/Lowering.h"

#include "dialects/kiln/KilnDialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace kiln::onnx;

namespace kiln::cpu {
namespace {

/// Values a run-time input may take (each lowered separately) and, at run
/// time, which of them it takes.
struct Specialization {
  unsigned operand;
  SmallVector<SmallVector<int64_t>> values;
  /// One i1 per entry of `values`, from the input's elements as i64.
  std::function<SmallVector<Value>(OpBuilder &, Location, ArrayRef<Value>)> selects;
};

/// Scalar i64/i1 arithmetic for the run-time tests.
struct Scalars {
  OpBuilder &b;
  Location l;
  Value c(int64_t v) { return b.create<arith::ConstantIntOp>(l, v, 64); }
  Value flag(bool v) { return b.create<arith::ConstantIntOp>(l, v, 1); }
  Value eq(Value x, Value y) { return b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, x, y); }
  Value eq(Value x, int64_t y) { return eq(x, c(y)); }
  Value all(ArrayRef<Value> xs) {
    Value r = flag(true);
    for (Value x : xs)
      r = b.create<arith::AndIOp>(l, r, x);
    return r;
  }
  Value any(ArrayRef<Value> xs) {
    Value r = flag(false);
    for (Value x : xs)
      r = b.create<arith::OrIOp>(l, r, x);
    return r;
  }
  /// Axis `a` counted from the back when negative; valid in [0, rank).
  std::pair<Value, Value> normAxis(Value a, int64_t rank) {
    Value neg = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, a, c(0));
    Value n = b.create<arith::SelectOp>(l, neg, b.create<arith::AddIOp>(l, a, c(rank)), a);
    Value ok = b.create<arith::AndIOp>(
        l, b.create<arith::CmpIOp>(l, arith::CmpIPredicate::sge, n, c(0)),
        b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, n, c(rank)));
    return {n, ok};
  }
  /// Whether the run-time axes name exactly the dims in `set` among `dims`
  /// (and nothing out of range).
  Value axesAre(ArrayRef<Value> axes, int64_t rank, ArrayRef<int64_t> dims,
                ArrayRef<int64_t> set) {
    SmallVector<Value> norm, conds;
    for (Value a : axes) {
      auto [n, ok] = normAxis(a, rank);
      norm.push_back(n);
      conds.push_back(ok);
    }
    for (int64_t d : dims) {
      SmallVector<Value> hits;
      for (Value n : norm)
        hits.push_back(eq(n, d));
      Value named = any(hits);
      conds.push_back(llvm::is_contained(set, d) ? named
                                                 : b.create<arith::XOrIOp>(l, named, flag(true)));
    }
    return all(conds);
  }
  Value equals(ArrayRef<Value> xs, ArrayRef<int64_t> ys) {
    SmallVector<Value> conds;
    for (auto [x, y] : llvm::zip(xs, ys))
      conds.push_back(eq(x, y));
    return all(conds);
  }
};

std::optional<int64_t> numElements(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || !t.hasStaticShape() || t.getRank() > 1 || t.getNumElements() > 64)
    return std::nullopt;
  return t.getNumElements();
}

RankedTensorType staticType(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() ? t : RankedTensorType();
}

SmallVector<int64_t> range(int64_t n) {
  SmallVector<int64_t> r;
  for (int64_t i = 0; i < n; ++i)
    r.push_back(i);
  return r;
}

/// Every k-subset of big's dims whose removal leaves `small` (and, with
/// onlyOnes, that removes only size-1 dims), at most `limit` of them.
SmallVector<SmallVector<int64_t>> removals(ArrayRef<int64_t> big, ArrayRef<int64_t> small,
                                          bool onlyOnes, size_t limit = 16) {
  SmallVector<SmallVector<int64_t>> out;
  int64_t k = big.size() - small.size();
  if (k < 0)
    return out;
  SmallVector<int64_t> pick;
  std::function<void(int64_t)> go = [&](int64_t from) {
    if (out.size() >= limit)
      return;
    if ((int64_t)pick.size() == k) {
      SmallVector<int64_t> kept;
      for (int64_t d = 0; d < (int64_t)big.size(); ++d)
        if (!llvm::is_contained(pick, d))
          kept.push_back(big[d]);
      if (kept == SmallVector<int64_t>(small))
        out.push_back(pick);
      return;
    }
    for (int64_t d = from; d < (int64_t)big.size(); ++d) {
      if (onlyOnes && big[d] != 1)
        continue;
      pick.push_back(d);
      go(d + 1);
      pick.pop_back();
    }
  };
  go(0);
  return out;
}

/// An optional axes input (operand 1) with static data and result types.
struct AxesInput {
  int64_t count;
  RankedTensorType data, result;
};
std::optional<AxesInput> axesInput(Operation *op) {
  if (op->getNumOperands() < 2 || isNone(op->getOperand(1)))
    return std::nullopt;
  auto k = numElements(op->getOperand(1));
  auto xt = staticType(op->getOperand(0)), out = staticType(op->getResult(0));
  if (!k || !xt || !out)
    return std::nullopt;
  return AxesInput{*k, xt, out};
}

/// Reduce*: with keepdims the reduced dims are those that became 1 (size-1
/// dims may or may not be named; the result is the same); without, every
/// way of dropping dims that leaves the result shape is a candidate.
std::optional<Specialization> planReduce(Operation *op) {
  auto in = axesInput(op);
  if (!in)
    return std::nullopt;
  auto [k, xt, out] = *in;
  int64_t r = xt.getRank();
  Specialization s{1, {}, nullptr};
  if (k == 0) {
    s.values = {{}};
    s.selects = [](OpBuilder &b, Location l, ArrayRef<Value>) {
      return SmallVector<Value>{Scalars{b, l}.flag(true)};
    };
    return s;
  }
  SmallVector<int64_t> dims = range(r);
  if (getIntAttr(op, "keepdims", 1)) {
    if (out.getRank() != r)
      return std::nullopt;
    SmallVector<int64_t> reduced, ones;
    for (int64_t d = 0; d < r; ++d) {
      if (xt.getDimSize(d) == 1)
        ones.push_back(d);
      else if (out.getDimSize(d) == 1)
        reduced.push_back(d);
      else if (out.getDimSize(d) != xt.getDimSize(d))
        return std::nullopt;
    }
    if (reduced.empty() && ones.empty())
      return std::nullopt;
    s.values = {reduced.empty() ? SmallVector<int64_t>{ones.front()} : reduced};
    dims.clear();
    for (int64_t d = 0; d < r; ++d)
      if (xt.getDimSize(d) != 1)
        dims.push_back(d);
  } else {
    s.values = removals(xt.getShape(), out.getShape(), false);
    if (s.values.empty() || (int64_t)s.values.front().size() != k)
      return std::nullopt;
  }
  auto values = s.values;
  s.selects = [=](OpBuilder &b, Location l, ArrayRef<Value> axes) {
    SmallVector<Value> sel;
    for (const auto &v : values)
      sel.push_back(Scalars{b, l}.axesAre(axes, r, dims, v));
    return sel;
  };
  return s;
}

/// Squeeze / Unsqueeze: any axes that remove / insert the right size-1 dims
/// give the same data; the first such set is compiled.
std::optional<Specialization> planSqueeze(Operation *op, bool squeeze) {
  auto in = axesInput(op);
  if (!in)
    return std::nullopt;
  auto [k, xt, out] = *in;
  auto big = squeeze ? xt : out, small = squeeze ? out : xt;
  auto sets = removals(big.getShape(), small.getShape(), true);
  if (sets.empty() || (int64_t)sets.front().size() != k)
    return std::nullopt;
  int64_t rank = big.getRank();
  return Specialization{1, {sets.front()}, [=](OpBuilder &b, Location l, ArrayRef<Value> axes) {
                          Scalars s{b, l};
                          SmallVector<Value> any;
                          for (const auto &set : sets)
                            any.push_back(s.axesAre(axes, rank, range(rank), set));
                          return SmallVector<Value>{s.any(any)};
                        }};
}

/// An input whose value must equal `want` element for element.
Specialization exactly(unsigned operand, SmallVector<int64_t> want) {
  return Specialization{operand, {want}, [=](OpBuilder &b, Location l, ArrayRef<Value> in) {
                          return SmallVector<Value>{Scalars{b, l}.equals(in, want)};
                        }};
}

std::optional<Specialization> planReshape(Operation *op) {
  auto k = numElements(op->getOperand(1));
  auto xt = staticType(op->getOperand(0)), out = staticType(op->getResult(0));
  if (!k || !xt || !out || *k != out.getRank())
    return std::nullopt;
  bool allowZero = getIntAttr(op, "allowzero", 0) != 0;
  SmallVector<int64_t> in(xt.getShape()), want(out.getShape());
  return Specialization{1, {want}, [=](OpBuilder &b, Location l, ArrayRef<Value> shape) {
                          Scalars s{b, l};
                          // Totals agree statically, so one -1 can only be
                          // the remaining dim.
                          SmallVector<Value> conds;
                          Value inferred = s.c(0);
                          for (auto [j, v] : llvm::enumerate(shape)) {
                            Value minus = s.eq(v, -1);
                            inferred = b.create<arith::AddIOp>(
                                l, inferred, b.create<arith::ExtUIOp>(l, b.getI64Type(), minus));
                            SmallVector<Value> ok = {s.eq(v, want[j]), minus};
                            if (!allowZero && j < in.size() && in[j] == want[j])
                              ok.push_back(s.eq(v, 0));
                            conds.push_back(s.any(ok));
                          }
                          conds.push_back(b.create<arith::CmpIOp>(l, arith::CmpIPredicate::sle,
                                                                  inferred, s.c(1)));
                          return SmallVector<Value>{s.all(conds)};
                        }};
}

std::optional<Specialization> planExpand(Operation *op) {
  auto k = numElements(op->getOperand(1));
  auto xt = staticType(op->getOperand(0)), out = staticType(op->getResult(0));
  if (!k || !xt || !out)
    return std::nullopt;
  int64_t r = xt.getRank(), R = out.getRank();
  if (*k > R || (*k < R && r < R))
    return std::nullopt;
  SmallVector<int64_t> in(xt.getShape()), want(out.getShape());
  int64_t n = *k;
  return Specialization{1, {want}, [=](OpBuilder &b, Location l, ArrayRef<Value> shape) {
                          Scalars s{b, l};
                          SmallVector<Value> conds;
                          for (int64_t j = 0; j < n; ++j) {
                            int64_t d = R - n + j, di = d - (R - r);
                            int64_t inDim = di >= 0 ? in[di] : 1;
                            SmallVector<Value> ok = {s.eq(shape[j], want[d])};
                            if (inDim == want[d])
                              ok.push_back(s.eq(shape[j], 1));
                            conds.push_back(s.any(ok));
                          }
                          return SmallVector<Value>{s.all(conds)};
                        }};
}

std::optional<Specialization> planTile(Operation *op) {
  auto k = numElements(op->getOperand(1));
  auto xt = staticType(op->getOperand(0)), out = staticType(op->getResult(0));
  if (!k || !xt || !out || *k != xt.getRank())
    return std::nullopt;
  SmallVector<int64_t> reps;
  for (int64_t d = 0; d < xt.getRank(); ++d) {
    if (xt.getDimSize(d) == 0 || out.getDimSize(d) % xt.getDimSize(d))
      return std::nullopt;
    reps.push_back(out.getDimSize(d) / xt.getDimSize(d));
  }
  return exactly(1, reps);
}

/// The result's size along attribute `axis` (TopK's k, OneHot's depth).
std::optional<Specialization> planAxisSize(Operation *op, int64_t defaultAxis) {
  auto k = numElements(op->getOperand(1));
  auto out = staticType(op->getResult(0));
  if (!k || *k != 1 || !out)
    return std::nullopt;
  int64_t axis = getIntAttr(op, "axis", defaultAxis);
  if (axis < 0)
    axis += out.getRank();
  if (axis < 0 || axis >= out.getRank())
    return std::nullopt;
  return exactly(1, {out.getDimSize(axis)});
}

std::optional<Specialization> planSplit(Operation *op) {
  if (op->getNumOperands() < 2 || isNone(op->getOperand(1)))
    return std::nullopt;
  auto k = numElements(op->getOperand(1));
  if (!k || *k != op->getNumResults())
    return std::nullopt;
  int64_t axis = getIntAttr(op, "axis", 0);
  SmallVector<int64_t> sizes;
  for (Value r : op->getResults()) {
    auto t = staticType(r);
    if (!t)
      return std::nullopt;
    sizes.push_back(t.getDimSize(axis < 0 ? axis + t.getRank() : axis));
  }
  return exactly(1, sizes);
}

/// ConstantOfShape's shape, Resize's sizes: the result shape itself (Resize
/// only on its `axes`).
std::optional<Specialization> planResultShape(Operation *op, unsigned operand) {
  if (operand >= op->getNumOperands() || isNone(op->getOperand(operand)))
    return std::nullopt;
  auto k = numElements(op->getOperand(operand));
  auto out = staticType(op->getResult(0));
  if (!k || !out)
    return std::nullopt;
  SmallVector<int64_t> want(out.getShape());
  if (auto axes = getIntsAttr(op, "axes"); !axes.empty()) {
    want.clear();
    for (int64_t a : axes)
      want.push_back(out.getDimSize(a < 0 ? a + out.getRank() : a));
  }
  if ((int64_t)want.size() != *k)
    return std::nullopt;
  return exactly(operand, want);
}

/// An axis input (CumSum, CumProd, DFT): each of the first `axes` axes is a
/// candidate, picked at run time (ones whose result shape differs are
/// dropped when the candidates are lowered).
std::optional<Specialization> planAxis(Operation *op, unsigned operand, int64_t axes) {
  auto xt = staticType(op->getOperand(0));
  if (operand >= op->getNumOperands() || isNone(op->getOperand(operand)))
    return std::nullopt;
  auto k = numElements(op->getOperand(operand));
  if (!xt || !k || *k != 1 || xt.getRank() == 0)
    return std::nullopt;
  int64_t r = xt.getRank();
  Specialization s{operand, {}, nullptr};
  for (int64_t a = 0; a < axes; ++a)
    s.values.push_back({a});
  s.selects = [r, axes](OpBuilder &b, Location l, ArrayRef<Value> axis) {
    Scalars sc{b, l};
    SmallVector<Value> sel;
    for (int64_t a = 0; a < axes; ++a)
      sel.push_back(sc.any({sc.eq(axis[0], a), sc.eq(axis[0], a - r)}));
    return sel;
  };
  return s;
}

/// AffineGrid's size [N, C, (D,) H, W]: all but C are the result's.
std::optional<Specialization> planAffineGrid(Operation *op) {
  auto out = staticType(op->getResult(0));
  auto k = numElements(op->getOperand(1));
  if (!out || !k || *k != out.getRank())
    return std::nullopt;
  SmallVector<int64_t> want = {out.getDimSize(0), 1};
  for (int64_t d = 1; d + 1 < out.getRank(); ++d)
    want.push_back(out.getDimSize(d));
  return Specialization{1, {want}, [=](OpBuilder &b, Location l, ArrayRef<Value> in) {
                          Scalars s{b, l};
                          SmallVector<Value> conds;
                          for (auto [j, v] : llvm::enumerate(in))
                            if (j != 1)
                              conds.push_back(s.eq(v, want[j]));
                          return SmallVector<Value>{s.all(conds)};
                        }};
}

/// Col2Im: image_shape is the result's spatial shape; block_shape any
/// factorization of the column count per channel whose blocks tile the
/// image into the input's number of blocks.
std::optional<Specialization> planCol2Im(Operation *op) {
  auto xt = staticType(op->getOperand(0)), out = staticType(op->getResult(0));
  if (!xt || !out || xt.getRank() != 3 || out.getRank() < 3)
    return std::nullopt;
  int64_t nd = out.getRank() - 2;
  SmallVector<int64_t> image(out.getShape().drop_front(2));
  if (!getConstantInts(op->getOperand(1)))
    return exactly(1, image);
  int64_t c = out.getDimSize(1);
  if (c == 0 || xt.getDimSize(1) % c)
    return std::nullopt;
  int64_t k = xt.getDimSize(1) / c, blocks = xt.getDimSize(2);
  SmallVector<int64_t> dil = getIntsAttr(op, "dilations"), pads = getIntsAttr(op, "pads"),
                       strides = getIntsAttr(op, "strides");
  auto attrAt = [&](ArrayRef<int64_t> v, int64_t i, int64_t dflt) {
    return i < (int64_t)v.size() ? v[i] : dflt;
  };
  Specialization s{2, {}, nullptr};
  SmallVector<int64_t> cur;
  std::function<void(int64_t, int64_t)> go = [&](int64_t d, int64_t rest) {
    if (s.values.size() >= 16)
      return;
    if (d == nd) {
      if (rest != 1)
        return;
      int64_t count = 1;
      for (int64_t i = 0; i < nd; ++i) {
        int64_t span = image[i] + attrAt(pads, i, 0) + attrAt(pads, i + nd, 0) -
                       attrAt(dil, i, 1) * (cur[i] - 1) - 1;
        if (span < 0)
          return;
        count *= span / attrAt(strides, i, 1) + 1;
      }
      if (count == blocks)
        s.values.push_back(cur);
      return;
    }
    for (int64_t f = 1; f <= rest; ++f)
      if (rest % f == 0) {
        cur.push_back(f);
        go(d + 1, rest / f);
        cur.pop_back();
      }
  };
  go(0, k);
  if (s.values.empty())
    return std::nullopt;
  auto values = s.values;
  s.selects = [values](OpBuilder &b, Location l, ArrayRef<Value> in) {
    SmallVector<Value> sel;
    for (const auto &v : values)
      sel.push_back(Scalars{b, l}.equals(in, v));
    return sel;
  };
  return s;
}

std::optional<Specialization> plan(Operation *op) {
  StringRef name = op->getName().getStringRef();
  if (!name.consume_front("onnx."))
    return std::nullopt;
  std::optional<Specialization> s;
  if (name.starts_with("Reduce"))
    s = planReduce(op);
  else if (name == "Squeeze" || name == "Unsqueeze")
    s = planSqueeze(op, name == "Squeeze");
  else if (name == "Reshape")
    s = planReshape(op);
  else if (name == "Expand")
    s = planExpand(op);
  else if (name == "Tile")
    s = planTile(op);
  else if (name == "TopK")
    s = planAxisSize(op, -1);
  else if (name == "OneHot")
    s = planAxisSize(op, -1);
  else if (name == "Split")
    s = planSplit(op);
  else if (name == "CumSum" || name == "CumProd")
    s = planAxis(op, 1, staticType(op->getOperand(0)) ? staticType(op->getOperand(0)).getRank() : 0);
  else if (name == "DFT")
    s = planAxis(op, 2, staticType(op->getOperand(0)) ? staticType(op->getOperand(0)).getRank() - 1 : 0);
  else if (name == "ConstantOfShape")
    s = planResultShape(op, 0);
  else if (name == "CenterCropPad")
    s = planResultShape(op, 1);
  else if (name == "AffineGrid")
    s = planAffineGrid(op);
  else if (name == "Col2Im")
    s = planCol2Im(op);
  else if (name == "HannWindow" || name == "HammingWindow" || name == "BlackmanWindow")
    s = planResultShape(op, 0);
  // (With keep_aspect_ratio_policy the sizes are not the result shape.)
  else if (name == "Resize" && op->getNumOperands() > 3 && isNone(op->getOperand(2)) &&
           getStrAttr(op, "keep_aspect_ratio_policy", "stretch") == "stretch")
    s = planResultShape(op, 3);
  // Only for an input that is really computed at run time.
  if (s && getConstantDoubles(op->getOperand(s->operand)))
    return std::nullopt;
  return s;
}

Operation *intConstant(OpBuilder &b, Location loc, ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({(int64_t)values.size()}, b.getI64Type());
  return b.create<arith::ConstantOp>(loc, DenseIntElementsAttr::get(type, values));
}


/// The input's elements as i64 scalars.
SmallVector<Value> elementsOf(OpBuilder &b, Location l, Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<Value> out;
  for (int64_t i = 0; i < t.getNumElements(); ++i) {
    SmallVector<Value> idx;
    if (t.getRank() == 1)
      idx.push_back(b.create<arith::ConstantIndexOp>(l, i));
    Value e = b.create<tensor::ExtractOp>(l, v, idx);
    Type et = e.getType();
    if (isFloat(et))
      e = b.create<arith::FPToSIOp>(l, b.getI64Type(), e);
    else if (et.getIntOrFloatBitWidth() < 64)
      e = b.create<arith::ExtSIOp>(l, b.getI64Type(), e);
    out.push_back(e);
  }
  return out;
}

/// `op` lowered with candidate `i` in place of its run-time input.
Results lowerWith(OpBuilder &b, Operation *op, const Specialization &s, size_t i) {
  Operation *c = intConstant(b, op->getLoc(), s.values[i]);
  Operation *clone = b.clone(*op);
  clone->setOperand(s.operand, c->getResult(0));
  // Another input may still be a run-time one (Col2Im's two shapes).
  Results r = hasRuntimeShapeInput(clone) ? lowerSpecialized(b, clone) : lowerOneOp(b, clone);
  clone->erase();
  if (c->use_empty())
    c->erase();
  return r;
}

} // namespace

bool hasRuntimeShapeInput(Operation *op) { return plan(op).has_value(); }

/// Whether `op` lowers with candidate `i` in place of its run-time input.
static bool candidateLowers(Operation *op, const Specialization &s, size_t i, std::string &why) {
  OpBuilder b(op->getContext());
  Operation *c = intConstant(b, op->getLoc(), s.values[i]);
  Operation *clone = op->clone();
  clone->setOperand(s.operand, c->getResult(0));
  bool ok = canLowerOnCpu(clone, why);
  clone->destroy();
  c->destroy();
  return ok;
}

bool canLowerSpecialized(Operation *op, std::string &why) {
  auto s = plan(op);
  // Candidates that do not lower (their result shape differs) are dropped;
  // at least one must remain.
  for (size_t i = 0; i < s->values.size(); ++i)
    if (candidateLowers(op, *s, i, why))
      return true;
  return false;
}

Results lowerSpecialized(OpBuilder &b, Operation *op) {
  auto s = plan(op);
  Location loc = op->getLoc();
  SmallVector<Value> all =
      s->selects(b, loc, elementsOf(b, loc, op->getOperand(s->operand)));
  SmallVector<Value> selects;
  SmallVector<size_t> kept;
  for (size_t i = 0; i < s->values.size(); ++i) {
    std::string why;
    if (candidateLowers(op, *s, i, why)) {
      kept.push_back(i);
      selects.push_back(all[i]);
    }
  }
  std::string msg;
  llvm::raw_string_ostream os(msg);
  os << describeNode(op) << ": input " << s->operand
     << " (computed at run time) gives a result shape other than the compiled ";
  llvm::interleave(op->getResultTypes(), os, ", ");
  b.create<CheckOp>(loc, Scalars{b, loc}.any(selects), os.str());
  // The last candidate also runs when none matches (the check has failed).
  std::function<Results(size_t)> branch = [&](size_t i) -> Results {
    if (i + 1 == kept.size())
      return lowerWith(b, op, *s, kept[i]);
    auto ifOp = b.create<scf::IfOp>(loc, op->getResultTypes(), selects[i], /*withElseRegion=*/true);
    for (auto [region, next] : {std::pair{&ifOp.getThenRegion(), i}, std::pair{&ifOp.getElseRegion(), i + 1}}) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&region->front());
      Results r = next == i ? lowerWith(b, op, *s, kept[i]) : branch(next);
      if (failed(r) || llvm::any_of(*r, [](Value v) { return !v; }))
        return failure();
      b.create<scf::YieldOp>(loc, *r);
    }
    return SmallVector<Value>(ifOp.getResults());
  };
  return branch(0);
}

} // namespace kiln::cpu
