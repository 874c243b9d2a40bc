//===- SymbolicShapes.cpp - bind symbolic dims, size the outputs ----------===//
//
// For a model compiled with run-time sizes: each dynamic dim of an input
// binds a symbol (its dim_param, shared by every input that names it, or a
// fresh "<input>:<axis>"), and each dynamic dim of an output must be a
// size expression over those symbols (SymSize), which becomes the shape
// function of the library: the runtime sizes the outputs before the run.
// Sizes flow forward through the ops that move or combine dims (broadcast,
// MatMul, Reshape, Concat, ...), and through the small int64 tensors that
// compute shapes (Shape, Gather, Concat, Unsqueeze and arithmetic on them).
//
//===----------------------------------------------------------------------===//

#include "dialects/onnx/OnnxOps.h"
#include "dialects/onnx/ShapeInference.h"
#include "passes/NodeName.h"
#include "passes/Passes.h"
#include "passes/SymSize.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_SYMBOLICSHAPES
#include "passes/Passes.h.inc"

namespace {

using MaybeSize = std::optional<SymSize>;
using Sizes = SmallVector<MaybeSize, 4>;

class Analysis {
public:
  SmallVector<std::string> names;
  llvm::StringMap<int> byName;
  llvm::DenseMap<Value, Sizes> dims;
  // Elements of small int64 tensors that hold shapes.
  llvm::DenseMap<Value, Sizes> values;
  int64_t numRefined = 0;

  int symbolFor(StringRef name) {
    auto [it, added] = byName.try_emplace(name, static_cast<int>(names.size()));
    if (added)
      names.push_back(name.str());
    return it->second;
  }

  /// The sizes of `v`: static dims as constants, others as computed.
  Sizes sizesOf(Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t)
      return {};
    Sizes s(t.getRank());
    auto it = dims.find(v);
    for (int64_t i = 0; i < t.getRank(); ++i) {
      if (!t.isDynamicDim(i))
        s[i] = SymSize::constant(t.getDimSize(i));
      else if (it != dims.end() && i < static_cast<int64_t>(it->second.size()))
        s[i] = it->second[i];
    }
    return s;
  }

  /// The elements of an int64 shape tensor, where known.
  std::optional<Sizes> valuesOf(Value v) {
    if (auto c = onnx::getConstantInts(v)) {
      Sizes s;
      for (int64_t x : *c)
        s.push_back(SymSize::constant(x));
      return s;
    }
    auto it = values.find(v);
    if (it == values.end())
      return std::nullopt;
    return it->second;
  }

  void visit(Operation *op);
};

/// Axes normalized to [0, rank).
SmallVector<int64_t> normalized(ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> r;
  for (int64_t a : axes)
    r.push_back(a < 0 ? a + rank : a);
  llvm::sort(r);
  return r;
}

void Analysis::visit(Operation *op) {
  if (op->getNumResults() == 0)
    return;
  Value out = op->getResult(0);
  auto outType = dyn_cast<RankedTensorType>(out.getType());
  if (!outType)
    return;
  int64_t rank = outType.getRank();
  Sizes r(rank);
  auto operand = [&](unsigned i) { return op->getOperand(i); };

  // Shape tensors: element values.
  if (isa<onnx::ShapeOp>(op)) {
    Sizes in = sizesOf(operand(0));
    int64_t n = in.size();
    int64_t start = onnx::getIntAttr(op, "start", 0), end = onnx::getIntAttr(op, "end", n);
    start = std::clamp<int64_t>(start < 0 ? start + n : start, 0, n);
    end = std::clamp<int64_t>(end < 0 ? end + n : end, 0, n);
    values[out] = Sizes(in.begin() + start, in.begin() + std::max(start, end));
  } else if (isa<onnx::GatherOp>(op) && rank <= 1) {
    auto data = valuesOf(operand(0));
    auto idx = onnx::getConstantInts(operand(1));
    if (data && idx) {
      Sizes v;
      for (int64_t i : *idx) {
        int64_t j = i < 0 ? i + static_cast<int64_t>(data->size()) : i;
        v.push_back(j >= 0 && j < static_cast<int64_t>(data->size()) ? (*data)[j] : MaybeSize());
      }
      values[out] = v;
    }
  } else if (isa<onnx::UnsqueezeOp, onnx::SqueezeOp, onnx::IdentityOp, onnx::CastOp,
                 onnx::ReshapeOp>(op) &&
             rank <= 1) {
    if (auto v = valuesOf(operand(0)))
      values[out] = *v;
  } else if (isa<onnx::ConcatOp>(op) && rank == 1) {
    Sizes v;
    bool all = true;
    for (Value in : op->getOperands())
      if (auto e = valuesOf(in))
        v.append(e->begin(), e->end());
      else
        all = false;
    if (all)
      values[out] = v;
  } else if (isa<onnx::SliceOp>(op) && rank <= 1) {
    auto data = valuesOf(operand(0));
    auto starts = onnx::getConstantInts(operand(1)), ends = onnx::getConstantInts(operand(2));
    bool plain = op->getNumOperands() < 5 || onnx::isNone(operand(4)) ||
                 onnx::getConstantInts(operand(4)) == SmallVector<int64_t>{1};
    if (data && starts && ends && starts->size() == 1 && plain) {
      int64_t n = data->size();
      int64_t s = (*starts)[0], e = (*ends)[0];
      s = std::clamp<int64_t>(s < 0 ? s + n : s, 0, n);
      e = std::clamp<int64_t>(e < 0 ? e + n : e, 0, n);
      values[out] = Sizes(data->begin() + s, data->begin() + std::max(s, e));
    }
  } else if (isa<onnx::AddOp, onnx::SubOp, onnx::MulOp, onnx::DivOp>(op) && rank <= 1 &&
             outType.getElementType().isInteger(64)) {
    auto a = valuesOf(operand(0)), b = valuesOf(operand(1));
    if (a && b && (a->size() == b->size() || a->size() == 1 || b->size() == 1)) {
      size_t n = std::max(a->size(), b->size());
      Sizes v;
      for (size_t i = 0; i < n; ++i) {
        const MaybeSize &x = (*a)[a->size() == 1 ? 0 : i], &y = (*b)[b->size() == 1 ? 0 : i];
        if (!x || !y) {
          v.push_back(std::nullopt);
          continue;
        }
        v.push_back(isa<onnx::AddOp>(op)   ? *x + *y
                    : isa<onnx::SubOp>(op) ? *x - *y
                    : isa<onnx::MulOp>(op) ? *x * *y
                                           : SymSize::floorDiv(*x, *y));
      }
      values[out] = v;
    }
  }

  // Dims of the result.
  onnx::ShapeRule rule = onnx::shapeRuleOf(op);
  if (rule == onnx::ShapeRule::SameAsFirst) {
    r = sizesOf(operand(0));
  } else if (rule == onnx::ShapeRule::Broadcast) {
    for (Value in : op->getOperands()) {
      Sizes s = sizesOf(in);
      int64_t offset = rank - static_cast<int64_t>(s.size());
      for (size_t i = 0; i < s.size(); ++i) {
        MaybeSize &slot = r[offset + i];
        if (!s[i] || s[i]->asConstant() == 1)
          continue;
        // The first size that is not 1; the lowering checks the others.
        if (!slot || slot->asConstant() == 1)
          slot = s[i];
      }
    }
    for (int64_t i = 0; i < rank; ++i)
      if (!r[i] && !outType.isDynamicDim(i))
        r[i] = SymSize::constant(outType.getDimSize(i));
    // Every operand dim was 1 (or unknown): a 1 stays.
    for (int64_t i = 0; i < rank; ++i)
      if (!r[i]) {
        bool allOne = true;
        for (Value in : op->getOperands()) {
          Sizes s = sizesOf(in);
          int64_t j = i - (rank - static_cast<int64_t>(s.size()));
          if (j >= 0 && (!s[j] || s[j]->asConstant() != 1))
            allOne = false;
        }
        if (allOne)
          r[i] = SymSize::constant(1);
      }
  } else if (isa<onnx::MatMulOp, onnx::MatMulIntegerOp, onnx::QLinearMatMulOp>(op)) {
    // (QLinearMatMul: a, its scale and zero point, then b.)
    Sizes a = sizesOf(operand(0)),
          b = sizesOf(operand(isa<onnx::QLinearMatMulOp>(op) ? 3 : 1));
    if (a.size() >= 2 && b.size() >= 2) {
      int64_t batch = rank - 2;
      for (int64_t i = 0; i < batch; ++i) {
        int64_t ia = i - (batch - (static_cast<int64_t>(a.size()) - 2));
        int64_t ib = i - (batch - (static_cast<int64_t>(b.size()) - 2));
        MaybeSize x = ia >= 0 ? a[ia] : MaybeSize(SymSize::constant(1));
        MaybeSize y = ib >= 0 ? b[ib] : MaybeSize(SymSize::constant(1));
        r[i] = x && x->asConstant() != 1 ? x : y;
      }
      r[rank - 2] = a[a.size() - 2];
      r[rank - 1] = b.back();
    } else if (a.size() >= 2 && b.size() == 1) {
      for (int64_t i = 0; i < rank; ++i)
        r[i] = a[i];
    } else if (a.size() == 1 && b.size() >= 2) {
      for (int64_t i = 0; i < rank - 1; ++i)
        r[i] = b[i];
      r[rank - 1] = b.back();
    }
  } else if (isa<onnx::GemmOp>(op)) {
    Sizes a = sizesOf(operand(0)), b = sizesOf(operand(1));
    if (a.size() == 2 && b.size() == 2) {
      r[0] = onnx::getIntAttr(op, "transA", 0) ? a[1] : a[0];
      r[1] = onnx::getIntAttr(op, "transB", 0) ? b[0] : b[1];
    }
  } else if (isa<onnx::TransposeOp>(op)) {
    Sizes in = sizesOf(operand(0));
    SmallVector<int64_t> perm = onnx::getIntsAttr(op, "perm");
    if (perm.empty())
      for (int64_t i = rank - 1; i >= 0; --i)
        perm.push_back(i);
    for (int64_t i = 0; i < rank && i < static_cast<int64_t>(perm.size()); ++i)
      r[i] = in[perm[i]];
  } else if (isa<onnx::ReshapeOp>(op)) {
    Sizes in = sizesOf(operand(0));
    if (auto shape = valuesOf(operand(1)); shape && static_cast<int64_t>(shape->size()) == rank) {
      bool allowZero = onnx::getIntAttr(op, "allowzero", 0) != 0;
      int64_t minusOne = -1;
      for (int64_t i = 0; i < rank; ++i) {
        r[i] = (*shape)[i];
        if (r[i] && r[i]->asConstant() == 0 && !allowZero)
          r[i] = i < static_cast<int64_t>(in.size()) ? in[i] : MaybeSize();
        else if (r[i] && r[i]->asConstant() == -1)
          minusOne = i, r[i].reset();
      }
      if (minusOne >= 0) {
        MaybeSize total = SymSize::constant(1), rest = SymSize::constant(1);
        for (const MaybeSize &s : in)
          total = total && s ? MaybeSize(*total * *s) : std::nullopt;
        for (int64_t i = 0; i < rank; ++i)
          if (i != minusOne)
            rest = rest && r[i] ? MaybeSize(*rest * *r[i]) : std::nullopt;
        if (total && rest)
          r[minusOne] = SymSize::floorDiv(*total, *rest);
      }
    }
  } else if (isa<onnx::FlattenOp>(op)) {
    Sizes in = sizesOf(operand(0));
    int64_t axis = onnx::getIntAttr(op, "axis", 1);
    if (axis < 0)
      axis += in.size();
    MaybeSize lead = SymSize::constant(1), tail = SymSize::constant(1);
    for (int64_t i = 0; i < static_cast<int64_t>(in.size()); ++i) {
      MaybeSize &acc = i < axis ? lead : tail;
      acc = acc && in[i] ? MaybeSize(*acc * *in[i]) : std::nullopt;
    }
    if (rank == 2)
      r = {lead, tail};
  } else if (isa<onnx::UnsqueezeOp, onnx::SqueezeOp>(op)) {
    // Dims other than the 1s added or removed keep their order.
    Sizes in = sizesOf(operand(0));
    Sizes kept;
    for (const MaybeSize &s : in)
      if (!(s && s->asConstant() == 1))
        kept.push_back(s);
    size_t k = 0;
    for (int64_t i = 0; i < rank; ++i)
      if (outType.getDimSize(i) != 1)
        r[i] = k < kept.size() ? kept[k++] : MaybeSize();
  } else if (isa<onnx::ConcatOp>(op)) {
    int64_t axis = onnx::getIntAttr(op, "axis", 0);
    if (axis < 0)
      axis += rank;
    r = sizesOf(operand(0));
    for (Value in : op->getOperands().drop_front()) {
      Sizes s = sizesOf(in);
      if (static_cast<int64_t>(s.size()) == rank && r[axis] && s[axis])
        r[axis] = *r[axis] + *s[axis];
      else
        r[axis].reset();
    }
  } else if (isa<onnx::GatherOp>(op)) {
    Sizes data = sizesOf(operand(0)), idx = sizesOf(operand(1));
    int64_t axis = onnx::getIntAttr(op, "axis", 0);
    if (axis < 0)
      axis += data.size();
    Sizes s(data.begin(), data.begin() + axis);
    s.append(idx.begin(), idx.end());
    s.append(data.begin() + axis + 1, data.end());
    if (static_cast<int64_t>(s.size()) == rank)
      r = s;
  } else if (isa<onnx::ConvOp, onnx::ConvIntegerOp, onnx::QLinearConvOp, onnx::MaxPoolOp,
                 onnx::AveragePoolOp>(op)) {
    // floor((in + pads - dilation * (kernel - 1) - 1) / stride) + 1 per
    // spatial dim (explicit pads; the lowering refuses others).
    Sizes in = sizesOf(operand(0));
    int64_t sp = rank - 2;
    bool isConv = isa<onnx::ConvOp, onnx::ConvIntegerOp, onnx::QLinearConvOp>(op);
    // (QLinearConv: x, its scale and zero point, then w.)
    Value w = isConv ? operand(isa<onnx::QLinearConvOp>(op) ? 3 : 1) : Value();
    SmallVector<int64_t> kernel = onnx::getIntsAttr(op, "kernel_shape");
    if (kernel.empty() && isConv)
      if (auto wt = dyn_cast<RankedTensorType>(w.getType()); wt && wt.hasStaticShape())
        kernel.assign(wt.getShape().begin() + 2, wt.getShape().end());
    SmallVector<int64_t> pads = onnx::getIntsAttr(op, "pads"),
                         strides = onnx::getIntsAttr(op, "strides"),
                         dil = onnx::getIntsAttr(op, "dilations");
    StringRef autoPad = onnx::getStrAttr(op, "auto_pad", "NOTSET");
    bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
    // The batch, and the channels: a pool's input's, a Conv's filters.
    if (static_cast<int64_t>(in.size()) == rank && rank >= 2) {
      r[0] = in[0];
      if (!isConv)
        r[1] = in[1];
      else if (Sizes ws = sizesOf(w); !ws.empty())
        r[1] = ws[0];
    }
    if (static_cast<int64_t>(in.size()) == rank && same) {
      // ceil(in / stride), whatever the kernel.
      r[0] = in[0];
      for (int64_t i = 0; i < sp; ++i)
        if (in[2 + i])
          r[2 + i] = SymSize::ceilDiv(*in[2 + i], SymSize::constant(strides.empty() ? 1 : strides[i]));
    } else if (static_cast<int64_t>(in.size()) == rank && static_cast<int64_t>(kernel.size()) == sp &&
               (autoPad == "NOTSET" || autoPad == "VALID")) {
      // floor mode, or a ceil mode whose last window never starts in the
      // end padding (then plainly the ceiling).
      bool ceil = onnx::getIntAttr(op, "ceil_mode", 0) != 0;
      if (ceil && !onnx::ceilModeIsPlainCeil(op, kernel))
        return;
      for (int64_t i = 0; i < sp; ++i) {
        if (!in[2 + i])
          continue;
        int64_t p = autoPad == "VALID" || pads.empty() ? 0 : pads[i] + pads[sp + i];
        int64_t s = strides.empty() ? 1 : strides[i], d = dil.empty() ? 1 : dil[i];
        SymSize span = *in[2 + i] + SymSize::constant(p - d * (kernel[i] - 1) - 1);
        r[2 + i] = (ceil ? SymSize::ceilDiv(span, SymSize::constant(s))
                         : SymSize::floorDiv(span, SymSize::constant(s))) +
                   SymSize::constant(1);
      }
    }
  } else if (isa<onnx::ConvTransposeOp>(op)) {
    // stride * (in - 1) + output_padding + dilation * (kernel - 1) + 1 -
    // pads per spatial dim (explicit pads; the lowering refuses others).
    Sizes in = sizesOf(operand(0));
    int64_t sp = rank - 2;
    auto wt = dyn_cast<RankedTensorType>(operand(1).getType());
    if (static_cast<int64_t>(in.size()) != rank || rank < 3 || !wt || !wt.hasStaticShape())
      return;
    r[0] = in[0];
    r[1] = SymSize::constant(wt.getDimSize(1) * onnx::getIntAttr(op, "group", 1));
    StringRef autoPad = onnx::getStrAttr(op, "auto_pad", "NOTSET");
    if ((autoPad != "NOTSET" && autoPad != "VALID") ||
        !onnx::getIntsAttr(op, "output_shape").empty())
      return;
    SmallVector<int64_t> pads = onnx::getIntsAttr(op, "pads"),
                         strides = onnx::getIntsAttr(op, "strides"),
                         dil = onnx::getIntsAttr(op, "dilations"),
                         outPad = onnx::getIntsAttr(op, "output_padding");
    for (int64_t i = 0; i < sp; ++i) {
      if (!in[2 + i])
        continue;
      int64_t p = autoPad == "VALID" || pads.empty() ? 0 : pads[i] + pads[sp + i];
      int64_t s = strides.empty() ? 1 : strides[i], d = dil.empty() ? 1 : dil[i];
      int64_t o = outPad.empty() ? 0 : outPad[i];
      r[2 + i] = (*in[2 + i] - SymSize::constant(1)) * SymSize::constant(s) +
                 SymSize::constant(o + d * (wt.getDimSize(2 + i) - 1) + 1 - p);
    }
  } else if (isa<onnx::GlobalAveragePoolOp, onnx::GlobalMaxPoolOp>(op)) {
    Sizes in = sizesOf(operand(0));
    if (!in.empty())
      r[0] = in[0];
  } else if (isa<onnx::RangeOp>(op)) {
    auto start = valuesOf(operand(0)), limit = valuesOf(operand(1)), delta = valuesOf(operand(2));
    if (start && limit && delta && start->size() == 1 && limit->size() == 1 &&
        delta->size() == 1 && (*start)[0] && (*limit)[0] && (*delta)[0] &&
        (*delta)[0]->asConstant().value_or(0) > 0)
      r[0] = SymSize::ceilDiv(*(*limit)[0] - *(*start)[0], *(*delta)[0]);
  } else if (isa<onnx::SliceOp>(op)) {
    // Steps of 1 with starts and ends inside the dim (the lowering clamps;
    // the shape function's answer is checked against it at run time).
    Sizes in = sizesOf(operand(0));
    auto starts = valuesOf(operand(1)), ends = valuesOf(operand(2));
    std::optional<SmallVector<int64_t>> axes, steps;
    if (op->getNumOperands() > 3 && !onnx::isNone(operand(3)))
      axes = onnx::getConstantInts(operand(3));
    else if (starts)
      axes = llvm::to_vector(llvm::seq<int64_t>(0, starts->size()));
    bool unitSteps = op->getNumOperands() <= 4 || onnx::isNone(operand(4)) ||
                     llvm::all_of(onnx::getConstantInts(operand(4)).value_or(
                                      SmallVector<int64_t>{0}),
                                  [](int64_t s) { return s == 1; });
    if (starts && ends && axes && unitSteps && static_cast<int64_t>(in.size()) == rank) {
      r = in;
      for (size_t i = 0; i < axes->size() && i < starts->size(); ++i) {
        int64_t a = (*axes)[i] < 0 ? (*axes)[i] + rank : (*axes)[i];
        const MaybeSize &s0 = (*starts)[i], &e0 = (*ends)[i];
        if (a < 0 || a >= rank || !s0 || !e0 || !in[a]) {
          if (a >= 0 && a < rank)
            r[a].reset();
          continue;
        }
        auto bound = [&](const SymSize &v) -> MaybeSize {
          std::optional<int64_t> c = v.asConstant();
          if (!c)
            return v;
          if (*c >= (int64_t(1) << 31))
            return in[a];
          if (*c < 0)
            return *in[a] + v;
          return v;
        };
        MaybeSize s = bound(*s0), e = bound(*e0);
        r[a] = s && e ? MaybeSize(*e - *s) : std::nullopt;
      }
    }
  } else if (isa<onnx::ExpandOp>(op)) {
    Sizes in = sizesOf(operand(0));
    if (auto shape = valuesOf(operand(1))) {
      int64_t so = rank - static_cast<int64_t>(shape->size());
      int64_t xo = rank - static_cast<int64_t>(in.size());
      for (int64_t d = 0; d < rank; ++d) {
        MaybeSize s = d >= so ? (*shape)[d - so] : MaybeSize(SymSize::constant(1));
        MaybeSize x = d >= xo ? in[d - xo] : MaybeSize(SymSize::constant(1));
        r[d] = s && s->asConstant() == 1 ? x : s;
      }
    }
  } else if (isa<onnx::ConstantOfShapeOp>(op)) {
    if (auto shape = valuesOf(operand(0)); shape && static_cast<int64_t>(shape->size()) == rank)
      r = *shape;
  } else if (isa<onnx::ArgMaxOp, onnx::ArgMinOp>(op)) {
    Sizes in = sizesOf(operand(0));
    int64_t axis = onnx::getIntAttr(op, "axis", 0);
    if (axis < 0)
      axis += in.size();
    bool keep = onnx::getIntAttr(op, "keepdims", 1) != 0;
    Sizes s;
    for (int64_t i = 0; i < static_cast<int64_t>(in.size()); ++i)
      if (i != axis)
        s.push_back(in[i]);
      else if (keep)
        s.push_back(SymSize::constant(1));
    if (static_cast<int64_t>(s.size()) == rank)
      r = s;
  } else if (isa<onnx::TopKOp>(op)) {
    // The k largest along the axis; both results.
    Sizes in = sizesOf(operand(0));
    int64_t axis = onnx::getIntAttr(op, "axis", -1);
    if (axis < 0)
      axis += in.size();
    auto k = valuesOf(operand(1));
    if (static_cast<int64_t>(in.size()) == rank && axis >= 0 && axis < rank && k &&
        k->size() == 1) {
      r = in;
      r[axis] = (*k)[0];
      for (Value res : op->getResults())
        dims[res] = r;
    }
  } else if (isa<onnx::TileOp>(op)) {
    Sizes in = sizesOf(operand(0));
    if (auto reps = valuesOf(operand(1));
        reps && reps->size() == in.size() && static_cast<int64_t>(in.size()) == rank)
      for (int64_t i = 0; i < rank; ++i)
        r[i] = in[i] && (*reps)[i] ? MaybeSize(*in[i] * *(*reps)[i]) : std::nullopt;
  } else if (isa<onnx::PadOp>(op)) {
    Sizes in = sizesOf(operand(0));
    SmallVector<int64_t> low, high;
    if (static_cast<int64_t>(in.size()) == rank && succeeded(onnx::resolvePads(op, rank, low, high)))
      for (int64_t i = 0; i < rank; ++i)
        r[i] = in[i] ? MaybeSize(*in[i] + SymSize::constant(low[i] + high[i])) : std::nullopt;
  } else if (isa<onnx::DepthToSpaceOp, onnx::SpaceToDepthOp>(op)) {
    Sizes in = sizesOf(operand(0));
    int64_t bs = onnx::getIntAttr(op, "blocksize", 1);
    if (in.size() == 4 && rank == 4 && bs > 0) {
      SymSize b = SymSize::constant(bs), b2 = SymSize::constant(bs * bs);
      bool toSpace = isa<onnx::DepthToSpaceOp>(op);
      r[0] = in[0];
      if (in[1])
        r[1] = toSpace ? SymSize::floorDiv(*in[1], b2) : *in[1] * b2;
      for (int i : {2, 3})
        if (in[i])
          r[i] = toSpace ? *in[i] * b : SymSize::floorDiv(*in[i], b);
    }
  } else if (isa<onnx::GatherElementsOp>(op)) {
    r = sizesOf(operand(1));
  } else if (isa<onnx::ResizeOp, onnx::UpsampleOp>(op)) {
    // Sizes given (from Shape arithmetic), or scales that are whole
    // numbers or their reciprocals (floor(in * scale)).
    Sizes in = sizesOf(operand(0));
    onnx::ResizeInputs ri = onnx::resizeInputs(op, in.size());
    bool plainAxes = ri.axes.size() == in.size();
    if (static_cast<int64_t>(in.size()) == rank && plainAxes && ri.sizes && !onnx::isNone(ri.sizes)) {
      if (auto sz = valuesOf(ri.sizes); sz && static_cast<int64_t>(sz->size()) == rank &&
                                        onnx::getStrAttr(op, "keep_aspect_ratio_policy",
                                                         "stretch") == "stretch")
        r = *sz;
    } else if (static_cast<int64_t>(in.size()) == rank && plainAxes && ri.scales) {
      if (auto sc = onnx::getConstantDoubles(ri.scales);
          sc && static_cast<int64_t>(sc->size()) == rank)
        for (int64_t i = 0; i < rank; ++i) {
          double f = (*sc)[i];
          if (!in[i] || f <= 0)
            continue;
          if (f == std::floor(f))
            r[i] = *in[i] * SymSize::constant(static_cast<int64_t>(f));
          else if (double inv = 1.0 / f; inv == std::floor(inv))
            r[i] = SymSize::floorDiv(*in[i], SymSize::constant(static_cast<int64_t>(inv)));
        }
    }
  } else if (op->getName().getStringRef().starts_with("onnx.Reduce")) {
    Sizes in = sizesOf(operand(0));
    std::optional<SmallVector<int64_t>> axes;
    auto axesType = op->getNumOperands() > 1 ? dyn_cast<RankedTensorType>(operand(1).getType())
                                              : RankedTensorType();
    bool emptyAxes = axesType && axesType.hasStaticShape() && axesType.getNumElements() == 0;
    if (op->getNumOperands() > 1 && !onnx::isNone(operand(1)) && !emptyAxes)
      axes = onnx::getConstantInts(operand(1));
    else if (op->hasAttr("axes"))
      axes = onnx::getIntsAttr(op, "axes");
    else if (!onnx::getIntAttr(op, "noop_with_empty_axes", 0))
      axes = llvm::to_vector(llvm::seq<int64_t>(0, in.size()));
    bool keep = onnx::getIntAttr(op, "keepdims", 1) != 0;
    if (axes) {
      SmallVector<int64_t> ax = normalized(*axes, in.size());
      Sizes s;
      for (int64_t i = 0; i < static_cast<int64_t>(in.size()); ++i)
        if (!llvm::is_contained(ax, i))
          s.push_back(in[i]);
        else if (keep)
          s.push_back(SymSize::constant(1));
      if (static_cast<int64_t>(s.size()) == rank)
        r = s;
    }
  }
  if (isa<onnx::LoopOp>(op)) {
    // A value carried through a run-time Loop keeps its type, and its sizes
    // (the lowering checks them every iteration): the initial value's.
    unsigned nCarried = op->getNumOperands() - 2;
    Block &body = op->getRegion(0).front();
    for (unsigned k = 0; k < nCarried && k < op->getNumResults(); ++k)
      if (2 + k < body.getNumArguments() &&
          body.getArgument(2 + k).getType() == op->getResult(k).getType() &&
          op->getOperand(2 + k).getType() == op->getResult(k).getType())
        dims[op->getResult(k)] = sizesOf(op->getOperand(2 + k));
    return;
  }
  if (isa<onnx::IfOp>(op)) {
    // A result's sizes where both branches agree on them.
    Operation *elseYield = op->getRegion(0).front().getTerminator();
    Operation *thenYield = op->getRegion(1).front().getTerminator();
    for (auto [i, res] : llvm::enumerate(op->getResults())) {
      if (i >= elseYield->getNumOperands() || i >= thenYield->getNumOperands())
        break;
      Sizes a = sizesOf(thenYield->getOperand(i)), b = sizesOf(elseYield->getOperand(i));
      if (a.size() != b.size())
        continue;
      for (size_t d = 0; d < a.size(); ++d)
        if (!(a[d] && b[d] && *a[d] == *b[d]))
          a[d].reset();
      dims[res] = a;
    }
    return;
  }
  if (isa<onnx::LayerNormalizationOp>(op)) {
    // Y has X's shape; Mean and InvStdDev have 1s from the axis on.
    Sizes in = sizesOf(operand(0));
    int64_t axis = onnx::getIntAttr(op, "axis", -1);
    if (axis < 0)
      axis += in.size();
    for (auto [i, res] : llvm::enumerate(op->getResults())) {
      Sizes s = in;
      for (int64_t d = axis; i > 0 && d >= 0 && d < static_cast<int64_t>(s.size()); ++d)
        s[d] = SymSize::constant(1);
      dims[res] = s;
    }
  }
  if (isa<onnx::SplitOp>(op)) {
    // Every part keeps the input's other dims.
    Sizes in = sizesOf(operand(0));
    for (Value part : op->getResults()) {
      auto t = dyn_cast<RankedTensorType>(part.getType());
      if (!t || t.getRank() != static_cast<int64_t>(in.size()))
        continue;
      Sizes p = in;
      for (int64_t i = 0; i < t.getRank(); ++i)
        if (!t.isDynamicDim(i))
          p[i] = SymSize::constant(t.getDimSize(i));
      dims[part] = p;
    }
    return;
  }
  // A static type is authoritative.
  for (int64_t i = 0; i < rank && i < static_cast<int64_t>(r.size()); ++i)
    if (!outType.isDynamicDim(i))
      r[i] = SymSize::constant(outType.getDimSize(i));
  r.resize(rank);
  dims[out] = r;
  // A dim the sizes prove constant becomes static in the type (a Reshape
  // to a computed [b, s, 96]), so that later ops compile for it. Not for
  // Slice, whose sizes assume its bounds are in range.
  if (isa<onnx::SliceOp>(op) || op->getNumResults() != 1)
    return;
  SmallVector<int64_t> shape(outType.getShape());
  bool refined = false;
  for (int64_t i = 0; i < rank; ++i)
    if (outType.isDynamicDim(i) && r[i] && r[i]->asConstant() && *r[i]->asConstant() >= 0) {
      shape[i] = *r[i]->asConstant();
      refined = true;
    }
  if (refined) {
    out.setType(RankedTensorType::get(shape, outType.getElementType()));
    ++numRefined;
  }
}

/// Whether some dynamic dim of `v` has no known size.
bool hasUnknownDim(Analysis &a, Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t)
    return false;
  Sizes s = a.sizesOf(v);
  for (int64_t d = 0; d < t.getRank(); ++d)
    if (t.isDynamicDim(d) && !s[d])
      return true;
  return false;
}

/// The earliest op upstream of `op` whose result sizes are unknown though
/// its operands' are known: where kiln stopped following the sizes.
Operation *firstUnknown(Analysis &a, Operation *op) {
  for (int depth = 0; op && depth < 10000; ++depth) {
    Operation *next = nullptr;
    for (Value in : op->getOperands())
      if (Operation *def = in.getDefiningOp(); def && hasUnknownDim(a, in)) {
        next = def;
        break;
      }
    if (!next)
      return op;
    op = next;
  }
  return op;
}

struct SymbolicShapesPass : public impl::SymbolicShapesBase<SymbolicShapesPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    Analysis a;
    MLIRContext *ctx = func.getContext();
    Builder b(ctx);
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      auto t = dyn_cast<RankedTensorType>(func.getArgumentTypes()[i]);
      if (!t)
        continue;
      auto params = func.getArgAttrOfType<ArrayAttr>(i, "onnx.dim_params");
      auto name = func.getArgAttrOfType<StringAttr>(i, "onnx.name");
      SmallVector<int32_t> bind;
      Sizes s(t.getRank());
      for (int64_t d = 0; d < t.getRank(); ++d) {
        if (!t.isDynamicDim(d)) {
          bind.push_back(-1);
          continue;
        }
        StringRef param;
        if (params && d < static_cast<int64_t>(params.size()))
          param = cast<StringAttr>(params[d]).getValue();
        std::string symbol = !param.empty() && param != "?"
                                 ? param.str()
                                 : (name ? name.str() : "input" + std::to_string(i)) + ":" +
                                       std::to_string(d);
        int id = a.symbolFor(symbol);
        bind.push_back(id);
        s[d] = SymSize::symbol(id);
      }
      a.dims[func.getArgument(i)] = s;
      func.setArgAttr(i, "kiln.dim_symbols", b.getDenseI32ArrayAttr(bind));
    }
    func.walk([&](Operation *op) {
      // (Post-order: an If's branches before the If.)
      if (op->getDialect() && op->getDialect()->getNamespace() == "onnx")
        a.visit(op);
    });
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    // Types refined: the function's results follow.
    func.setFunctionType(FunctionType::get(ctx, func.getArgumentTypes(), ret.getOperandTypes()));
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      auto t = dyn_cast<RankedTensorType>(v.getType());
      if (!t || t.hasStaticShape())
        continue;
      // A tensor only the data sizes comes back in a box (KILN_VALUE_DYNAMIC).
      if (Operation *def = v.getDefiningOp();
          def && isa<onnx::NonZeroOp, onnx::UniqueOp, onnx::CompressOp,
                     onnx::NonMaxSuppressionOp, onnx::SequenceAtOp,
                     onnx::ConcatFromSequenceOp>(def))
        continue;
      Sizes s = a.sizesOf(v);
      std::vector<int64_t> program;
      SmallVector<Attribute> text;
      for (int64_t d = 0; d < t.getRank(); ++d) {
        if (!t.isDynamicDim(d)) {
          text.push_back(b.getStringAttr(""));
          continue;
        }
        if (!s[d]) {
          auto name = func.getResultAttrOfType<StringAttr>(i, "onnx.name");
          Operation *def = v.getDefiningOp();
          auto diag = func.emitError() << "output \"" << (name ? name.getValue() : "?")
                                       << "\" dimension " << d;
          if (def)
            diag << " (computed by " << describeNode(def) << ")";
          if (Operation *lost = firstUnknown(a, def); lost && lost != def)
            diag << "; its sizes are lost at " << describeNode(lost);
          diag << ": kiln cannot express its size in terms of the input dimensions; it "
                  "depends on data or on an op kiln does not follow yet";
          return signalPassFailure();
        }
        s[d]->emit(program);
        program.push_back(kSizeEnd);
        program.push_back(0);
        text.push_back(b.getStringAttr(s[d]->str(a.names)));
      }
      func.setResultAttr(i, "kiln.dim_sizes", b.getDenseI64ArrayAttr(program));
      func.setResultAttr(i, "kiln.dim_text", b.getArrayAttr(text));
    }
    refinedDims += a.numRefined;
    SmallVector<Attribute> names;
    for (const std::string &n : a.names)
      names.push_back(b.getStringAttr(n));
    func->setAttr("kiln.dim_symbols", b.getArrayAttr(names));
  }
};

} // namespace
} // namespace kiln
