#include "Values.h"

#include "tensorio/SequenceProto.h"
#include "tensorio/TensorProto.h"

#include <algorithm>
#include <cstdio>

using namespace kiln::tensorio;

namespace kiln::run {

const char *valueKindName(int32_t Kind) {
  switch (Kind) {
  case KILN_VALUE_SEQUENCE:
    return "sequence";
  case KILN_VALUE_OPTIONAL:
    return "optional tensor";
  case KILN_VALUE_OPTIONAL_SEQUENCE:
    return "optional sequence";
  case KILN_VALUE_DYNAMIC:
    return "dynamic-shape tensor";
  default:
    return "tensor";
  }
}

std::string aValueKind(int32_t Kind) {
  bool Optional =
      Kind == KILN_VALUE_OPTIONAL || Kind == KILN_VALUE_OPTIONAL_SEQUENCE;
  return std::string(Optional ? "an " : "a ") + valueKindName(Kind);
}

bool hasValueIO(const kiln_model_info &M) {
  for (int32_t Out = 0; Out < 2; ++Out)
    for (int32_t I = 0; I < (Out ? M.num_outputs : M.num_inputs); ++I)
      if (kiln_model_value_kind(&M, Out, I) != KILN_VALUE_TENSOR)
        return true;
  return false;
}

bool readValueFile(const std::string &Path, int32_t Kind, HostValue &Out,
                   std::string &Err) {
  Out = HostValue();
  Out.Kind = Kind;
  if (Out.holdsTensor())
    return readTensorProto(Path, Out.Tensor, Err);
  return readValueProto(Path, Kind, Out.Seq, Err);
}

void printTensorLine(const std::string &Label, const HostTensor &T) {
  std::printf("%s: %s %s =", Label.c_str(), kiln_dtype_name(T.DType),
              formatShape(T.Shape).c_str());
  const int64_t Shown = 8, N = T.numElements();
  for (int64_t I = 0; I < std::min(N, Shown); ++I)
    std::printf(" %.6g", T.elementAsDouble(I));
  std::printf("%s\n", N > Shown ? " ..." : "");
}

void printSequence(const std::string &Label, const HostValue &V,
                   int32_t DType) {
  std::printf("%s: %s of %s", Label.c_str(), valueKindName(V.Kind),
              kiln_dtype_name(DType));
  if (V.Seq.None) {
    std::printf(", none\n");
    return;
  }
  std::printf(", length %zu\n", V.Seq.Elements.size());
  for (size_t I = 0; I < V.Seq.Elements.size(); ++I)
    printTensorLine(Label + "[" + std::to_string(I) + "]", V.Seq.Elements[I]);
}

} // namespace kiln::run
