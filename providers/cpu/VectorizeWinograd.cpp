//===- VectorizeWinograd.cpp - 3x3 blocked convs as Winograd tiles --------===//
//
// Part of kiln-cpu-vectorize-blocked. A 3x3 conv at stride 1 runs as
// Winograd F(2x2, 3x3) tiles (Lavin and Gray, 2015): each 2x2 output block
// comes from its 4x4 input block through 16 products per input and output
// channel instead of 36, a 2.25x cut in multiply-adds. The input and output
// transforms take only adds (B and A hold 0 and +-1); the weights' G g G^T
// is computed at compile time. Per task (an image's pair of output rows):
// the input transform of the row's tiles into thread scratch [16][tiles]
// [c], one matmul per transform element e on the blocked kernel's register
// tiles (a broadcast of V[e][t][c] per tile, a vector of U[e][c] per 16
// output channels) into scratch [16][tiles][m], then the output transform,
// the bias and the conv's epilogue in the store.
//
//===----------------------------------------------------------------------===//
#include "passes/FusionUtils.h"
#include "providers/cpu/BlockedKernels.h"
#include "providers/cpu/Vectorize.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace kiln::blocked {

namespace {

/// The weights [m, c, 3, 3] as G g G^T, a constant [16][m / 16 / nb][c]
/// [nb x 16]: per transform element, each input channel's nb blocks of
/// output channels one run of lines, in the order the matmuls read them.
Value winogradWeights(OpBuilder &b, Location loc, Value w, int64_t nb) {
  memref::GlobalOp global = vectorize::constantGlobal(w);
  if (!global)
    return Value();
  MemRefType type = global.getType();
  int64_t m = type.getDimSize(0), c = type.getDimSize(1);
  int64_t groups = m / kLanes / nb;
  auto packedType = MemRefType::get({16, groups, c, nb * kLanes},
                                    type.getElementType());
  std::string name =
      (global.getSymName() + "_winograd" + std::to_string(nb)).str();
  return vectorize::derivedGlobal(
      b, loc, global->getParentOfType<ModuleOp>(), name, packedType,
      [&] {
        std::optional<SmallVector<float>> v = fusion::elementsFloats(
            cast<ElementsAttr>(*global.getInitialValue()));
        static const double g[4][3] = {
            {1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
        SmallVector<float> packed(16 * m * c);
        for (int64_t o = 0; o < m; ++o)
          for (int64_t i = 0; i < c; ++i) {
            const float *k = v->data() + (o * c + i) * 9;
            // G k (4 x 3), then (G k) G^T (4 x 4), in double.
            double gk[4][3], u[4][4];
            for (int r = 0; r < 4; ++r)
              for (int s = 0; s < 3; ++s)
                gk[r][s] = g[r][0] * k[s] + g[r][1] * k[3 + s] +
                           g[r][2] * k[6 + s];
            for (int r = 0; r < 4; ++r)
              for (int s = 0; s < 4; ++s)
                u[r][s] = gk[r][0] * g[s][0] + gk[r][1] * g[s][1] +
                          gk[r][2] * g[s][2];
            int64_t group = o / (nb * kLanes), lane = o % (nb * kLanes);
            for (int e = 0; e < 16; ++e)
              packed[((e * groups + group) * c + i) * nb * kLanes + lane] =
                  float(u[e / 4][e % 4]);
          }
        return DenseElementsAttr::get(
            RankedTensorType::get(packedType.getShape(), type.getElementType()),
            ArrayRef<float>(packed));
      },
      b.getI64IntegerAttr(64));
}

} // namespace

bool rewriteWinogradConv(linalg::GenericOp g, int64_t &fused) {
  if (!g.hasPureBufferSemantics() || g.getNumDpsInputs() != 2 ||
      g.getNumLoops() != 9)
    return false;
  Value x = g.getDpsInputs()[0], out = g.getDpsInits()[0];
  if (!staticBuffer(x) || !staticBuffer(out))
    return false;
  SmallVector<int64_t> r = g.getStaticLoopRanges();
  // n, mb, oh, ow, mi, cb, kh, kw, ci.
  int64_t n = r[0], mb = r[1], oh = r[2], ow = r[3], cb = r[5];
  AffineMap xm = g.getIndexingMapsArray()[0];
  if (r[6] != 3 || r[7] != 3 || coefficient(xm, 2, 2) != 1 ||
      coefficient(xm, 6, 2) != 1 || coefficient(xm, 3, 3) != 1 ||
      coefficient(xm, 7, 3) != 1)
    return false;
  // Whole 2x2 tiles (odd planes: the direct tiles); two blocks of input
  // and of output channels at least, or the transforms cost more than the
  // products they save.
  auto xt = cast<MemRefType>(x.getType());
  if (oh % 2 || ow % 2 || ow < 4 || cb < 2 || mb < 2 ||
      xt.getDimSize(2) < oh + 2 || xt.getDimSize(3) < ow + 2)
    return false;
  std::optional<BlockedInit> init = matchBlockedInit(g);
  if (!init)
    return false;
  OpBuilder b(g);
  Location loc = g.getLoc();
  int64_t nb = mb % 2 == 0 ? 2 : 1, groups = mb / nb;
  Value u = winogradWeights(b, loc, g.getDpsInputs()[1], nb);
  if (!u)
    return false;
  linalg::GenericOp epilogue = findBlockedEpilogue(g);
  Value dest = epilogue ? epilogue.getDpsInits()[0] : out;
  Type f32 = b.getF32Type();
  auto vec = VectorType::get({kLanes}, f32);
  int64_t tiles = ow / 2, c = cb * kLanes, m = mb * kLanes;
  scf::ForOp tasks = taskLoop(b, loc, n * (oh / 2),
                              vectorize::kParallelMultiplyAdds,
                              16 * tiles * c * m);
  OpBuilder tb = OpBuilder::atBlockBegin(tasks.getBody());
  SmallVector<Value> at =
      digits(tb, loc, tasks.getInductionVar(), {n, oh / 2});
  Value img = at[0];
  Value row0 = tb.create<arith::MulIOp>(loc, at[1], idx(tb, loc, 2));
  // (In a parallel loop's body: per-thread scratch.)
  Value vs = tb.create<memref::AllocOp>(
      loc, MemRefType::get({16, tiles, c}, f32), tb.getI64IntegerAttr(64));
  Value ms = tb.create<memref::AllocOp>(
      loc, MemRefType::get({16, tiles, m}, f32), tb.getI64IntegerAttr(64));
  auto forLoop = [&](OpBuilder &ob, int64_t hi,
                     function_ref<void(OpBuilder &, Value)> body) {
    auto loop = ob.create<scf::ForOp>(loc, idx(ob, loc, 0), idx(ob, loc, hi),
                                      idx(ob, loc, 1));
    OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
    body(lb, loop.getInductionVar());
  };
  auto add = [&](OpBuilder &ob, Value p, Value q) -> Value {
    return ob.create<arith::AddFOp>(loc, p, q);
  };
  auto sub = [&](OpBuilder &ob, Value p, Value q) -> Value {
    return ob.create<arith::SubFOp>(loc, p, q);
  };

  // Input transform V = B^T d B of each tile's 4x4 block, per input block.
  forLoop(tb, cb, [&](OpBuilder &ib, Value blk) {
    forLoop(ib, tiles, [&](OpBuilder &pb, Value t) {
      Value col0 = pb.create<arith::MulIOp>(loc, t, idx(pb, loc, 2));
      Value d[4][4];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          d[i][j] = pb.create<vector::LoadOp>(
              loc, vec, x,
              ValueRange{img, blk,
                         pb.create<arith::AddIOp>(loc, row0, idx(pb, loc, i)),
                         pb.create<arith::AddIOp>(loc, col0, idx(pb, loc, j)),
                         idx(pb, loc, 0)});
      Value s[4][4];
      for (int j = 0; j < 4; ++j) {
        s[0][j] = sub(pb, d[0][j], d[2][j]);
        s[1][j] = add(pb, d[1][j], d[2][j]);
        s[2][j] = sub(pb, d[2][j], d[1][j]);
        s[3][j] = sub(pb, d[1][j], d[3][j]);
      }
      Value ch = pb.create<arith::MulIOp>(loc, blk, idx(pb, loc, kLanes));
      for (int i = 0; i < 4; ++i) {
        Value v[4] = {sub(pb, s[i][0], s[i][2]), add(pb, s[i][1], s[i][2]),
                      sub(pb, s[i][2], s[i][1]), sub(pb, s[i][1], s[i][3])};
        for (int j = 0; j < 4; ++j)
          pb.create<vector::StoreOp>(loc, v[j], vs,
                                     ValueRange{idx(pb, loc, i * 4 + j), t, ch});
      }
    });
  });

  // Per transform element, M[e] = V[e] U[e]: tiles of up to 9 tiles x 2
  // blocks (14 x 1) as the direct kernel's, their widths balanced.
  int64_t most = nb == 2 ? 9 : 14;
  int64_t rowTiles = llvm::divideCeil(tiles, most);
  int64_t width = llvm::divideCeil(tiles, rowTiles),
          wide = tiles - (width - 1) * rowTiles;
  forLoop(tb, 16, [&](OpBuilder &eb, Value e) {
    forLoop(eb, groups, [&](OpBuilder &gb, Value grp) {
      auto tile = [&](OpBuilder &kb, Value t0, int64_t w) {
        Value zero = kb.create<arith::ConstantOp>(
            loc, DenseElementsAttr::get(vec, 0.0f));
        SmallVector<Value> acc(w * nb, zero);
        SmallVector<Value> ts;
        for (int64_t p = 0; p < w; ++p)
          ts.push_back(kb.create<arith::AddIOp>(loc, t0, idx(kb, loc, p)));
        auto k = kb.create<scf::ForOp>(
            loc, idx(kb, loc, 0), idx(kb, loc, c), idx(kb, loc, 1), acc,
            [&](OpBuilder &cb2, Location l, Value ci, ValueRange iter) {
              SmallVector<Value> a(iter.begin(), iter.end());
              SmallVector<Value> wv;
              for (int64_t j = 0; j < nb; ++j)
                wv.push_back(cb2.create<vector::LoadOp>(
                    l, vec, u,
                    ValueRange{e, grp, ci, idx(cb2, l, j * kLanes)}));
              for (int64_t p = 0; p < w; ++p) {
                Value s =
                    cb2.create<memref::LoadOp>(l, vs, ValueRange{e, ts[p], ci});
                Value bs = cb2.create<vector::BroadcastOp>(l, vec, s);
                for (int64_t j = 0; j < nb; ++j)
                  a[p * nb + j] =
                      cb2.create<vector::FMAOp>(l, bs, wv[j], a[p * nb + j]);
              }
              cb2.create<scf::YieldOp>(l, a);
            });
        Value ch0 =
            kb.create<arith::MulIOp>(loc, grp, idx(kb, loc, nb * kLanes));
        for (int64_t p = 0; p < w; ++p)
          for (int64_t j = 0; j < nb; ++j)
            kb.create<vector::StoreOp>(
                loc, k.getResult(p * nb + j), ms,
                ValueRange{e, ts[p],
                           kb.create<arith::AddIOp>(
                               loc, ch0, idx(kb, loc, j * kLanes))});
      };
      auto loop = gb.create<scf::ForOp>(loc, idx(gb, loc, 0),
                                        idx(gb, loc, wide * width),
                                        idx(gb, loc, width));
      OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
      tile(lb, loop.getInductionVar(), width);
      if (wide < rowTiles) {
        auto rest = gb.create<scf::ForOp>(loc, idx(gb, loc, wide * width),
                                          idx(gb, loc, tiles),
                                          idx(gb, loc, width - 1));
        OpBuilder rb = OpBuilder::atBlockBegin(rest.getBody());
        tile(rb, rest.getInductionVar(), width - 1);
      }
    });
  });

  // Output transform Y = A^T M A, the bias, the epilogue, the store.
  forLoop(tb, mb, [&](OpBuilder &ob, Value blk) {
    Value bias =
        init->bias
            ? ob.create<vector::LoadOp>(loc, vec, init->bias,
                                        ValueRange{blk, idx(ob, loc, 0)})
                  .getResult()
            : ob.create<vector::BroadcastOp>(loc, vec, init->scalar)
                  .getResult();
    Value ch = ob.create<arith::MulIOp>(loc, blk, idx(ob, loc, kLanes));
    forLoop(ob, tiles, [&](OpBuilder &pb, Value t) {
      Value mv[4][4];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          mv[i][j] = pb.create<vector::LoadOp>(
              loc, vec, ms, ValueRange{idx(pb, loc, i * 4 + j), t, ch});
      Value s[2][4];
      for (int j = 0; j < 4; ++j) {
        s[0][j] = add(pb, add(pb, mv[0][j], mv[1][j]), mv[2][j]);
        s[1][j] = sub(pb, sub(pb, mv[1][j], mv[2][j]), mv[3][j]);
      }
      Value col0 = pb.create<arith::MulIOp>(loc, t, idx(pb, loc, 2));
      for (int i = 0; i < 2; ++i) {
        Value y[2] = {add(pb, add(pb, s[i][0], s[i][1]), s[i][2]),
                      sub(pb, sub(pb, s[i][1], s[i][2]), s[i][3])};
        Value row = pb.create<arith::AddIOp>(loc, row0, idx(pb, loc, i));
        for (int j = 0; j < 2; ++j) {
          Value v = add(pb, y[j], bias);
          SmallVector<Value> pos = {
              img, blk, row,
              pb.create<arith::AddIOp>(loc, col0, idx(pb, loc, j)),
              idx(pb, loc, 0)};
          if (epilogue)
            v = applyEpilogue(pb, loc, epilogue, out, v, pos, blk);
          pb.create<vector::StoreOp>(loc, v, dest, pos);
        }
      }
    });
  });
  eraseRewritten(g, init->op, epilogue, fused);
  return true;
}

} // namespace kiln::blocked
