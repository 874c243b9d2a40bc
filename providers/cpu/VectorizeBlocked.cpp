//===- VectorizeBlocked.cpp - kiln-cpu-vectorize-blocked ------------------===//
//
// The kernels of the channel-blocked layout (kiln-cpu-block-channels):
// blocked convs as register tiles of output positions x 32 channels whose
// accumulators are stored as they are (a position's 16 channels one
// vector), and the reorders into and out of blocks as 16 x 16 transposes
// in registers. Pools, depthwise convs and global pools on blocks are in
// VectorizeBlockedWindows.cpp.
//
//===----------------------------------------------------------------------===//
#include "dialects/kiln/KilnDialect.h"
#include "passes/FusionUtils.h"
#include "passes/Passes.h"
#include "providers/Passes.h"
#include "providers/cpu/BlockedKernels.h"
#include "providers/cpu/Vectorize.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_CPUVECTORIZEBLOCKED
#include "providers/Passes.h.inc"

namespace blocked {

Value idx(OpBuilder &b, Location loc, int64_t v) {
  return b.create<arith::ConstantIndexOp>(loc, v);
}

bool staticBuffer(Value v) {
  auto t = dyn_cast<MemRefType>(v.getType());
  return t && t.hasStaticShape() && t.getElementType().isF32() &&
         vectorize::unitInnerStride(t);
}

int64_t coefficient(AffineMap map, unsigned loop, unsigned result) {
  SmallVector<int64_t> v(map.getNumDims(), 0);
  v[loop] = 1;
  return map.compose(v)[result];
}

SmallVector<Value> digits(OpBuilder &b, Location loc, Value t,
                          ArrayRef<int64_t> extents) {
  SmallVector<Value> out(extents.size());
  for (int64_t i = extents.size() - 1; i >= 0; --i) {
    if (i == 0) {
      out[0] = t;
      break;
    }
    out[i] = b.create<arith::RemUIOp>(loc, t, idx(b, loc, extents[i]));
    t = b.create<arith::DivUIOp>(loc, t, idx(b, loc, extents[i]));
  }
  return out;
}

/// A task's image, channel block (or block group) and row: rows outer
/// (`rowsOuter`) or blocks outer. Rows outer, a thread's contiguous
/// share of the tasks is a band of rows across all channels, the band
/// its producer wrote and its consumer reads (a line another core wrote
/// costs several times a local one); blocks outer, a band of channels,
/// which a consumer reading all channels takes half from the other core.
SmallVector<Value> taskDigits(OpBuilder &b, Location loc, Value t, int64_t n,
                              int64_t blocks, int64_t rows, bool rowsOuter) {
  if (!rowsOuter)
    return digits(b, loc, t, {n, blocks, rows});
  SmallVector<Value> d = digits(b, loc, t, {n, rows, blocks});
  return {d[0], d[2], d[1]};
}

scf::ForOp taskLoop(OpBuilder &b, Location loc, int64_t count,
                    int64_t threshold, int64_t perTask) {
  auto loop = b.create<scf::ForOp>(loc, idx(b, loc, 0), idx(b, loc, count),
                                   idx(b, loc, 1));
  vectorize::markParallel(loop, threshold, perTask);
  return loop;
}

std::optional<BlockedInit> matchBlockedInit(linalg::GenericOp g) {
  Value out = g.getDpsInits()[0];
  Operation *prev = g->getPrevNode();
  while (prev && isa<memref::AllocOp, memref::ExpandShapeOp,
                     memref::GetGlobalOp, arith::ConstantOp>(prev))
    prev = prev->getPrevNode();
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(prev))
    if (fill.getDpsInits()[0] == out)
      return BlockedInit{fill, fill.getInputs()[0], Value()};
  auto bg = dyn_cast_or_null<linalg::GenericOp>(prev);
  if (!bg || bg.getNumDpsInputs() != 1 || bg.getDpsInits()[0] != out)
    return std::nullopt;
  MLIRContext *ctx = g.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  Block &body = bg.getRegion().front();
  if (bg.getIndexingMapsArray()[0] != AffineMap::get(5, 0, {d(1), d(4)}, ctx) ||
      !llvm::hasSingleElement(body) ||
      body.getTerminator()->getOperand(0) != body.getArgument(0) ||
      !staticBuffer(bg.getDpsInputs()[0]))
    return std::nullopt;
  return BlockedInit{bg, Value(), bg.getDpsInputs()[0]};
}

linalg::GenericOp findBlockedEpilogue(linalg::GenericOp g) {
  Value c = g.getDpsInits()[0];
  // (Past the profile hooks of a node of its own: a residual Add's.)
  Operation *next = g->getNextNode();
  while (next && isa<memref::AllocOp, memref::ExpandShapeOp,
                     memref::GetGlobalOp, ProfileBeginOp, ProfileEndOp>(next))
    next = next->getNextNode();
  auto e = dyn_cast_or_null<linalg::GenericOp>(next);
  auto ct = cast<MemRefType>(c.getType());
  if (!e || e.getNumDpsInits() != 1 || e.getNumLoops() != 5 ||
      e.getNumReductionLoops() || !e.hasPureBufferSemantics() ||
      !e.getIndexingMapsArray().back().isIdentity() ||
      cast<MemRefType>(e.getDpsInits()[0].getType()).getShape() !=
          ct.getShape() ||
      !staticBuffer(e.getDpsInits()[0]))
    return {};
  MLIRContext *ctx = g.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  bool readsC = false;
  for (auto [v, map] : llvm::zip(e.getDpsInputs(), e.getIndexingMapsArray())) {
    if (v == c && map.isIdentity()) {
      readsC = true;
      continue;
    }
    if (v == c)
      return {};
    Operation *def = v.getDefiningOp();
    if (def && def->getBlock() == g->getBlock() && !def->isBeforeInBlock(g) &&
        !isa<memref::ExpandShapeOp, memref::GetGlobalOp>(def))
      return {};
    if (map.isIdentity() && staticBuffer(v) &&
        cast<MemRefType>(v.getType()).getShape() == ct.getShape())
      continue;
    if (map == AffineMap::get(5, 0, {d(1), d(4)}, ctx) && staticBuffer(v))
      continue;
    if (llvm::all_of(map.getResults(),
                     [](AffineExpr r) { return isa<AffineConstantExpr>(r); }))
      continue;
    return {};
  }
  Block &body = e.getRegion().front();
  if (!readsC || !body.getArguments().back().use_empty() ||
      !vectorize::isScalarBodyBefore(body, g))
    return {};
  return vectorize::placeEpilogueOutput(g, e) ? e : linalg::GenericOp();
}

std::pair<int64_t, int64_t> sourceRows(linalg::GenericOp g) {
  auto rows = g->getAttrOfType<DenseI64ArrayAttr>(vectorize::kBlockedConv);
  if (rows && rows.size() == 2)
    return {rows[0], rows[1]};
  return {0, cast<MemRefType>(g.getDpsInputs()[0].getType()).getDimSize(2)};
}

void eraseRewritten(linalg::GenericOp g, Operation *init,
                    linalg::GenericOp epilogue, int64_t &fused) {
  Value out = g.getDpsInits()[0];
  init->erase();
  if (epilogue) {
    bool elsewhere = epilogue.getDpsInits()[0] != out;
    epilogue.erase();
    ++fused;
    g.erase();
    if (elsewhere)
      vectorize::eraseIfWriteOnly(out);
    return;
  }
  g.erase();
}

Value applyEpilogue(OpBuilder &ib, Location loc, linalg::GenericOp e, Value out,
                    Value v, ValueRange pos, Value block) {
  auto vec = VectorType::get({kLanes}, ib.getF32Type());
  Block &body = e.getRegion().front();
  IRMapping map;
  for (auto [arg, operand, m] : llvm::zip(body.getArguments(), e.getDpsInputs(),
                                          e.getIndexingMapsArray())) {
    if (operand == out && m.isIdentity()) {
      map.map(arg, v);
    } else if (m.isIdentity()) {
      map.map(arg, ib.create<vector::LoadOp>(loc, vec, operand, pos));
    } else if (m.getNumResults() == 2 &&
               !isa<AffineConstantExpr>(m.getResult(0))) {
      map.map(arg, ib.create<vector::LoadOp>(
                       loc, vec, operand, ValueRange{block, idx(ib, loc, 0)}));
    } else if (m.getNumResults() == 3) {
      // (Per image and block: a squeeze-and-excitation scale.)
      map.map(arg, ib.create<vector::LoadOp>(
                       loc, vec, operand,
                       ValueRange{pos[0], block, idx(ib, loc, 0)}));
    } else {
      SmallVector<Value> cidx;
      for (AffineExpr r : m.getResults())
        cidx.push_back(idx(ib, loc, cast<AffineConstantExpr>(r).getValue()));
      map.map(arg, ib.create<memref::LoadOp>(loc, operand, cidx));
    }
  }
  return vectorize::widenBody(ib, loc, body, map, {kLanes});
}

Value packedWeights(
    OpBuilder &b, Location loc, memref::GlobalOp global, StringRef suffix,
    ArrayRef<int64_t> shape,
    function_ref<void(ArrayRef<float>, MutableArrayRef<float>)> pack) {
  Type elt = global.getType().getElementType();
  auto packedType = MemRefType::get(shape, elt);
  return vectorize::derivedGlobal(
      b, loc, global->getParentOfType<ModuleOp>(),
      (global.getSymName() + suffix).str(), packedType,
      [&] {
        std::optional<SmallVector<float>> v = fusion::elementsFloats(
            cast<ElementsAttr>(*global.getInitialValue()));
        SmallVector<float> packed(packedType.getNumElements());
        pack(*v, packed);
        return DenseElementsAttr::get(RankedTensorType::get(shape, elt),
                                      ArrayRef<float>(packed));
      },
      b.getI64IntegerAttr(64));
}

} // namespace blocked

namespace {

using namespace blocked;

/// An elementwise generic over blocked tensors that no kernel's store
/// took (a squeeze-and-excitation's scale): tasks of one row of an
/// image's channel block, rows outer, each position's 16 channels one
/// vector through the widened body. Its operands: the output's shape,
/// per block ([cb, 16]), per image and block ([n, cb, 16]) or constants.
bool rewriteBlockedElementwise(linalg::GenericOp g) {
  if (!g.hasPureBufferSemantics() || g.getNumDpsInits() != 1 ||
      g.getNumLoops() != 5 || g.getNumReductionLoops() ||
      !g.getIndexingMapsArray().back().isIdentity() ||
      !staticBuffer(g.getDpsInits()[0]) ||
      !g.getRegion().front().getArguments().back().use_empty() ||
      !vectorize::isScalarBodyBefore(g.getRegion().front(), g))
    return false;
  MLIRContext *ctx = g.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  for (auto [v, map] : llvm::zip(g.getDpsInputs(), g.getIndexingMapsArray()))
    if (!((map.isIdentity() || map == AffineMap::get(5, 0, {d(1), d(4)}, ctx) ||
           map == AffineMap::get(5, 0, {d(0), d(1), d(4)}, ctx)) &&
          staticBuffer(v)) &&
        !llvm::all_of(map.getResults(),
                      [](AffineExpr r) { return isa<AffineConstantExpr>(r); }))
      return false;
  SmallVector<int64_t> r = g.getStaticLoopRanges();
  int64_t n = r[0], cb = r[1], h = r[2], w = r[3];
  OpBuilder b(g);
  Location loc = g.getLoc();
  Value out = g.getDpsInits()[0];
  scf::ForOp rows =
      taskLoop(b, loc, n * h * cb, vectorize::kParallelMoveElements,
               w * kLanes * vectorize::iterationCost(g));
  OpBuilder tb = OpBuilder::atBlockBegin(rows.getBody());
  SmallVector<Value> at = taskDigits(tb, loc, rows.getInductionVar(), n, cb, h,
                                     /*rowsOuter=*/true);
  auto cols = tb.create<scf::ForOp>(loc, idx(tb, loc, 0), idx(tb, loc, w),
                                    idx(tb, loc, 1));
  OpBuilder cb2 = OpBuilder::atBlockBegin(cols.getBody());
  SmallVector<Value> pos = {at[0], at[1], at[2], cols.getInductionVar(),
                            idx(cb2, loc, 0)};
  Value v = applyEpilogue(cb2, loc, g, Value(), Value(), pos, at[1]);
  cb2.create<vector::StoreOp>(loc, v, out, pos);
  g.erase();
  return true;
}

/// [n, c, h, w] into [n, c / 16, h, w, 16] (`toBlocked`) or back: per
/// image row, chunks of 16 positions, each a 16 x 16 transpose of the
/// block's channel rows (the row's last chunk as wide as what is left).
bool rewriteReorder(linalg::GenericOp g, bool toBlocked) {
  if (!g.hasPureBufferSemantics() || g.getNumDpsInputs() != 1 ||
      !staticBuffer(g.getDpsInputs()[0]) || !staticBuffer(g.getDpsInits()[0]))
    return false;
  Value plain = toBlocked ? g.getDpsInputs()[0] : g.getDpsInits()[0],
        blocked = toBlocked ? g.getDpsInits()[0] : g.getDpsInputs()[0];
  auto bt = cast<MemRefType>(blocked.getType());
  if (bt.getRank() != 5 || cast<MemRefType>(plain.getType()).getRank() != 4)
    return false;
  int64_t n = bt.getDimSize(0), cb = bt.getDimSize(1), h = bt.getDimSize(2),
          w = bt.getDimSize(3);
  // The plain channels of the last block (fewer than 16 when it is padded).
  int64_t tail =
      cast<MemRefType>(plain.getType()).getDimSize(1) - (cb - 1) * kLanes;
  // (Into blocks, a padded tensor's plain channels come padded with zeros.)
  if (toBlocked && tail != kLanes)
    return false;
  OpBuilder b(g);
  Location loc = g.getLoc();
  auto vec = VectorType::get({kLanes}, b.getF32Type());
  scf::ForOp rows = taskLoop(b, loc, n * cb * h,
                             vectorize::kParallelMoveElements, w * kLanes);
  OpBuilder rb = OpBuilder::atBlockBegin(rows.getBody());
  SmallVector<Value> at =
      taskDigits(rb, loc, rows.getInductionVar(), n, cb, h, /*rowsOuter=*/true);
  Value c0 = rb.create<arith::MulIOp>(loc, at[1], idx(rb, loc, kLanes));
  Value zero = rb.create<arith::ConstantOp>(loc, rb.getF32FloatAttr(0.0f));
  // The chunk of `width` positions from w0.
  auto chunk = [&](OpBuilder &cb2, Value w0, int64_t width) {
    SmallVector<Value> in;
    int64_t count = toBlocked ? kLanes : width;
    for (int64_t i = 0; i < count; ++i) {
      Value ii = idx(cb2, loc, i);
      if (toBlocked) {
        Value ch = cb2.create<arith::AddIOp>(loc, c0, ii);
        SmallVector<Value> pos = {at[0], ch, at[2], w0};
        in.push_back(
            width == kLanes
                ? cb2.create<vector::LoadOp>(loc, vec, plain, pos).getResult()
                : cb2.create<vector::TransferReadOp>(loc, vec, plain, pos, zero,
                                                     ArrayRef<bool>{false})
                      .getResult());
      } else {
        Value p = cb2.create<arith::AddIOp>(loc, w0, ii);
        in.push_back(cb2.create<vector::LoadOp>(
            loc, vec, blocked,
            ValueRange{at[0], at[1], at[2], p, idx(cb2, loc, 0)}));
      }
    }
    SmallVector<Value> out = vectorize::transposeRows(cb2, loc, in);
    for (int64_t j = 0; j < (toBlocked ? width : kLanes); ++j) {
      Value jj = idx(cb2, loc, j);
      if (toBlocked) {
        Value p = cb2.create<arith::AddIOp>(loc, w0, jj);
        cb2.create<vector::StoreOp>(
            loc, out[j], blocked,
            ValueRange{at[0], at[1], at[2], p, idx(cb2, loc, 0)});
      } else {
        // (A padded last block's channels past the plain tensor's are not
        // stored: they lie past its end.)
        OpBuilder sb = cb2;
        if (j >= tail) {
          Value inner = cb2.create<arith::CmpIOp>(
              loc, arith::CmpIPredicate::ult, at[1], idx(cb2, loc, cb - 1));
          auto guard = cb2.create<scf::IfOp>(loc, inner, /*withElse=*/false);
          sb = guard.getThenBodyBuilder();
        }
        Value ch = sb.create<arith::AddIOp>(loc, c0, jj);
        sb.create<vector::StoreOp>(loc, out[j], plain,
                                   ValueRange{at[0], ch, at[2], w0});
      }
    }
  };
  int64_t whole = w / kLanes, left = w % kLanes;
  if (whole) {
    auto loop = rb.create<scf::ForOp>(loc, idx(rb, loc, 0),
                                      idx(rb, loc, whole * kLanes),
                                      idx(rb, loc, kLanes));
    OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
    chunk(lb, loop.getInductionVar(), kLanes);
  }
  if (left)
    chunk(rb, idx(rb, loc, whole * kLanes), left);
  g.erase();
  return true;
}

/// The weights [m, c, kh, kw] as a constant [mb / nb][cb][ci][kh][kw][nb x
/// 16]: in the order the tiles read them, each tap's `nb` blocks of output
/// channels one run of lines.
Value blockedWeights(OpBuilder &b, Location loc, Value w, int64_t nb,
                     int64_t cPer) {
  memref::GlobalOp global = vectorize::constantGlobal(w);
  if (!global)
    return Value();
  MemRefType type = global.getType();
  int64_t m = type.getDimSize(0), c = type.getDimSize(1),
          kh = type.getDimSize(2), kw = type.getDimSize(3);
  int64_t groups = m / kLanes / nb, cb = c / cPer;
  return packedWeights(
      b, loc, global, "_blocked" + std::to_string(nb),
      {groups, cb, cPer, kh, kw, nb * kLanes},
      [&](ArrayRef<float> v, MutableArrayRef<float> packed) {
        int64_t at = 0;
        for (int64_t o = 0; o < groups; ++o)
          for (int64_t i = 0; i < cb; ++i)
            for (int64_t ci = 0; ci < cPer; ++ci)
              for (int64_t y = 0; y < kh; ++y)
                for (int64_t x = 0; x < kw; ++x)
                  for (int64_t mo = 0; mo < nb * kLanes; ++mo)
                    packed[at++] =
                        v[(((o * nb * kLanes + mo) * c + i * cPer + ci) * kh +
                           y) *
                              kw +
                          x];
      });
}

/// Tasks of one output row of an image for `nb` output blocks; each row in
/// tiles of up to `tileWidth` positions; per tile the accumulators of its
/// positions x blocks start from the bias, take every input block's 16
/// channels at every tap (a broadcast per position, a weight vector per
/// block), go through the epilogue and are stored whole.
bool rewriteBlockedConv(linalg::GenericOp g, int64_t &fused,
                        DenseSet<Value> &blocksOuter) {
  // (8 loops: an NCHW input, a stem's 3 channels, read as it lies.)
  if (!g.hasPureBufferSemantics() || g.getNumDpsInputs() != 2 ||
      (g.getNumLoops() != 9 && g.getNumLoops() != 8))
    return false;
  bool plain = g.getNumLoops() == 8;
  Value x = g.getDpsInputs()[0], out = g.getDpsInits()[0];
  if (!staticBuffer(x) || !staticBuffer(out))
    return false;
  std::optional<BlockedInit> init = matchBlockedInit(g);
  if (!init)
    return false;
  SmallVector<int64_t> r = g.getStaticLoopRanges();
  // n, mb, oh, ow, mi, cb, kh, kw, ci; plain: n, mb, oh, ow, mi, c, kh, kw
  // (one block of c input channels).
  int64_t n = r[0], mb = r[1], oh = r[2], ow = r[3], cb = plain ? 1 : r[5],
          kh = r[6], kw = r[7], cPer = plain ? r[5] : kLanes;
  AffineMap xm = g.getIndexingMapsArray()[0];
  int64_t sh = coefficient(xm, 2, 2), dh = coefficient(xm, 6, 2),
          sw = coefficient(xm, 3, 3), dw = coefficient(xm, 7, 3);
  OpBuilder b(g);
  Location loc = g.getLoc();
  int64_t nb = mb % 2 == 0 ? 2 : 1;
  Value wp = blockedWeights(b, loc, g.getDpsInputs()[1], nb, cPer);
  if (!wp)
    return false;
  linalg::GenericOp epilogue = findBlockedEpilogue(g);
  Value dest = epilogue ? epilogue.getDpsInits()[0] : out;
  Type f32 = b.getF32Type();
  auto vec = VectorType::get({kLanes}, f32);
  // Each row in as few tiles as tiles of at most 9 positions (14 with one
  // block) take, their widths balanced: `wide` tiles of tileWidth
  // positions, then tiles of one fewer (a 17-wide row as 9 + 8: tiles of 8
  // left one position for a tile alone, its two FMA chains at a fraction
  // of the rate). Rows of at most 24 in tiles of up to 12 (24
  // accumulators): 10 as one tile, not two of 5, 19 as 10 + 9 (ssdlite's
  // 10x10 and 19x19 maps: the model 0.94x the time; tiles of 12 on all
  // rows were mixed, deeplab_lite 0.98x, unet_seg 1.07x).
  int64_t most = nb == 2 ? (ow <= 24 ? 12 : 9) : 14;
  int64_t rowTiles = llvm::divideCeil(ow, most);
  int64_t tileWidth = llvm::divideCeil(ow, rowTiles),
          wide = ow - (tileWidth - 1) * rowTiles;
  int64_t k = cb * kh * kw * cPer;
  scf::ForOp tasks =
      taskLoop(b, loc, n * (mb / nb) * oh, vectorize::kParallelMultiplyAdds,
               ow * nb * kLanes * k);
  OpBuilder tb = OpBuilder::atBlockBegin(tasks.getBody());
  // Rows outer where every thread may read all the weights from its own
  // L2; larger weights by groups, each thread reading its groups' alone.
  bool rowsOuter = mb * k * kLanes * 4 <= vectorize::kPerCoreWeightBytes;
  SmallVector<Value> at =
      taskDigits(tb, loc, tasks.getInductionVar(), n, mb / nb, oh, rowsOuter);
  Value img = at[0], row = at[2];
  Value mb0 = tb.create<arith::MulIOp>(loc, at[1], idx(tb, loc, nb));
  SmallVector<Value> blocks;
  for (int64_t j = 0; j < nb; ++j)
    blocks.push_back(tb.create<arith::AddIOp>(loc, mb0, idx(tb, loc, j)));
  SmallVector<Value> start;
  for (int64_t j = 0; j < nb; ++j)
    start.push_back(
        init->bias
            ? tb.create<vector::LoadOp>(loc, vec, init->bias,
                                        ValueRange{blocks[j], idx(tb, loc, 0)})
                  .getResult()
            : tb.create<vector::BroadcastOp>(loc, vec, init->scalar)
                  .getResult());
  Value inRow0 = tb.create<arith::MulIOp>(loc, row, idx(tb, loc, sh));
  // Kernel rows that read only x's zero padding rows (outside [top, end))
  // are skipped, as the NCHW direct tiles do: a 3x3 conv on 7 rows does
  // 19/21 of the multiply-adds. Row y reads x's row row * sh + y * dh.
  auto [top, end] = sourceRows(g);
  // Each output row's [yLo, yHi): yLo = ceil((top - r * sh) / dh) at
  // least 0, yHi = ceil((end - r * sh) / dh) at most kh. The distinct
  // pairs (a 3x3 conv's top and bottom rows, the rest) each get their
  // rows unrolled.
  auto rowsOf = [&](int64_t r) {
    auto ceilDiv = [&](int64_t v) {
      return v <= 0 ? int64_t(0) : int64_t(llvm::divideCeil(v, dh));
    };
    return std::make_pair(ceilDiv(top - r * sh),
                          std::min(kh, ceilDiv(end - r * sh)));
  };
  SmallVector<std::pair<int64_t, int64_t>> pairs;
  for (int64_t r = 0; r < oh; ++r)
    if (!llvm::is_contained(pairs, rowsOf(r)))
      pairs.push_back(rowsOf(r));
  Value yLo, yHi;
  if (pairs.size() > 1) {
    auto firstAt = [&](int64_t bound) -> Value {
      Value d =
          tb.create<arith::SubIOp>(loc, idx(tb, loc, bound + dh - 1), inRow0);
      return tb.create<arith::DivUIOp>(
          loc, tb.create<arith::MaxSIOp>(loc, d, idx(tb, loc, 0)),
          idx(tb, loc, dh));
    };
    yLo = firstAt(top);
    yHi = tb.create<arith::MinSIOp>(loc, firstAt(end), idx(tb, loc, kh));
  }
  // The tile of `width` positions from column `col0`.
  // The next group's weights, fetched into L2 while this group's rows
  // run, each tile its share, a few lines per input channel: weights that
  // come from memory (a 512-channel 3x3 conv's 590 KiB a group) otherwise
  // stall each group's first row.
  int64_t groupFloats = k * nb * kLanes, groups = mb / nb,
          tilesPerRow = rowTiles,
          share = llvm::divideCeil(groupFloats, oh * tilesPerRow),
          perChannel = llvm::divideCeil(share, cb * cPer),
          // (Rows outer, the weights stay in L2: no prefetch.)
      lines = rowsOuter ? 0 : llvm::divideCeil(perChannel, kLanes),
          packed = groups * groupFloats;
  Value wFlat = tb.create<memref::ReinterpretCastOp>(
      loc, MemRefType::get({packed}, f32), wp, 0, ArrayRef<int64_t>{packed},
      ArrayRef<int64_t>{1});
  auto tile = [&](OpBuilder &ib, Value col0, int64_t width) {
    Value tileIdx = ib.create<arith::AddIOp>(
        loc, ib.create<arith::MulIOp>(loc, row, idx(ib, loc, tilesPerRow)),
        ib.create<arith::DivUIOp>(loc, col0, idx(ib, loc, tileWidth)));
    Value prefetchBase = ib.create<arith::AddIOp>(
        loc,
        ib.create<arith::MulIOp>(
            loc, ib.create<arith::AddIOp>(loc, at[1], idx(ib, loc, 1)),
            idx(ib, loc, groupFloats)),
        ib.create<arith::MulIOp>(loc, tileIdx, idx(ib, loc, share)));
    SmallVector<Value> acc;
    for (int64_t p = 0; p < width; ++p)
      acc.append(start);
    SmallVector<Value> inCols;
    for (int64_t p = 0; p < width; ++p)
      inCols.push_back(ib.create<arith::MulIOp>(
          loc, ib.create<arith::AddIOp>(loc, col0, idx(ib, loc, p)),
          idx(ib, loc, sw)));
    // The multiply-adds of kernel row `y` at input channel `ci` of block
    // `ib0`.
    auto emitRow = [&](OpBuilder &rb, Location rl, Value ib0, Value ci, Value y,
                       SmallVector<Value> &a) {
      Value inRow = rb.create<arith::AddIOp>(
          rl, inRow0, rb.create<arith::MulIOp>(rl, y, idx(rb, rl, dh)));
      for (int64_t xk = 0; xk < kw; ++xk) {
        SmallVector<Value> wv;
        for (int64_t j = 0; j < nb; ++j)
          wv.push_back(rb.create<vector::LoadOp>(
              rl, vec, wp,
              ValueRange{at[1], ib0, ci, y, idx(rb, rl, xk),
                         idx(rb, rl, j * kLanes)}));
        for (int64_t p = 0; p < width; ++p) {
          Value col =
              rb.create<arith::AddIOp>(rl, inCols[p], idx(rb, rl, xk * dw));
          Value s = rb.create<memref::LoadOp>(
              rl, x,
              plain ? ValueRange{img, ci, inRow, col}
                    : ValueRange{img, ib0, inRow, col, ci});
          Value bs = rb.create<vector::BroadcastOp>(rl, vec, s);
          for (int64_t j = 0; j < nb; ++j)
            a[p * nb + j] =
                rb.create<vector::FMAOp>(rl, bs, wv[j], a[p * nb + j]);
        }
      }
    };
    // Per input channel (a loop, as the NCHW direct tiles: 16 channels x 9
    // taps unrolled spilled the accumulators), the taps unrolled up to 3x3;
    // a larger kernel's rows a loop.
    auto channels = [&](OpBuilder &ib, int64_t lo, int64_t hi,
                        bool unrolled) -> ValueRange {
      auto blocksLoop = ib.create<scf::ForOp>(
          loc, idx(ib, loc, 0), idx(ib, loc, cb), idx(ib, loc, 1), acc,
          [&](OpBuilder &bb, Location l, Value ib0, ValueRange iter) {
            auto chLoop = bb.create<scf::ForOp>(
                l, idx(bb, l, 0), idx(bb, l, cPer), idx(bb, l, 1), iter,
                [&](OpBuilder &cb2, Location cl, Value ci, ValueRange cIter) {
                  SmallVector<Value> a(cIter.begin(), cIter.end());
                  Value step = cb2.create<arith::AddIOp>(
                      cl,
                      cb2.create<arith::MulIOp>(cl, ib0, idx(cb2, cl, cPer)),
                      ci);
                  Value from = cb2.create<arith::AddIOp>(
                      cl, prefetchBase,
                      cb2.create<arith::MulIOp>(cl, step,
                                                idx(cb2, cl, perChannel)));
                  for (int64_t line = 0; line < lines; ++line)
                    cb2.create<memref::PrefetchOp>(
                        cl, wFlat,
                        ValueRange{cb2.create<arith::MinUIOp>(
                            cl,
                            cb2.create<arith::AddIOp>(
                                cl, from, idx(cb2, cl, line * kLanes)),
                            idx(cb2, cl, packed - 1))},
                        /*isWrite=*/false, /*localityHint=*/2,
                        /*isDataCache=*/true);
                  if (unrolled) {
                    for (int64_t y = lo; y < hi; ++y)
                      emitRow(cb2, cl, ib0, ci, idx(cb2, cl, y), a);
                    cb2.create<scf::YieldOp>(cl, a);
                    return;
                  }
                  auto rowsLoop = cb2.create<scf::ForOp>(
                      cl, idx(cb2, cl, lo), idx(cb2, cl, hi), idx(cb2, cl, 1),
                      a,
                      [&](OpBuilder &rb, Location rl, Value y,
                          ValueRange rIter) {
                        SmallVector<Value> ra(rIter.begin(), rIter.end());
                        emitRow(rb, rl, ib0, ci, y, ra);
                        rb.create<scf::YieldOp>(rl, ra);
                      });
                  cb2.create<scf::YieldOp>(cl, rowsLoop.getResults());
                });
            bb.create<scf::YieldOp>(l, chLoop.getResults());
          });
      return blocksLoop.getResults();
    };
    bool rowLoop = kh * kw > 9;
    // (Pairs past the first in nested branches on the row's pair.)
    std::function<SmallVector<Value>(OpBuilder &, size_t)> byPair =
        [&](OpBuilder &pb, size_t i) -> SmallVector<Value> {
      auto [lo, hi] = pairs[i];
      if (i + 1 == pairs.size())
        return channels(pb, lo, hi, !rowLoop);
      Value is = pb.create<arith::AndIOp>(
          loc,
          pb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, yLo,
                                   idx(pb, loc, lo)),
          pb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, yHi,
                                   idx(pb, loc, hi)));
      auto branch = pb.create<scf::IfOp>(loc, ValueRange(acc).getTypes(), is,
                                         /*withElse=*/true);
      OpBuilder thenB = branch.getThenBodyBuilder();
      thenB.create<scf::YieldOp>(loc, channels(thenB, lo, hi, !rowLoop));
      OpBuilder elseB = branch.getElseBodyBuilder();
      elseB.create<scf::YieldOp>(loc, byPair(elseB, i + 1));
      return branch.getResults();
    };
    SmallVector<Value> sums = byPair(ib, 0);

    for (int64_t p = 0; p < width; ++p) {
      Value col = ib.create<arith::AddIOp>(loc, col0, idx(ib, loc, p));
      for (int64_t j = 0; j < nb; ++j) {
        Value v = sums[p * nb + j];
        SmallVector<Value> pos = {img, blocks[j], row, col, idx(ib, loc, 0)};
        if (epilogue)
          v = applyEpilogue(ib, loc, epilogue, out, v, pos, blocks[j]);
        ib.create<vector::StoreOp>(loc, v, dest, pos);
      }
    }
  };
  // The wide tiles, then the narrower ones (if any).
  auto loop = tb.create<scf::ForOp>(loc, idx(tb, loc, 0),
                                    idx(tb, loc, wide * tileWidth),
                                    idx(tb, loc, tileWidth));
  OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
  tile(lb, loop.getInductionVar(), tileWidth);
  if (wide < rowTiles) {
    auto rest =
        tb.create<scf::ForOp>(loc, idx(tb, loc, wide * tileWidth),
                              idx(tb, loc, ow), idx(tb, loc, tileWidth - 1));
    OpBuilder nb2 = OpBuilder::atBlockBegin(rest.getBody());
    tile(nb2, rest.getInductionVar(), tileWidth - 1);
  }
  if (!rowsOuter)
    blocksOuter.insert(dest);
  eraseRewritten(g, init->op, epilogue, fused);
  return true;
}

struct CpuVectorizeBlockedPass
    : public impl::CpuVectorizeBlockedBase<CpuVectorizeBlockedPass> {
  using CpuVectorizeBlockedBase::CpuVectorizeBlockedBase;

  void runOnOperation() override {
    if (vectorBits < 512)
      return;
    SmallVector<linalg::GenericOp> convs, windows, pools, elementwise, to, from;
    getOperation().walk([&](linalg::GenericOp g) {
      if (vectorize::inDeviceCode(g))
        return;
      if (g->hasAttr(vectorize::kBlockedConv))
        convs.push_back(g);
      else if (g->hasAttr(vectorize::kBlockedWindow))
        windows.push_back(g);
      else if (g->hasAttr(vectorize::kBlockedGlobalPool))
        pools.push_back(g);
      else if (g->hasAttr(vectorize::kToBlocked))
        to.push_back(g);
      else if (g->hasAttr(vectorize::kFromBlocked))
        from.push_back(g);
    });
    // (Counted here too: statistics count nothing in a release build.)
    int64_t fused = 0, done[6] = {0, 0, 0, 0, 0, 0};
    // The outputs of convs whose threads split blocks, not rows.
    DenseSet<Value> blocksOuter;
    for (linalg::GenericOp g : convs) {
      if (winograd && rewriteWinogradConv(g, fused)) {
        ++done[3];
        continue;
      }
      done[0] += rewriteBlockedConv(g, fused, blocksOuter);
    }
    for (linalg::GenericOp g : windows)
      done[1] += rewriteBlockedWindow(g, fused, blocksOuter);
    for (linalg::GenericOp g : pools)
      done[4] += rewriteBlockedGlobalPool(
          g, /*rowsOuter=*/!blocksOuter.contains(g.getDpsInputs()[0]));
    // (Those the kernels' stores took are gone: the rest on their own.)
    getOperation().walk([&](linalg::GenericOp g) {
      if (g->hasAttr(vectorize::kBlockedElementwise))
        elementwise.push_back(g);
    });
    for (linalg::GenericOp g : elementwise)
      done[5] += rewriteBlockedElementwise(g);
    for (linalg::GenericOp g : to)
      done[2] += rewriteReorder(g, /*toBlocked=*/true);
    for (linalg::GenericOp g : from)
      done[2] += rewriteReorder(g, /*toBlocked=*/false);
    numConvs += done[0];
    numWinograd += done[3];
    numPools += done[1];
    numReorders += done[2];
    numGlobalPools += done[4];
    numElementwise += done[5];
    numFused += fused;
    // (For `kiln compile --report`.)
    fusion::Counters counters;
    counters["blocked_convs"] = done[0];
    counters["winograd_convs"] = done[3];
    counters["blocked_windows"] = done[1];
    counters["blocked_epilogues"] = fused;
    counters["layout_reorders"] = done[2];
    counters["blocked_global_pools"] = done[4];
    counters["blocked_elementwise"] = done[5];
    fusion::recordCounters(getOperation(), counters,
                           {"blocked_convs", "winograd_convs",
                            "blocked_windows", "blocked_epilogues",
                            "layout_reorders", "blocked_global_pools",
                            "blocked_elementwise"});
  }
};

} // namespace
} // namespace kiln
