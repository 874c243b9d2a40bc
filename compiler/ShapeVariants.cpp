//===- ShapeVariants.cpp - symbolic dimensions compiled per value ---------===//
#include "compiler/ShapeVariants.h"
#include "compiler/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace kiln {

bool parseDimValues(StringRef spec, DimValues &out, std::string &error) {
  auto [name, list] = spec.split('=');
  name = name.trim();
  error = "--dim-values " + spec.str() + ": expected NAME=V1,V2,... or NAME=LO..HI";
  if (name.empty() || list.trim().empty())
    return false;
  out.symbol = name.str();
  out.values.clear();
  SmallVector<StringRef> parts;
  list.split(parts, ',');
  for (StringRef p : parts) {
    auto [lo, hi] = p.trim().split("..");
    int64_t a, b;
    if (lo.trim().getAsInteger(10, a) || a < 1)
      return false;
    b = a;
    if (!hi.empty() && (hi.trim().getAsInteger(10, b) || b < a))
      return false;
    for (int64_t v = a; v <= b; ++v) {
      if (out.values.size() > 4096)
        return false;
      if (!llvm::is_contained(out.values, v))
        out.values.push_back(v);
    }
  }
  error.clear();
  return true;
}

std::vector<std::vector<int64_t>> dimCombinations(ArrayRef<DimValues> dims) {
  std::vector<std::vector<int64_t>> combos = {{}};
  for (const DimValues &d : dims) {
    std::vector<std::vector<int64_t>> next;
    for (const auto &c : combos)
      for (int64_t v : d.values) {
        next.push_back(c);
        next.back().push_back(v);
      }
    combos = std::move(next);
  }
  return combos;
}

llvm::StringMap<int64_t> pinsOf(ArrayRef<DimValues> dims, ArrayRef<int64_t> combination) {
  llvm::StringMap<int64_t> pins;
  for (auto [d, v] : llvm::zip(dims, combination))
    pins[d.symbol] = v;
  return pins;
}

std::string describeCombination(ArrayRef<DimValues> dims, ArrayRef<int64_t> combination) {
  std::string s;
  for (auto [d, v] : llvm::zip(dims, combination))
    s += (s.empty() ? "" : ", ") + d.symbol + "=" + std::to_string(v);
  return s;
}

LogicalResult checkDimSymbols(ModuleOp module, ArrayRef<DimValues> dims) {
  auto func = module.lookupSymbol<func::FuncOp>("main");
  llvm::StringSet<> symbols;
  std::string known;
  for (unsigned i = 0; func && i < func.getNumArguments(); ++i)
    if (auto names = func.getArgAttrOfType<ArrayAttr>(i, "onnx.dim_params"))
      for (Attribute a : names)
        if (StringRef s = cast<StringAttr>(a).getValue(); !s.empty() && symbols.insert(s).second)
          known += (known.empty() ? "\"" : ", \"") + s.str() + "\"";
  for (const DimValues &d : dims)
    if (!symbols.contains(d.symbol))
      return module.emitError()
             << "--dim-values " << d.symbol << ": no input has a symbolic dimension named \""
             << d.symbol << "\" ("
             << (known.empty() ? std::string("the inputs' shapes are static")
                               : "symbolic dimensions: " + known)
             << ")";
  return success();
}

LogicalResult checkSameInterface(ArrayRef<const ModelSignature *> variants,
                                 ArrayRef<DimValues> dims,
                                 ArrayRef<std::vector<int64_t>> combos) {
  const ModelSignature &a = *variants.front();
  for (size_t v = 1; v < variants.size(); ++v) {
    const ModelSignature &b = *variants[v];
    auto differ = [&](const std::string &what,
                      StringRef why = "only dimensions may differ between shape variants") {
      breakProgressLine();
      llvm::errs() << "kiln: error: --dim-values: " << what << " differs between the variants "
                   << describeCombination(dims, combos[0]) << " and "
                   << describeCombination(dims, combos[v]) << "; " << why << "\n";
      return failure();
    };
    if (a.inputs.size() != b.inputs.size() || a.outputs.size() != b.outputs.size())
      return differ("the number of inputs or outputs");
    for (bool out : {false, true}) {
      const auto &ta = out ? a.outputs : a.inputs, &tb = out ? b.outputs : b.inputs;
      for (size_t i = 0; i < ta.size(); ++i) {
        const TensorSignature &x = ta[i], &y = tb[i];
        if (x.name != y.name || x.dtype != y.dtype || x.kind != y.kind ||
            x.ranked != y.ranked || x.shape.size() != y.shape.size())
          return differ(std::string(out ? "output" : "input") + " \"" + x.name +
                        "\" (its type or rank)");
      }
    }
    if (a.symbols != b.symbols)
      return differ("the symbolic dimensions left to run time");
  }
  return success();
}

/// Fits dimension values seen across variants to scale * symbol + offset.
static TensorSignature::SymbolicDim fit(ArrayRef<int64_t> seen, ArrayRef<DimValues> dims,
                                        ArrayRef<std::vector<int64_t>> combos) {
  for (size_t j = 0; j < dims.size(); ++j) {
    size_t other = 0;
    while (other < combos.size() && combos[other][j] == combos[0][j])
      ++other;
    if (other == combos.size())
      continue;
    int64_t dv = combos[other][j] - combos[0][j], dd = seen[other] - seen[0];
    if (dd % dv != 0)
      continue;
    TensorSignature::SymbolicDim s;
    s.symbol = static_cast<int>(j);
    s.scale = dd / dv;
    s.offset = seen[0] - s.scale * combos[0][j];
    bool all = true;
    for (size_t c = 0; all && c < combos.size(); ++c)
      all = seen[c] == s.scale * combos[c][j] + s.offset;
    if (all)
      return s;
  }
  return {};
}

ModelSignature mergeSignatures(ArrayRef<const ModelSignature *> variants,
                               ArrayRef<DimValues> dims,
                               ArrayRef<std::vector<int64_t>> combos) {
  const ModelSignature &first = *variants.front();
  ModelSignature top = first;
  // Symbols that every variant leaves to run time (a batch not listed)
  // are sizes of the model too, before the listed ones; the variants keep
  // their size programs, the model itself runs none.
  top.dimNames = first.symbols;
  int listedBase = static_cast<int>(top.dimNames.size());
  for (const DimValues &d : dims)
    top.dimNames.push_back(d.symbol);
  top.runtimeSizes = false;
  top.symbols.clear();
  top.inputDimSymbols.clear();
  top.outputSizes.clear();
  top.symbolMax.clear();
  auto merge = [&](std::vector<TensorSignature> &ts, bool isOutput) {
    for (size_t i = 0; i < ts.size(); ++i) {
      TensorSignature &t = ts[i];
      std::vector<TensorSignature::SymbolicDim> kept = t.symbolic;
      t.symbolic.assign(t.shape.size(), {});
      for (size_t d = 0; d < t.shape.size(); ++d) {
        // A run-time size: its program over the model's sizes (unknown
        // where it depends on a listed size).
        auto program = [&](const ModelSignature *v) {
          const auto &p = (isOutput ? v->outputs : v->inputs)[i].sizePrograms;
          return d < p.size() ? p[d] : std::vector<int64_t>();
        };
        if (d < t.sizePrograms.size() &&
            !llvm::all_of(variants, [&](const ModelSignature *v) {
              return program(v) == t.sizePrograms[d];
            }))
          t.sizePrograms[d].clear();
        if (!isOutput && d < kept.size())
          t.symbolic[d] = kept[d];
        SmallVector<int64_t> seen;
        for (const ModelSignature *v : variants)
          seen.push_back((isOutput ? v->outputs : v->inputs)[i].shape[d]);
        if (llvm::all_equal(seen))
          continue;
        t.shape[d] = -1;
        t.symbolic[d] = fit(seen, dims, combos);
        if (t.symbolic[d].symbol >= 0)
          t.symbolic[d].symbol += listedBase;
      }
    }
  };
  merge(top.inputs, false);
  merge(top.outputs, true);
  return top;
}

} // namespace kiln
