// Model inputs and outputs as kiln-run holds them: tensors, or sequence and
// optional values (model ABI 6), with their files and printing. A
// dynamic-shape output (KILN_VALUE_DYNAMIC) runs as a kiln_sequence and is
// held, read, written and compared as the tensor it holds.
#ifndef KILN_RUN_VALUES_H
#define KILN_RUN_VALUES_H

#include "tensorio/HostSequence.h"
#include "tensorio/HostTensor.h"

#include "kiln/kiln_rt.h"

#include <string>

namespace kiln::run {

struct HostValue {
  int32_t Kind = KILN_VALUE_TENSOR; // KILN_VALUE_*
  tensorio::HostTensor Tensor;      // a tensor, also a dynamic-shape one
  tensorio::HostSequence Seq;       // anything else

  /// Whether the model takes or makes it as a dense buffer.
  bool isTensor() const { return Kind == KILN_VALUE_TENSOR; }
  /// Whether it is a tensor in files and comparisons (also a dynamic-shape
  /// output, once the run has unpacked it).
  bool holdsTensor() const {
    return Kind == KILN_VALUE_TENSOR || Kind == KILN_VALUE_DYNAMIC;
  }
  const std::string &name() const {
    return holdsTensor() ? Tensor.Name : Seq.Name;
  }
  void setName(const std::string &Name) {
    (holdsTensor() ? Tensor.Name : Seq.Name) = Name;
  }
};

/// "tensor", "sequence", "optional tensor", "optional sequence" or
/// "dynamic-shape tensor".
const char *valueKindName(int32_t Kind);
/// The same with "a"/"an".
std::string aValueKind(int32_t Kind);
/// Whether any model input or output is not a tensor.
bool hasValueIO(const kiln_model_info &M);

/// Reads an ONNX test-data .pb file holding the message for Kind: a
/// TensorProto (also for a dynamic-shape output), SequenceProto or
/// OptionalProto.
bool readValueFile(const std::string &Path, int32_t Kind, HostValue &Out,
                   std::string &Err);

/// "<Label>: float32 [2,3] = 1 2 3 ..." (the first 8 values).
void printTensorLine(const std::string &Label, const tensorio::HostTensor &T);
/// A sequence/optional output: its kind, dtype and length, then a line per
/// element.
void printSequence(const std::string &Label, const HostValue &V, int32_t DType);

} // namespace kiln::run

#endif // KILN_RUN_VALUES_H
