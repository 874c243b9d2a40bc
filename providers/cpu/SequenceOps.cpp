//===- SequenceOps.cpp - seq and optional values as runtime objects -------===//
//
// A sequence (or optional) is an object of libkiln_rt (kiln_sequence), so
// its length and its elements' shapes may be known only at run time. The
// compiled code holds an i64 handle and calls the runtime (kilnSeq*) through
// kiln.runtime_call, which hands over whole tensors: a tensor going into a
// sequence is copied by the runtime; one coming out must have the shape the
// code was compiled for, which the runtime checks.
//
//===----------------------------------------------------------------------===//
#include "dialects/kiln/KilnDialect.h"
#include "dialects/onnx/DataTypes.h"
#include "dialects/onnx/OnnxDialect.h"
#include "providers/cpu/Lowering.h"
#include "providers/cpu/RuntimeCall.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace kiln::onnx;

namespace kiln::cpu {
namespace {

/// The element type that decides a new sequence's dtype.
int64_t elementDtype(Type seqOrOpt) {
  Type t = seqOrOpt;
  while (!isa<TensorType>(t))
    t = isa<SeqType>(t) ? cast<SeqType>(t).getElementType() : cast<OptType>(t).getElementType();
  return dtypeOfElementType(cast<TensorType>(t).getElementType());
}

Value newSequence(OpBuilder &b, Operation *op, bool none) {
  // The result type lost unsignedness in makeSignless; the op's own inputs
  // and attributes did not.
  StringRef name = op->getName().getStringRef();
  int64_t dtype = name == "onnx.SequenceEmpty" ? getIntAttr(op, "dtype", 1)
                  : op->getNumOperands() && isa<RankedTensorType>(op->getOperand(0).getType())
                      ? onnxDtype(typeOf(op->getOperand(0)).getElementType(), wasUnsigned(op, 0))
                      : elementDtype(op->getResult(0).getType());
  return Call(b, op).i32(dtype).i32(none).returning("kilnSeqNew", handleType(op));
}

Value insert(OpBuilder &b, Operation *op, Value seq, Value tensor, unsigned operand,
             Value position) {
  if (tensor.getType().isInteger(64)) // boxed (a Slice of run-time shape)
    return Call(b, op).value(seq).value(tensor).position(position).node().returning(
        "kilnSeqInsertBox", handleType(op));
  return Call(b, op)
      .value(seq)
      .value(tensor)
      .describe(typeOf(tensor), wasUnsigned(op, operand))
      .position(position)
      .node()
      .returning("kilnSeqInsert", handleType(op));
}

Results lowerSequenceEmpty(OpBuilder &b, Operation *op) {
  return SmallVector<Value>{newSequence(b, op, false)};
}

Results lowerSequenceConstruct(OpBuilder &b, Operation *op) {
  Value seq = newSequence(b, op, false);
  for (auto [i, t] : llvm::enumerate(op->getOperands()))
    seq = insert(b, op, seq, t, i, Value());
  return SmallVector<Value>{seq};
}

Results lowerSequenceInsert(OpBuilder &b, Operation *op) {
  return SmallVector<Value>{
      insert(b, op, op->getOperand(0), op->getOperand(1), 1, op->getOperand(2))};
}

Results lowerSequenceErase(OpBuilder &b, Operation *op) {
  return SmallVector<Value>{Call(b, op)
                                .value(op->getOperand(0))
                                .position(op->getOperand(1))
                                .node()
                                .returning("kilnSeqErase", handleType(op))};
}

Results lowerSequenceLength(OpBuilder &b, Operation *op) {
  Value n = Call(b, op).value(op->getOperand(0)).node().returning("kilnSeqLength", handleType(op));
  return SmallVector<Value>{b.create<tensor::FromElementsOp>(op->getLoc(), resultType(op), n)};
}

Results lowerSequenceAt(OpBuilder &b, Operation *op) {
  // Elements whose shape is known only at run time stay boxed.
  auto rt = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!rt || !rt.hasStaticShape())
    return SmallVector<Value>{Call(b, op)
                                  .value(op->getOperand(0))
                                  .position(op->getOperand(1))
                                  .node()
                                  .returning("kilnSeqAtBox", handleType(op))};
  return SmallVector<Value>{Call(b, op)
                                .value(op->getOperand(0))
                                .position(op->getOperand(1))
                                .describe(resultType(op), resultWasUnsigned(op))
                                .node()
                                .filling("kilnSeqAt")};
}

Results lowerSplitToSequence(OpBuilder &b, Operation *op) {
  Value x = op->getOperand(0), split = op->getOperand(1);
  int64_t rank = typeOf(x).getRank();
  Call call(b, op);
  int64_t axis = getIntAttr(op, "axis", 0);
  call.value(x).describe(typeOf(x), wasUnsigned(op, 0)).i64(axis < 0 ? axis + rank : axis);
  if (isNone(split))
    call.i64(0).i32(-1).i64(0);
  else {
    // The runtime reads int64 lengths.
    auto st = typeOf(split);
    if (!st.getElementType().isInteger(64))
      split = elementwise(b, op->getLoc(), RankedTensorType::get(st.getShape(), b.getI64Type()),
                          ValueRange{split}, [](OpBuilder &nb, Location l, ValueRange a) {
                            return castScalar(nb, l, a[0], nb.getI64Type());
                          });
    call.value(split).i32(st.getRank()).i64(st.getNumElements());
  }
  return SmallVector<Value>{
      call.i32(getIntAttr(op, "keepdims", 1)).node().returning("kilnSeqSplit", handleType(op))};
}

Results lowerConcatFromSequence(OpBuilder &b, Operation *op) {
  // A length or element shapes known only at run time: a box.
  auto rt = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!rt || !rt.hasStaticShape())
    return SmallVector<Value>{Call(b, op)
                                  .value(op->getOperand(0))
                                  .i64(getIntAttr(op, "axis", 0))
                                  .i32(getIntAttr(op, "new_axis", 0))
                                  .node()
                                  .returning("kilnSeqConcatBox", handleType(op))};
  int64_t rank = resultType(op).getRank(), axis = getIntAttr(op, "axis", 0);
  return SmallVector<Value>{Call(b, op)
                                .value(op->getOperand(0))
                                .describe(resultType(op), resultWasUnsigned(op))
                                .i64(axis < 0 ? axis + rank : axis)
                                .i32(getIntAttr(op, "new_axis", 0))
                                .node()
                                .filling("kilnSeqConcat")};
}

Results lowerOptional(OpBuilder &b, Operation *op) {
  Value x = op->getOperand(0);
  if (isNone(x))
    return SmallVector<Value>{newSequence(b, op, true)};
  if (isa<RankedTensorType>(x.getType()))
    return SmallVector<Value>{insert(b, op, newSequence(b, op, false), x, 0, Value())};
  return SmallVector<Value>{Call(b, op).value(x).node().returning("kilnSeqSome", handleType(op))};
}

/// The operand's type before lowering made handles of sequences: the
/// optional kinds are told apart by the op's result type.
Results lowerOptionalGetElement(OpBuilder &b, Operation *op) {
  Value x = op->getOperand(0);
  Type result = op->getResult(0).getType();
  if (isa<RankedTensorType>(x.getType()))
    return SmallVector<Value>{x}; // a plain tensor (onnx 18)
  if (isa<RankedTensorType>(result))
    return SmallVector<Value>{
        Call(b, op).value(x).i64(0).i32(1).describe(resultType(op), resultWasUnsigned(op))
            .node()
            .filling("kilnSeqAt")};
  // A sequence, optional or not: only an optional can be none.
  return SmallVector<Value>{Call(b, op).value(x).node().returning("kilnSeqGetValue", handleType(op))};
}

Results lowerOptionalHasElement(OpBuilder &b, Operation *op) {
  Location l = op->getLoc();
  Value x = op->getNumOperands() ? op->getOperand(0) : Value();
  Value has;
  if (isNone(x) || isa<RankedTensorType>(x.getType()))
    has = b.create<arith::ConstantIntOp>(l, !isNone(x), 1);
  else
    has = b.create<arith::TruncIOp>(
        l, b.getI1Type(),
        Call(b, op).value(x).node().returning("kilnSeqHasValue", b.getI32Type()));
  return SmallVector<Value>{b.create<tensor::FromElementsOp>(l, resultType(op), has)};
}

/// Values whose type kiln can hold for these ops: the sequence's element
/// tensors and position inputs must be static (or boxed), results too.
bool checkSequenceOp(Operation *op, std::string &why) {
  SmallVector<Value> values(op->getOperands());
  llvm::append_range(values, op->getResults());
  for (Value v : values) {
    // (canLowerOnCpu explains a box used where a tensor is needed.)
    if (isBoxedTensor(v) || (v.getDefiningOp() == op && producesBox(op)))
      continue;
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (t && !t.hasStaticShape()) {
      llvm::raw_string_ostream(why) << "needs static shapes, got " << t;
      return false;
    }
    if (isa<UnrankedTensorType>(v.getType())) {
      llvm::raw_string_ostream(why) << "needs a ranked tensor, got " << v.getType();
      return false;
    }
    if (t && isa<onnx::StringType>(t.getElementType())) {
      why = "sequences of strings are not supported";
      return false;
    }
  }
  return true;
}

} // namespace

bool isSequenceValueType(Type t) { return isa<SeqType, OptType>(t); }

bool producesBox(Operation *def) {
  StringRef n = def->getName().getStringRef();
  if (n == "onnx.Identity")
    return isBoxedTensor(def->getOperand(0));
  // With run-time sizes, a Slice is a tensor of run-time size.
  if (n == "onnx.Slice")
    return !compilesRuntimeSizes(def);
  return n == "onnx.SequenceAt" || n == "onnx.ConcatFromSequence" ||
         n == "onnx.NonZero" ||
         n == "onnx.Compress" || n == "onnx.Unique" || n == "onnx.NonMaxSuppression";
}

Operation *nonBoxUser(Value v) {
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    StringRef name = user->getName().getStringRef();
    Operation *inner = nullptr;
    if (name == "onnx.Identity")
      inner = nonBoxUser(user->getResult(0));
    else if (auto yield = dyn_cast<YieldOp>(user))
      inner = nonBoxUser(yield->getParentOp()->getResult(use.getOperandNumber()));
    else if (!(name == "onnx.SequenceInsert" && use.getOperandNumber() == 1) &&
             name != "onnx.SequenceConstruct" && !isa<func::ReturnOp>(user))
      inner = user;
    if (inner)
      return inner;
  }
  return nullptr;
}

bool isBoxedTensor(Value v) {
  auto t = dyn_cast<TensorType>(v.getType());
  Operation *def = v.getDefiningOp();
  if (!t || (t.hasRank() && t.hasStaticShape()) || !def || !producesBox(def))
    return false;
  return !nonBoxUser(v);
}

Value boxSlice(OpBuilder &b, Operation *op, Value start, Value step, Value size) {
  Value x = op->getOperand(0);
  return Call(b, op)
      .value(x)
      .describe(typeOf(x), wasUnsigned(op, 0))
      .value(start)
      .value(step)
      .value(size)
      .node()
      .returning("kilnSeqSlice", handleType(op));
}

Type loweredValueType(Type t) {
  return isSequenceValueType(t) ? IntegerType::get(t.getContext(), 64) : t;
}

void registerSequenceOps(LoweringTable &m) {
  auto add = [&](StringRef name, LowerFn fn) { m[name] = {fn, false, checkSequenceOp, /*callsRuntime=*/true}; };
  add("SequenceEmpty", lowerSequenceEmpty);
  add("SequenceConstruct", lowerSequenceConstruct);
  add("SequenceInsert", lowerSequenceInsert);
  add("SequenceErase", lowerSequenceErase);
  add("SequenceLength", lowerSequenceLength);
  add("SequenceAt", lowerSequenceAt);
  add("SplitToSequence", lowerSplitToSequence);
  add("ConcatFromSequence", lowerConcatFromSequence);
  add("Optional", lowerOptional);
  add("OptionalGetElement", lowerOptionalGetElement);
  add("OptionalHasElement", lowerOptionalHasElement);
}

} // namespace kiln::cpu
