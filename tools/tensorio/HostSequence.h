// A sequence or optional value held in host memory (ONNX seq(tensor),
// optional(tensor), optional(seq(tensor))), as read from SequenceProto /
// OptionalProto files and exchanged with a kiln_sequence.
#ifndef KILN_TENSORIO_HOSTSEQUENCE_H
#define KILN_TENSORIO_HOSTSEQUENCE_H

#include "tensorio/HostTensor.h"

#include <string>
#include <vector>

namespace kiln::tensorio {

struct HostSequence {
  std::string Name;
  /// Of the elements; undefined when a file did not say (none or empty).
  int32_t DType = KILN_DTYPE_UNDEFINED;
  /// An optional without a value; it then has no elements.
  bool None = false;
  std::vector<HostTensor> Elements;
};

/// Replaces Out's contents with copies of In's (Out keeps its dtype, which
/// every element must have).
bool toKilnSequence(const HostSequence &In, kiln_sequence *Out,
                    std::string &Err);
/// Copies a kiln_sequence's contents; Name is left as it is.
void fromKilnSequence(const kiln_sequence *In, HostSequence &Out);

} // namespace kiln::tensorio

#endif // KILN_TENSORIO_HOSTSEQUENCE_H
