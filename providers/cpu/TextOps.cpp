//===- TextOps.cpp - RegexFullMatch, TfIdfVectorizer, StringConcat --------===//
//
// Text ops that libkiln_rt computes: the compiled code hands over the
// strings (one `const char *` each) or token ids with the node's attributes
// as constant arrays, and the runtime fills the static-shaped result.
//
//===----------------------------------------------------------------------===//
#include "providers/cpu/RuntimeCall.h"

#include "kiln/model_abi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace kiln::onnx;

namespace kiln::cpu {
namespace {

/// The address of a constant i64 array (0 when empty).
Value intsAddress(Call &c, ArrayRef<int64_t> values) {
  if (values.empty())
    return c.b.create<arith::ConstantIntOp>(c.l, 0, 64);
  auto type = RankedTensorType::get({(int64_t)values.size()}, c.b.getI64Type());
  return globalConstantAddress(c.b, c.l, c.module(), DenseElementsAttr::get(type, values));
}

Results lowerRegexFullMatch(OpBuilder &b, Operation *op) {
  Value x = op->getOperand(0);
  Call c(b, op);
  c.value(x).i64(typeOf(x).getNumElements());
  c.value(globalStringAddress(b, c.l, c.module(), getStrAttr(op, "pattern", "")));
  return SmallVector<Value>{c.node().filling("kilnRegexFullMatch")};
}

Results lowerTfIdfVectorizer(OpBuilder &b, Operation *op) {
  Value x = op->getOperand(0);
  auto xt = typeOf(x);
  bool strings = op->hasAttr("kiln.strings");
  int64_t dtype = strings ? KILN_DTYPE_STRING : dtypeOfElementType(xt.getElementType());
  StringRef mode = getStrAttr(op, "mode", "TF");
  Call c(b, op);
  c.value(x).i32(dtype);
  c.i64(xt.getRank() == 2 ? xt.getDimSize(0) : 1).i64(xt.getShape().back());
  c.i32(mode == "TFIDF" ? 2 : mode == "IDF" ? 1 : 0);
  c.i64(getIntAttr(op, "min_gram_length", 1)).i64(getIntAttr(op, "max_gram_length", 1));
  c.i64(getIntAttr(op, "max_skip_count", 0));
  SmallVector<int64_t> counts = getIntsAttr(op, "ngram_counts"),
                       indexes = getIntsAttr(op, "ngram_indexes"),
                       pool = getIntsAttr(op, "pool_int64s");
  c.value(intsAddress(c, counts)).i64(counts.size());
  c.value(intsAddress(c, indexes)).i64(indexes.size());
  c.value(intsAddress(c, pool));
  // The string pool as a run-time array of the strings' addresses.
  auto words = op->getAttrOfType<ArrayAttr>("pool_strings");
  if (words && !words.empty()) {
    SmallVector<Value> addresses;
    for (Attribute w : words)
      addresses.push_back(globalStringAddress(b, c.l, c.module(), cast<StringAttr>(w).getValue()));
    c.value(b.create<tensor::FromElementsOp>(
                 c.l, RankedTensorType::get({(int64_t)addresses.size()}, b.getI64Type()), addresses))
        .i64(addresses.size());
  } else {
    c.i64(0).i64(pool.size());
  }
  if (auto weights = op->getAttrOfType<ArrayAttr>("weights"); weights && !weights.empty()) {
    SmallVector<float> w;
    for (Attribute a : weights)
      w.push_back(cast<FloatAttr>(a).getValueAsDouble());
    auto type = RankedTensorType::get({(int64_t)w.size()}, b.getF32Type());
    c.value(globalConstantAddress(b, c.l, c.module(), DenseElementsAttr::get(type, ArrayRef<float>(w))));
  } else {
    c.i64(0);
  }
  c.i64(resultType(op).getShape().back());
  return SmallVector<Value>{c.node().filling("kilnTfIdfVectorizer")};
}

/// Each pair of strings (broadcast) concatenated by the runtime, which owns
/// the new strings until the session runs again.
Results lowerStringConcat(OpBuilder &b, Operation *op) {
  Location l = op->getLoc();
  auto module = op->getParentOfType<ModuleOp>();
  Type i64 = b.getI64Type();
  if (!module.lookupSymbol<func::FuncOp>("kilnStringConcat")) {
    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    mb.create<func::FuncOp>(l, "kilnStringConcat", mb.getFunctionType({i64, i64, i64}, {i64}))
        .setPrivate();
  }
  Value node = globalStringAddress(b, l, module, describeNode(op));
  return SmallVector<Value>{elementwise(
      b, l, resultType(op), op->getOperands(), [&](OpBuilder &nb, Location nl, ValueRange a) {
        return nb.create<func::CallOp>(nl, "kilnStringConcat", TypeRange{i64},
                                       ValueRange{a[0], a[1], node})
            .getResult(0);
      })};
}

bool checkTfIdfVectorizer(Operation *op, std::string &why) {
  auto x = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (!x || x.getRank() < 1 || x.getRank() > 2) {
    why = "needs a 1-D or 2-D input";
    return false;
  }
  SmallVector<int64_t> indexes = getIntsAttr(op, "ngram_indexes");
  if (getIntsAttr(op, "ngram_counts").empty() || indexes.empty()) {
    why = "needs ngram_counts and ngram_indexes";
    return false;
  }
  auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  int64_t width = *llvm::max_element(indexes) + 1;
  if (!out || !out.hasStaticShape() || out.getShape().back() != width) {
    llvm::raw_string_ostream(why) << "needs a result of width " << width
                                  << " (the largest of ngram_indexes + 1), got "
                                  << op->getResult(0).getType();
    return false;
  }
  if (auto weights = op->getAttrOfType<ArrayAttr>("weights");
      weights && !weights.empty() && (int64_t)weights.size() < width) {
    llvm::raw_string_ostream(why) << "has " << weights.size() << " weights for " << width
                                  << " output columns";
    return false;
  }
  return true;
}

} // namespace

void registerTextOps(LoweringTable &m) {
  m["RegexFullMatch"] = {lowerRegexFullMatch, false, nullptr, true};
  m["TfIdfVectorizer"] = {lowerTfIdfVectorizer, false, checkTfIdfVectorizer, true};
  m["StringConcat"] = {lowerStringConcat, false, nullptr, true};
}

} // namespace kiln::cpu
