#include "tensorio/Compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace kiln::tensorio {

static std::string formatNumber(double V) {
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "%.8g", V);
  return Buf;
}

std::string CompareResult::summary() const {
  if (!Error.empty())
    return "ERROR: " + Error;
  if (Ok) {
    char Buf[32];
    std::snprintf(Buf, sizeof(Buf), "%.2g", MaxAbsErr);
    return std::string("OK max abs err ") + Buf;
  }
  std::string S = "MISMATCH at " + formatShape(WorstIndex) + ": got " +
                  formatNumber(Got) + " expected " + formatNumber(Expected) +
                  " (abs err " + formatNumber(AbsErr) + ")";
  if (NumMismatches > 1)
    S += ", " + std::to_string(NumMismatches) + " elements differ";
  return S;
}

CompareResult compareTensors(const HostTensor &Got, const HostTensor &Expected,
                             double RTol, double ATol) {
  CompareResult R;
  if (Got.DType != Expected.DType) {
    R.Error = std::string("dtype ") + kiln_dtype_name(Got.DType) +
              " differs from expected " + kiln_dtype_name(Expected.DType);
    return R;
  }
  if (Got.Shape != Expected.Shape) {
    R.Error = "shape " + formatShape(Got.Shape) + " differs from expected " +
              formatShape(Expected.Shape);
    return R;
  }
  size_t ElemSize = kiln_dtype_size(Got.DType);
  int64_t N = Got.numElements();
  if (ElemSize == 0 || Got.Bytes.size() < N * ElemSize ||
      Expected.Bytes.size() < N * ElemSize) {
    R.Error = "tensor data is missing or of an unsupported dtype";
    return R;
  }
  const double Inf = std::numeric_limits<double>::infinity();
  int64_t WorstMax = -1, WorstBad = -1;
  double MaxBadErr = -1;
  for (int64_t I = 0; I < N; ++I) {
    double A = Got.elementAsDouble(I), B = Expected.elementAsDouble(I);
    double Err;
    bool Match;
    if (std::isnan(A) || std::isnan(B)) {
      Match = std::isnan(A) && std::isnan(B);
      Err = Match ? 0 : Inf;
    } else if (A == B) { // also equal infinities
      Match = true;
      Err = 0;
    } else if (std::isinf(A) || std::isinf(B)) {
      // rtol*|inf| would otherwise accept any value.
      Match = false;
      Err = Inf;
    } else {
      Err = std::fabs(A - B);
      Match = Err <= ATol + RTol * std::fabs(B);
    }
    if (WorstMax < 0 || Err > R.MaxAbsErr) {
      R.MaxAbsErr = Err;
      WorstMax = I;
    }
    if (!Match) {
      ++R.NumMismatches;
      if (Err > MaxBadErr) {
        MaxBadErr = Err;
        WorstBad = I;
      }
    }
  }
  R.Ok = R.NumMismatches == 0;
  int64_t Worst = R.Ok ? WorstMax : WorstBad;
  if (Worst >= 0) {
    R.WorstIndex = unflattenIndex(Worst, Got.Shape);
    R.Got = Got.elementAsDouble(Worst);
    R.Expected = Expected.elementAsDouble(Worst);
    R.AbsErr = std::isnan(R.Got) && std::isnan(R.Expected)
                   ? 0
                   : (std::isnan(R.Got) || std::isnan(R.Expected)
                          ? Inf
                          : std::fabs(R.Got - R.Expected));
  }
  return R;
}

std::string SequenceCompareResult::summary(const std::string &Name) const {
  std::string Element =
      Name + "[" + std::to_string(Error.empty() ? WorstElement : ErrorElement) +
      "]";
  if (!Error.empty())
    return "ERROR: " + (ErrorElement >= 0 ? Element + ": " : "") + Error;
  if (Ok && None)
    return "OK (none)";
  if (Ok && Length == 0)
    return "OK (empty sequence)";
  if (Ok) {
    char Buf[32];
    std::snprintf(Buf, sizeof(Buf), "%.2g", MaxAbsErr);
    return std::string("OK max abs err ") + Buf + " (" +
           std::to_string(Length) + (Length == 1 ? " tensor)" : " tensors)");
  }
  // The element's own summary, "MISMATCH at ...", placed in the sequence.
  std::string S = "MISMATCH in " + Element +
                  Worst.summary().substr(std::strlen("MISMATCH"));
  if (NumElementMismatches > 1)
    S += "; " + std::to_string(NumElementMismatches) + " of " +
         std::to_string(Length) + " tensors differ";
  return S;
}

SequenceCompareResult compareSequences(const HostSequence &Got,
                                       const HostSequence &Expected,
                                       double RTol, double ATol) {
  SequenceCompareResult R;
  R.None = Expected.None;
  R.Length = static_cast<int64_t>(Expected.Elements.size());
  if (Got.None != Expected.None) {
    R.Error = Got.None ? "got none, expected a value"
                       : "got a value, expected none";
    return R;
  }
  if (Got.Elements.size() != Expected.Elements.size()) {
    R.Error = "length " + std::to_string(Got.Elements.size()) +
              " differs from expected " + std::to_string(R.Length);
    return R;
  }
  for (int64_t I = 0; I < R.Length; ++I) {
    CompareResult C =
        compareTensors(Got.Elements[I], Expected.Elements[I], RTol, ATol);
    if (!C.Error.empty()) {
      R.Error = C.Error;
      R.ErrorElement = I;
      return R;
    }
    bool WorseMismatch = !C.Ok && (R.NumElementMismatches == 0 ||
                                   C.AbsErr > R.Worst.AbsErr);
    bool WorseMatch = C.Ok && R.NumElementMismatches == 0 &&
                      (R.WorstElement < 0 || C.MaxAbsErr > R.MaxAbsErr);
    if (WorseMismatch || WorseMatch) {
      R.WorstElement = I;
      R.Worst = C;
    }
    R.NumElementMismatches += !C.Ok;
    R.MaxAbsErr = std::max(R.MaxAbsErr, C.MaxAbsErr);
  }
  R.Ok = R.NumElementMismatches == 0;
  return R;
}

} // namespace kiln::tensorio
