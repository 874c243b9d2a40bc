//===- AttentionOps.cpp - fused multi-head attention on the CPU -----------===//
//
// onnx.Attention in the form kiln-fuse-subgraphs produces (3-D Q [B, S, H*D],
// K/V [B, T, H*D], as many key/value heads as query heads, an optional
// additive f32 mask, no cache, causal mask or softcap). The head split lives
// in the indexing maps instead of transposed copies:
//   scores[b, h, i, j] = scale * sum_d Q[b, i, h, d] K[b, j, h, d] + mask
//   Y[b, i, h, e]      = sum_j softmax_j(scores)[b, h, i, j] V[b, j, h, e]
// (with `kiln.layout = "seq_first"` Q, K, V and Y are [S, B, E]: Q[i, b, h, d];
// with `kiln.layout = "heads"` they are split already: Q[b, h, i, d])
// and kiln-cpu-vectorize-contractions turns both sums into matmuls on
// strided views. Other forms of Attention are decomposed by
// kiln-decompose-ops before partitioning.
//
//===----------------------------------------------------------------------===//
#include "providers/cpu/Lowering.h"

using namespace mlir;
using namespace kiln::onnx;

namespace kiln::cpu {
namespace {

bool headsLayout(Operation *op) {
  auto layout = op->getAttrOfType<StringAttr>("kiln.layout");
  return layout && layout.getValue() == "heads";
}

bool canLowerAttention(Operation *op, std::string &why) {
  int64_t rank = headsLayout(op) ? 4 : 3;
  auto is3d = [&](Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t && t.getRank() == rank && t.getElementType().isF32();
  };
  int64_t heads = getIntAttr(op, "q_num_heads", 0);
  bool ok = op->getNumOperands() >= 3 && is3d(op->getOperand(0)) &&
            is3d(op->getOperand(1)) && is3d(op->getOperand(2)) && heads > 0 &&
            getIntAttr(op, "kv_num_heads", 0) == heads &&
            !getIntAttr(op, "is_causal", 0) && getFloatAttr(op, "softcap", 0) == 0 &&
            !getIntAttr(op, "qk_matmul_output_mode", 0) &&
            getIntAttr(op, "left_window_size", -1) == -1 &&
            getIntAttr(op, "right_window_size", -1) == -1;
  for (unsigned i = 4; ok && i < op->getNumOperands(); ++i)
    ok = isNone(op->getOperand(i));
  for (unsigned i = 1; ok && i < op->getNumResults(); ++i)
    ok = isa<NoneType>(op->getResult(i).getType());
  if (ok && !isNone(op->getOperand(3))) {
    auto m = dyn_cast<RankedTensorType>(op->getOperand(3).getType());
    ok = m && m.getElementType().isF32() && m.getRank() <= 4;
  }
  if (ok && rank == 3)
    for (unsigned i = 0; i < 3; ++i)
      ok = typeOf(op->getOperand(i)).getDimSize(2) % heads == 0;
  if (ok && rank == 4)
    for (unsigned i = 0; i < 3; ++i)
      ok = typeOf(op->getOperand(i)).getDimSize(1) == heads;
  if (!ok)
    why = "only the fused multi-head form (3-D f32 Q/K/V, or 4-D split into heads, equal "
          "heads, additive f32 mask, no cache, causal mask, window or softcap) is lowered "
          "directly";
  return ok;
}

Results lowerAttention(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type();
  Value q = op->getOperand(0), k = op->getOperand(1), v = op->getOperand(2);
  Value mask = isNone(op->getOperand(3)) ? Value() : op->getOperand(3);
  int64_t h = getIntAttr(op, "q_num_heads", 1);
  auto qt = typeOf(q), kt = typeOf(k), vt = typeOf(v);
  auto layout = op->getAttrOfType<StringAttr>("kiln.layout");
  bool seqFirst = layout && layout.getValue() == "seq_first", split = headsLayout(op);
  int bAt = seqFirst ? 1 : 0, sAt = split ? 2 : 1 - bAt;
  int64_t batch = qt.getDimSize(bAt), s = qt.getDimSize(sAt), t = kt.getDimSize(sAt);
  int64_t d = split ? qt.getDimSize(3) : qt.getDimSize(2) / h,
          dv = split ? vt.getDimSize(3) : vt.getDimSize(2) / h;
  double scale = op->hasAttr("scale") ? getFloatAttr(op, "scale", 1.0f)
                                      : 1.0 / std::sqrt((double)d);
  auto heads = [&](Value x, int64_t len, int64_t size) {
    if (split)
      return x;
    auto shape = seqFirst ? SmallVector<int64_t>{len, batch, h, size}
                          : SmallVector<int64_t>{batch, len, h, size};
    return reshapeTo(b, loc, x, RankedTensorType::get(shape, f32));
  };
  Value q4 = heads(q, s, d), k4 = heads(k, t, d), v4 = heads(v, t, dv);
  auto dim = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  // An operand indexed by loops (batch, position, head, feature), in its
  // layout.
  auto at = [&](unsigned bd, unsigned pos, unsigned hd, unsigned f) {
    if (split)
      return AffineMap::get(5, 0, {dim(bd), dim(hd), dim(pos), dim(f)}, ctx);
    return seqFirst ? AffineMap::get(5, 0, {dim(pos), dim(bd), dim(hd), dim(f)}, ctx)
                    : AffineMap::get(5, 0, {dim(bd), dim(pos), dim(hd), dim(f)}, ctx);
  };
  auto par = utils::IteratorType::parallel, red = utils::IteratorType::reduction;
  auto mulAdd = [](OpBuilder &nb, Location l, ValueRange a) {
    Value p = nb.create<arith::MulFOp>(l, a[0], a[1]);
    nb.create<linalg::YieldOp>(l, ValueRange{nb.create<arith::AddFOp>(l, a[2], p)});
  };

  // Loops (b, h, i, j, d).
  auto scoresType = RankedTensorType::get({batch, h, s, t}, f32);
  Value scores =
      b.create<linalg::GenericOp>(
           loc, TypeRange{scoresType}, ValueRange{q4, k4},
           ValueRange{filledTensor(b, loc, scoresType, 0.0)},
           ArrayRef<AffineMap>{at(0, 2, 1, 4), at(0, 3, 1, 4),
                               AffineMap::get(5, 0, {dim(0), dim(1), dim(2), dim(3)}, ctx)},
           ArrayRef<utils::IteratorType>{par, par, par, par, red}, mulAdd)
          .getResult(0);
  Value sc = scalarConst(b, loc, f32, scale);
  SmallVector<Value> ins = {scores};
  if (mask)
    ins.push_back(mask);
  scores = elementwise(b, loc, scoresType, ins, [&](OpBuilder &nb, Location l, ValueRange a) {
    Value x = nb.create<arith::MulFOp>(l, a[0], sc);
    return a.size() > 1 ? (Value)nb.create<arith::AddFOp>(l, x, a[1]) : x;
  });
  // The Softmax over j is the Softmax op's own lowering.
  OperationState st(loc, "onnx.Softmax");
  st.addOperands(scores);
  st.addAttribute("axis", b.getI64IntegerAttr(-1));
  st.addTypes(scoresType);
  Operation *softmax = b.create(st);
  Results probs = lowerOneOp(b, softmax);
  softmax->erase();
  if (failed(probs))
    return failure();

  // Loops (b, i, h, e, j), written straight into Q's layout.
  auto yType = RankedTensorType::get(split      ? ArrayRef<int64_t>{batch, h, s, dv}
                                     : seqFirst ? ArrayRef<int64_t>{s, batch, h, dv}
                                                : ArrayRef<int64_t>{batch, s, h, dv},
                                     f32);
  Value y = b.create<linalg::GenericOp>(
                 loc, TypeRange{yType}, ValueRange{(*probs)[0], v4},
                 ValueRange{filledTensor(b, loc, yType, 0.0)},
                 ArrayRef<AffineMap>{
                     AffineMap::get(5, 0, {dim(0), dim(2), dim(1), dim(4)}, ctx),
                     at(0, 4, 2, 3), at(0, 1, 2, 3)},
                 ArrayRef<utils::IteratorType>{par, par, par, par, red}, mulAdd)
                .getResult(0);
  SmallVector<Value> results(op->getNumResults());
  results[0] = reshapeTo(b, loc, y, resultType(op));
  return results;
}

} // namespace

void registerAttentionOps(LoweringTable &m) {
  m["Attention"] = {lowerAttention, true, canLowerAttention};
}

} // namespace kiln::cpu
