//===- KilnDialect.cpp - kiln execution dialect ---------------------------===//
#include "dialects/kiln/KilnDialect.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace kiln;

#include "dialects/kiln/KilnOpsDialect.cpp.inc"

void KilnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/kiln/KilnOps.cpp.inc"
      >();
}

LogicalResult PartitionOp::verify() {
  auto yield = cast<YieldOp>(getBody().front().getTerminator());
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("yielded types do not match the partition's results");
  if (getProvider().empty())
    return emitOpError("needs a provider name");
  return success();
}

int64_t PartitionOp::getNumBodyOps() {
  return static_cast<int64_t>(getBody().front().getOperations().size()) - 1;
}

LogicalResult CheckOp::verify() {
  size_t holes = 0;
  for (size_t at = getMessage().find("{}"); at != StringRef::npos;
       at = getMessage().find("{}", at + 2))
    ++holes;
  // kilnCheckMessage takes three values; a message without values is
  // printed as it is.
  if (getValues().size() > 3 ||
      (!getValues().empty() && holes != getValues().size()))
    return emitOpError(
        "needs one `{}` in the message per value, at most three");
  return success();
}

LogicalResult CheckOp::canonicalize(CheckOp op, PatternRewriter &rewriter) {
  if (!matchPattern(op.getCondition(), m_One()))
    return failure();
  rewriter.eraseOp(op);
  return success();
}

ResultRange RuntimeCallOp::getWritten() {
  bool onTensors = !getOuts().empty() && isa<TensorType>(getOuts()[0].getType());
  return getResults().take_front(onTensors ? getOuts().size() : 0);
}

Value RuntimeCallOp::getValue() {
  return getResults().size() > getWritten().size() ? getResults().back() : Value();
}

LogicalResult RuntimeCallOp::verify() {
  bool onTensors = llvm::all_of(getOuts(), [](Value v) { return isa<TensorType>(v.getType()); });
  bool onMemrefs = llvm::all_of(getOuts(), [](Value v) { return isa<MemRefType>(v.getType()); });
  if (!onTensors && !onMemrefs)
    return emitOpError("`outs` mixes tensors and memrefs");
  for (Value v : getOuts())
    if (!cast<ShapedType>(v.getType()).hasStaticShape())
      return emitOpError("`outs` need static shapes");
  if (getWritten().getTypes() != TypeRange(getOuts().getTypes()).take_front(getWritten().size()))
    return emitOpError("needs one result per tensor of `outs`, of its type");
  if (getResults().size() > getWritten().size() + 1 ||
      (getValue() && isa<ShapedType>(getValue().getType())))
    return emitOpError("returns at most one scalar after the `outs` values");
  return success();
}

// Bufferization: args are read, outs written in place (destination style).

static bool isOutsOperand(RuntimeCallOp op, OpOperand &operand) {
  // `outs` come last.
  return operand.getOperandNumber() >= op->getNumOperands() - op.getOuts().size();
}

bool RuntimeCallOp::bufferizesToMemoryRead(OpOperand &operand,
                                           const bufferization::AnalysisState &) {
  return !isOutsOperand(*this, operand);
}

bool RuntimeCallOp::bufferizesToMemoryWrite(OpOperand &operand,
                                            const bufferization::AnalysisState &) {
  return isOutsOperand(*this, operand);
}

bufferization::AliasingValueList
RuntimeCallOp::getAliasingValues(OpOperand &operand, const bufferization::AnalysisState &) {
  if (!isOutsOperand(*this, operand))
    return {};
  unsigned first = getNumOperands() - getOuts().size();
  return {{getWritten()[operand.getOperandNumber() - first],
           bufferization::BufferRelation::Equivalent}};
}

LogicalResult RuntimeCallOp::bufferize(RewriterBase &rewriter,
                                       const bufferization::BufferizationOptions &options) {
  Location loc = getLoc();
  // The callee sees dense row-major buffers; others go through a copy.
  auto dense = [&](Value buf) -> Value {
    auto t = cast<MemRefType>(buf.getType());
    if (t.getLayout().isIdentity())
      return buf;
    return rewriter.create<memref::AllocOp>(
        loc, MemRefType::get(t.getShape(), t.getElementType()));
  };
  SmallVector<Value> args, outs, results;
  for (Value v : getArgs()) {
    if (!isa<TensorType>(v.getType())) {
      args.push_back(v);
      continue;
    }
    FailureOr<Value> buf = bufferization::getBuffer(rewriter, v, options);
    if (failed(buf))
      return failure();
    Value d = dense(*buf);
    if (d != *buf)
      rewriter.create<memref::CopyOp>(loc, *buf, d);
    args.push_back(d);
  }
  SmallVector<std::pair<Value, Value>> copyBack;
  for (Value v : getOuts()) {
    FailureOr<Value> buf = bufferization::getBuffer(rewriter, v, options);
    if (failed(buf))
      return failure();
    Value d = dense(*buf);
    if (d != *buf)
      copyBack.push_back({d, *buf});
    outs.push_back(d);
    results.push_back(*buf);
  }
  SmallVector<Type> valueType;
  if (getValue())
    valueType.push_back(getValue().getType());
  auto call = rewriter.create<RuntimeCallOp>(loc, valueType, getCalleeAttr(), args, outs);
  for (auto [from, to] : copyBack)
    rewriter.create<memref::CopyOp>(loc, from, to);
  if (getValue())
    results.push_back(call.getValue());
  bufferization::replaceOpWithBufferizedValues(rewriter, *this, results);
  return success();
}

#define GET_OP_CLASSES
#include "dialects/kiln/KilnOps.cpp.inc"
