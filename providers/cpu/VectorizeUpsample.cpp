//===- VectorizeUpsample.cpp - kiln-cpu-vectorize-upsample ----------------===//
//
// Nearest upsampling by integer factors (the copy through floordiv maps
// that Resize lowers to) as loops over the input rows: a chunk of a row is
// loaded once, each element repeated by shuffles, and stored into every
// output row that repeats the input row. Naive loops compute each output
// element's source position and load it alone.
//
// Linear resizing (a segmentation head's 2x to 8x, marked by the Resize
// lowering) in two passes over rows: along x by shuffles of each row
// chunk's window where the taps repeat with the phase (else by gathers
// through the index table), then along y as weighted sums of two rows.
// Naive loops gathered four inputs through index tables for each output
// element (4x of 21 x 80 x 80: 2.5 ms, now 0.37; with align_corners 2.36
// ms, now 0.32).
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "providers/Passes.h"
#include "providers/cpu/Vectorize.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
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

/// One axis of a linear upsampling: its factor and its phases' two taps.
/// One axis of a linear resizing: its factor and its phases' two taps, or
/// (factor 0) its input size and each output position's two taps.
struct LinearAxis {
  int64_t factor;
  ArrayRef<int64_t> offsets; // (2 per phase; or 2 input indices per output)
  ArrayRef<float> weights;
  int64_t size = 0;
  /// The axis's input size for `out` output positions.
  int64_t inputSize(int64_t out) const { return factor ? out / factor : size; }
};

/// A Resize's generic marked kiln.linear_upsample (vectorize::
/// kLinearUpsample): its source (the one buffer its body reads that is not
/// a constant table), output and axes.
struct LinearUpsample {
  Value in, out;
  LinearAxis x;
  std::optional<LinearAxis> y;
};

std::optional<LinearAxis> linearAxis(DictionaryAttr phases, StringRef name) {
  auto axis = phases.getAs<DictionaryAttr>(name);
  // The tables: input indices inside [0, size), two per output.
  if (auto index =
          axis ? axis.getAs<DenseI64ArrayAttr>("index") : DenseI64ArrayAttr()) {
    auto size = axis.getAs<IntegerAttr>("size");
    auto weights = axis.getAs<DenseF32ArrayAttr>("weights");
    if (!size || !weights || index.size() % 2 ||
        weights.size() != index.size() ||
        llvm::any_of(index.asArrayRef(),
                     [&](int64_t i) { return i < 0 || i >= size.getInt(); }))
      return std::nullopt;
    return LinearAxis{0, index.asArrayRef(), weights.asArrayRef(),
                      size.getInt()};
  }
  auto factor = axis ? axis.getAs<IntegerAttr>("factor") : IntegerAttr();
  auto offsets =
      axis ? axis.getAs<DenseI64ArrayAttr>("offsets") : DenseI64ArrayAttr();
  auto weights =
      axis ? axis.getAs<DenseF32ArrayAttr>("weights") : DenseF32ArrayAttr();
  if (!factor || !offsets || !weights || factor.getInt() < 2 ||
      offsets.size() != 2 * factor.getInt() ||
      weights.size() != offsets.size() ||
      llvm::any_of(offsets.asArrayRef(),
                   [](int64_t o) { return o < -1 || o > 1; }))
    return std::nullopt;
  return LinearAxis{factor.getInt(), offsets.asArrayRef(),
                    weights.asArrayRef()};
}

std::optional<LinearUpsample> matchLinearUpsample(linalg::GenericOp g) {
  auto phases = g->getAttrOfType<DictionaryAttr>(vectorize::kLinearUpsample);
  if (!phases || !g.hasPureBufferSemantics() || g.getNumDpsInputs() != 0 ||
      g.getNumDpsInits() != 1 || vectorize::inDeviceCode(g))
    return std::nullopt;
  LinearUpsample lu;
  lu.out = g.getDpsInits()[0];
  bool other = false;
  g.getRegion().walk([&](memref::LoadOp load) {
    Value m = load.getMemRef();
    if (m.getDefiningOp<memref::GetGlobalOp>())
      return;
    other |= lu.in && lu.in != m;
    lu.in = m;
  });
  std::optional<LinearAxis> x = linearAxis(phases, "x");
  lu.y = linearAxis(phases, "y");
  if (other || !lu.in || !x || (phases.get("y") && !lu.y))
    return std::nullopt;
  lu.x = *x;
  auto inType = dyn_cast<MemRefType>(lu.in.getType());
  auto outType = dyn_cast<MemRefType>(lu.out.getType());
  if (!inType || !outType || !inType.hasStaticShape() ||
      !outType.hasStaticShape() || !inType.getElementType().isF32() ||
      !outType.getElementType().isF32() || outType.getRank() < (lu.y ? 2 : 1) ||
      !vectorize::unitInnerStride(inType) ||
      !vectorize::unitInnerStride(outType))
    return std::nullopt;
  // The input's shape: the output's over the factors. (Its buffer may be
  // another shape of the same elements, contiguous: a conv's output
  // collapsed for its matmul.)
  int64_t rank = outType.getRank();
  SmallVector<int64_t> shape(outType.getShape());
  for (int64_t d = rank - (lu.y ? 2 : 1); d < rank; ++d) {
    const LinearAxis &a = d == rank - 1 ? lu.x : *lu.y;
    if (a.factor ? shape[d] % a.factor
                 : static_cast<int64_t>(a.offsets.size()) != 2 * shape[d])
      return std::nullopt;
    shape[d] = a.inputSize(shape[d]);
  }
  if (inType.getShape() != ArrayRef<int64_t>(shape) &&
      (!inType.getLayout().isIdentity() ||
       inType.getNumElements() != ShapedType::getNumElements(shape)))
    return std::nullopt;
  return lu;
}

/// `in` as `shape` (the same elements, contiguous when the shapes differ).
Value asShape(OpBuilder &b, Location loc, Value in, ArrayRef<int64_t> shape) {
  auto type = cast<MemRefType>(in.getType());
  if (type.getShape() == shape)
    return in;
  ReassociationIndices all;
  for (int64_t d = 0; d < type.getRank(); ++d)
    all.push_back(d);
  Value flat = type.getRank() == 1
                   ? in
                   : b.create<memref::CollapseShapeOp>(
                         loc, in, SmallVector<ReassociationIndices>{all});
  if (shape.size() == 1)
    return flat;
  ReassociationIndices into;
  for (size_t d = 0; d < shape.size(); ++d)
    into.push_back(d);
  return b.create<memref::ExpandShapeOp>(
      loc, shape, flat, SmallVector<ReassociationIndices>{into});
}

/// Linear resizing in two passes over rows: along x, with phases, each
/// chunk of an input row loaded once (two overlapping vectors: each
/// output's taps are its input's neighbours) and its outputs picked out
/// by shuffles and weighted per phase, else each chunk of outputs
/// gathering its taps through the index table; along y (into the output),
/// each output row the weighted sum of two x-resized rows. Per image, the
/// x pass's rows go to a scratch plane.
void rewriteLinear(linalg::GenericOp g, const LinearUpsample &lu,
                   int64_t lanes) {
  OpBuilder b(g);
  Location loc = g.getLoc();
  auto outType = cast<MemRefType>(lu.out.getType());
  SmallVector<int64_t> shape(outType.getShape());
  int64_t outWidth = shape.back();
  shape.back() = lu.x.inputSize(outWidth);
  if (lu.y)
    shape[shape.size() - 2] = lu.y->inputSize(shape[shape.size() - 2]);
  Value in = asShape(b, loc, lu.in, shape);
  auto inType = cast<MemRefType>(in.getType());
  Type f32 = b.getF32Type();
  int64_t rank = inType.getRank(), width = inType.getDimSize(rank - 1);
  int64_t sx = lu.x.factor;
  auto module = g->getParentOfType<ModuleOp>();
  // An axis's tables as a constant global [2][n]: each output's first
  // taps, then its second ones.
  auto tables = [&](StringRef what, Type elem,
                    function_ref<Attribute(int64_t t, int64_t o)> at,
                    int64_t n) {
    std::string name;
    for (int64_t i = 0; name.empty() || module.lookupSymbol(name); ++i)
      name = ("__kiln_resize_" + what + "_" + Twine(i)).str();
    auto type = MemRefType::get({2, n}, elem);
    return vectorize::derivedGlobal(
        b, loc, module, name, type,
        [&] {
          SmallVector<Attribute> values;
          for (int64_t t = 0; t < 2; ++t)
            for (int64_t o = 0; o < n; ++o)
              values.push_back(at(t, o));
          return DenseElementsAttr::get(
              RankedTensorType::get(type.getShape(), elem), values);
        },
        b.getI64IntegerAttr(64));
  };
  auto i32 = b.getI32Type();
  auto indexTables = [&](const LinearAxis &a, int64_t n) {
    return tables(
        "index", i32,
        [&](int64_t t, int64_t o) -> Attribute {
          return b.getI32IntegerAttr(a.offsets[2 * o + t]);
        },
        n);
  };
  auto weightTables = [&](const LinearAxis &a, int64_t n) {
    return tables(
        "weights", f32,
        [&](int64_t t, int64_t o) -> Attribute {
          return b.getF32FloatAttr(a.weights[2 * o + t]);
        },
        n);
  };
  // (Before the loops: the globals' get_global ops dominate them.)
  Value xIndex, xWeights, yIndex, yWeights;
  if (!sx) {
    xIndex = indexTables(lu.x, outWidth);
    xWeights = weightTables(lu.x, outWidth);
  }
  if (lu.y && !lu.y->factor) {
    int64_t outHeight = outType.getDimSize(rank - 2);
    yIndex = indexTables(*lu.y, outHeight);
    yWeights = weightTables(*lu.y, outHeight);
  }
  auto idx = [&](OpBuilder &ib, int64_t v) -> Value {
    return ib.create<arith::ConstantIndexOp>(loc, v);
  };
  auto weightsOf = [&](OpBuilder &ib, ArrayRef<float> w) -> Value {
    return ib.create<arith::ConstantOp>(
        loc, DenseElementsAttr::get(
                 VectorType::get({static_cast<int64_t>(w.size())}, f32), w));
  };
  // Row `row` (all indices but the last) of `src`, upsampled along x into
  // row `dstRow` of `dst`.
  auto xRow = [&](OpBuilder &rb, Value src, SmallVector<Value> row, Value dst,
                  SmallVector<Value> dstRow) {
    row.push_back(Value());
    dstRow.push_back(Value());
    // The `n` outputs of input columns [c0, c0 + n) times sx, from the
    // window of columns c0 - 1 + q, q in [0, n + 2): `lo` holds q in
    // [0, lanes), `hi` q in [2, lanes + 2).
    auto outputs = [&](OpBuilder &cb, Value c0, int64_t n, Value lo, Value hi) {
      Value o0 = cb.create<arith::MulIOp>(loc, c0, idx(cb, sx));
      for (int64_t k = 0; k * lanes < n * sx; ++k) {
        int64_t m = std::min(lanes, n * sx - k * lanes);
        Value sum;
        for (int64_t t = 0; t < 2; ++t) {
          SmallVector<int64_t> pick;
          SmallVector<float> w;
          for (int64_t l = 0; l < m; ++l) {
            int64_t o = k * lanes + l, r = o % sx;
            int64_t q = o / sx + lu.x.offsets[2 * r + t] + 1;
            pick.push_back(q < lanes ? q : lanes + q - 2);
            w.push_back(lu.x.weights[2 * r + t]);
          }
          Value v = cb.create<vector::ShuffleOp>(loc, lo, hi, pick);
          sum = sum ? cb.create<vector::FMAOp>(loc, v, weightsOf(cb, w), sum)
                          .getResult()
                    : cb.create<arith::MulFOp>(loc, v, weightsOf(cb, w))
                          .getResult();
        }
        dstRow.back() = cb.create<arith::AddIOp>(loc, o0, idx(cb, k * lanes));
        cb.create<vector::StoreOp>(loc, sum, dst, dstRow);
      }
    };
    auto vec = VectorType::get({lanes}, f32);
    // Chunks whose window lies inside the row: two vector loads.
    auto inner = [&](OpBuilder &cb, Value c0) {
      row.back() = cb.create<arith::SubIOp>(loc, c0, idx(cb, 1));
      Value lo = cb.create<vector::LoadOp>(loc, vec, src, row);
      row.back() = cb.create<arith::AddIOp>(loc, c0, idx(cb, 1));
      Value hi = cb.create<vector::LoadOp>(loc, vec, src, row);
      outputs(cb, c0, lanes, lo, hi);
    };
    // Chunks at the edges: the window's columns clamped into the row, a
    // load each.
    auto edge = [&](OpBuilder &cb, int64_t c0, int64_t n) {
      auto column = [&](int64_t q) {
        row.back() = idx(cb, std::clamp<int64_t>(c0 - 1 + q, 0, width - 1));
        return cb.create<memref::LoadOp>(loc, src, row).getResult();
      };
      SmallVector<Value> lo, hi;
      for (int64_t q = 0; q < lanes; ++q) {
        lo.push_back(column(std::min(q, n + 1)));
        hi.push_back(column(std::min(q + 2, n + 1)));
      }
      outputs(cb, idx(cb, c0), n,
              cb.create<vector::FromElementsOp>(loc, vec, lo),
              cb.create<vector::FromElementsOp>(loc, vec, hi));
    };
    // Chunk ci starts at column ci * lanes; its window is inside the row
    // from ci = 1 while (ci + 1) * lanes + 1 <= width.
    int64_t whole = width / lanes, innerEnd = (width - 1) / lanes;
    if (whole)
      edge(rb, 0, lanes);
    if (innerEnd > 1) {
      auto loop =
          rb.create<scf::ForOp>(loc, idx(rb, 1), idx(rb, innerEnd), idx(rb, 1));
      OpBuilder cb = OpBuilder::atBlockTerminator(loop.getBody());
      inner(cb, cb.create<arith::MulIOp>(loc, loop.getInductionVar(),
                                         idx(cb, lanes)));
    }
    for (int64_t ci = std::max<int64_t>(innerEnd, 1); ci < whole; ++ci)
      edge(rb, ci * lanes, lanes);
    if (width % lanes)
      edge(rb, whole * lanes, width % lanes);
  };
  // `chunk` at every vector of an output row's columns (the start column,
  // the lanes): a loop over the whole vectors, then the rest.
  auto outputChunks =
      [&](OpBuilder &rb,
          function_ref<void(OpBuilder &, Value, int64_t)> chunk) {
        if (int64_t whole = outWidth / lanes) {
          auto loop = rb.create<scf::ForOp>(loc, idx(rb, 0), idx(rb, whole),
                                            idx(rb, 1));
          OpBuilder cb = OpBuilder::atBlockTerminator(loop.getBody());
          chunk(cb,
                cb.create<arith::MulIOp>(loc, loop.getInductionVar(),
                                         idx(cb, lanes)),
                lanes);
        }
        if (int64_t rest = outWidth % lanes)
          chunk(rb, idx(rb, outWidth - rest), rest);
      };
  // Without phases: each chunk of output columns gathers its two taps from
  // the row through the tables' indices and weighs them by theirs.
  auto gatherRow = [&](OpBuilder &rb, Value src, SmallVector<Value> row,
                       Value dst, SmallVector<Value> dstRow) {
    row.push_back(idx(rb, 0));
    dstRow.push_back(Value());
    auto chunk = [&](OpBuilder &cb, Value c, int64_t n) {
      auto vec = VectorType::get({n}, f32);
      auto ivec = VectorType::get({n}, i32);
      Value mask = cb.create<arith::ConstantOp>(
          loc,
          DenseElementsAttr::get(VectorType::get({n}, cb.getI1Type()), true));
      Value zero = cb.create<arith::ConstantOp>(
          loc, DenseElementsAttr::get(vec, cb.getF32FloatAttr(0.0f)));
      Value sum;
      for (int64_t t = 0; t < 2; ++t) {
        Value ids = cb.create<vector::LoadOp>(loc, ivec, xIndex,
                                              ValueRange{idx(cb, t), c});
        Value w = cb.create<vector::LoadOp>(loc, vec, xWeights,
                                            ValueRange{idx(cb, t), c});
        Value v =
            cb.create<vector::GatherOp>(loc, vec, src, row, ids, mask, zero);
        sum = sum ? cb.create<vector::FMAOp>(loc, v, w, sum).getResult()
                  : cb.create<arith::MulFOp>(loc, v, w).getResult();
      }
      dstRow.back() = c;
      cb.create<vector::StoreOp>(loc, sum, dst, dstRow);
    };
    outputChunks(rb, chunk);
  };
  // Output row `y` of `dst` (at `at`), w0 * row y0 + w1 * row y1 of `src`
  // (the weights as scalars).
  auto yRow = [&](OpBuilder &rb, Value src, Value y0, Value y1, Value w0,
                  Value w1, Value dst, SmallVector<Value> at) {
    auto chunk = [&](OpBuilder &cb, Value c, int64_t n) {
      auto vec = VectorType::get({n}, f32);
      Value a = cb.create<vector::LoadOp>(loc, vec, src, ValueRange{y0, c});
      Value v = cb.create<vector::LoadOp>(loc, vec, src, ValueRange{y1, c});
      auto splat = [&](Value w) {
        return cb.create<vector::BroadcastOp>(loc, vec, w);
      };
      Value sum = cb.create<vector::FMAOp>(
          loc, v, splat(w1), cb.create<arith::MulFOp>(loc, a, splat(w0)));
      at.back() = c;
      cb.create<vector::StoreOp>(loc, sum, dst, at);
    };
    at.push_back(Value());
    outputChunks(rb, chunk);
  };
  // Loops over the images (dims before the upsampled ones), or the rows.
  SmallVector<int64_t> extents(inType.getShape().drop_back(lu.y ? 2 : 1));
  auto asValue = [&](OpBuilder &ib, OpFoldResult f) -> Value {
    if (auto v = dyn_cast<Value>(f))
      return v;
    return idx(ib, cast<IntegerAttr>(cast<Attribute>(f)).getInt());
  };
  Operation *outer = vectorize::forEachBatch(
      b, loc, extents, [&](OpBuilder &lb, ArrayRef<OpFoldResult> ivs) {
        SmallVector<Value> at;
        for (OpFoldResult f : ivs)
          at.push_back(asValue(lb, f));
        auto alongX = [&](OpBuilder &rb, SmallVector<Value> row, Value dst,
                          SmallVector<Value> dstRow) {
          if (sx)
            xRow(rb, in, row, dst, dstRow);
          else
            gatherRow(rb, in, row, dst, dstRow);
        };
        if (!lu.y) {
          alongX(lb, at, lu.out, at);
          return;
        }
        int64_t height = inType.getDimSize(rank - 2), sy = lu.y->factor;
        Value plane = lb.create<memref::AllocOp>(
            loc, MemRefType::get({height, outWidth}, f32),
            lb.getI64IntegerAttr(64));
        auto rows =
            lb.create<scf::ForOp>(loc, idx(lb, 0), idx(lb, height), idx(lb, 1));
        {
          OpBuilder rb = OpBuilder::atBlockTerminator(rows.getBody());
          SmallVector<Value> row(at);
          row.push_back(rows.getInductionVar());
          alongX(rb, row, plane, {rows.getInductionVar()});
        }
        if (!sy) {
          // Each output row from the tables: its two rows and weights.
          int64_t outHeight = outType.getDimSize(rank - 2);
          auto outRows = lb.create<scf::ForOp>(loc, idx(lb, 0),
                                               idx(lb, outHeight), idx(lb, 1));
          OpBuilder rb = OpBuilder::atBlockTerminator(outRows.getBody());
          Value y = outRows.getInductionVar();
          auto tap = [&](Value table, int64_t t) -> Value {
            return rb.create<memref::LoadOp>(loc, table,
                                             ValueRange{idx(rb, t), y});
          };
          auto row = [&](int64_t t) -> Value {
            return rb.create<arith::IndexCastOp>(loc, rb.getIndexType(),
                                                 tap(yIndex, t));
          };
          SmallVector<Value> dstRow(at);
          dstRow.push_back(y);
          yRow(rb, plane, row(0), row(1), tap(yWeights, 0), tap(yWeights, 1),
               lu.out, dstRow);
          return;
        }
        auto outRows =
            lb.create<scf::ForOp>(loc, idx(lb, 0), idx(lb, height), idx(lb, 1));
        OpBuilder rb = OpBuilder::atBlockTerminator(outRows.getBody());
        Value yi = outRows.getInductionVar();
        for (int64_t r = 0; r < sy; ++r) {
          auto tap = [&](int64_t t) -> Value {
            Value y = rb.create<arith::AddIOp>(
                loc, yi, idx(rb, lu.y->offsets[2 * r + t]));
            return rb.create<arith::MinSIOp>(
                loc, rb.create<arith::MaxSIOp>(loc, y, idx(rb, 0)),
                idx(rb, height - 1));
          };
          SmallVector<Value> dstRow(at);
          dstRow.push_back(rb.create<arith::AddIOp>(
              loc, rb.create<arith::MulIOp>(loc, yi, idx(rb, sy)), idx(rb, r)));
          auto weight = [&](int64_t t) -> Value {
            return rb.create<arith::ConstantOp>(
                loc, rb.getF32FloatAttr(lu.y->weights[2 * r + t]));
          };
          yRow(rb, plane, tap(0), tap(1), weight(0), weight(1), lu.out, dstRow);
        }
      });
  int64_t elements = outType.getNumElements();
  auto trips = llvm::find_if(extents, [](int64_t e) { return e != 1; });
  if (outer && trips != extents.end() && elements >= vectorize::kParallelWork &&
      !vectorize::inParallelLoop(g))
    vectorize::markParallel(outer, vectorize::kParallelWork, elements / *trips);
  g.erase();
}

struct CpuVectorizeUpsamplePass
    : public impl::CpuVectorizeUpsampleBase<CpuVectorizeUpsamplePass> {
  using CpuVectorizeUpsampleBase::CpuVectorizeUpsampleBase;

  void runOnOperation() override {
    if (vectorBits < 256)
      return;
    SmallVector<std::pair<linalg::GenericOp, LinearUpsample>> linear;
    getOperation().walk([&](linalg::GenericOp g) {
      if (auto lu = matchLinearUpsample(g))
        linear.push_back({g, *lu});
    });
    for (auto &[g, lu] : linear) {
      rewriteLinear(g, lu, vectorBits / 32);
      ++numLinearUpsamples;
    }
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
