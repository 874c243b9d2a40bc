#include "tensorio/Compare.h"

#include <cmath>
#include <cstdio>
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

} // namespace kiln::tensorio
