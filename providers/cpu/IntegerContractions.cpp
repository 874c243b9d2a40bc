//===- IntegerContractions.cpp - kiln-cpu-integer-contractions ------------===//
//
// 8-bit matmuls (u8 activations x s8 constant weights into i32, what
// kiln-decompose-ops makes of MatMulInteger, QLinearMatMul and quantized
// MatMuls) on AVX-512 VNNI: vpdpbusd multiplies four u8 by four s8 and adds
// the four products to an i32 lane, 64 multiply-adds per instruction where
// an f32 FMA does 16. Widened to i32 on the naive loops, the same product
// costs several times the float model. ConvInteger's 2-D convs take the
// same register tile, the weights broadcast against patches packed at run
// time. With AMX-INT8 the same operands feed 16 x 64-byte tiles (a
// tdpbusd is 16,384 multiply-adds); without VNNI, AVX2's vpmaddwd takes
// the constant-B matmuls on operands widened to s16.
//
//===----------------------------------------------------------------------===//
#include "dialects/kiln/KilnDialect.h"
#include "passes/Passes.h"
#include "providers/Passes.h"
#include "providers/cpu/IntegerKernels.h"
#include "providers/cpu/Vectorize.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"

#include <cstring>
#include <functional>

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_CPUINTEGERCONTRACTIONS
#include "providers/Passes.h.inc"

namespace vectorize {

/// `v` through an extension of an i8 block argument: the argument and
/// whether the extension is unsigned.
static std::optional<std::pair<Value, bool>> widened8(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def || !isa<arith::ExtUIOp, arith::ExtSIOp>(def) ||
      !isa<BlockArgument>(def->getOperand(0)) ||
      !def->getOperand(0).getType().isInteger(8))
    return std::nullopt;
  return std::make_pair(def->getOperand(0), isa<arith::ExtUIOp>(def));
}

std::optional<std::pair<bool, bool>> eightBitMulAdd(linalg::GenericOp g) {
  Block &body = g.getRegion().front();
  if (body.getNumArguments() != 3 ||
      !body.getArgument(2).getType().isInteger(32))
    return std::nullopt;
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddIOp>();
  if (!add)
    return std::nullopt;
  Value acc = body.getArgument(2);
  Value other = add.getLhs() == acc   ? add.getRhs()
                : add.getRhs() == acc ? add.getLhs()
                                      : Value();
  auto mul = other ? other.getDefiningOp<arith::MulIOp>() : arith::MulIOp();
  if (!mul)
    return std::nullopt;
  auto x = widened8(mul.getLhs()), y = widened8(mul.getRhs());
  if (!x || !y)
    return std::nullopt;
  if (x->first == body.getArgument(1))
    std::swap(x, y);
  if (x->first != body.getArgument(0) || y->first != body.getArgument(1))
    return std::nullopt;
  return std::make_pair(x->second, y->second);
}

/// Whether the first op after `op` to read `buffer` is an 8-bit depthwise
/// conv, also through a copy of it (into a padded buffer).
static bool readByDepthwise(Operation *op, Value buffer) {
  Value root = rootOf(buffer);
  auto isRoot = [&](Value v) { return rootOf(v) == root; };
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode()) {
    if (auto copy = dyn_cast<memref::CopyOp>(next)) {
      if (isRoot(copy.getSource()))
        root = rootOf(copy.getTarget());
      else if (isRoot(copy.getTarget()))
        return false;
    } else if (auto reader = dyn_cast<linalg::GenericOp>(next)) {
      if (llvm::any_of(reader.getDpsInputs(), isRoot))
        return vectorize::isEightBitDepthwise(reader);
      if (llvm::any_of(reader.getDpsInits(), isRoot))
        return false;
    } else if (!isa<ViewLikeOpInterface>(next) &&
               llvm::any_of(next->getOperands(), isRoot)) {
      return false;
    }
  }
  return false;
}

/// The first op after `g` in its block that reads `c`, if the ops between
/// can run after it: the epilogue then runs in g's store, before them
/// (the graph order may put an independent op there: a downsample conv
/// between a block's first conv and its requantization). They may not
/// write what it reads nor touch what it writes.
static linalg::GenericOp nextReaderOf(linalg::GenericOp g, Value c) {
  Operation *next = g->getNextNode();
  while (next && !llvm::is_contained(next->getOperands(), c)) {
    if (!isa<memref::AllocOp, ProfileBeginOp, ProfileEndOp, arith::ConstantOp,
             ViewLikeOpInterface, linalg::LinalgOp, memref::CopyOp>(next))
      return {};
    next = next->getNextNode();
  }
  auto e = dyn_cast_or_null<linalg::GenericOp>(next);
  if (!e || e.getNumDpsInits() != 1)
    return {};
  Value out = rootOf(e.getDpsInits()[0]), cRoot = rootOf(c);
  SmallVector<Value> ins = llvm::map_to_vector(e.getDpsInputs(), rootOf);
  // (Nor touch C through a view made before g: C is never written now.)
  auto clashes = [&](ValueRange reads, ValueRange writes) {
    return llvm::any_of(reads,
                        [&](Value v) {
                          Value r = rootOf(v);
                          return r == out || r == cRoot;
                        }) ||
           llvm::any_of(writes, [&](Value v) {
             Value r = rootOf(v);
             return r == out || r == cRoot || llvm::is_contained(ins, r);
           });
  };
  for (Operation *op = g->getNextNode(); op != e; op = op->getNextNode()) {
    if (auto l = dyn_cast<linalg::LinalgOp>(op);
        l && clashes(l.getDpsInputs(), l.getDpsInits()))
      return {};
    if (auto copy = dyn_cast<memref::CopyOp>(op);
        copy && clashes(copy.getSource(), copy.getTarget()))
      return {};
  }
  return e;
}

std::optional<ConvEpilogue> matchConvEpilogue(linalg::GenericOp g, Value c) {
  linalg::GenericOp e = nextReaderOf(g, c);
  auto ct = cast<MemRefType>(c.getType());
  if (!e || e.getNumDpsInits() != 1 || e.hasIndexSemantics() ||
      e.getNumLoops() != 4 ||
      !llvm::all_of(e.getIteratorTypesArray(),
                    [](utils::IteratorType t) {
                      return t == utils::IteratorType::parallel;
                    }) ||
      !llvm::is_contained(e.getDpsInputs(), c))
    return std::nullopt;
  auto fullLike = [&](Value v, AffineMap map) {
    auto t = cast<MemRefType>(v.getType());
    return map.isIdentity() && t.getShape() == ct.getShape() &&
           t.getLayout().isIdentity();
  };
  Value out = e.getDpsInits()[0];
  if (!fullLike(out, e.getIndexingMapsArray().back()) ||
      !e.getRegion().front().getArguments().back().use_empty())
    return std::nullopt;
  ConvEpilogue ep{e, {}};
  for (OpOperand *o : e.getDpsInputOperands()) {
    AffineMap map = e.getMatchingIndexingMap(o);
    if (o->get() == c) {
      if (!map.isIdentity())
        return std::nullopt;
      ep.kinds.push_back(ConvEpilogue::Acc);
      continue;
    }
    if (fullLike(o->get(), map)) {
      ep.kinds.push_back(ConvEpilogue::Full);
      continue;
    }
    // One value per channel: results of d0 (the image), d1 or 0 only.
    for (AffineExpr r : map.getResults()) {
      auto d = dyn_cast<AffineDimExpr>(r);
      auto k = dyn_cast<AffineConstantExpr>(r);
      if (!(d && d.getPosition() < 2) && !(k && k.getValue() == 0))
        return std::nullopt;
    }
    ep.kinds.push_back(ConvEpilogue::PerChannel);
  }
  if (!isScalarBodyBefore(e.getRegion().front(), g))
    return std::nullopt;
  // Nothing else reads C (it is never written now), and every buffer the
  // epilogue uses exists where the conv stores.
  // (C starts as zeros: its users before g set it so.)
  for (Operation *user : c.getUsers())
    if (user != g && user != e && !isa<memref::DeallocOp>(user) &&
        !(user->getBlock() == g->getBlock() && user->isBeforeInBlock(g)))
      return std::nullopt;
  for (Value v : e->getOperands())
    if (Operation *def = v.getDefiningOp();
        def && def->getBlock() == g->getBlock() && !def->isBeforeInBlock(g) &&
        !(isa<memref::AllocOp>(def) && def->getNumOperands() == 0))
      return std::nullopt;
  for (Value v : e->getOperands())
    if (Operation *def = v.getDefiningOp();
        def && def->getBlock() == g->getBlock() && !def->isBeforeInBlock(g))
      def->moveBefore(g);
  return ep;
}

/// Whether `fill` writes 0 (an integer 0 or f32 +0.0) into all of `c`.
static bool isZeroFill(linalg::FillOp fill, Value c) {
  if (!fill || fill.getOutputs().size() != 1 || fill.getOutputs()[0] != c)
    return false;
  Value v = fill.getInputs()[0];
  return matchPattern(v, m_Zero()) || matchPattern(v, m_PosZeroFloat());
}

/// Whether `buf` holds zeros when `at` runs: a zero fill writes it before,
/// and before `at` nothing else but copies out of it uses it (what comes
/// after does not matter).
static bool zeroAt(Value buf, Operation *at) {
  bool zeroed = false;
  Block *block = at->getBlock();
  for (Operation *user : buf.getUsers()) {
    Operation *op = block->findAncestorOpInBlock(*user);
    if (!op)
      return false;
    if (op == at || at->isBeforeInBlock(op))
      continue;
    if (auto fill = dyn_cast<linalg::FillOp>(user);
        fill && isZeroFill(fill, buf))
      zeroed = true;
    else if (auto copy = dyn_cast<memref::CopyOp>(user);
             !copy || copy.getSource() != buf)
      return false;
  }
  return zeroed;
}

std::optional<ZeroInit> zeroInitBefore(linalg::GenericOp g, Value c) {
  // (Past the profiler's kernel markers.)
  Operation *prev = g->getPrevNode();
  while (prev && isa<ProfileBeginOp, ProfileEndOp>(prev))
    prev = prev->getPrevNode();
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(prev);
      fill && isZeroFill(fill, c))
    return ZeroInit{prev};
  auto copy = dyn_cast_or_null<memref::CopyOp>(prev);
  if (copy && copy.getTarget() == c &&
      copy.getSource().getType() == c.getType() &&
      copy.getSource().getDefiningOp<memref::AllocOp>() &&
      zeroAt(copy.getSource(), copy))
    return ZeroInit{prev};
  if (c.getDefiningOp<memref::AllocOp>() && zeroAt(c, g))
    return ZeroInit{};
  return std::nullopt;
}

namespace {

/// The integral f32 value of constant `v`, if it is one (below 2^24).
std::optional<double> integralConstant(Value v) {
  auto c = v.getDefiningOp<arith::ConstantOp>();
  auto f = c ? dyn_cast<FloatAttr>(c.getValue()) : FloatAttr();
  if (!f || !f.getType().isF32())
    return std::nullopt;
  double d = f.getValueAsDouble();
  if (d != std::nearbyint(d) || std::abs(d) >= double(1 << 24))
    return std::nullopt;
  return d;
}

/// The integral constant operand of a two-operand op (either order), the
/// other operand in `other`.
std::optional<double> constantOperand(Operation *op, Value &other) {
  for (unsigned i = 0; op && op->getNumOperands() == 2 && i < 2; ++i)
    if (std::optional<double> d = integralConstant(op->getOperand(i))) {
      other = op->getOperand(1 - i);
      return d;
    }
  return std::nullopt;
}

/// A quantize's rounding and clamp, min(max(roundeven(x) + z, lo), hi) in
/// f32, z, lo <= hi integral constants (min and max either kind, the
/// constants either side).
struct ClampedRound {
  math::RoundEvenOp round;
  arith::AddFOp add;
  Operation *max, *min;
  Value maxed, shifted; // the min's and the max's other operands
  double z, lo, hi;
};
std::optional<ClampedRound> matchClampedRound(Value v) {
  ClampedRound c;
  c.min = v.getDefiningOp();
  if (!isa_and_nonnull<arith::MinimumFOp, arith::MinNumFOp>(c.min))
    return std::nullopt;
  std::optional<double> hi = constantOperand(c.min, c.maxed);
  c.max = hi ? c.maxed.getDefiningOp() : nullptr;
  if (!isa_and_nonnull<arith::MaximumFOp, arith::MaxNumFOp>(c.max))
    return std::nullopt;
  std::optional<double> lo = constantOperand(c.max, c.shifted);
  c.add = lo ? c.shifted.getDefiningOp<arith::AddFOp>() : arith::AddFOp();
  Value rounded;
  std::optional<double> z =
      c.add ? constantOperand(c.add, rounded) : std::nullopt;
  c.round =
      z ? rounded.getDefiningOp<math::RoundEvenOp>() : math::RoundEvenOp();
  if (!c.round || *lo > *hi)
    return std::nullopt;
  c.z = *z;
  c.lo = *lo;
  c.hi = *hi;
  return c;
}

/// A requantization's end, fptosi(min(max(roundeven(x) + z, lo), hi)) to
/// i32 (z, lo, hi integral constants), on 16 lanes of f32 as
/// cvtps2dq(min(max(x, lo - z), hi - z)) + z, rounding to nearest even:
/// equal (roundeven is monotonic and keeps integers, so clamping before it
/// at integral bounds is clamping after), one op less of nine in an 8-bit
/// conv's store. Returns false where `op` is not such an fptosi.
bool widenRequantize(OpBuilder &b, Operation &op, IRMapping &map) {
  using int8::kLanes;
  auto cvt = dyn_cast<arith::FPToSIOp>(op);
  if (!cvt || !cvt.getType().isInteger(32))
    return false;
  std::optional<ClampedRound> c = matchClampedRound(cvt.getIn());
  if (!c)
    return false;
  Value x = map.lookupOrNull(c->round.getOperand());
  auto vt = x ? dyn_cast<VectorType>(x.getType()) : VectorType();
  if (!vt || vt.getShape() != ArrayRef<int64_t>{kLanes} ||
      !vt.getElementType().isF32())
    return false;
  Location loc = cvt.getLoc();
  auto splat = [&](Type t, Attribute a) -> Value {
    return b.create<arith::ConstantOp>(
        loc, DenseElementsAttr::get(VectorType::get({kLanes}, t), a));
  };
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  // (No NaN reaches a conversion to integers, and a zero's sign is lost
  // in it: plain vmaxps and vminps, also where a bound is 0.)
  auto fm = arith::FastMathFlags::nnan | arith::FastMathFlags::nsz;
  Value clamped = b.create<arith::MinimumFOp>(
      loc,
      b.create<arith::MaximumFOp>(
          loc, x, splat(f32, b.getF32FloatAttr(c->lo - c->z)), fm),
      splat(f32, b.getF32FloatAttr(c->hi - c->z)), fm);
  // _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC.
  Value r =
      b.create<LLVM::CallIntrinsicOp>(
           loc, VectorType::get({kLanes}, i32),
           "llvm.x86.avx512.mask.cvtps2dq.512",
           ValueRange{clamped, splat(i32, b.getI32IntegerAttr(0)),
                      b.create<arith::ConstantOp>(loc, b.getI16IntegerAttr(-1)),
                      b.create<arith::ConstantOp>(loc, b.getI32IntegerAttr(8))})
          .getResult(0);
  map.map(cvt.getResult(),
          b.create<arith::AddIOp>(
              loc, r, splat(i32, b.getI32IntegerAttr(int32_t(c->z)))));
  return true;
}

} // namespace

/// Whether a linalg body yields integers only (the sign of a float zero
/// then reaches no result).
static bool yieldsIntegers(Block &body) {
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  return yield && llvm::all_of(yield.getOperandTypes(),
                               [](Type t) { return isa<IntegerType>(t); });
}

/// Marks the float max and min ops of an epilogue whose results are all
/// integers `nsz`: the sign of a zero they pick cannot reach an integer
/// through the ops allowed here (no divisor computed in the body, no
/// comparison), and without it a max against +0 (a quantize's clamp at
/// its zero point 0) is one vmaxps, not three (the fix-up of -0).
static void maxMinWithoutSignedZeros(Block &body) {
  if (!yieldsIntegers(body))
    return;
  for (Operation &op : body.without_terminator()) {
    if (!isa<arith::SIToFPOp, arith::UIToFPOp, arith::FPToSIOp, arith::FPToUIOp,
             arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
             arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
             arith::MinNumFOp, math::RoundEvenOp, arith::ConstantOp,
             arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::ExtSIOp,
             arith::ExtUIOp, arith::TruncIOp, arith::MaxSIOp, arith::MinSIOp,
             arith::MaxUIOp, arith::MinUIOp>(op))
      return;
    if (auto div = dyn_cast<arith::DivFOp>(op);
        div && div.getRhs().getDefiningOp() &&
        div.getRhs().getDefiningOp()->getBlock() == &body &&
        !isa<arith::ConstantOp>(div.getRhs().getDefiningOp()))
      return;
  }
  for (Operation &op : body.without_terminator())
    if (auto fm = dyn_cast<arith::ArithFastMathInterface>(op);
        fm && isa<arith::MaximumFOp, arith::MinimumFOp>(op))
      op.setAttr(fm.getFastMathAttrName(),
                 arith::FastMathFlagsAttr::get(
                     op.getContext(), fm.getFastMathFlagsAttr().getValue() |
                                          arith::FastMathFlags::nsz));
}

/// A quantize and dequantize in the middle of an epilogue (a conv's
/// output requantized before a residual add, as QDQ models have it),
/// min(max(roundeven(x) + z, lo), hi) - z, as min(max(roundeven(x),
/// lo - z), hi - z): equal in f32 for bounds and zero points of at most
/// 2^16 (roundeven(x) is integral: adding z is exact below 2^24, and above
/// it the clamp gives the same bound), two ops fewer of about 25 in
/// resnet50's residual stores. A rounded -0 is no longer made +0 by the
/// add: where the epilogue yields floats, + 0.0 makes it so (one op fewer).
static void foldRequantizeShift(Block &body) {
  bool ints = yieldsIntegers(body);
  SmallVector<arith::SubFOp> subs;
  for (Operation &op : body.without_terminator())
    if (auto sub = dyn_cast<arith::SubFOp>(op))
      subs.push_back(sub);
  constexpr double kMost = 1 << 16;
  for (arith::SubFOp sub : subs) {
    std::optional<double> z = integralConstant(sub.getRhs());
    std::optional<ClampedRound> c =
        z ? matchClampedRound(sub.getLhs()) : std::nullopt;
    if (!c || c->z != *z || !c->min->hasOneUse() || !c->max->hasOneUse() ||
        !c->add->hasOneUse() || std::abs(c->z) > kMost ||
        std::abs(c->lo) > kMost || std::abs(c->hi) > kMost)
      continue;
    OpBuilder b(sub);
    Location loc = sub.getLoc();
    auto constant = [&](double v) -> Value {
      return b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(float(v)));
    };
    // The clamp's ops cloned onto the rounded value and shifted bounds.
    IRMapping map;
    map.map(c->add.getResult(), c->round.getResult());
    map.map(c->max->getOperand(c->max->getOperand(0) == c->shifted ? 1 : 0),
            constant(c->lo - c->z));
    map.map(c->min->getOperand(c->min->getOperand(0) == c->maxed ? 1 : 0),
            constant(c->hi - c->z));
    b.clone(*c->max, map);
    Value clamped = b.clone(*c->min, map)->getResult(0);
    if (!ints)
      clamped = b.create<arith::AddFOp>(loc, clamped, constant(0.0));
    sub.replaceAllUsesWith(clamped);
    sub.erase();
    c->min->erase();
    c->max->erase();
    c->add.erase();
  }
}

Value convEpilogueValue(OpBuilder &b, const ConvEpilogue &ep, Value acc,
                        Value image, Value channel,
                        function_ref<Value(unsigned, Type)> full) {
  linalg::GenericOp e = ep.op;
  maxMinWithoutSignedZeros(e.getRegion().front());
  foldRequantizeShift(e.getRegion().front());
  Location loc = e.getLoc();
  auto vt = dyn_cast<VectorType>(acc.getType());
  Block &body = e.getRegion().front();
  SmallVector<AffineMap> maps = e.getIndexingMapsArray();
  IRMapping map;
  for (unsigned i = 0; i < e.getNumDpsInputs(); ++i) {
    Value v;
    switch (ep.kinds[i]) {
    case ConvEpilogue::Acc:
      v = acc;
      break;
    case ConvEpilogue::Full:
      v = full(i, body.getArgument(i).getType());
      break;
    case ConvEpilogue::PerChannel: {
      SmallVector<Value> at;
      for (AffineExpr r : maps[i].getResults()) {
        auto d = dyn_cast<AffineDimExpr>(r);
        at.push_back(!d ? b.create<arith::ConstantIndexOp>(loc, 0).getResult()
                     : d.getPosition() == 0 ? image
                                            : channel);
      }
      v = b.create<memref::LoadOp>(loc, e.getDpsInputs()[i], at);
      break;
    }
    }
    map.map(body.getArgument(i), v);
  }
  // (On AVX-512 only: 16 lanes of f32 elsewhere are two registers.)
  auto bits = e->getParentOfType<ModuleOp>()->getAttrOfType<IntegerAttr>(
      kVectorBitsAttr);
  bool avx512 = bits && bits.getInt() >= 512;
  ArrayRef<int64_t> shape = vt ? vt.getShape() : ArrayRef<int64_t>{};
  if (!avx512)
    return widenBody(b, loc, body, map, shape);
  return widenBody(b, loc, body, map, shape, widenRequantize);
}

} // namespace vectorize

namespace int8 {

/// True when the body is `yield(out + extui(a) * extsi(b))` into i32 (the
/// product's operands in either order).
bool isU8S8MulAdd(linalg::GenericOp g) {
  auto mulAdd = vectorize::eightBitMulAdd(g);
  return mulAdd && mulAdd->first && !mulAdd->second;
}

/// The bytes of B when it is a constant global of static shape.
std::optional<SmallVector<int8_t>> constantBytes(Value v) {
  auto get = v.getDefiningOp<memref::GetGlobalOp>();
  if (!get)
    return std::nullopt;
  auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
      get, get.getNameAttr());
  if (!global || !global.getConstant() || !global.getInitialValue() ||
      !global.getType().hasStaticShape() ||
      !global.getType().getLayout().isIdentity())
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
  AsmResourceBlob *blob =
      resource ? resource.getRawHandle().getBlob() : nullptr;
  if (!blob || int64_t(blob->getData().size()) != n)
    return std::nullopt;
  std::memcpy(bytes.data(), blob->getData().data(), n);
  return bytes;
}

} // namespace int8

using namespace int8;
using vectorize::ZeroInit;
using vectorize::zeroInitBefore;

Value vectorize::floatWeights(OpBuilder &b, Location loc, Value w,
                              bool isUnsigned) {
  std::optional<SmallVector<int8_t>> bytes = constantBytes(w);
  if (!bytes)
    return {};
  auto get = w.getDefiningOp<memref::GetGlobalOp>();
  auto type = MemRefType::get(cast<MemRefType>(w.getType()).getShape(),
                              b.getF32Type());
  std::string name = (get.getName() + (isUnsigned ? "_u8_f32" : "_f32")).str();
  return vectorize::derivedGlobal(
      b, loc, get->getParentOfType<ModuleOp>(), name, type,
      [&] {
        SmallVector<float> values;
        for (int8_t v : *bytes)
          values.push_back(isUnsigned ? float(uint8_t(v)) : float(v));
        return DenseElementsAttr::get(
            RankedTensorType::get(type.getShape(), b.getF32Type()),
            ArrayRef<float>(values));
      },
      b.getI64IntegerAttr(64));
}

namespace int8 {

/// `v` (identity layout) as a row-major [rows, cols] at element `offset`
/// (a reinterpret_cast: loads through a collapse_shape would be folded into
/// loads of the source, each index delinearized with divisions).
Value rowMajor(OpBuilder &b, Location loc, Value v, OpFoldResult rows,
               int64_t cols, OpFoldResult offset) {
  auto t = cast<MemRefType>(v.getType());
  std::optional<int64_t> r = getConstantIntValue(rows),
                         o = getConstantIntValue(offset);
  auto type = MemRefType::get(
      {r ? *r : ShapedType::kDynamic, cols}, t.getElementType(),
      StridedLayoutAttr::get(b.getContext(), o ? *o : ShapedType::kDynamic,
                             {cols, 1}));
  return b.create<memref::ReinterpretCastOp>(
      loc, type, v, offset, ArrayRef<OpFoldResult>{rows, b.getIndexAttr(cols)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(cols), b.getIndexAttr(1)});
}

/// Four vectors of 16 bytes (k values t = 0..3 of 16 columns) as one step
/// of a panel, column j's four bytes side by side: [16][4]. One byte
/// permutation of the four concatenated (vpermb on AVX-512 VBMI).
Value interleaveSteps(OpBuilder &b, Location loc, ArrayRef<Value> rows) {
  auto concat = [&](Value x, Value y) {
    int64_t n = cast<VectorType>(x.getType()).getNumElements();
    SmallVector<int64_t> all;
    for (int64_t j = 0; j < 2 * n; ++j)
      all.push_back(j);
    return b.create<vector::ShuffleOp>(loc, x, y, all).getResult();
  };
  Value four = concat(concat(rows[0], rows[1]), concat(rows[2], rows[3]));
  SmallVector<int64_t> interleave;
  for (int64_t j = 0; j < kLanes; ++j)
    for (int64_t t = 0; t < 4; ++t)
      interleave.push_back(t * kLanes + j);
  return b.create<vector::ShuffleOp>(loc, four, four, interleave);
}

void emitIfElse(OpBuilder &b, Location loc, Value cond,
                function_ref<void(OpBuilder &, Location, bool)> body) {
  b.create<scf::IfOp>(
      loc, cond,
      [&](OpBuilder &tb, Location tl) {
        body(tb, tl, true);
        tb.create<scf::YieldOp>(tl);
      },
      [&](OpBuilder &eb, Location el) {
        body(eb, el, false);
        eb.create<scf::YieldOp>(el);
      });
}

/// A constant global of i32 `values`, named `name`, and its get_global.
Value i32Table(OpBuilder &b, Location loc, ModuleOp module, StringRef name,
               ArrayRef<int32_t> values) {
  auto type = MemRefType::get({int64_t(values.size())}, b.getI32Type());
  return vectorize::derivedGlobal(
      b, loc, module, name, type,
      [&] {
        return DenseElementsAttr::get(
            RankedTensorType::get(type.getShape(), b.getI32Type()), values);
      },
      b.getI64IntegerAttr(64));
}

} // namespace int8

namespace {

/// `v` [d0, ..., dr-1] as [d0 * ... * dr-2, dr-1] (identity layout).
Value asMatrix(OpBuilder &b, Location loc, Value v) {
  auto t = cast<MemRefType>(v.getType());
  if (t.getRank() == 2)
    return v;
  OpFoldResult rows = b.getIndexAttr(1);
  for (int64_t i = 0; i + 1 < t.getRank(); ++i) {
    OpFoldResult d =
        t.isDynamicDim(i)
            ? OpFoldResult(b.create<memref::DimOp>(loc, v, i).getResult())
            : OpFoldResult(b.getIndexAttr(t.getDimSize(i)));
    rows = affine::makeComposedFoldedAffineApply(
        b, loc, b.getAffineSymbolExpr(0) * b.getAffineSymbolExpr(1), {rows, d});
  }
  return rowMajor(b, loc, v, rows, t.getShape().back(), b.getIndexAttr(0));
}

/// A host u8 x s8 -> i32 matmul generic on buffers, neither operand
/// transposed: its loops.
std::optional<vectorize::MatmulMatch> matchU8S8Matmul(linalg::GenericOp g) {
  if (!g.hasPureBufferSemantics() || g->hasAttr("kiln.device") ||
      g.getNumDpsInputs() != 2 || g.getNumDpsInits() != 1 || !isU8S8MulAdd(g))
    return std::nullopt;
  auto mm = vectorize::matchMatmul(g);
  if (!mm || mm->transA || mm->transB)
    return std::nullopt;
  return mm;
}

/// The loops `map`'s results are, in order; empty if one is not a loop.
SmallVector<unsigned> loopDims(AffineMap map) {
  SmallVector<unsigned> d;
  for (AffineExpr e : map.getResults())
    if (auto de = dyn_cast<AffineDimExpr>(e))
      d.push_back(de.getPosition());
  return d.size() == map.getNumResults() ? d : SmallVector<unsigned>();
}

/// Rewrites `g` when it is an 8-bit matmul of two run-time operands
/// (attention's products in a quantized transformer): A [batch..., M, K]
/// u8, B [batch..., K, N] s8 (or one B [K, N] for all), C [batch..., M, N],
/// static. Per batch, B is packed into thread scratch as the constant
/// weights are at compile time (4 rows of 16 columns a step, interleaved),
/// then the same register tiles run over it; threads take batches.
bool rewriteRuntimeB(linalg::GenericOp g, AmxTiles &amx) {
  auto mm = matchU8S8Matmul(g);
  if (!mm)
    return false;
  Value a = g.getDpsInputs()[0], bm = g.getDpsInputs()[1],
        c = g.getDpsInits()[0];
  auto at = cast<MemRefType>(a.getType()), ct = cast<MemRefType>(c.getType());
  auto bt = cast<MemRefType>(bm.getType());
  if (!at.hasStaticShape() || !bt.hasStaticShape() || !ct.hasStaticShape() ||
      !at.getLayout().isIdentity() || !bt.getLayout().isIdentity() ||
      !ct.getLayout().isIdentity() || constantBytes(bm))
    return false;
  // Every operand indexes its own dims in loop order: batch..., then the
  // matrix dims (B without batch dims is shared).
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  SmallVector<unsigned> da = loopDims(maps[0]), db = loopDims(maps[1]),
                        dc = loopDims(maps[2]);
  if (da.size() < 2 || dc.size() != da.size() || db.size() < 2 ||
      da.back() != mm->k || da[da.size() - 2] != mm->m || dc.back() != mm->n ||
      dc[dc.size() - 2] != mm->m || db.back() != mm->n ||
      db[db.size() - 2] != mm->k ||
      !llvm::equal(ArrayRef<unsigned>(da).drop_back(2),
                   ArrayRef<unsigned>(dc).drop_back(2)) ||
      (db.size() > 2 && (db.size() != da.size() ||
                         !llvm::equal(ArrayRef<unsigned>(db).drop_back(2),
                                      ArrayRef<unsigned>(da).drop_back(2)))))
    return false;
  int64_t m = at.getDimSize(at.getRank() - 2), k = at.getShape().back(),
          n = ct.getShape().back();
  int64_t batch = at.getNumElements() / (m * k);
  bool sharedB = bt.getRank() == 2;
  if (k % 4 != 0 || m * k * n * batch >= (int64_t(1) << 40))
    return false;
  std::optional<ZeroInit> zeroInit = zeroInitBefore(g, c);
  // (AMX tiles read whole 64-byte chunks of A's rows.)
  bool useAmx =
      amx.use(zeroInit && k % (4 * kAmxSteps) == 0 && m >= kAmxTileRows);
  OpBuilder b(g);
  Location loc = g.getLoc();
  auto idx = [&](OpBuilder &ib, Location l, int64_t v) {
    return ib.create<arith::ConstantIndexOp>(l, v).getResult();
  };
  int64_t panels = llvm::divideCeil(n, kLanes), steps = k / 4,
          lastLanes = n % kLanes;
  Value a2 =
      rowMajor(b, loc, a, b.getIndexAttr(batch * m), k, b.getIndexAttr(0));
  Value c2 =
      rowMajor(b, loc, c, b.getIndexAttr(batch * m), n, b.getIndexAttr(0));
  Value b2 = rowMajor(b, loc, bm, b.getIndexAttr((sharedB ? 1 : batch) * k), n,
                      b.getIndexAttr(0));
  auto i8x16 = VectorType::get({kLanes}, b.getI8Type());
  auto loop = b.create<scf::ForOp>(
      loc, idx(b, loc, 0), idx(b, loc, batch), idx(b, loc, 1), ValueRange{},
      [&](OpBuilder &ib, Location l, Value bi, ValueRange) {
        Value scratch = ib.create<memref::AllocOp>(
            l, MemRefType::get({panels, steps, 4 * kLanes}, ib.getI8Type()),
            ib.getI64IntegerAttr(64));
        Value firstRow =
            sharedB
                ? idx(ib, l, 0)
                : ib.create<arith::MulIOp>(l, bi, idx(ib, l, k)).getResult();
        Value mask = lastLanes
                         ? ib.create<vector::CreateMaskOp>(
                                 l, VectorType::get({kLanes}, ib.getI1Type()),
                                 ValueRange{idx(ib, l, lastLanes)})
                               .getResult()
                         : Value();
        Value zeros = ib.create<arith::ConstantOp>(
            l, DenseElementsAttr::get(i8x16, ib.getI8IntegerAttr(0)));
        // B's panels: a step's 4 rows of 16 columns each, interleaved.
        for (int64_t p = 0; p < panels; ++p)
          ib.create<scf::ForOp>(
              l, idx(ib, l, 0), idx(ib, l, steps), idx(ib, l, 1), ValueRange{},
              [&](OpBuilder &pb, Location pl, Value q, ValueRange) {
                SmallVector<Value> rows;
                for (int64_t t = 0; t < 4; ++t) {
                  Value r = pb.create<arith::AddIOp>(
                      pl, firstRow,
                      pb.create<arith::AddIOp>(
                          pl, pb.create<arith::MulIOp>(pl, q, idx(pb, pl, 4)),
                          idx(pb, pl, t)));
                  Value col = idx(pb, pl, p * kLanes);
                  bool part = lastLanes && p == panels - 1;
                  rows.push_back(part ? pb.create<vector::MaskedLoadOp>(
                                              pl, i8x16, b2, ValueRange{r, col},
                                              mask, zeros)
                                            .getResult()
                                      : pb.create<vector::LoadOp>(
                                              pl, i8x16, b2, ValueRange{r, col})
                                            .getResult());
                }
                pb.create<vector::StoreOp>(
                    pl, interleaveSteps(pb, pl, rows), scratch,
                    ValueRange{idx(pb, pl, p), q, idx(pb, pl, 0)});
                pb.create<scf::YieldOp>(pl);
              });
        Kernel kn{a2, scratch, c2, steps, true, bool(zeroInit)};
        kn.amx = useAmx;
        kn.zeroTags = &amx.zeroTags;
        Value rowStart = ib.create<arith::MulIOp>(l, bi, idx(ib, l, m));
        Value rowEnd = ib.create<arith::AddIOp>(l, rowStart, idx(ib, l, m));
        for (int64_t p0 = 0; p0 < panels; p0 += kPanels) {
          int64_t tile = std::min(kPanels, panels - p0);
          emitColumns(ib, l, kn, rowStart, rowEnd, idx(ib, l, p0),
                      idx(ib, l, p0), tile, p0 + tile == panels ? lastLanes : 0,
                      m);
        }
        ib.create<scf::YieldOp>(l);
      });
  vectorize::markParallel(loop, vectorize::kParallelMultiplyAdds, m * n * k);
  g.erase();
  if (zeroInit && zeroInit->erase)
    zeroInit->erase->erase();
  return true;
}

/// Rewrites `g` when it is an 8-bit matmul the kernel takes.
bool rewrite(linalg::GenericOp g, AmxTiles &amx, bool avx2) {
  auto mm = matchU8S8Matmul(g);
  if (!mm)
    return false;
  Value a = g.getDpsInputs()[0], bm = g.getDpsInputs()[1],
        c = g.getDpsInits()[0];
  auto at = cast<MemRefType>(a.getType()), ct = cast<MemRefType>(c.getType());
  auto bt = cast<MemRefType>(bm.getType());
  if (!at.getLayout().isIdentity() || !ct.getLayout().isIdentity() ||
      bt.getRank() != 2)
    return false;
  // A [batch..., m, k], C [batch..., m, n] in loop order, B [k, n].
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  SmallVector<unsigned> da = loopDims(maps[0]), db = loopDims(maps[1]),
                        dc = loopDims(maps[2]);
  if (da.empty() || dc.size() != da.size() ||
      db != SmallVector<unsigned>{mm->k, mm->n} || da.back() != mm->k ||
      dc.back() != mm->n || da[da.size() - 2] != mm->m ||
      !llvm::equal(ArrayRef<unsigned>(da).drop_back(),
                   ArrayRef<unsigned>(dc).drop_back()))
    return false;
  int64_t k = bt.getDimSize(0), n = bt.getDimSize(1);
  if (ShapedType::isDynamic(k) || ShapedType::isDynamic(n) ||
      (!avx2 && k % 4 != 0))
    return false;
  auto get = bm.getDefiningOp<memref::GetGlobalOp>();
  std::optional<SmallVector<int8_t>> w = constantBytes(bm);
  if (!w)
    return false;
  std::optional<ZeroInit> zeroInit = zeroInitBefore(g, c);
  OpBuilder b(g);
  Location loc = g.getLoc();
  Value a2 = asMatrix(b, loc, a);
  Kernel kn{a2,
            avx2 ? packedWeights16(b, loc, get, *w, k, n)
                 : packedWeights(b, loc, get, *w, k, n),
            asMatrix(b, loc, c),
            avx2 ? int64_t(llvm::divideCeil(k, 2)) : k / 4,
            true,
            bool(zeroInit)};
  kn.avx2 = avx2;
  int64_t staticRows = cast<MemRefType>(a2.getType()).getDimSize(0);
  // (Fewer than 16 known rows would all run on the vector kernel.)
  kn.amx = !avx2 && amx.use(zeroInit && k % (4 * kAmxSteps) == 0 &&
                            (staticRows < 0 || staticRows >= kAmxTileRows));
  kn.zeroTags = &amx.zeroTags;
  Value rowsTotal = b.create<memref::DimOp>(loc, a2, 0);
  // (Run-time rows count as 64 for the grain.)
  int64_t rows = staticRows > 0 ? staticRows : 64;
  int64_t lanes = avx2 ? kLanes8 : kLanes,
          maxPanels = avx2 ? kPanels8 : kPanels;
  forEachColumnTile(
      b, loc, n, rows * k * maxPanels * lanes,
      [&](OpBuilder &nb, Location l, Value p0, int64_t panels,
          int64_t lastLanes) {
        emitColumns(nb, l, kn, nb.create<arith::ConstantIndexOp>(l, 0),
                    rowsTotal, p0, p0, panels, lastLanes, staticRows);
      },
      lanes, maxPanels);
  g.erase();
  if (zeroInit && zeroInit->erase)
    zeroInit->erase->erase();
  return true;
}

} // namespace

namespace int8 {

/// The store hook applying `ep` for image `image`, C viewed per image as
/// [channels, positions] (`rows`, `positions`).
StoreHook convEpilogueStore(OpBuilder &b, Location loc,
                            const vectorize::ConvEpilogue &ep, Value image,
                            int64_t rows, int64_t positions) {
  using vectorize::ConvEpilogue;
  linalg::GenericOp e = ep.op;
  Value offset = b.create<arith::MulIOp>(
      loc, image, b.create<arith::ConstantIndexOp>(loc, rows * positions));
  auto view = [&](Value v) {
    return rowMajor(b, loc, v, b.getIndexAttr(rows), positions, offset);
  };
  SmallVector<Value> views;
  for (auto [o, kind] : llvm::zip(e.getDpsInputs(), ep.kinds))
    views.push_back(kind == ConvEpilogue::Full ? view(o) : Value());
  Value out = view(e.getDpsInits()[0]);
  // (`acc` a vector of 16 positions of one channel, or one value.)
  return [=](OpBuilder &sb, Location sl, Value acc, Value row, Value col,
             Value mask) {
    auto vt = dyn_cast<VectorType>(acc.getType());
    auto full = [&](unsigned i, Type elt) -> Value {
      if (!vt)
        return sb.create<memref::LoadOp>(sl, views[i], ValueRange{row, col});
      auto type = VectorType::get(vt.getShape(), elt);
      if (!mask)
        return sb.create<vector::LoadOp>(sl, type, views[i],
                                         ValueRange{row, col});
      Value zeros = sb.create<arith::ConstantOp>(
          sl, DenseElementsAttr::get(type, sb.getZeroAttr(elt)));
      return sb.create<vector::MaskedLoadOp>(sl, type, views[i],
                                             ValueRange{row, col}, mask, zeros);
    };
    // The next tile's line of each tensor the epilogue reads (a residual):
    // its lines lie a channel plane apart, each a stream of its own that
    // the hardware prefetchers do not follow, and the loads were the
    // epilogue's stalls (resnet50_lite_qdq 5% faster).
    if (vt && llvm::any_of(views, [](Value v) { return bool(v); })) {
      Value ahead = sb.create<arith::MinUIOp>(
          sl,
          sb.create<arith::AddIOp>(
              sl, col, sb.create<arith::ConstantIndexOp>(sl, kPanels * kLanes)),
          sb.create<arith::ConstantIndexOp>(sl, positions - 1));
      for (Value v : views)
        if (v)
          sb.create<memref::PrefetchOp>(sl, v, ValueRange{row, ahead},
                                        /*isWrite=*/false, /*locality=*/3,
                                        /*isDataCache=*/true);
    }
    Value y = vectorize::convEpilogueValue(sb, ep, acc, image, row, full);
    if (!vt)
      sb.create<memref::StoreOp>(sl, y, out, ValueRange{row, col});
    else if (mask)
      sb.create<vector::MaskedStoreOp>(sl, out, ValueRange{row, col}, mask, y);
    else
      sb.create<vector::StoreOp>(sl, y, out, ValueRange{row, col});
  };
}

} // namespace int8

namespace {

/// Rewrites `g` when it is an 8-bit 2-D conv (ConvInteger without zero
/// points or pads) by constant weights: per image, each column tile of 64
/// output positions gathers its patches into per-thread scratch in the
/// kernel's panel order (through tables of each tap's and each position's
/// input offset, built now), then every output channel runs over them.
bool rewriteConv(linalg::GenericOp g,
                 std::optional<vectorize::ConvEpilogue> &epilogue,
                 AmxTiles &amx) {
  if (!g.hasPureBufferSemantics() || g->hasAttr("kiln.device") ||
      g.getNumDpsInputs() != 2 || g.getNumDpsInits() != 1 || !isU8S8MulAdd(g))
    return false;
  auto cm = vectorize::matchConv(g);
  if (!cm)
    return false;
  Value x = g.getDpsInputs()[0], wv = g.getDpsInputs()[1],
        out = g.getDpsInits()[0];
  auto xt = cast<MemRefType>(x.getType()), ot = cast<MemRefType>(out.getType());
  auto wt = cast<MemRefType>(wv.getType());
  if (!xt.hasStaticShape() || !ot.hasStaticShape() || !wt.hasStaticShape() ||
      !xt.getLayout().isIdentity() || !ot.getLayout().isIdentity())
    return false;
  auto get = wv.getDefiningOp<memref::GetGlobalOp>();
  std::optional<SmallVector<int8_t>> w = constantBytes(wv);
  if (!w)
    return false;
  int64_t n = xt.getDimSize(0), c = xt.getDimSize(1), h = xt.getDimSize(2),
          width = xt.getDimSize(3);
  int64_t m = wt.getDimSize(0), kh = wt.getDimSize(2), kw = wt.getDimSize(3);
  int64_t oh = ot.getDimSize(2), ow = ot.getDimSize(3);
  int64_t k = c * kh * kw, steps = llvm::divideCeil(k, 4), positions = oh * ow;
  int64_t panelsTotal = llvm::divideCeil(positions, kLanes);
  if (int64_t(n) * c * h * width >= (int64_t(1) << 31))
    return false;
  std::optional<ZeroInit> zeroInit = zeroInitBefore(g, out);
  // (The caller erases the epilogue applied.)
  epilogue = zeroInit ? vectorize::matchConvEpilogue(g, out) : std::nullopt;
  // (Tiles pay from a whole k chunk and whole tiles of channels: with
  // K = 16 or 24 mostly zeros, 24 channels half on the vector kernel,
  // mobilenet_v2's first 1x1 convs ran up to 18% slower than on VNNI.)
  bool useAmx =
      amx.use(zeroInit && k >= 4 * kAmxSteps && m % kAmxTileRows == 0);
  // A depthwise conv next splits by channels: so do this conv's threads,
  // and each reads the channels it wrote. (Split by positions, the convs
  // and depthwise convs of mobilenet_v2_qdq's 14x14 blocks took 14% longer
  // at 2 threads.)
  bool channelsOuter = vectorize::readByDepthwise(
      epilogue ? epilogue->op : g,
      epilogue ? epilogue->op.getDpsInits()[0] : out);
  ConvSizes sizes{n,  c,  h,      width,  m,      kh,     kw,
                  oh, ow, cm->sh, cm->sw, cm->dh, cm->dw, channelsOuter};
  if (useAmx && amxDirectConvFits(sizes)) {
    // (Not in place: the relayout then reads each image before any output
    // is stored, but an image's outputs may reach the next image.)
    std::optional<vectorize::PaddedSource> padded =
        vectorize::matchPaddedSource(g, /*planesAnyway=*/true);
    if (padded && padded->inPlace)
      padded.reset();
    OpBuilder b(g);
    emitAmxDirectConv(
        b, g.getLoc(), sizes, x, padded ? &*padded : nullptr, out, *w,
        get.getName(),
        [&](OpBuilder &ib, Location l, Value image) -> StoreHook {
          if (!epilogue)
            return nullptr;
          return convEpilogueStore(ib, l, *epilogue, image, m, oh * ow);
        },
        amx);
    ++amx.directConvs;
    g.erase();
    if (zeroInit->erase)
      zeroInit->erase->erase();
    if (padded)
      vectorize::erasePaddedSource(*padded, x);
    return true;
  }
  // Weights as rows of k padded to whole steps (to whole AMX chunks: the
  // patches' steps past k meet zero weights); each tap's and position's
  // offset in an image (padded taps and positions read offset 0: the
  // weights there are 0, the positions past the end are not stored).
  int64_t packedSteps = useAmx ? llvm::alignTo(steps, kAmxSteps) : steps,
          rowBytes = packedSteps * 4;
  SmallVector<int8_t> rows(m * rowBytes, 0);
  for (int64_t i = 0; i < m; ++i)
    std::copy_n(w->begin() + i * k, k, rows.begin() + i * rowBytes);
  SmallVector<int32_t> tapOffset(steps * 4, 0),
      positionOffset(panelsTotal * kLanes, 0);
  for (int64_t ci = 0; ci < c; ++ci)
    for (int64_t i = 0; i < kh; ++i)
      for (int64_t j = 0; j < kw; ++j)
        tapOffset[(ci * kh + i) * kw + j] =
            int32_t(ci * h * width + i * cm->dh * width + j * cm->dw);
  for (int64_t i = 0; i < oh; ++i)
    for (int64_t j = 0; j < ow; ++j)
      positionOffset[i * ow + j] = int32_t(i * cm->sh * width + j * cm->sw);
  OpBuilder b(g);
  Location loc = g.getLoc();
  auto module = g->getParentOfType<ModuleOp>();
  std::string name = get.getName().str();
  auto rowsType = MemRefType::get({m, rowBytes}, b.getI8Type());
  Value weights = vectorize::derivedGlobal(
      b, loc, module, name + (useAmx ? "_amx_rows" : "_vnni_rows"), rowsType,
      [&] {
        return DenseElementsAttr::get(
            RankedTensorType::get(rowsType.getShape(), b.getI8Type()),
            ArrayRef<int8_t>(rows));
      },
      b.getI64IntegerAttr(64));
  // (Tables per conv: the names carry the shapes they were built for.)
  std::string shape = sizes.name(/*output=*/false);
  Value taps = i32Table(b, loc, module, "kiln_conv_taps_" + shape, tapOffset);
  // A panel's 16 positions as runs on output rows at stride 1 or 2, up
  // to kRuns of them (a row of 14 or 7 splits a panel): each run a load of
  // 16 or 32 bytes placed so that lane j reads position j (every other
  // byte at stride 2), merged by lane; the loads must stay inside the
  // image at every tap. Lanes past the last position continue the last
  // run. Panels that do not fit gather (runs = 0).
  constexpr int64_t kRuns = 3;
  int64_t runStride = cm->sw;
  int32_t lastTap = *std::max_element(tapOffset.begin(), tapOffset.end());
  SmallVector<int8_t> runCount(panelsTotal, 0);
  SmallVector<int32_t> runLane(panelsTotal * kRuns, kLanes),
      runBase(panelsTotal * kRuns, 0);
  int64_t maxRuns = 0;
  for (int64_t pp = 0; pp < panelsTotal && (runStride == 1 || runStride == 2);
       ++pp) {
    SmallVector<std::pair<int64_t, int64_t>> runs; // (first lane, base)
    int64_t last = 0;
    bool fits = true;
    for (int64_t j = 0; j < kLanes && fits; ++j) {
      int64_t p = pp * kLanes + j;
      int64_t at = p < positions ? positionOffset[p] : last + runStride;
      if (runs.empty() || at != last + runStride)
        runs.push_back({j, at - j * runStride});
      last = at;
      int64_t base = runs.back().second;
      fits = runs.size() <= size_t(kRuns) && base >= 0 &&
             base + lastTap + kLanes * runStride <= c * h * width;
    }
    if (!fits)
      continue;
    runCount[pp] = runs.size();
    maxRuns = std::max<int64_t>(maxRuns, runs.size());
    for (int64_t r = 0; r < kRuns; ++r) {
      runLane[pp * kRuns + r] =
          r < int64_t(runs.size()) ? runs[r].first : kLanes;
      runBase[pp * kRuns + r] = runs[r < int64_t(runs.size()) ? r : 0].second;
    }
  }
  // A last panel of 1 to 4 positions (7 x 7, 14 x 14 planes) would waste
  // most of its lanes: those positions go as dot products of each weight
  // row with the position's patch instead (the tail, below). Not on AMX: a
  // tile product costs little there, while the tail's reduction and scalar
  // store per output took 14 us of a 96 -> 576 1x1 conv on 14 x 14 (the
  // tiles' 40), on one thread, at 2 threads the critical path.
  int64_t tail = positions % kLanes;
  if (tail > kTailPositions || positions < kLanes || useAmx)
    tail = 0;
  int64_t mainPanels = panelsTotal - (tail ? 1 : 0);
  std::string shapeOut = sizes.name(/*output=*/true);
  std::string runsName = "kiln_conv_runs_" + shapeOut;
  auto runsType = MemRefType::get({panelsTotal}, b.getI8Type());
  Value runsOf = vectorize::derivedGlobal(
      b, loc, module, runsName, runsType,
      [&] {
        return DenseElementsAttr::get(
            RankedTensorType::get({panelsTotal}, b.getI8Type()),
            ArrayRef<int8_t>(runCount));
      },
      IntegerAttr());
  Value runLanes =
      i32Table(b, loc, module, "kiln_conv_run_lanes_" + shapeOut, runLane);
  Value runBases =
      i32Table(b, loc, module, "kiln_conv_run_bases_" + shapeOut, runBase);
  Value bases = i32Table(b, loc, module, "kiln_conv_positions_" + shapeOut,
                         positionOffset);
  auto idx = [&](OpBuilder &ib, Location l, int64_t v) {
    return ib.create<arith::ConstantIndexOp>(l, v).getResult();
  };
  // The input as dwords (the last one partly past the input).
  int64_t bytes = n * c * h * width;
  Value flat = b.create<memref::ReinterpretCastOp>(
      loc, MemRefType::get({bytes}, b.getI8Type()), x, b.getIndexAttr(0),
      ArrayRef<OpFoldResult>{b.getIndexAttr(bytes)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  Value words = b.create<memref::ViewOp>(
      loc,
      MemRefType::get({int64_t(llvm::divideCeil(bytes, 4))}, b.getI32Type()),
      flat, idx(b, loc, 0), ValueRange{});
  Value allLanes = b.create<arith::ConstantOp>(
      loc,
      DenseElementsAttr::get(VectorType::get({kLanes}, b.getI1Type()), true));
  b.create<scf::ForOp>(
      loc, idx(b, loc, 0), idx(b, loc, n), idx(b, loc, 1), ValueRange{},
      [&](OpBuilder &ib, Location l, Value image, ValueRange) {
        Value outN = rowMajor(
            ib, l, out, ib.getIndexAttr(m), positions,
            ib.create<arith::MulIOp>(l, image, idx(ib, l, m * positions))
                .getResult());
        Value base32 = ib.create<arith::IndexCastOp>(
            l, ib.getI32Type(),
            ib.create<arith::MulIOp>(l, image, idx(ib, l, c * h * width)));
        auto store =
            epilogue ? convEpilogueStore(ib, l, *epilogue, image, m, positions)
                     : nullptr;
        // Panel `jp` of the scratch from output panel `p`, a step (4 taps)
        // at a time, tap t in byte t of each lane: the panel's runs loaded
        // and merged, or each tap's bytes gathered as the aligned dwords
        // holding them (an aligned dword never crosses a page, so reading
        // a few bytes past the input is harmless) and shifted down.
        auto i32x16 = VectorType::get({kLanes}, ib.getI32Type());
        auto packPanel = [&](OpBuilder &pb, Location pl, Value jp, Value p,
                             Value scratch) {
          Value first = pb.create<arith::MulIOp>(pl, p, idx(pb, pl, kLanes));
          Value pos =
              pb.create<vector::LoadOp>(pl, i32x16, bases, ValueRange{first});
          Value flag = pb.create<arith::CmpIOp>(
              pl, arith::CmpIPredicate::ne,
              pb.create<memref::LoadOp>(pl, runsOf, ValueRange{p}),
              pb.create<arith::ConstantIntOp>(pl, 0, 8));
          // The runs' bases and lane masks (read only on the run path).
          auto runsAt = [&](OpBuilder &rb, Location rl) {
            SmallVector<std::pair<Value, Value>> r;
            Value iota = rb.create<arith::ConstantOp>(
                rl, DenseElementsAttr::get(
                        i32x16, ArrayRef<int32_t>(std::array<int32_t, 16>{
                                    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
                                    13, 14, 15})));
            for (int64_t k = 0; k < maxRuns; ++k) {
              Value at = rb.create<arith::AddIOp>(
                  rl, rb.create<arith::MulIOp>(rl, p, idx(rb, rl, kRuns)),
                  idx(rb, rl, k));
              Value base =
                  rb.create<memref::LoadOp>(rl, runBases, ValueRange{at});
              Value lane = rb.create<vector::BroadcastOp>(
                  rl, i32x16,
                  rb.create<memref::LoadOp>(rl, runLanes, ValueRange{at}));
              r.push_back(
                  {base, rb.create<arith::CmpIOp>(rl, arith::CmpIPredicate::sge,
                                                  iota, lane)});
            }
            return r;
          };
          auto steps_ = [&](OpBuilder &sb, Location sl, bool rowRun) {
            SmallVector<std::pair<Value, Value>> runs;
            if (rowRun)
              runs = runsAt(sb, sl);
            sb.create<scf::ForOp>(
                sl, idx(sb, sl, 0), idx(sb, sl, steps), idx(sb, sl, 1),
                ValueRange{},
                [&](OpBuilder &kb, Location kl, Value step, ValueRange) {
                  auto kc = [&](int64_t v) { return idx(kb, kl, v); };
                  auto splat = [&](int32_t v) {
                    return kb
                        .create<arith::ConstantOp>(
                            kl, DenseElementsAttr::get(i32x16, v))
                        .getResult();
                  };
                  // Run path: each tap's 16 bytes (lane j = position j);
                  // the four interleaved by one byte permutation into
                  // dwords (tap t in byte t). Gather path: each tap's bytes
                  // in i32 lanes, shifted and or-ed.
                  Value packed;
                  SmallVector<Value> tapBytes;
                  for (int64_t t = 0; t < 4; ++t) {
                    Value tap = kb.create<arith::AddIOp>(
                        kl, kb.create<arith::MulIOp>(kl, step, kc(4)), kc(t));
                    Value tapOff = kb.create<arith::AddIOp>(
                        kl, base32,
                        kb.create<memref::LoadOp>(kl, taps, ValueRange{tap}));
                    if (rowRun) {
                      Value merged;
                      for (auto [k, run] : llvm::enumerate(runs)) {
                        Value at = kb.create<arith::IndexCastOp>(
                            kl, kb.getIndexType(),
                            kb.create<arith::AddIOp>(kl, tapOff, run.first));
                        Value v = kb.create<vector::LoadOp>(
                            kl,
                            VectorType::get({kLanes * runStride},
                                            kb.getI8Type()),
                            flat, ValueRange{at});
                        if (runStride == 2) {
                          SmallVector<int64_t> even;
                          for (int64_t j = 0; j < kLanes; ++j)
                            even.push_back(2 * j);
                          v = kb.create<vector::ShuffleOp>(kl, v, v, even);
                        }
                        merged = k ? kb.create<arith::SelectOp>(kl, run.second,
                                                                v, merged)
                                         .getResult()
                                   : v;
                      }
                      tapBytes.push_back(merged);
                      continue;
                    }
                    Value off = kb.create<arith::AddIOp>(
                        kl, pos,
                        kb.create<vector::BroadcastOp>(kl, i32x16, tapOff));
                    Value word = kb.create<arith::ShRUIOp>(kl, off, splat(2));
                    Value shift = kb.create<arith::ShLIOp>(
                        kl, kb.create<arith::AndIOp>(kl, off, splat(3)),
                        splat(3));
                    Value g = kb.create<vector::GatherOp>(
                        kl, i32x16, words, ValueRange{kc(0)}, word, allLanes,
                        splat(0));
                    Value byte = kb.create<arith::AndIOp>(
                        kl, kb.create<arith::ShRUIOp>(kl, g, shift),
                        splat(0xff));
                    if (t)
                      byte = kb.create<arith::ShLIOp>(kl, byte,
                                                      splat(int32_t(8 * t)));
                    packed = t ? kb.create<arith::OrIOp>(kl, packed, byte)
                                     .getResult()
                               : byte;
                  }
                  Value bytes;
                  if (rowRun) {
                    bytes = interleaveSteps(kb, kl, tapBytes);
                  } else {
                    bytes = kb.create<vector::BitCastOp>(
                        kl, VectorType::get({4 * kLanes}, kb.getI8Type()),
                        packed);
                  }
                  kb.create<vector::StoreOp>(kl, bytes, scratch,
                                             ValueRange{jp, step, kc(0)});
                  kb.create<scf::YieldOp>(kl);
                });
          };
          // (One path when every panel takes it.)
          if (llvm::all_of(ArrayRef<int8_t>(runCount).take_front(mainPanels),
                           [](int8_t r) { return r; }))
            return steps_(pb, pl, true);
          if (maxRuns == 0)
            return steps_(pb, pl, false);
          emitIfElse(pb, pl, flag,
                     [&](OpBuilder &sb, Location sl, bool rowRun) {
                       steps_(sb, sl, rowRun);
                     });
        };
        // Tiles of up to kPanels whole panels, then one with the rest.
        // With enough tiles, threads take tiles, each packing its own into
        // thread scratch. With few (small planes), the panels are packed
        // first, threads taking panels, into one buffer; then threads take
        // tiles x blocks of rows (output channels).
        int64_t panelsAll = mainPanels,
                lastLanes = tail ? 0 : positions % kLanes;
        int64_t tile = std::min(kPanels, panelsAll);
        int64_t tiles = (positions / kLanes) / tile,
                rest = panelsAll - tiles * tile;
        ConvUnits u(tiles, tile, rest, m, useAmx ? kAmxRows : kRows);
        u.rowsOuter = channelsOuter;
        int64_t rowBlocks = u.rowBlocks;
        Value packed;
        if (rowBlocks > 1) {
          packed = ib.create<memref::AllocOp>(
              l, MemRefType::get({panelsAll, packedSteps, 4 * kLanes},
                                 ib.getI8Type()));
          auto packLoop = ib.create<scf::ForOp>(
              l, idx(ib, l, 0), idx(ib, l, panelsAll), idx(ib, l, 1),
              ValueRange{},
              [&](OpBuilder &pb, Location pl, Value pp, ValueRange) {
                packPanel(pb, pl, pp, pp, packed);
                pb.create<scf::YieldOp>(pl);
              });
          vectorize::markParallel(packLoop, vectorize::kParallelElements,
                                  steps * 4 * kLanes);
        }
        auto emitUnit = [&](OpBuilder &tb, Location tl, Value p0,
                            int64_t panels, int64_t lanes, Value rowStart,
                            Value rowEnd) {
          Value scratch = packed, vP0 = p0;
          if (!packed) {
            scratch = tb.create<memref::AllocOp>(
                tl, MemRefType::get({panels, packedSteps, 4 * kLanes},
                                    tb.getI8Type()));
            for (int64_t jp = 0; jp < panels; ++jp)
              packPanel(tb, tl, idx(tb, tl, jp),
                        tb.create<arith::AddIOp>(tl, p0, idx(tb, tl, jp)),
                        scratch);
            vP0 = idx(tb, tl, 0);
          }
          Kernel kn{weights, scratch,        outN, steps,
                    false,   bool(zeroInit), store};
          kn.amx = useAmx;
          kn.zeroTags = &amx.zeroTags;
          emitColumns(tb, tl, kn, rowStart, rowEnd, vP0, p0, panels, lanes,
                      rowBlocks == 1 ? m : -1);
        };
        forEachConvUnit(ib, l, u, k * tile * kLanes,
                        [&](OpBuilder &tb, Location tl, Value p0,
                            int64_t panels, bool isRest, Value rowStart,
                            Value rowEnd) {
                          emitUnit(tb, tl, p0, panels, isRest ? lastLanes : 0,
                                   rowStart, rowEnd);
                        });
        // The tail positions: each one's patch gathered into contiguous
        // bytes (through the tap table; padded taps read a harmless byte
        // that meets a zero weight), then per group of output channels 64
        // bytes of each row and of each patch a vpdpbusd, each (row,
        // position) its own accumulator, summed across the lanes at the end.
        if (tail) {
          int64_t bytes = steps * 4, chunks = llvm::divideCeil(bytes, 64);
          int64_t group = m % 4 == 0 ? 4 : m % 2 == 0 ? 2 : 1;
          auto i8x64 = VectorType::get({64}, ib.getI8Type());
          Value patches = ib.create<memref::AllocOp>(
              l, MemRefType::get({tail, chunks * 64}, ib.getI8Type()),
              ib.getI64IntegerAttr(64));
          ib.create<linalg::FillOp>(
              l, ib.create<arith::ConstantIntOp>(l, 0, 8).getResult(), patches);
          for (int64_t j = 0; j < tail; ++j) {
            Value at = ib.create<arith::AddIOp>(
                l, base32,
                ib.create<arith::ConstantIntOp>(
                    l, positionOffset[positions - tail + j], 32));
            ib.create<scf::ForOp>(
                l, idx(ib, l, 0), idx(ib, l, c * kh * kw), idx(ib, l, 1),
                ValueRange{},
                [&](OpBuilder &gb, Location gl, Value t, ValueRange) {
                  Value off = gb.create<arith::AddIOp>(
                      gl, at,
                      gb.create<memref::LoadOp>(gl, taps, ValueRange{t}));
                  Value byte = gb.create<memref::LoadOp>(
                      gl, flat,
                      ValueRange{gb.create<arith::IndexCastOp>(
                          gl, gb.getIndexType(), off)});
                  gb.create<memref::StoreOp>(gl, byte, patches,
                                             ValueRange{idx(gb, gl, j), t});
                  gb.create<scf::YieldOp>(gl);
                });
          }
          auto rowsLoop = ib.create<scf::ForOp>(
              l, idx(ib, l, 0), idx(ib, l, m), idx(ib, l, group), ValueRange{},
              [&](OpBuilder &rb, Location rl, Value row0, ValueRange) {
                auto i32x16 = VectorType::get({kLanes}, rb.getI32Type());
                Value zero = rb.create<arith::ConstantOp>(
                    rl, DenseElementsAttr::get(i32x16, int32_t(0)));
                // (Each row's last chunk masked: the weights end there.)
                SmallVector<Value> rowsFlat;
                for (int64_t r = 0; r < group; ++r)
                  rowsFlat.push_back(rowMajor(
                      rb, rl, weights, rb.getIndexAttr(1), bytes,
                      rb.create<arith::MulIOp>(
                            rl,
                            rb.create<arith::AddIOp>(rl, row0, idx(rb, rl, r)),
                            idx(rb, rl, rowBytes))
                          .getResult()));
                auto sums = rb.create<scf::ForOp>(
                    rl, idx(rb, rl, 0), idx(rb, rl, chunks), idx(rb, rl, 1),
                    SmallVector<Value>(group * tail, zero),
                    [&](OpBuilder &cb, Location cl, Value q, ValueRange acc) {
                      Value first =
                          cb.create<arith::MulIOp>(cl, q, idx(cb, cl, 64));
                      Value mask = cb.create<vector::CreateMaskOp>(
                          cl, VectorType::get({64}, cb.getI1Type()),
                          ValueRange{cb.create<arith::SubIOp>(
                              cl, idx(cb, cl, bytes), first)});
                      Value none = cb.create<arith::ConstantOp>(
                          cl, DenseElementsAttr::get(i8x64,
                                                     cb.getI8IntegerAttr(0)));
                      SmallVector<Value> xs, next;
                      for (int64_t j = 0; j < tail; ++j)
                        xs.push_back(cb.create<vector::BitCastOp>(
                            cl, i32x16,
                            cb.create<vector::LoadOp>(
                                cl, i8x64, patches,
                                ValueRange{idx(cb, cl, j), first})));
                      for (int64_t r = 0; r < group; ++r) {
                        Value w = cb.create<vector::BitCastOp>(
                            cl, i32x16,
                            cb.create<vector::MaskedLoadOp>(
                                cl, i8x64, rowsFlat[r],
                                ValueRange{idx(cb, cl, 0), first}, mask, none));
                        for (int64_t j = 0; j < tail; ++j)
                          next.push_back(
                              cb.create<LLVM::CallIntrinsicOp>(
                                    cl, i32x16, kVpdpbusd,
                                    ValueRange{acc[r * tail + j], xs[j], w})
                                  .getResult(0));
                      }
                      cb.create<scf::YieldOp>(cl, next);
                    });
                for (int64_t r = 0; r < group; ++r)
                  for (int64_t j = 0; j < tail; ++j) {
                    Value total = rb.create<vector::ReductionOp>(
                        rl, vector::CombiningKind::ADD,
                        sums.getResult(r * tail + j));
                    Value row =
                        rb.create<arith::AddIOp>(rl, row0, idx(rb, rl, r));
                    Value col = idx(rb, rl, positions - tail + j);
                    if (store)
                      store(rb, rl, total, row, col, Value());
                    else
                      rb.create<memref::StoreOp>(rl, total, outN,
                                                 ValueRange{row, col});
                  }
                rb.create<scf::YieldOp>(rl);
              });
          vectorize::markParallel(rowsLoop, vectorize::kParallelMultiplyAdds,
                                  group * tail * k);
        }
        ib.create<scf::YieldOp>(l);
      });
  g.erase();
  if (zeroInit && zeroInit->erase)
    zeroInit->erase->erase();
  return true;
}

struct CpuIntegerContractionsPass
    : public impl::CpuIntegerContractionsBase<CpuIntegerContractionsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (!vnni && !avx2)
      return;
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp g) { generics.push_back(g); });
    int64_t n = 0, epilogues = 0, depthwise = 0;
    AmxTiles tiles{amx};
    // (A conv's rewrite erases the epilogue it applies: not visited then.)
    llvm::DenseSet<Operation *> erased;
    for (linalg::GenericOp g : generics) {
      if (erased.contains(g))
        continue;
      if (!vnni) {
        // (AVX2: constant-B matmuls only.)
        n += rewrite(g, tiles, /*avx2=*/true);
        continue;
      }
      if (rewrite(g, tiles, /*avx2=*/false) || rewriteRuntimeB(g, tiles)) {
        ++n;
        continue;
      }
      std::optional<vectorize::ConvEpilogue> epilogue;
      bool dw = vbmi && rewriteDepthwise(g, epilogue);
      depthwise += dw;
      if (dw || rewriteConv(g, epilogue, tiles)) {
        n += !dw;
        if (epilogue) {
          erased.insert(epilogue->op);
          epilogue->op.erase();
          ++epilogues;
        }
      }
    }
    numKernels += n;
    numEpilogues += epilogues;
    numDepthwise += depthwise;
    numAmxKernels += tiles.kernels;
    numAmxDirectConvs += tiles.directConvs;
    // For `kiln compile --report`.
    Builder b(&getContext());
    if (n)
      getOperation()->setAttr("kiln.report.int8_kernels",
                              b.getI64IntegerAttr(n));
    if (depthwise)
      getOperation()->setAttr("kiln.report.int8_depthwise_vnni",
                              b.getI64IntegerAttr(depthwise));
    if (epilogues)
      getOperation()->setAttr("kiln.report.int8_epilogues",
                              b.getI64IntegerAttr(epilogues));
    // (The runtime asks the OS for the tile state before running it.)
    if (tiles.kernels) {
      getOperation()->setAttr("kiln.report.int8_amx_kernels",
                              b.getI64IntegerAttr(tiles.kernels));
      getOperation()->setAttr(kAmxTilesAttr, b.getUnitAttr());
    }
    if (tiles.directConvs)
      getOperation()->setAttr("kiln.report.int8_amx_direct_convs",
                              b.getI64IntegerAttr(tiles.directConvs));
  }
};

} // namespace
} // namespace kiln
