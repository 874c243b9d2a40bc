// A dense, row-major tensor held in host memory, as read from and written
// to .npy / TensorProto files.
#ifndef KILN_TENSORIO_HOSTTENSOR_H
#define KILN_TENSORIO_HOSTTENSOR_H

#include "kiln/kiln_rt.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln::tensorio {

struct HostTensor {
  std::string Name;
  int32_t DType = KILN_DTYPE_UNDEFINED; // ONNX TensorProto type number
  std::vector<int64_t> Shape;
  std::vector<uint8_t> Bytes;
  /// For string tensors, the NUL-terminated characters the pointers in
  /// Bytes point into (shared, so that moving the tensor keeps them valid).
  std::shared_ptr<std::string> StringData;

  /// -1 when a dim is negative or the count overflows int64.
  int64_t numElements() const;
  /// The data's size in Bytes; false, with Err naming Label, when a dim is
  /// negative or the count or the size overflows.
  bool byteSize(const std::string &Label, uint64_t &Bytes,
                std::string &Err) const;
  /// Allocates zeroed Bytes for Shape and DType.
  void allocate();
  /// A kiln_tensor aliasing this tensor; valid while it is alive and
  /// unchanged. WithName=false leaves name NULL (positional matching).
  kiln_tensor view(bool WithName = true);
  /// Element I converted to double (bool, ints, floats incl. 16-bit).
  double elementAsDouble(int64_t I) const;
};

inline float halfToFloat(uint16_t H) { return kiln_float16_to_float(H); }
uint16_t floatToHalf(float F);
inline float bfloat16ToFloat(uint16_t H) { return kiln_bfloat16_to_float(H); }
/// An ONNX float8 value (KILN_DTYPE_FLOAT8*) as float.
float float8ToFloat(uint8_t B, int32_t DType);

/// "[2,3]"
std::string formatShape(const std::vector<int64_t> &Shape);
/// Row-major multi-index of flat element Flat.
std::vector<int64_t> unflattenIndex(int64_t Flat,
                                    const std::vector<int64_t> &Shape);

} // namespace kiln::tensorio

#endif // KILN_TENSORIO_HOSTTENSOR_H
