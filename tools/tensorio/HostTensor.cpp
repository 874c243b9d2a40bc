#include "tensorio/HostTensor.h"

#include <cmath>
#include <cstring>

namespace kiln::tensorio {

int64_t HostTensor::numElements() const {
  int64_t N = 1;
  for (int64_t D : Shape)
    if (D < 0 || __builtin_mul_overflow(N, D, &N))
      return -1;
  return N;
}

bool HostTensor::byteSize(const std::string &Label, uint64_t &Bytes,
                          std::string &Err) const {
  int64_t N = numElements();
  if (N >= 0 &&
      !__builtin_mul_overflow(static_cast<uint64_t>(N),
                              static_cast<uint64_t>(kiln_dtype_size(DType)),
                              &Bytes) &&
      Bytes <= static_cast<uint64_t>(INT64_MAX))
    return true;
  Err = Label + ": shape " + formatShape(Shape) +
        " has a negative dim or more than 2^63 elements or bytes";
  return false;
}

void HostTensor::allocate() {
  Bytes.assign(static_cast<size_t>(numElements()) * kiln_dtype_size(DType), 0);
}

kiln_tensor HostTensor::view(bool WithName) {
  kiln_tensor T;
  T.name = WithName ? Name.c_str() : nullptr;
  T.dtype = DType;
  T.rank = static_cast<int32_t>(Shape.size());
  T.shape = Shape.data();
  T.data = Bytes.data();
  T.size_bytes = Bytes.size();
  return T;
}

template <typename T> static T load(const uint8_t *P) {
  T V;
  std::memcpy(&V, P, sizeof(T));
  return V;
}

double HostTensor::elementAsDouble(int64_t I) const {
  const uint8_t *P = Bytes.data() + I * kiln_dtype_size(DType);
  switch (DType) {
  case KILN_DTYPE_FLOAT:
    return load<float>(P);
  case KILN_DTYPE_DOUBLE:
    return load<double>(P);
  case KILN_DTYPE_FLOAT16:
    return halfToFloat(load<uint16_t>(P));
  case KILN_DTYPE_BFLOAT16:
    return bfloat16ToFloat(load<uint16_t>(P));
  case KILN_DTYPE_BOOL:
  case KILN_DTYPE_UINT8:
    return *P;
  case KILN_DTYPE_INT8:
    return load<int8_t>(P);
  case KILN_DTYPE_UINT16:
    return load<uint16_t>(P);
  case KILN_DTYPE_INT16:
    return load<int16_t>(P);
  case KILN_DTYPE_INT32:
    return load<int32_t>(P);
  case KILN_DTYPE_UINT32:
    return load<uint32_t>(P);
  case KILN_DTYPE_INT64:
    return static_cast<double>(load<int64_t>(P));
  case KILN_DTYPE_UINT64:
    return static_cast<double>(load<uint64_t>(P));
  case KILN_DTYPE_FLOAT8E4M3FN:
  case KILN_DTYPE_FLOAT8E4M3FNUZ:
  case KILN_DTYPE_FLOAT8E5M2:
  case KILN_DTYPE_FLOAT8E5M2FNUZ:
    return float8ToFloat(*P, DType);
  case KILN_DTYPE_FLOAT4E2M1: {
    static const double Magnitudes[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
    double V = Magnitudes[*P & 0x7];
    return *P & 0x8 ? -V : V;
  }
  case KILN_DTYPE_FLOAT8E8M0:
    return *P == 0xff ? std::nan("") : std::ldexp(1.0, static_cast<int>(*P) - 127);
  case KILN_DTYPE_UINT4:
    return *P & 0xf;
  case KILN_DTYPE_INT4:
    return static_cast<int8_t>(*P << 4) >> 4;
  case KILN_DTYPE_UINT2:
    return *P & 0x3;
  case KILN_DTYPE_INT2:
    return static_cast<int8_t>(*P << 6) >> 6;
  default:
    return std::nan("");
  }
}

float float8ToFloat(uint8_t B, int32_t DType) {
  bool E5 = DType == KILN_DTYPE_FLOAT8E5M2 || DType == KILN_DTYPE_FLOAT8E5M2FNUZ;
  bool Fnuz = DType == KILN_DTYPE_FLOAT8E4M3FNUZ || DType == KILN_DTYPE_FLOAT8E5M2FNUZ;
  int MantBits = E5 ? 2 : 3, Bias = (E5 ? 15 : 7) + (Fnuz ? 1 : 0);
  int Exp = (B & 0x7f) >> MantBits, Mant = B & ((1 << MantBits) - 1);
  bool Neg = B & 0x80;
  if (Fnuz && B == 0x80)
    return std::nanf("");
  if (!Fnuz && E5 && Exp == 31)
    return Mant ? std::nanf("") : (Neg ? -INFINITY : INFINITY);
  if (!Fnuz && !E5 && (B & 0x7f) == 0x7f)
    return std::nanf("");
  float V = Exp == 0 ? std::ldexp(static_cast<float>(Mant), 1 - Bias - MantBits)
                     : std::ldexp(static_cast<float>(Mant + (1 << MantBits)),
                                  Exp - Bias - MantBits);
  return Neg ? -V : V;
}

uint16_t floatToHalf(float F) {
  uint32_t Bits;
  std::memcpy(&Bits, &F, sizeof(Bits));
  uint16_t Sign = static_cast<uint16_t>((Bits >> 16) & 0x8000u);
  if (std::isnan(F))
    return Sign | 0x7e00u;
  float A = std::fabs(F);
  if (A >= 65520.0f) // rounds to inf in binary16
    return Sign | 0x7c00u;
  if (A < 6.103515625e-05f) // subnormal range: multiples of 2^-24
    return Sign | static_cast<uint16_t>(std::nearbyint(A * 16777216.0f));
  // Normal: round the 23-bit mantissa to 10 bits, nearest-even.
  uint32_t Abs = Bits & 0x7fffffffu;
  uint32_t Rounded = Abs + 0xfffu + ((Abs >> 13) & 1u);
  return Sign | static_cast<uint16_t>((Rounded >> 13) - (112u << 10));
}

std::string formatShape(const std::vector<int64_t> &Shape) {
  std::string S = "[";
  for (size_t I = 0; I < Shape.size(); ++I)
    S += (I ? "," : "") + std::to_string(Shape[I]);
  return S + "]";
}

std::vector<int64_t> unflattenIndex(int64_t Flat,
                                    const std::vector<int64_t> &Shape) {
  std::vector<int64_t> Index(Shape.size(), 0);
  for (size_t I = Shape.size(); I-- > 0;) {
    if (Shape[I] == 0)
      continue;
    Index[I] = Flat % Shape[I];
    Flat /= Shape[I];
  }
  return Index;
}

} // namespace kiln::tensorio
