//===- VectorizeUpsample.cpp - kiln-cpu-vectorize-upsample ----------------===//
//
// Nearest upsampling by integer factors (the copy through floordiv maps
// that Resize lowers to) as loops over the input rows: a chunk of a row is
// loaded once, each element repeated by shuffles, and stored into every
// output row that repeats the input row. Naive loops compute each output
// element's source position and load it alone.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "providers/Passes.h"
#include "providers/cpu/Vectorize.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_CPUVECTORIZEUPSAMPLE
#include "providers/Passes.h.inc"

namespace {

constexpr int64_t kLanes = 16; // 32-bit lanes of a 512-bit vector

/// The repeat factor of each dim (1: as it is) of a copy `g` whose input
/// map reads dim d at d or d floordiv f (f >= 2 on the last dim, maybe on
/// the one before, none elsewhere), on static buffers of 32-bit elements
/// with unit inner strides; none if `g` is not one.
std::optional<SmallVector<int64_t>> matchUpsample(linalg::GenericOp g) {
  if (!g.hasPureBufferSemantics() || g.getNumDpsInputs() != 1 ||
      g.getNumDpsInits() != 1 || vectorize::inDeviceCode(g))
    return std::nullopt;
  auto inType = dyn_cast<MemRefType>(g.getDpsInputs()[0].getType());
  auto outType = dyn_cast<MemRefType>(g.getDpsInits()[0].getType());
  if (!inType || !outType || !inType.hasStaticShape() ||
      !outType.hasStaticShape() ||
      inType.getElementType() != outType.getElementType() ||
      !inType.getElementType().isIntOrFloat() ||
      inType.getElementType().getIntOrFloatBitWidth() != 32 ||
      !vectorize::unitInnerStride(inType) ||
      !vectorize::unitInnerStride(outType))
    return std::nullopt;
  Block &body = g.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (!llvm::hasSingleElement(body) ||
      yield.getOperand(0) != body.getArgument(0) ||
      llvm::any_of(g.getIteratorTypesArray(), [](utils::IteratorType t) {
        return t != utils::IteratorType::parallel;
      }))
    return std::nullopt;
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  int64_t rank = outType.getRank();
  if (rank < 1 || !maps[1].isIdentity() || maps[0].getNumResults() != rank)
    return std::nullopt;
  SmallVector<int64_t> repeat(rank, 1);
  for (int64_t d = 0; d < rank; ++d) {
    AffineExpr e = maps[0].getResult(d);
    if (e == getAffineDimExpr(d, g.getContext()))
      continue;
    auto div = dyn_cast<AffineBinaryOpExpr>(e);
    auto f = div ? dyn_cast<AffineConstantExpr>(div.getRHS()) : nullptr;
    if (!div || div.getKind() != AffineExprKind::FloorDiv || !f ||
        div.getLHS() != getAffineDimExpr(d, g.getContext()) ||
        f.getValue() < 2 || d < rank - 2 ||
        outType.getDimSize(d) != inType.getDimSize(d) * f.getValue())
      return std::nullopt;
    repeat[d] = f.getValue();
  }
  if (repeat.back() == 1)
    return std::nullopt;
  return repeat;
}

void rewrite(linalg::GenericOp g, ArrayRef<int64_t> repeat) {
  OpBuilder b(g);
  Location loc = g.getLoc();
  Value in = g.getDpsInputs()[0], out = g.getDpsInits()[0];
  auto inType = cast<MemRefType>(in.getType());
  Type elem = inType.getElementType();
  int64_t rank = inType.getRank(), last = rank - 1;
  int64_t width = inType.getDimSize(last), fw = repeat.back();
  int64_t fh = rank > 1 ? repeat[rank - 2] : 1;
  auto idx = [&](OpBuilder &ib, int64_t v) -> Value {
    return ib.create<arith::ConstantIndexOp>(loc, v);
  };
  // A chunk of `n` elements of an input row from column c0: each repeated
  // fw times, stored into the fh output rows from `outRow`.
  auto chunk = [&](OpBuilder &cb, SmallVector<Value> inIdx,
                   SmallVector<Value> outIdx, Value c0, int64_t n) {
    inIdx[last] = c0;
    Value v =
        cb.create<vector::LoadOp>(loc, VectorType::get({n}, elem), in, inIdx);
    Value o0 = cb.create<arith::MulIOp>(loc, c0, idx(cb, fw));
    for (int64_t k = 0; k * kLanes < n * fw; ++k) {
      int64_t lanes = std::min(kLanes, n * fw - k * kLanes);
      SmallVector<int64_t> pick;
      for (int64_t l = 0; l < lanes; ++l)
        pick.push_back((k * kLanes + l) / fw);
      Value rep = cb.create<vector::ShuffleOp>(loc, v, v, pick);
      outIdx[last] = cb.create<arith::AddIOp>(loc, o0, idx(cb, k * kLanes));
      for (int64_t t = 0; t < fh; ++t) {
        SmallVector<Value> at(outIdx);
        if (fh > 1)
          at[rank - 2] = cb.create<arith::AddIOp>(
              loc, cb.create<arith::MulIOp>(loc, outIdx[rank - 2], idx(cb, fh)),
              idx(cb, t));
        cb.create<vector::StoreOp>(loc, rep, out, at);
      }
    }
  };
  // Loops over the input's rows (all dims but the last).
  SmallVector<int64_t> extents(inType.getShape().drop_back());
  Operation *outer = vectorize::forEachBatch(
      b, loc, extents, [&](OpBuilder &lb, ArrayRef<OpFoldResult> ivs) {
        SmallVector<Value> inIdx, outIdx;
        for (OpFoldResult f : ivs) {
          Value v =
              isa<Value>(f)
                  ? cast<Value>(f)
                  : idx(lb, cast<IntegerAttr>(cast<Attribute>(f)).getInt());
          inIdx.push_back(v);
          outIdx.push_back(v); // (the row's first output row: times fh)
        }
        inIdx.push_back(Value());
        outIdx.push_back(Value());
        int64_t whole = width / kLanes, rest = width % kLanes;
        if (whole) {
          auto cols = lb.create<scf::ForOp>(loc, idx(lb, 0), idx(lb, whole),
                                            idx(lb, 1));
          OpBuilder cb = OpBuilder::atBlockTerminator(cols.getBody());
          chunk(cb, inIdx, outIdx,
                cb.create<arith::MulIOp>(loc, cols.getInductionVar(),
                                         idx(cb, kLanes)),
                kLanes);
        }
        if (rest)
          chunk(lb, inIdx, outIdx, idx(lb, whole * kLanes), rest);
      });
  auto outType = cast<MemRefType>(out.getType());
  int64_t elements = outType.getNumElements();
  if (outer && elements >= vectorize::kParallelWork &&
      !vectorize::inParallelLoop(g)) {
    int64_t trips = *llvm::find_if(extents, [](int64_t e) { return e != 1; });
    vectorize::markParallel(outer, vectorize::kParallelWork, elements / trips);
  }
  g.erase();
}

struct CpuVectorizeUpsamplePass
    : public impl::CpuVectorizeUpsampleBase<CpuVectorizeUpsamplePass> {
  using CpuVectorizeUpsampleBase::CpuVectorizeUpsampleBase;

  void runOnOperation() override {
    if (vectorBits < 512)
      return;
    SmallVector<std::pair<linalg::GenericOp, SmallVector<int64_t>>> found;
    getOperation().walk([&](linalg::GenericOp g) {
      if (auto repeat = matchUpsample(g))
        found.push_back({g, *repeat});
    });
    for (auto &[g, repeat] : found) {
      rewrite(g, repeat);
      ++numUpsamples;
    }
  }
};

} // namespace
} // namespace kiln
