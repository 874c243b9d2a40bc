// ONNX TensorProto (.pb) files, as in the ONNX test data sets
// (test_data_set_N/input_M.pb).
#ifndef KILN_TENSORIO_TENSORPROTO_H
#define KILN_TENSORIO_TENSORPROTO_H

#include "tensorio/HostTensor.h"

#include <string>

namespace kiln_onnx {
class TensorProto;
} // namespace kiln_onnx

namespace kiln::tensorio {

/// Reads a serialized TensorProto. Handles raw_data and the typed repeated
/// fields; rejects external data and strings with a clear message.
bool readTensorProto(const std::string &Path, HostTensor &Out,
                     std::string &Err);
/// Converts a parsed message; Source names it in messages.
bool fromTensorProto(const kiln_onnx::TensorProto &P, const std::string &Source,
                     HostTensor &Out, std::string &Err);
/// T as a message with raw_data.
void toTensorProto(const HostTensor &T, kiln_onnx::TensorProto &P);
/// Serializes T to Path with raw_data.
bool writeTensorProto(const std::string &Path, const HostTensor &T,
                      std::string &Err);

} // namespace kiln::tensorio

#endif // KILN_TENSORIO_TENSORPROTO_H
