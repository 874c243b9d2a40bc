//===- VectorizeBlockedWindows.cpp - pools on blocks ----------------------===//
//
// Part of kiln-cpu-vectorize-blocked: the window ops of the channel-blocked
// layout. Max and sum pools and depthwise convs as tasks of one output row
// of a channel block, each position's 16 channels one vector; global sum
// and max pools as row partials folded in a fixed order.
//
//===----------------------------------------------------------------------===//
#include "passes/FusionUtils.h"
#include "providers/cpu/BlockChannelsMatch.h"
#include "providers/cpu/BlockedKernels.h"
#include "providers/cpu/Vectorize.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace kiln::blocked {

namespace {

/// The source a padded buffer `x` holds at (top, left): x is an
/// allocation that a fill with `pad` and one copy of the source into a
/// subview of it write, and only `g` reads; none otherwise.
struct PaddedCopy {
  Value src, pad;
  int64_t top, left;
  SmallVector<Operation *> ops; // fill, subview, copy
};

std::optional<PaddedCopy> matchPaddedCopy(Value x, Operation *g) {
  auto alloc = x.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != g->getBlock())
    return std::nullopt;
  PaddedCopy pc;
  linalg::FillOp fill;
  memref::CopyOp copy;
  memref::SubViewOp sv;
  for (Operation *user : x.getUsers()) {
    if (user == g || isa<memref::DeallocOp>(user))
      continue;
    if (auto f = dyn_cast<linalg::FillOp>(user); f && !fill) {
      fill = f;
      continue;
    }
    auto v = dyn_cast<memref::SubViewOp>(user);
    if (!v || sv || !v->hasOneUse() || !v.hasUnitStride())
      return std::nullopt;
    sv = v;
    copy = dyn_cast<memref::CopyOp>(*v->getUsers().begin());
    if (!copy || copy.getTarget() != v.getResult())
      return std::nullopt;
  }
  if (!fill || !copy || !fill->isBeforeInBlock(copy) ||
      !copy->isBeforeInBlock(g) || !staticBuffer(copy.getSource()))
    return std::nullopt;
  ArrayRef<int64_t> offsets = sv.getStaticOffsets();
  if (offsets.size() != 5 || offsets[0] || offsets[1] || offsets[4] ||
      ShapedType::isDynamic(offsets[2]) || ShapedType::isDynamic(offsets[3]))
    return std::nullopt;
  pc.src = copy.getSource();
  pc.pad = fill.getInputs()[0];
  pc.top = offsets[2];
  pc.left = offsets[3];
  pc.ops = {fill, copy, sv};
  return pc;
}

/// Whether `pad` leaves the pool's op unchanged: -inf for a max, 0 for a
/// sum (their taps on padding may be skipped).
bool padIsIdentity(Operation &op, Value pad) {
  FloatAttr f;
  if (!matchPattern(pad, m_Constant(&f)))
    return false;
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(op))
    return f.getValue().isInfinity() && f.getValue().isNegative();
  if (isa<arith::AddFOp>(op))
    return f.getValue().isZero();
  return false;
}

/// Depthwise weights [c, 1, kh, kw] as a constant [c / 16][kh][kw][16]:
/// each tap's vector of a block's 16 channels.
Value depthwiseWeights(OpBuilder &b, Location loc, Value w) {
  memref::GlobalOp global = vectorize::constantGlobal(w);
  if (!global)
    return Value();
  MemRefType type = global.getType();
  int64_t c = type.getDimSize(0), kh = type.getDimSize(2),
          kw = type.getDimSize(3);
  if (type.getDimSize(1) != 1 || c % kLanes)
    return Value();
  return packedWeights(
      b, loc, global, "_blocked_taps", {c / kLanes, kh, kw, kLanes},
      [&](ArrayRef<float> v, MutableArrayRef<float> packed) {
        int64_t at = 0;
        for (int64_t o = 0; o < c / kLanes; ++o)
          for (int64_t y = 0; y < kh; ++y)
            for (int64_t x = 0; x < kw; ++x)
              for (int64_t ci = 0; ci < kLanes; ++ci)
                packed[at++] = v[((o * kLanes + ci) * kh + y) * kw + x];
      });
}

} // namespace

/// A blocked max or sum pool: tasks of one output row of an image's
/// channel block; each output position's vector of 16 channels starts from
/// the fill and takes the pool's op with each tap's vector. Where x is a
/// padded copy whose pad leaves the op unchanged (a max pool's -inf), the
/// source is read as it lies and taps on the padding skipped: border rows
/// and columns unrolled over their own taps, inner positions 4 at a time.
/// Threads take bands of rows, or of channel blocks where the producer's
/// threads did (`blocksOuter`: a 7x7 depthwise conv after a conv split by
/// channels read half its input from the other core: 10 us on one thread,
/// 19 on two).
bool rewriteBlockedWindow(linalg::GenericOp g, int64_t &fused,
                          DenseSet<Value> &blocksOuter) {
  if (!g.hasPureBufferSemantics() || g.getNumDpsInputs() != 2 ||
      g.getNumLoops() != 7)
    return false;
  Value x = g.getDpsInputs()[0], out = g.getDpsInits()[0];
  if (!staticBuffer(x) || !staticBuffer(out))
    return false;
  // A depthwise conv's second operand is its weights [c, 1, kh, kw] (a
  // pool's only sizes the window): multiply-adds from the bias or fill,
  // then the epilogue, as the blocked convs.
  bool depthwise =
      cast<MemRefType>(g.getDpsInputs()[1].getType()).getRank() == 4;
  std::optional<BlockedInit> init = matchBlockedInit(g);
  if (!init || (!depthwise && !init->scalar))
    return false;
  Block &body = g.getRegion().front();
  if (!vectorize::isScalarBodyBefore(body, g))
    return false;
  // (A max pool's max in four instructions, NaNs kept: poolMaxF32.)
  bool isMax = isa<arith::MaximumFOp>(body.front());
  SmallVector<int64_t> r = g.getStaticLoopRanges();
  // n, cb, oh, ow, ci, kh, kw
  int64_t n = r[0], cb = r[1], oh = r[2], ow = r[3], kh = r[5], kw = r[6];
  AffineMap xm = g.getIndexingMapsArray()[0];
  int64_t sh = coefficient(xm, 2, 2), dh = coefficient(xm, 5, 2),
          sw = coefficient(xm, 3, 3), dw = coefficient(xm, 6, 3);
  auto xt = cast<MemRefType>(x.getType());
  int64_t top = 0, left = 0, h = xt.getDimSize(2), w = xt.getDimSize(3);
  std::optional<PaddedCopy> pc = matchPaddedCopy(x, g);
  FloatAttr padAttr;
  bool zeroPad = pc && matchPattern(pc->pad, m_Constant(&padAttr)) &&
                 padAttr.getValue().isZero();
  if (pc && (depthwise ? zeroPad : padIsIdentity(body.front(), pc->pad))) {
    x = pc->src;
    top = pc->top;
    left = pc->left;
    h = cast<MemRefType>(x.getType()).getDimSize(2);
    w = cast<MemRefType>(x.getType()).getDimSize(3);
  } else {
    pc.reset();
  }
  // Output position o's taps [lo, hi) along an axis of `size` inputs.
  auto taps = [](int64_t o, int64_t s, int64_t d, int64_t k, int64_t pad,
                 int64_t size) {
    auto ceilDiv = [&](int64_t v) {
      return v <= 0 ? int64_t(0) : int64_t(llvm::divideCeil(v, d));
    };
    return std::make_pair(ceilDiv(pad - o * s),
                          std::min(k, ceilDiv(pad + size - o * s)));
  };
  OpBuilder b(g);
  Location loc = g.getLoc();
  auto vec = VectorType::get({kLanes}, b.getF32Type());
  Value wp;
  linalg::GenericOp epilogue;
  if (depthwise) {
    wp = depthwiseWeights(b, loc, g.getDpsInputs()[1]);
    if (!wp)
      return false;
    epilogue = findBlockedEpilogue(g);
  }
  Value dest = epilogue ? epilogue.getDpsInits()[0] : out;
  scf::ForOp tasks = taskLoop(b, loc, n * cb * oh, vectorize::kParallelElements,
                              ow * kLanes * kh * kw);
  OpBuilder tb = OpBuilder::atBlockBegin(tasks.getBody());
  bool rowsOuter = !blocksOuter.contains(x);
  if (!rowsOuter)
    blocksOuter.insert(dest);
  SmallVector<Value> at =
      taskDigits(tb, loc, tasks.getInductionVar(), n, cb, oh, rowsOuter);
  Value start =
      init->bias
          ? tb.create<vector::LoadOp>(loc, vec, init->bias,
                                      ValueRange{at[1], idx(tb, loc, 0)})
                .getResult()
          : tb.create<vector::BroadcastOp>(loc, vec, init->scalar).getResult();
  // x's row of kernel row 0 (before the padding's offset).
  Value inRow0 = tb.create<arith::MulIOp>(loc, at[2], idx(tb, loc, sh));
  Value zero = idx(tb, loc, 0);
  // `count` positions from col0 (a value; `first` its static value, when
  // known, for the column taps), kernel rows [ylo, yhi).
  auto positions = [&](OpBuilder &pb, Value col0, int64_t first, int64_t count,
                       int64_t ylo, int64_t yhi) {
    SmallVector<Value> acc(count, start);
    for (int64_t y = ylo; y < yhi; ++y) {
      Value inRow =
          pb.create<arith::AddIOp>(loc, inRow0, idx(pb, loc, y * dh - top));
      for (int64_t p = 0; p < count; ++p) {
        auto [xlo, xhi] = first < 0 ? std::make_pair(int64_t(0), kw)
                                    : taps(first + p, sw, dw, kw, left, w);
        for (int64_t xk = xlo; xk < xhi; ++xk) {
          Value col = pb.create<arith::AddIOp>(
              loc,
              pb.create<arith::MulIOp>(
                  loc, pb.create<arith::AddIOp>(loc, col0, idx(pb, loc, p)),
                  idx(pb, loc, sw)),
              idx(pb, loc, xk * dw - left));
          Value v = pb.create<vector::LoadOp>(
              loc, vec, x, ValueRange{at[0], at[1], inRow, col, zero});
          if (depthwise) {
            Value wv = pb.create<vector::LoadOp>(
                loc, vec, wp,
                ValueRange{at[1], idx(pb, loc, y), idx(pb, loc, xk), zero});
            acc[p] = pb.create<vector::FMAOp>(loc, v, wv, acc[p]);
            continue;
          }
          if (isMax) {
            acc[p] = vectorize::poolMaxF32(pb, loc, v, acc[p]);
            continue;
          }
          IRMapping map;
          map.map(body.getArgument(0), v);
          map.map(body.getArgument(2), acc[p]);
          acc[p] = vectorize::widenBody(pb, loc, body, map, {kLanes});
        }
      }
    }
    for (int64_t p = 0; p < count; ++p) {
      SmallVector<Value> pos = {
          at[0], at[1], at[2],
          pb.create<arith::AddIOp>(loc, col0, idx(pb, loc, p)), zero};
      Value v = acc[p];
      if (epilogue)
        v = applyEpilogue(pb, loc, epilogue, out, v, pos, at[1]);
      pb.create<vector::StoreOp>(loc, v, dest, pos);
    }
  };
  // Columns whose taps all read the source: [innerLo, innerHi).
  int64_t innerLo = 0, innerHi = ow;
  while (innerLo < ow &&
         taps(innerLo, sw, dw, kw, left, w) != std::make_pair(int64_t(0), kw))
    ++innerLo;
  while (innerHi > innerLo && taps(innerHi - 1, sw, dw, kw, left, w) !=
                                  std::make_pair(int64_t(0), kw))
    --innerHi;
  constexpr int64_t kStep = 4;
  auto row = [&](OpBuilder &rb, int64_t ylo, int64_t yhi) {
    for (int64_t c = 0; c < innerLo; ++c)
      positions(rb, idx(rb, loc, c), c, 1, ylo, yhi);
    int64_t whole = (innerHi - innerLo) / kStep,
            left2 = (innerHi - innerLo) % kStep;
    if (whole) {
      auto loop = rb.create<scf::ForOp>(loc, idx(rb, loc, innerLo),
                                        idx(rb, loc, innerLo + whole * kStep),
                                        idx(rb, loc, kStep));
      OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
      positions(lb, loop.getInductionVar(), -1, kStep, ylo, yhi);
    }
    if (left2)
      positions(rb, idx(rb, loc, innerLo + whole * kStep), -1, left2, ylo, yhi);
    for (int64_t c = std::max(innerHi, innerLo); c < ow; ++c)
      positions(rb, idx(rb, loc, c), c, 1, ylo, yhi);
  };
  // The distinct row tap ranges, each a branch on the task's row.
  SmallVector<std::pair<int64_t, int64_t>> pairs;
  SmallVector<SmallVector<int64_t>> rowsOf;
  for (int64_t o = 0; o < oh; ++o) {
    auto pr = taps(o, sh, dh, kh, top, h);
    auto *it = llvm::find(pairs, pr);
    if (it == pairs.end()) {
      pairs.push_back(pr);
      rowsOf.push_back({o});
    } else {
      rowsOf[it - pairs.begin()].push_back(o);
    }
  }
  std::function<void(OpBuilder &, size_t)> byPair = [&](OpBuilder &pb,
                                                        size_t i) {
    if (i + 1 == pairs.size())
      return row(pb, pairs[i].first, pairs[i].second);
    // (Border rows are few: compared one by one.)
    Value is = pb.create<arith::ConstantIntOp>(loc, 0, 1);
    for (int64_t o : rowsOf[i])
      is = pb.create<arith::OrIOp>(
          loc, is,
          pb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, at[2],
                                   idx(pb, loc, o)));
    auto branch = pb.create<scf::IfOp>(loc, is, /*withElse=*/true);
    OpBuilder thenB = branch.getThenBodyBuilder();
    row(thenB, pairs[i].first, pairs[i].second);
    OpBuilder elseB = branch.getElseBodyBuilder();
    byPair(elseB, i + 1);
  };
  // (The most common pair, the inner rows', last: the else of all.)
  if (pairs.size() > 1) {
    size_t most = 0;
    for (size_t i = 1; i < pairs.size(); ++i)
      if (rowsOf[i].size() > rowsOf[most].size())
        most = i;
    std::swap(pairs[most], pairs.back());
    std::swap(rowsOf[most], rowsOf.back());
  }
  byPair(tb, 0);
  eraseRewritten(g, init->op, epilogue, fused);
  if (pc) {
    Value padded = pc->ops.front()->getOperand(1);
    for (Operation *op : pc->ops)
      op->erase();
    vectorize::eraseIfWriteOnly(padded);
  }
  return true;
}

/// A global sum or max pool of a blocked tensor (kiln.blocked_global_pool):
/// tasks of one row of an image's channel block, rows or blocks outer as
/// the input's producer split them (each thread reads what it wrote: 7x7
/// rows of a conv's blocks read across the other core's took twice as
/// long), each folding its row (through the elementwise ops the pool
/// applies to each element first: a fused Clip) into a partial vector of
/// 16 channels with four accumulators; then each block's
/// partials folded in row order into the output. The order is the same
/// at any thread count.
bool rewriteBlockedGlobalPool(linalg::GenericOp g, bool rowsOuter) {
  if (!g.hasPureBufferSemantics() || g.getNumDpsInputs() != 1 ||
      g.getNumLoops() != 5)
    return false;
  Value x = g.getDpsInputs()[0], out = g.getDpsInits()[0];
  if (!staticBuffer(x) || !staticBuffer(out))
    return false;
  // The fold, after the elementwise ops that compute the value folded
  // from the element (a fused Clip).
  Block &body = g.getRegion().front();
  std::optional<blocking::PoolFold> pf = blocking::matchPoolFold(body);
  if (!pf)
    return false;
  bool isMax = isa<arith::MaximumFOp>(pf->fold);
  SmallVector<int64_t> r = g.getStaticLoopRanges();
  int64_t n = r[0], cb = r[1], h = r[2], w = r[3];
  OpBuilder b(g);
  Location loc = g.getLoc();
  Type f32 = b.getF32Type();
  auto vec = VectorType::get({kLanes}, f32);
  auto fold = [&](OpBuilder &fb, Value a, Value v) -> Value {
    if (isMax)
      return fb.create<arith::MaximumFOp>(loc, a, v);
    return fb.create<arith::AddFOp>(loc, a, v);
  };
  Value partial = b.create<memref::AllocOp>(
      loc, MemRefType::get({n, cb, h, kLanes}, f32), b.getI64IntegerAttr(64));
  scf::ForOp rows = taskLoop(b, loc, n * h * cb,
                             vectorize::kParallelMoveElements, w * kLanes);
  {
    OpBuilder tb = OpBuilder::atBlockBegin(rows.getBody());
    SmallVector<Value> at =
        taskDigits(tb, loc, rows.getInductionVar(), n, cb, h, rowsOuter);
    Value zero = idx(tb, loc, 0);
    auto load = [&](OpBuilder &lb, Value col) -> Value {
      Value v = lb.create<vector::LoadOp>(
          loc, vec, x, ValueRange{at[0], at[1], at[2], col, zero});
      // The body up to the fold, whose place the folded value takes.
      IRMapping map;
      map.map(body.getArgument(0), v);
      return vectorize::widenBody(
          lb, loc, body, map, {kLanes},
          [&](OpBuilder &, Operation &op, IRMapping &m) {
            if (&op != pf->fold)
              return false;
            m.map(op.getResult(0), m.lookupOrDefault(pf->term));
            return true;
          });
    };
    int64_t accs = std::min<int64_t>(4, w), whole = w / accs * accs;
    SmallVector<Value> acc;
    for (int64_t j = 0; j < accs; ++j)
      acc.push_back(load(tb, idx(tb, loc, j)));
    if (whole > accs) {
      auto loop = tb.create<scf::ForOp>(
          loc, idx(tb, loc, accs), idx(tb, loc, whole), idx(tb, loc, accs), acc,
          [&](OpBuilder &lb, Location, Value col, ValueRange iter) {
            SmallVector<Value> next;
            for (int64_t j = 0; j < accs; ++j)
              next.push_back(fold(lb, iter[j],
                                  load(lb, lb.create<arith::AddIOp>(
                                               loc, col, idx(lb, loc, j)))));
            lb.create<scf::YieldOp>(loc, next);
          });
      acc = loop.getResults();
    }
    for (int64_t col = whole; col < w; ++col)
      acc[col - whole] =
          fold(tb, acc[col - whole], load(tb, idx(tb, loc, col)));
    while (acc.size() > 1) {
      SmallVector<Value> half;
      for (size_t j = 0; j + 1 < acc.size(); j += 2)
        half.push_back(fold(tb, acc[j], acc[j + 1]));
      if (acc.size() % 2)
        half.push_back(acc.back());
      acc = half;
    }
    tb.create<vector::StoreOp>(loc, acc[0], partial,
                               ValueRange{at[0], at[1], at[2], zero});
  }
  b.setInsertionPoint(g);
  scf::ForOp blocks =
      taskLoop(b, loc, n * cb, vectorize::kParallelElements, h * kLanes);
  {
    OpBuilder tb = OpBuilder::atBlockBegin(blocks.getBody());
    SmallVector<Value> at = digits(tb, loc, blocks.getInductionVar(), {n, cb});
    Value zero = idx(tb, loc, 0);
    Value init = tb.create<vector::LoadOp>(loc, vec, out,
                                           ValueRange{at[0], at[1], zero});
    auto loop = tb.create<scf::ForOp>(
        loc, zero, idx(tb, loc, h), idx(tb, loc, 1), ValueRange{init},
        [&](OpBuilder &lb, Location, Value row, ValueRange iter) {
          Value v = lb.create<vector::LoadOp>(
              loc, vec, partial, ValueRange{at[0], at[1], row, zero});
          lb.create<scf::YieldOp>(loc, fold(lb, iter[0], v));
        });
    tb.create<vector::StoreOp>(loc, loop.getResult(0), out,
                               ValueRange{at[0], at[1], zero});
  }
  b.setInsertionPoint(g);
  g.erase();
  return true;
}

} // namespace kiln::blocked
