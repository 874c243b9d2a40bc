// Elementwise closeness check of a computed tensor against a reference,
// with numpy.allclose semantics (|a-b| <= atol + rtol*|b|).
#ifndef KILN_TENSORIO_COMPARE_H
#define KILN_TENSORIO_COMPARE_H

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

} // namespace kiln::tensorio

#endif // KILN_TENSORIO_COMPARE_H
