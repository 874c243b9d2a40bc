//===- IntegerContractions.cpp - kiln-cpu-integer-contractions ------------===//
//
// 8-bit matmuls (u8 activations x s8 constant weights into i32, what
// kiln-decompose-ops makes of MatMulInteger, QLinearMatMul and quantized
// MatMuls) on AVX-512 VNNI: vpdpbusd multiplies four u8 by four s8 and adds
// the four products to an i32 lane, 64 multiply-adds per instruction where
// an f32 FMA does 16. Widened to i32 on the naive loops, the same product
// costs several times the float model.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "providers/Passes.h"
#include "providers/cpu/Vectorize.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"

#include <cstring>

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_CPUINTEGERCONTRACTIONS
#include "providers/Passes.h.inc"

namespace {

constexpr int64_t kLanes = 16;   // i32 lanes of a 512-bit register
constexpr int64_t kRows = 6;     // rows of A per register tile
constexpr int64_t kPanels = 4;   // 16-column panels per register tile
constexpr StringLiteral kVpdpbusd = "llvm.x86.avx512.vpdpbusd.512";

/// `v` through an extension of an i8 block argument: the argument and
/// whether the extension is unsigned.
std::optional<std::pair<Value, bool>> widened8(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def || !isa<arith::ExtUIOp, arith::ExtSIOp>(def) ||
      !isa<BlockArgument>(def->getOperand(0)) ||
      !def->getOperand(0).getType().isInteger(8))
    return std::nullopt;
  return std::make_pair(def->getOperand(0), isa<arith::ExtUIOp>(def));
}

/// True when the body is `yield(out + extui(a) * extsi(b))` into i32 (the
/// product's operands in either order).
bool isU8S8MulAdd(linalg::GenericOp g) {
  Block &body = g.getRegion().front();
  if (body.getNumArguments() != 3 || !body.getArgument(2).getType().isInteger(32))
    return false;
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddIOp>();
  if (!add)
    return false;
  Value acc = body.getArgument(2);
  Value other = add.getLhs() == acc ? add.getRhs() : add.getRhs() == acc ? add.getLhs() : Value();
  auto mul = other ? other.getDefiningOp<arith::MulIOp>() : arith::MulIOp();
  if (!mul)
    return false;
  auto x = widened8(mul.getLhs()), y = widened8(mul.getRhs());
  if (!x || !y)
    return false;
  if (x->first == body.getArgument(1))
    std::swap(x, y);
  return x->first == body.getArgument(0) && x->second && y->first == body.getArgument(1) &&
         !y->second;
}

/// The bytes of B when it is a constant global of static shape.
std::optional<SmallVector<int8_t>> constantBytes(Value v) {
  auto get = v.getDefiningOp<memref::GetGlobalOp>();
  if (!get)
    return std::nullopt;
  auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(get, get.getNameAttr());
  if (!global || !global.getConstant() || !global.getInitialValue() ||
      !global.getType().hasStaticShape() || !global.getType().getLayout().isIdentity())
    return std::nullopt;
  int64_t n = global.getType().getNumElements();
  SmallVector<int8_t> bytes(n);
  Attribute value = *global.getInitialValue();
  if (auto dense = dyn_cast<DenseIntElementsAttr>(value)) {
    int64_t i = 0;
    for (const APInt &x : dense.getValues<APInt>())
      bytes[i++] = int8_t(x.getSExtValue());
    return bytes;
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(value);
  AsmResourceBlob *blob = resource ? resource.getRawHandle().getBlob() : nullptr;
  if (!blob || int64_t(blob->getData().size()) != n)
    return std::nullopt;
  std::memcpy(bytes.data(), blob->getData().data(), n);
  return bytes;
}

/// B [K][N] as vpdpbusd reads it: panels of 16 columns, each k step four
/// k values of a column side by side, [N/16][K/4][16][4], zero-padded.
Value packedWeights(OpBuilder &b, Location loc, memref::GetGlobalOp get,
                    ArrayRef<int8_t> w, int64_t k, int64_t n) {
  int64_t panels = llvm::divideCeil(n, kLanes), steps = k / 4;
  auto type = MemRefType::get({panels, steps, 4 * kLanes}, b.getI8Type());
  std::string name = (get.getName() + "_vnni").str();
  auto module = get->getParentOfType<ModuleOp>();
  if (!module.lookupSymbol<memref::GlobalOp>(name)) {
    SmallVector<int8_t> packed(panels * steps * 4 * kLanes, 0);
    for (int64_t p = 0; p < panels; ++p)
      for (int64_t q = 0; q < steps; ++q)
        for (int64_t j = 0; j < kLanes && p * kLanes + j < n; ++j)
          for (int64_t t = 0; t < 4; ++t)
            packed[((p * steps + q) * kLanes + j) * 4 + t] = w[(4 * q + t) * n + p * kLanes + j];
    OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
    mb.create<memref::GlobalOp>(
        loc, name, mb.getStringAttr("private"), type,
        DenseElementsAttr::get(RankedTensorType::get(type.getShape(), b.getI8Type()),
                               ArrayRef<int8_t>(packed)),
        /*constant=*/true, mb.getI64IntegerAttr(64));
  }
  return b.create<memref::GetGlobalOp>(loc, type, name);
}

/// The operands of one 8-bit matmul, A and C as [M, K] and [M, N].
struct Kernel {
  Value a, c, packed;
  int64_t k, n;
};

/// C[m .. m+rows, panel p0 .. p0+panels] += A B: the accumulators start
/// from C and stay in registers over the k steps; the last panel of the
/// matrix keeps its lanes past N out of memory (`lastLanes`, 0 if whole).
void emitTile(OpBuilder &b, Location loc, const Kernel &kn, Value m, Value p0, int64_t rows,
              int64_t panels, int64_t lastLanes) {
  auto i32x16 = VectorType::get({kLanes}, b.getI32Type());
  auto idx = [&](int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v).getResult(); };
  auto add = [&](Value x, int64_t v) {
    return v ? b.create<arith::AddIOp>(loc, x, idx(v)).getResult() : x;
  };
  auto mul = [&](Value x, int64_t v) { return b.create<arith::MulIOp>(loc, x, idx(v)).getResult(); };
  Value mask, zero;
  if (lastLanes) {
    mask = b.create<vector::CreateMaskOp>(loc, VectorType::get({kLanes}, b.getI1Type()),
                                          ValueRange{idx(lastLanes)});
    zero = b.create<arith::ConstantOp>(loc, DenseElementsAttr::get(i32x16, int32_t(0)));
  }
  auto masked = [&](int64_t j) { return lastLanes && j == panels - 1; };
  SmallVector<Value> rowIdx, colIdx, init;
  for (int64_t r = 0; r < rows; ++r)
    rowIdx.push_back(add(m, r));
  for (int64_t j = 0; j < panels; ++j)
    colIdx.push_back(mul(add(p0, j), kLanes));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < panels; ++j)
      init.push_back(masked(j) ? b.create<vector::MaskedLoadOp>(loc, i32x16, kn.c,
                                                                ValueRange{rowIdx[r], colIdx[j]},
                                                                mask, zero)
                                     .getResult()
                               : b.create<vector::LoadOp>(loc, i32x16, kn.c,
                                                          ValueRange{rowIdx[r], colIdx[j]})
                                     .getResult());
  auto loop = b.create<scf::ForOp>(
      loc, idx(0), idx(kn.k / 4), idx(1), init,
      [&](OpBuilder &nb, Location l, Value q, ValueRange accs) {
        SmallVector<Value> bv, next;
        for (int64_t j = 0; j < panels; ++j) {
          Value p = j ? nb.create<arith::AddIOp>(l, p0, nb.create<arith::ConstantIndexOp>(l, j))
                      : p0;
          Value v = nb.create<vector::LoadOp>(l, VectorType::get({4 * kLanes}, nb.getI8Type()),
                                              kn.packed,
                                              ValueRange{p, q, nb.create<arith::ConstantIndexOp>(l, 0)});
          bv.push_back(nb.create<vector::BitCastOp>(l, i32x16, v));
        }
        Value k4 = nb.create<arith::MulIOp>(l, q, nb.create<arith::ConstantIndexOp>(l, 4));
        for (int64_t r = 0; r < rows; ++r) {
          // Four bytes of the row, broadcast as one i32 to every lane.
          Value a4 = nb.create<vector::LoadOp>(l, VectorType::get({4}, nb.getI8Type()), kn.a,
                                               ValueRange{rowIdx[r], k4});
          Value word = nb.create<vector::ExtractOp>(
              l, nb.create<vector::BitCastOp>(l, VectorType::get({1}, nb.getI32Type()), a4),
              ArrayRef<int64_t>{0});
          Value bcast = nb.create<vector::BroadcastOp>(l, i32x16, word);
          for (int64_t j = 0; j < panels; ++j)
            next.push_back(nb.create<LLVM::CallIntrinsicOp>(l, i32x16, kVpdpbusd,
                                                            ValueRange{accs[r * panels + j], bcast,
                                                                       bv[j]})
                               .getResult(0));
        }
        nb.create<scf::YieldOp>(l, next);
      });
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < panels; ++j) {
      Value acc = loop.getResult(r * panels + j);
      if (masked(j))
        b.create<vector::MaskedStoreOp>(loc, kn.c, ValueRange{rowIdx[r], colIdx[j]}, mask, acc);
      else
        b.create<vector::StoreOp>(loc, acc, kn.c, ValueRange{rowIdx[r], colIdx[j]});
    }
}

/// Every row of the panels p0 .. p0+panels: tiles of kRows rows, then
/// single rows.
void emitColumns(OpBuilder &b, Location loc, const Kernel &kn, Value rowsTotal, Value p0,
                 int64_t panels, int64_t lastLanes, int64_t staticRows) {
  auto idx = [&](int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v).getResult(); };
  int64_t rows = staticRows > 0 ? std::min(kRows, staticRows) : kRows;
  Value whole = b.create<arith::MulIOp>(
      loc, b.create<arith::DivUIOp>(loc, rowsTotal, idx(rows)), idx(rows));
  b.create<scf::ForOp>(loc, idx(0), whole, idx(rows), ValueRange{},
                       [&](OpBuilder &nb, Location l, Value m, ValueRange) {
                         emitTile(nb, l, kn, m, p0, rows, panels, lastLanes);
                         nb.create<scf::YieldOp>(l);
                       });
  if (staticRows > 0 && staticRows % rows == 0)
    return;
  b.create<scf::ForOp>(loc, whole, rowsTotal, idx(1), ValueRange{},
                       [&](OpBuilder &nb, Location l, Value m, ValueRange) {
                         emitTile(nb, l, kn, m, p0, 1, panels, lastLanes);
                         nb.create<scf::YieldOp>(l);
                       });
}

/// `v` [d0, ..., dr-1] as [d0 * ... * dr-2, dr-1] (identity layout).
Value asMatrix(OpBuilder &b, Location loc, Value v) {
  auto t = cast<MemRefType>(v.getType());
  if (t.getRank() == 2)
    return v;
  ReassociationIndices lead;
  for (int64_t i = 0; i + 1 < t.getRank(); ++i)
    lead.push_back(i);
  return b.create<memref::CollapseShapeOp>(
      loc, v, ArrayRef<ReassociationIndices>{lead, {t.getRank() - 1}});
}

/// Rewrites `g` when it is an 8-bit matmul the kernel takes.
bool rewrite(linalg::GenericOp g) {
  if (!g.hasPureBufferSemantics() || g->hasAttr("kiln.device") || g.getNumDpsInputs() != 2 ||
      g.getNumDpsInits() != 1 || !isU8S8MulAdd(g))
    return false;
  auto mm = vectorize::matchMatmul(g);
  if (!mm || mm->transA || mm->transB)
    return false;
  Value a = g.getDpsInputs()[0], bm = g.getDpsInputs()[1], c = g.getDpsInits()[0];
  auto at = cast<MemRefType>(a.getType()), ct = cast<MemRefType>(c.getType());
  auto bt = cast<MemRefType>(bm.getType());
  if (!at.getLayout().isIdentity() || !ct.getLayout().isIdentity() || bt.getRank() != 2)
    return false;
  // A [batch..., m, k], C [batch..., m, n] in loop order, B [k, n].
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  auto dims = [](AffineMap map) {
    SmallVector<unsigned> d;
    for (AffineExpr e : map.getResults())
      if (auto de = dyn_cast<AffineDimExpr>(e))
        d.push_back(de.getPosition());
    return d.size() == map.getNumResults() ? d : SmallVector<unsigned>();
  };
  SmallVector<unsigned> da = dims(maps[0]), db = dims(maps[1]), dc = dims(maps[2]);
  if (da.empty() || dc.size() != da.size() || db != SmallVector<unsigned>{mm->k, mm->n} ||
      da.back() != mm->k || dc.back() != mm->n || da[da.size() - 2] != mm->m ||
      !llvm::equal(ArrayRef<unsigned>(da).drop_back(), ArrayRef<unsigned>(dc).drop_back()))
    return false;
  int64_t k = bt.getDimSize(0), n = bt.getDimSize(1);
  if (ShapedType::isDynamic(k) || ShapedType::isDynamic(n) || k % 4 != 0)
    return false;
  auto get = bm.getDefiningOp<memref::GetGlobalOp>();
  std::optional<SmallVector<int8_t>> w = constantBytes(bm);
  if (!w)
    return false;
  OpBuilder b(g);
  Location loc = g.getLoc();
  Kernel kn{asMatrix(b, loc, a), asMatrix(b, loc, c), packedWeights(b, loc, get, *w, k, n), k, n};
  int64_t staticRows = cast<MemRefType>(kn.a.getType()).getDimSize(0);
  Value rowsTotal = b.create<memref::DimOp>(loc, kn.a, 0);
  int64_t panels = llvm::divideCeil(n, kLanes), lastLanes = n % kLanes;
  int64_t tile = std::min(kPanels, panels);
  // Whole column tiles of whole panels across threads, then the rest.
  int64_t tiles = (n / kLanes) / tile, rest = panels - tiles * tile;
  auto idx = [&](int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v).getResult(); };
  if (tiles > 0) {
    auto loop = b.create<scf::ForOp>(
        loc, idx(0), idx(tiles), idx(1), ValueRange{},
        [&](OpBuilder &nb, Location l, Value t, ValueRange) {
          Value p0 = nb.create<arith::MulIOp>(l, t, nb.create<arith::ConstantIndexOp>(l, tile));
          emitColumns(nb, l, kn, rowsTotal, p0, tile, 0, staticRows);
          nb.create<scf::YieldOp>(l);
        });
    // (Run-time rows count as 64 for the grain.)
    int64_t rows = staticRows > 0 ? staticRows : 64;
    vectorize::markParallel(loop, vectorize::kParallelMultiplyAdds, rows * k * tile * kLanes);
  }
  if (rest > 0)
    emitColumns(b, loc, kn, rowsTotal, idx(tiles * tile), rest, lastLanes, staticRows);
  g.erase();
  return true;
}

struct CpuIntegerContractionsPass
    : public impl::CpuIntegerContractionsBase<CpuIntegerContractionsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (!vnni)
      return;
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp g) { generics.push_back(g); });
    int64_t n = 0;
    for (linalg::GenericOp g : generics)
      n += rewrite(g);
    numKernels += n;
    // For `kiln compile --report`.
    if (n)
      getOperation()->setAttr("kiln.report.int8_kernels",
                              Builder(&getContext()).getI64IntegerAttr(n));
  }
};

} // namespace
} // namespace kiln
