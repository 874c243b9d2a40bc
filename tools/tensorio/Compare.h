// Elementwise closeness check of a computed tensor against a reference,
// with numpy.allclose semantics (|a-b| <= atol + rtol*|b|).
#ifndef KILN_TENSORIO_COMPARE_H
#define KILN_TENSORIO_COMPARE_H

#include "tensorio/HostSequence.h"
#include "tensorio/HostTensor.h"

#include <string>
#include <vector>

namespace kiln::tensorio {

struct CompareResult {
  bool Ok = false;
  /// Set when the tensors cannot be compared (dtype or shape differ).
  std::string Error;
  int64_t NumMismatches = 0;
  /// Largest |got - expected| over all elements (inf for NaN vs number).
  double MaxAbsErr = 0;
  /// The worst element: the mismatch with the largest error, or the element
  /// with MaxAbsErr when all match.
  std::vector<int64_t> WorstIndex;
  double Got = 0, Expected = 0, AbsErr = 0;

  /// "OK max abs err 2.1e-07" or "MISMATCH at [0,3]: got 1.5 expected 1.2
  /// (abs err 0.3)"
  std::string summary() const;
};

/// NaN matches NaN; infinities match only themselves.
CompareResult compareTensors(const HostTensor &Got, const HostTensor &Expected,
                             double RTol, double ATol);

/// A sequence or optional value against its reference: the same none-ness
/// and length, then element by element as compareTensors does.
struct SequenceCompareResult {
  bool Ok = false;
  /// Set when the values cannot be compared; ErrorElement is the element
  /// at fault, or -1 (none-ness, length).
  std::string Error;
  int64_t ErrorElement = -1;
  bool None = false;
  int64_t Length = 0;
  /// Elements that do not match, and the worst: the one with the largest
  /// mismatch, or the one with MaxAbsErr when all match.
  int64_t NumElementMismatches = 0;
  int64_t WorstElement = -1;
  CompareResult Worst;
  double MaxAbsErr = 0;

  /// "OK max abs err 1e-07 (3 tensors)" or "MISMATCH in y[1] at [0,2]:
  /// got 1.5 expected 1.2 (abs err 0.3)"; Name names the value.
  std::string summary(const std::string &Name) const;
};

SequenceCompareResult compareSequences(const HostSequence &Got,
                                       const HostSequence &Expected,
                                       double RTol, double ATol);

} // namespace kiln::tensorio

#endif // KILN_TENSORIO_COMPARE_H
