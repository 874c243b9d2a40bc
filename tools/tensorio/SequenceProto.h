// ONNX SequenceProto and OptionalProto (.pb) files of tensors, as in the
// ONNX test data sets. kiln's generated protobuf holds onnx.proto only;
// these messages (onnx-data.proto) are few and stable, so they are read and
// written at the wire level, their tensors as TensorProto.
#ifndef KILN_TENSORIO_SEQUENCEPROTO_H
#define KILN_TENSORIO_SEQUENCEPROTO_H

#include "tensorio/HostSequence.h"

#include <string>

namespace kiln::tensorio {

/// Parses a value of a model input/output of kind Kind (KILN_VALUE_*):
/// SEQUENCE reads a SequenceProto, OPTIONAL an OptionalProto of a tensor
/// (or, failing that, a plain TensorProto: a present value), and
/// OPTIONAL_SEQUENCE an OptionalProto of a sequence. Source names the data
/// in messages. Nested sequences, maps and sparse tensors are rejected.
bool parseValueProto(const std::string &Bytes, int32_t Kind,
                     const std::string &Source, HostSequence &Out,
                     std::string &Err);
bool readValueProto(const std::string &Path, int32_t Kind, HostSequence &Out,
                    std::string &Err);

/// Serializes V as the message Kind calls for, tensors with raw_data.
std::string serializeValueProto(int32_t Kind, const HostSequence &V);
bool writeValueProto(const std::string &Path, int32_t Kind,
                     const HostSequence &V, std::string &Err);

} // namespace kiln::tensorio

#endif // KILN_TENSORIO_SEQUENCEPROTO_H
