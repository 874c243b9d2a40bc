//===- RuntimeSizeOps.cpp - onnx ops on tensors with run-time sizes -------===//
//
// A model compiled with symbolic dimensions (kiln compile on a model whose
// inputs keep `dim_param`s) has tensors of type tensor<?x...>. The ops
// listed here lower for such tensors: their sizes are tensor.dim values of
// the operands, computed shapes are read at run time, and every equality
// the op needs and the types cannot prove is a kiln.check. Elementwise
// ops, Softmax, reductions over static dims and the contractions use their
// ordinary lowerings, whose builders size dynamic results from their
// inputs (LinalgBuilders.cpp); the ops below need their own.
//
//===----------------------------------------------------------------------===//

#include "providers/cpu/Lowering.h"
#include "dialects/kiln/KilnDialect.h"

using namespace mlir;
using namespace kiln::onnx;

namespace kiln::cpu {
namespace {

Value toIndex(OpBuilder &b, Location l, Value v) {
  return b.create<arith::IndexCastOp>(l, b.getIndexType(), v);
}

Value toI64(OpBuilder &b, Location l, Value v) {
  return b.create<arith::IndexCastOp>(l, b.getI64Type(), v);
}

Value product(OpBuilder &b, Location l, ArrayRef<Value> sizes) {
  Value p = b.create<arith::ConstantIndexOp>(l, 1);
  for (Value s : sizes)
    p = b.create<arith::MulIOp>(l, p, s);
  return p;
}

void check(OpBuilder &b, Location l, Value ok, Operation *op, const Twine &what) {
  b.create<CheckOp>(l, ok, (describeNode(op) + ": " + what).str(), /*fatal=*/true);
}

Value eq(OpBuilder &b, Location l, Value x, Value y) {
  return b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, x, y);
}

/// `x` reshaped (row-major) to `outType` whose dims are `dims` (index
/// values, one per dim); the element counts must agree (a run-time check).
Value reshapeToSizes(OpBuilder &b, Location l, Value x, RankedTensorType outType,
                     ArrayRef<Value> dims, Operation *op) {
  auto xt = typeOf(x);
  SmallVector<Value> inSizes;
  for (int64_t i = 0; i < xt.getRank(); ++i)
    inSizes.push_back(dimSize(b, l, x, i));
  check(b, l, eq(b, l, product(b, l, inSizes), product(b, l, dims)), op,
        "the computed shape does not hold the input's elements at run time");
  SmallVector<Value> shape;
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (!outType.isDynamicDim(i))
      check(b, l, eq(b, l, d, b.create<arith::ConstantIndexOp>(l, outType.getDimSize(i))), op,
            "dimension " + Twine(i) + " of the result is not the compiled " +
                Twine(outType.getDimSize(i)) + " at run time");
    shape.push_back(toI64(b, l, d));
  }
  auto shapeType = RankedTensorType::get({outType.getRank()}, b.getI64Type());
  Value shapeTensor = b.create<tensor::FromElementsOp>(l, shapeType, shape);
  return b.create<tensor::ReshapeOp>(l, outType, x, shapeTensor);
}

/// Reshape with a shape read at run time (or a constant one with 0 or -1
/// against dynamic input dims): 0 copies the input's dim (unless
/// allowzero), -1 takes what the others leave.
Results lowerReshape(OpBuilder &b, Operation *op) {
  Location l = op->getLoc();
  Value x = op->getOperand(0), shape = op->getOperand(1);
  auto xt = typeOf(x), out = resultType(op);
  bool allowZero = getIntAttr(op, "allowzero", 0) != 0;
  int64_t rank = out.getRank();
  SmallVector<Value> inSizes;
  for (int64_t i = 0; i < xt.getRank(); ++i)
    inSizes.push_back(dimSize(b, l, x, i));
  Value total = product(b, l, inSizes);
  Value zero = b.create<arith::ConstantIndexOp>(l, 0), one = b.create<arith::ConstantIndexOp>(l, 1);
  Value minusOne = b.create<arith::ConstantIndexOp>(l, -1);
  SmallVector<Value> dims;
  auto known = getConstantInts(shape);
  for (int64_t i = 0; i < rank; ++i) {
    Value s;
    if (known) {
      s = b.create<arith::ConstantIndexOp>(l, (*known)[i]);
    } else {
      Value idx = b.create<arith::ConstantIndexOp>(l, i);
      s = toIndex(b, l, b.create<tensor::ExtractOp>(l, shape, ValueRange{idx}));
    }
    if (!allowZero && i < xt.getRank())
      s = b.create<arith::SelectOp>(l, eq(b, l, s, zero), inSizes[i], s);
    dims.push_back(s);
  }
  // The product of the dims other than -1 gives the -1 dim.
  Value rest = one;
  for (Value d : dims)
    rest = b.create<arith::MulIOp>(l, rest,
                                   b.create<arith::SelectOp>(l, eq(b, l, d, minusOne), one, d));
  Value safeRest = b.create<arith::SelectOp>(l, eq(b, l, rest, zero), one, rest);
  Value inferred = b.create<arith::DivUIOp>(l, total, safeRest);
  for (Value &d : dims) {
    d = b.create<arith::SelectOp>(l, eq(b, l, d, minusOne), inferred, d);
    check(b, l, b.create<arith::CmpIOp>(l, arith::CmpIPredicate::sge, d, zero), op,
          "the shape input has a negative dimension other than one -1");
  }
  return SmallVector<Value>{reshapeToSizes(b, l, x, out, dims, op)};
}

/// Flatten to [prod(dims < axis), prod(dims >= axis)].
Results lowerFlatten(OpBuilder &b, Operation *op) {
  Location l = op->getLoc();
  Value x = op->getOperand(0);
  auto xt = typeOf(x);
  int64_t axis = getIntAttr(op, "axis", 1);
  if (axis < 0)
    axis += xt.getRank();
  SmallVector<Value> lead, tail;
  for (int64_t i = 0; i < xt.getRank(); ++i)
    (i < axis ? lead : tail).push_back(dimSize(b, l, x, i));
  SmallVector<Value> dims = {product(b, l, lead), product(b, l, tail)};
  return SmallVector<Value>{reshapeToSizes(b, l, x, resultType(op), dims, op)};
}

/// The dims of the input as an int64 tensor, computed at run time.
Results lowerShape(OpBuilder &b, Operation *op) {
  Location l = op->getLoc();
  Value x = op->getOperand(0);
  auto xt = typeOf(x);
  auto out = resultType(op);
  int64_t r = xt.getRank();
  int64_t start = getIntAttr(op, "start", 0);
  if (start < 0)
    start += r;
  start = std::clamp<int64_t>(start, 0, r);
  SmallVector<Value> dims;
  for (int64_t i = start; i < start + out.getDimSize(0); ++i)
    dims.push_back(toI64(b, l, dimSize(b, l, x, i)));
  return SmallVector<Value>{b.create<tensor::FromElementsOp>(l, out, dims)};
}

Results lowerTranspose(OpBuilder &b, Operation *op) {
  Location l = op->getLoc();
  Value x = op->getOperand(0);
  auto xt = typeOf(x);
  SmallVector<int64_t> perm = getIntsAttr(op, "perm");
  if (perm.empty())
    for (int64_t i = xt.getRank() - 1; i >= 0; --i)
      perm.push_back(i);
  if (llvm::equal(perm, llvm::seq<int64_t>(0, xt.getRank())))
    return SmallVector<Value>{x};
  auto out = resultType(op);
  SmallVector<Value> sizes;
  for (int64_t i = 0; i < out.getRank(); ++i)
    if (out.isDynamicDim(i))
      sizes.push_back(dimSize(b, l, x, perm[i]));
  Value init = emptyTensor(b, l, out, sizes);
  return SmallVector<Value>{b.create<linalg::TransposeOp>(l, x, init, perm)->getResult(0)};
}

/// Concatenation at run-time offsets; the other dims must agree.
Results lowerConcat(OpBuilder &b, Operation *op) {
  Location l = op->getLoc();
  auto out = resultType(op);
  int64_t axis = getIntAttr(op, "axis", 0);
  if (axis < 0)
    axis += out.getRank();
  SmallVector<Value> ins(op->getOperands());
  Value first = ins.front();
  Value length = b.create<arith::ConstantIndexOp>(l, 0);
  for (Value in : ins)
    length = b.create<arith::AddIOp>(l, length, dimSize(b, l, in, axis));
  SmallVector<Value> sizes;
  for (int64_t i = 0; i < out.getRank(); ++i)
    if (out.isDynamicDim(i))
      sizes.push_back(i == axis ? length : dimSize(b, l, first, i));
  Value acc = emptyTensor(b, l, out, sizes);
  Value offset = b.create<arith::ConstantIndexOp>(l, 0);
  for (Value in : ins) {
    SmallVector<OpFoldResult> offs, inSizes, strides;
    for (int64_t i = 0; i < out.getRank(); ++i) {
      Value size = dimSize(b, l, in, i);
      if (i != axis && (typeOf(in).isDynamicDim(i) || out.isDynamicDim(i)))
        check(b, l, eq(b, l, size, dimSize(b, l, acc, i)), op,
              "the inputs differ in dimension " + Twine(i) + " at run time");
      offs.push_back(i == axis ? OpFoldResult(offset) : b.getIndexAttr(0));
      inSizes.push_back(typeOf(in).isDynamicDim(i) ? OpFoldResult(size)
                                                   : b.getIndexAttr(typeOf(in).getDimSize(i)));
      strides.push_back(b.getIndexAttr(1));
    }
    acc = b.create<tensor::InsertSliceOp>(l, in, acc, offs, inSizes, strides);
    offset = b.create<arith::AddIOp>(l, offset, dimSize(b, l, in, axis));
  }
  return SmallVector<Value>{acc};
}

bool staticData(Operation *op, std::string &why) {
  if (typeOf(op->getOperand(0)).hasStaticShape())
    return true;
  why = "with run-time sizes, needs data of a static shape (an embedding table)";
  return false;
}

/// The dims an op reduces over (normalizations: `axis` to the end;
/// reductions: `axes`) must be static: the lowerings divide by their count.
bool staticReducedDims(Operation *op, std::string &why) {
  auto xt = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (!xt)
    return false;
  StringRef name = op->getName().getStringRef();
  SmallVector<int64_t> dims;
  if (name.starts_with("onnx.Reduce")) {
    std::optional<SmallVector<int64_t>> axes;
    if (op->getNumOperands() > 1 && !isNone(op->getOperand(1)))
      axes = getConstantInts(op->getOperand(1));
    if (!axes || axes->empty()) {
      why = "with run-time sizes, needs constant, non-empty axes";
      return false;
    }
    dims = *axes;
  } else {
    int64_t axis = getIntAttr(op, "axis", -1);
    for (int64_t i = axis < 0 ? axis + xt.getRank() : axis; i < xt.getRank(); ++i)
      dims.push_back(i);
  }
  for (int64_t d : dims) {
    int64_t i = d < 0 ? d + xt.getRank() : d;
    if (i < 0 || i >= xt.getRank() || xt.isDynamicDim(i)) {
      why = "with run-time sizes, the reduced dimensions must be static";
      return false;
    }
  }
  return true;
}

bool anyCheck(Operation *, std::string &) { return true; }

} // namespace

void registerRuntimeSizeOps(LoweringTable &m) {
  // Lowerings that take run-time sizes as they are.
  for (auto &entry : m)
    if (entry.second.elementwise)
      entry.second.dynamic = {entry.second.lower, anyCheck};
  for (const char *k : {"MatMul", "Gemm", "Softmax", "LogSoftmax", "Identity", "Cast", "CastLike"})
    m[k].dynamic = {m[k].lower, anyCheck};
  for (const char *k : {"LayerNormalization", "RMSNormalization", "ReduceSum", "ReduceMean",
                        "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare", "ReduceL1",
                        "ReduceL2"})
    m[k].dynamic = {m[k].lower, staticReducedDims};
  // Squeeze/Unsqueeze only add or drop dims of size 1, which reshapeTo
  // handles with run-time sizes.
  for (const char *k : {"Squeeze", "Unsqueeze"})
    m[k].dynamic = {m[k].lower, anyCheck};
  m["Gather"].dynamic = {m["Gather"].lower, staticData};
  m["Reshape"].dynamic = {lowerReshape, anyCheck};
  m["Flatten"].dynamic = {lowerFlatten, anyCheck};
  m["Shape"].dynamic = {lowerShape, anyCheck};
  m["Transpose"].dynamic = {lowerTranspose, anyCheck};
  m["Concat"].dynamic = {lowerConcat, anyCheck};
}

} // namespace kiln::cpu
