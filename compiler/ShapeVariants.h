//===- ShapeVariants.h - symbolic dimensions compiled per value -*- C++ -*-===//
//
// Fast paths for listed sizes of a symbolic dimension (a sequence length,
// an image size): kiln compiles the model once for each value the user
// lists (`--dim-values seq=16,32,128`) and the runtime picks, per run, the
// variant compiled for the caller's input shapes; dims not listed stay
// run-time sizes in each. Weights are shared by all variants.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_SHAPEVARIANTS_H
#define KILN_COMPILER_SHAPEVARIANTS_H

#include "compiler/Emit.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include <string>
#include <vector>

namespace kiln {

/// One `--dim-values NAME=V1,V2,...` (or `NAME=LO..HI`).
struct DimValues {
  std::string symbol;
  std::vector<int64_t> values;
};

/// Parses a --dim-values spec; on failure returns false and says why.
bool parseDimValues(llvm::StringRef spec, DimValues &out, std::string &error);

/// Every combination of the listed values, the first symbol varying
/// slowest; one value per DimValues in each.
std::vector<std::vector<int64_t>> dimCombinations(llvm::ArrayRef<DimValues> dims);

/// The pins of one combination, for ImportOptions::dimValues.
llvm::StringMap<int64_t> pinsOf(llvm::ArrayRef<DimValues> dims,
                                llvm::ArrayRef<int64_t> combination);

/// "seq=16, heads=4"
std::string describeCombination(llvm::ArrayRef<DimValues> dims,
                                llvm::ArrayRef<int64_t> combination);

/// Fails, listing the model's symbolic dimensions, when a listed symbol
/// names no symbolic dimension of an input of the freshly imported model.
mlir::LogicalResult checkDimSymbols(mlir::ModuleOp module,
                                    llvm::ArrayRef<DimValues> dims);

/// Fails when the variants' inputs and outputs differ in more than their
/// dimensions (names, types, ranks, batch axes).
mlir::LogicalResult checkSameInterface(llvm::ArrayRef<const ModelSignature *> variants,
                                       llvm::ArrayRef<DimValues> dims,
                                       llvm::ArrayRef<std::vector<int64_t>> combinations);

/// The model as callers of a shape-variant model see it: the first
/// variant's signature with -1 for each dimension that differs between
/// variants, fitted where possible to `scale * symbol + offset`.
ModelSignature mergeSignatures(llvm::ArrayRef<const ModelSignature *> variants,
                               llvm::ArrayRef<DimValues> dims,
                               llvm::ArrayRef<std::vector<int64_t>> combinations);

} // namespace kiln

#endif
