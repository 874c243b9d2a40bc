//===- SymSize.cpp - sizes as expressions of input dims -------------------===//
#include "passes/SymSize.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <functional>
#include <numeric>

namespace kiln {

struct SymSize::Atom {
  int64_t kind; // -1: symbol `id`; else kSizeFloorDiv/CeilDiv/Mod of lhs, rhs
  int id = 0;
  SymSize lhs, rhs;
};

namespace {
int compareInts(int64_t a, int64_t b) { return a < b ? -1 : a > b ? 1 : 0; }
} // namespace

static int compareAtoms(const SymSize::Atom &a, const SymSize::Atom &b);

bool SymSize::MonomialLess::operator()(const Monomial &a, const Monomial &b) const {
  if (a.size() != b.size())
    return a.size() < b.size();
  for (size_t i = 0; i < a.size(); ++i)
    if (int c = compareAtoms(*a[i], *b[i]))
      return c < 0;
  return false;
}

static int compareAtoms(const SymSize::Atom &a, const SymSize::Atom &b) {
  if (int c = compareInts(a.kind, b.kind))
    return c;
  if (a.kind < 0)
    return compareInts(a.id, b.id);
  if (int c = SymSize::compare(a.lhs, b.lhs))
    return c;
  return SymSize::compare(a.rhs, b.rhs);
}

int SymSize::compare(const SymSize &a, const SymSize &b) {
  auto i = a.terms.begin(), j = b.terms.begin();
  MonomialLess less;
  for (; i != a.terms.end() && j != b.terms.end(); ++i, ++j) {
    if (less(i->first, j->first))
      return -1;
    if (less(j->first, i->first))
      return 1;
    if (int c = compareInts(i->second, j->second))
      return c;
  }
  return compareInts(a.terms.size(), b.terms.size());
}

SymSize SymSize::constant(int64_t c) {
  SymSize s;
  if (c)
    s.terms[{}] = c;
  return s;
}

SymSize SymSize::symbol(int id) {
  auto atom = std::make_shared<Atom>();
  atom->kind = -1;
  atom->id = id;
  SymSize s;
  s.terms[{atom}] = 1;
  return s;
}

std::optional<int64_t> SymSize::asConstant() const {
  if (terms.empty())
    return 0;
  if (terms.size() == 1 && terms.begin()->first.empty())
    return terms.begin()->second;
  return std::nullopt;
}

SymSize SymSize::operator+(const SymSize &o) const {
  SymSize r = *this;
  for (const auto &[m, c] : o.terms)
    if ((r.terms[m] += c) == 0)
      r.terms.erase(m);
  return r;
}

SymSize SymSize::operator-(const SymSize &o) const { return *this + o * constant(-1); }

SymSize SymSize::operator*(const SymSize &o) const {
  SymSize r;
  auto atomLess = [](const std::shared_ptr<const Atom> &a, const std::shared_ptr<const Atom> &b) {
    return compareAtoms(*a, *b) < 0;
  };
  for (const auto &[m1, c1] : terms)
    for (const auto &[m2, c2] : o.terms) {
      Monomial m = m1;
      m.insert(m.end(), m2.begin(), m2.end());
      std::sort(m.begin(), m.end(), atomLess);
      if ((r.terms[m] += c1 * c2) == 0)
        r.terms.erase(m);
    }
  return r;
}

SymSize SymSize::quotient(int64_t kind, const SymSize &a, const SymSize &b) {
  auto ca = a.asConstant(), cb = b.asConstant();
  if (ca && cb && *cb != 0) {
    int64_t q = *ca / *cb, r = *ca % *cb;
    if (r != 0 && ((r < 0) != (*cb < 0)))
      --q; // floor
    int64_t m = *ca - q * *cb;
    if (kind == kSizeMod)
      return constant(m);
    if (kind == kSizeCeilDiv && m != 0)
      ++q;
    return constant(q);
  }
  // A divisor that is one term divides exactly when it divides each term.
  if (kind != kSizeMod && b.terms.size() == 1 && b.terms.begin()->second != 0) {
    const auto &[bm, bc] = *b.terms.begin();
    SymSize r;
    bool exact = true;
    for (const auto &[m, c] : a.terms) {
      if (c % bc != 0) {
        exact = false;
        break;
      }
      // Remove bm's atoms from m (a multiset).
      Monomial rest = m;
      for (const auto &atom : bm) {
        auto it = llvm::find_if(rest, [&](const std::shared_ptr<const Atom> &x) {
          return compareAtoms(*x, *atom) == 0;
        });
        if (it == rest.end()) {
          exact = false;
          break;
        }
        rest.erase(it);
      }
      if (!exact)
        break;
      r.terms[rest] = c / bc;
    }
    if (exact)
      return r;
  }
  auto atom = std::make_shared<Atom>();
  atom->kind = kind;
  atom->lhs = a;
  atom->rhs = b;
  SymSize s;
  s.terms[{atom}] = 1;
  return s;
}

SymSize SymSize::floorDiv(const SymSize &a, const SymSize &b) { return quotient(kSizeFloorDiv, a, b); }
SymSize SymSize::ceilDiv(const SymSize &a, const SymSize &b) { return quotient(kSizeCeilDiv, a, b); }
SymSize SymSize::mod(const SymSize &a, const SymSize &b) { return quotient(kSizeMod, a, b); }

void SymSize::emit(std::vector<int64_t> &program) const {
  auto push = [&](int64_t op, int64_t arg) {
    program.push_back(op);
    program.push_back(arg);
  };
  std::function<void(const SymSize &)> expr = [&](const SymSize &s) {
    bool first = true;
    if (s.terms.empty())
      push(kSizeConst, 0);
    for (const auto &[m, c] : s.terms) {
      push(kSizeConst, c);
      for (const auto &atom : m) {
        if (atom->kind < 0) {
          push(kSizeSymbol, atom->id);
        } else {
          expr(atom->lhs);
          expr(atom->rhs);
          push(atom->kind, 0);
        }
        push(kSizeMul, 0);
      }
      if (!first)
        push(kSizeAdd, 0);
      first = false;
    }
  };
  expr(*this);
}

std::string SymSize::str(llvm::ArrayRef<std::string> names) const {
  std::string out;
  llvm::raw_string_ostream os(out);
  if (terms.empty())
    return "0";
  bool first = true;
  for (const auto &[m, c] : terms) {
    if (!first)
      os << (c < 0 ? " - " : " + ");
    else if (c < 0)
      os << "-";
    first = false;
    int64_t mag = c < 0 ? -c : c;
    if (m.empty() || mag != 1)
      os << mag;
    for (size_t i = 0; i < m.size(); ++i) {
      if (i || mag != 1)
        os << "*";
      const Atom &a = *m[i];
      if (a.kind < 0) {
        os << (a.id < static_cast<int>(names.size()) ? names[a.id] : "s" + std::to_string(a.id));
      } else {
        const char *op = a.kind == kSizeFloorDiv ? " floordiv " : a.kind == kSizeCeilDiv ? " ceildiv " : " mod ";
        os << "(" << a.lhs.str(names) << op << a.rhs.str(names) << ")";
      }
    }
  }
  return out;
}

} // namespace kiln
