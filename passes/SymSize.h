//===- SymSize.h - sizes as expressions of input dims ----------*- C++ -*-===//
//
// A symbolic size is a polynomial with integer coefficients over atoms:
// the model's dimension symbols (`batch`, `sequence`, ...) and quotients
// that do not divide exactly. Polynomials are kept canonical, so two sizes
// are provably equal exactly when their terms are (`past + seq` twice, or
// `batch * heads` from a Reshape and from a MatMul).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_SYMSIZE_H
#define KILN_PASSES_SYMSIZE_H

#include "kiln/model_abi.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// Opcodes of the size programs in the model descriptor: model_abi.h's
/// KILN_SIZE_*, pairs (opcode, operand) in postfix order.
enum SizeOpcode : int64_t {
  kSizeConst = KILN_SIZE_CONST,
  kSizeSymbol = KILN_SIZE_SYMBOL,
  kSizeAdd = KILN_SIZE_ADD,
  kSizeMul = KILN_SIZE_MUL,
  kSizeFloorDiv = KILN_SIZE_FLOORDIV,
  kSizeCeilDiv = KILN_SIZE_CEILDIV,
  kSizeMod = KILN_SIZE_MOD,
  kSizeEnd = KILN_SIZE_END,
};

class SymSize {
public:
  static SymSize constant(int64_t c);
  static SymSize symbol(int id);

  std::optional<int64_t> asConstant() const;
  bool operator==(const SymSize &o) const { return compare(*this, o) == 0; }
  bool operator!=(const SymSize &o) const { return !(*this == o); }
  SymSize operator+(const SymSize &o) const;
  SymSize operator-(const SymSize &o) const;
  SymSize operator*(const SymSize &o) const;
  /// floor(a / b), ceil(a / b) and a mod b; exact where b divides every
  /// term, else a new atom.
  static SymSize floorDiv(const SymSize &a, const SymSize &b);
  static SymSize ceilDiv(const SymSize &a, const SymSize &b);
  static SymSize mod(const SymSize &a, const SymSize &b);

  /// Appends the postfix program computing this size.
  void emit(std::vector<int64_t> &program) const;
  /// e.g. "batch*sequence + 3"; `names` names the symbols.
  std::string str(llvm::ArrayRef<std::string> names) const;

  /// A total order (structural).
  static int compare(const SymSize &a, const SymSize &b);

  struct Atom; // a symbol, or an inexact quotient/remainder

private:
  using Monomial = std::vector<std::shared_ptr<const Atom>>;
  struct MonomialLess {
    bool operator()(const Monomial &a, const Monomial &b) const;
  };
  static SymSize quotient(int64_t kind, const SymSize &a, const SymSize &b);
  std::map<Monomial, int64_t, MonomialLess> terms;
};

} // namespace kiln

#endif
