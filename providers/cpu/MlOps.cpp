//===- MlOps.cpp - classical ML ops of the ai.onnx.ml domain --------------===//
//
// TreeEnsemble: the trees are attributes, so each becomes one expression
// per output element: nested selects down the tree (a comparison per
// node, in f64 as ONNX's reference compares), the reached leaf's weight if
// it scores this output's target, aggregated over the trees.
//
//===----------------------------------------------------------------------===//
#include "providers/cpu/IndexGeneric.h"

#include <functional>
#include <limits>

using namespace mlir;
using namespace kiln::onnx;

namespace kiln::cpu {
namespace {

enum class Aggregate { Average = 0, Sum = 1, Min = 2, Max = 3 };
enum NodeMode { Leq = 0, Lt, Gte, Gt, Eq, Neq, Member };

SmallVector<double> doubles(Operation *op, StringRef name) {
  SmallVector<double> out;
  if (auto e = op->getAttrOfType<ElementsAttr>(name)) {
    for (Attribute a : e.getValues<Attribute>()) {
      if (auto f = dyn_cast<FloatAttr>(a))
        out.push_back(f.getValueAsDouble());
      else if (auto i = dyn_cast<IntegerAttr>(a))
        out.push_back((double)i.getValue().getZExtValue());
    }
  }
  return out;
}

/// The tree attributes, checked for consistency (indices in range, one set
/// of members per Member node).
struct Ensemble {
  SmallVector<double> splits, weights, modes, members;
  SmallVector<int64_t> features, trueIds, falseIds, trueLeafs, falseLeafs, targets, roots, tracks;
  SmallVector<SmallVector<double>> memberSets; // per node (Member nodes)
  int64_t numTargets = 1;
  Aggregate aggregate = Aggregate::Sum;

  LogicalResult parse(Operation *op, int64_t numFeatures, std::string &why) {
    splits = doubles(op, "nodes_splits");
    weights = doubles(op, "leaf_weights");
    modes = doubles(op, "nodes_modes");
    members = doubles(op, "membership_values");
    features = getIntsAttr(op, "nodes_featureids");
    trueIds = getIntsAttr(op, "nodes_truenodeids");
    falseIds = getIntsAttr(op, "nodes_falsenodeids");
    trueLeafs = getIntsAttr(op, "nodes_trueleafs");
    falseLeafs = getIntsAttr(op, "nodes_falseleafs");
    targets = getIntsAttr(op, "leaf_targetids");
    roots = getIntsAttr(op, "tree_roots");
    tracks = getIntsAttr(op, "nodes_missing_value_tracks_true");
    numTargets = getIntAttr(op, "n_targets", 1);
    aggregate = static_cast<Aggregate>(getIntAttr(op, "aggregate_function", 1));
    size_t nodes = splits.size();
    auto fail = [&](const char *msg) {
      why = msg;
      return failure();
    };
    if (getIntAttr(op, "post_transform", 0) != 0)
      return fail("only post_transform NONE is supported");
    if (getIntAttr(op, "aggregate_function", 1) < 0 || getIntAttr(op, "aggregate_function", 1) > 3)
      return fail("unknown aggregate_function");
    if (modes.size() != nodes || features.size() != nodes || trueIds.size() != nodes ||
        falseIds.size() != nodes || trueLeafs.size() != nodes || falseLeafs.size() != nodes ||
        (!tracks.empty() && tracks.size() != nodes) || targets.size() != weights.size() ||
        roots.empty())
      return fail("node and leaf attributes of different lengths");
    for (size_t n = 0; n < nodes; ++n) {
      if (features[n] < 0 || features[n] >= numFeatures)
        return fail("a node's feature is out of range");
      for (auto [id, leaf] : {std::pair(trueIds[n], trueLeafs[n]), {falseIds[n], falseLeafs[n]}})
        if (id < 0 || id >= (int64_t)(leaf ? weights.size() : nodes))
          return fail("a node's child is out of range");
    }
    for (int64_t t : targets)
      if (t < 0 || t >= numTargets)
        return fail("a leaf's target is out of range");
    // Member nodes take the membership values in node order, each set
    // ended by a NaN.
    memberSets.assign(nodes, {});
    size_t next = 0;
    for (size_t n = 0; n < nodes; ++n) {
      if (modes[n] != Member)
        continue;
      for (; next < members.size() && !std::isnan(members[next]); ++next)
        memberSets[n].push_back(members[next]);
      if (next++ >= members.size())
        return fail("membership_values lacks a set for a Member node");
    }
    return success();
  }
};

Results lowerTreeEnsemble(OpBuilder &b, Operation *op) {
  Value x = op->getOperand(0);
  auto out = resultType(op);
  Type elt = out.getElementType();
  Ensemble e;
  std::string why;
  if (failed(e.parse(op, typeOf(x).getDimSize(1), why)))
    return emitNodeError(op) << why, failure();
  double init = e.aggregate == Aggregate::Min   ? std::numeric_limits<double>::max()
                : e.aggregate == Aggregate::Max ? std::numeric_limits<double>::lowest()
                                                : 0.0;
  if (isa<Float32Type>(elt) && e.aggregate == Aggregate::Min)
    init = std::numeric_limits<float>::max();
  if (isa<Float32Type>(elt) && e.aggregate == Aggregate::Max)
    init = std::numeric_limits<float>::lowest();
  return SmallVector<Value>{indexGeneric(b, op->getLoc(), out, [&](IB &ib, ArrayRef<Value> i) -> Value {
    OpBuilder &nb = ib.b;
    Location l = ib.l;
    Type f64 = nb.getF64Type();
    auto c64 = [&](double v) { return cst(nb, l, f64, v); };
    auto feature = [&](int64_t f) {
      Value v = nb.create<tensor::ExtractOp>(l, x, ValueRange{i[0], ib.c(f)});
      return castScalar(nb, l, v, f64);
    };
    auto cmp = [&](arith::CmpFPredicate p, Value a, Value c) {
      return nb.create<arith::CmpFOp>(l, p, a, c).getResult();
    };
    // The leaf's weight for this output's target, else the aggregate's
    // identity (the tree does not score this target).
    std::function<Value(int64_t, bool)> walk = [&](int64_t id, bool leaf) -> Value {
      if (leaf)
        return ib.sel(ib.eq(i[1], ib.c(e.targets[id])), c64(e.weights[id]),
                      c64(e.aggregate == Aggregate::Min || e.aggregate == Aggregate::Max
                              ? init
                              : 0.0));
      Value v = feature(e.features[id]), split = c64(e.splits[id]);
      Value cond;
      switch ((int)e.modes[id]) {
      case Leq: cond = cmp(arith::CmpFPredicate::OLE, v, split); break;
      case Lt: cond = cmp(arith::CmpFPredicate::OLT, v, split); break;
      case Gte: cond = cmp(arith::CmpFPredicate::OGE, v, split); break;
      case Gt: cond = cmp(arith::CmpFPredicate::OGT, v, split); break;
      case Eq: cond = cmp(arith::CmpFPredicate::OEQ, v, split); break;
      case Neq: cond = cmp(arith::CmpFPredicate::UNE, v, split); break;
      default: {
        cond = nb.create<arith::ConstantIntOp>(l, 0, 1);
        for (double m : e.memberSets[id])
          cond = nb.create<arith::OrIOp>(l, cond, cmp(arith::CmpFPredicate::OEQ, v, c64(m)));
      }
      }
      if (!e.tracks.empty() && e.tracks[id])
        cond = nb.create<arith::OrIOp>(l, cond, cmp(arith::CmpFPredicate::UNO, v, v));
      return ib.sel(cond, walk(e.trueIds[id], e.trueLeafs[id]),
                    walk(e.falseIds[id], e.falseLeafs[id]));
    };
    Value acc = cst(nb, l, elt, init);
    for (int64_t root : e.roots) {
      // A root that is a leaf on both sides, to the same leaf.
      bool leaf = e.trueLeafs[root] && e.falseLeafs[root] && e.trueIds[root] == e.falseIds[root];
      Value w = castScalar(nb, l, walk(leaf ? e.trueIds[root] : root, leaf), elt);
      switch (e.aggregate) {
      case Aggregate::Sum: acc = nb.create<arith::AddFOp>(l, acc, w); break;
      case Aggregate::Average:
        acc = nb.create<arith::AddFOp>(
            l, acc, nb.create<arith::DivFOp>(l, w, cst(nb, l, elt, (double)e.roots.size())));
        break;
      case Aggregate::Min: acc = nb.create<arith::MinimumFOp>(l, acc, w); break;
      case Aggregate::Max: acc = nb.create<arith::MaximumFOp>(l, acc, w); break;
      }
    }
    return acc;
  })};
}

} // namespace

void registerMlOps(LoweringTable &m) {
  m["TreeEnsemble"] = {lowerTreeEnsemble, false, [](Operation *op, std::string &why) {
                         auto x = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
                         if (!x || x.getRank() != 2 || !isa<FloatType>(x.getElementType())) {
                           why = "needs a 2-D float input";
                           return false;
                         }
                         Ensemble e;
                         return succeeded(e.parse(op, x.getDimSize(1), why));
                       }};
}

} // namespace kiln::cpu
