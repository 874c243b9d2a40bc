// Status strings and element-type tables.
#include "kiln/kiln_rt.h"

#include <cmath>
#include <cstring>

extern "C" const char *kiln_status_string(kiln_status Status) {
  switch (Status) {
  case KILN_OK:
    return "ok";
  case KILN_ERROR_INVALID_ARGUMENT:
    return "invalid argument";
  case KILN_ERROR_SHAPE_MISMATCH:
    return "shape mismatch";
  case KILN_ERROR_DTYPE_MISMATCH:
    return "dtype mismatch";
  case KILN_ERROR_OUT_OF_MEMORY:
    return "out of memory";
  case KILN_ERROR_ABI_MISMATCH:
    return "ABI mismatch";
  case KILN_ERROR_PROVIDER:
    return "provider error";
  case KILN_ERROR_INTERNAL:
    return "internal error";
  default:
    break;
  }
  return "unknown status";
}

extern "C" size_t kiln_dtype_size(int32_t DType) {
  switch (DType) {
  case KILN_DTYPE_UINT8:
  case KILN_DTYPE_INT8:
  case KILN_DTYPE_BOOL:
  case 17: // float8e4m3fn
  case 18: // float8e4m3fnuz
  case 19: // float8e5m2
  case 20: // float8e5m2fnuz
  case 21: // uint4, one element per byte (unpacked, in the low bits)
  case 22: // int4
  case 23: // float4e2m1, one element per byte
  case 24: // float8e8m0
  case 25: // uint2
  case 26: // int2
    return 1;
  case KILN_DTYPE_STRING: // a `const char *` per element (NUL-terminated)
    return sizeof(const char *);
  case KILN_DTYPE_UINT16:
  case KILN_DTYPE_INT16:
  case KILN_DTYPE_FLOAT16:
  case KILN_DTYPE_BFLOAT16:
    return 2;
  case KILN_DTYPE_FLOAT:
  case KILN_DTYPE_INT32:
  case KILN_DTYPE_UINT32:
    return 4;
  case KILN_DTYPE_INT64:
  case KILN_DTYPE_DOUBLE:
  case KILN_DTYPE_UINT64:
  case 14: // complex64
    return 8;
  case 15: // complex128
    return 16;
  default:
    return 0;
  }
}

extern "C" const char *kiln_dtype_name(int32_t DType) {
  switch (DType) {
  case KILN_DTYPE_FLOAT:
    return "float32";
  case KILN_DTYPE_UINT8:
    return "uint8";
  case KILN_DTYPE_INT8:
    return "int8";
  case KILN_DTYPE_UINT16:
    return "uint16";
  case KILN_DTYPE_INT16:
    return "int16";
  case KILN_DTYPE_INT32:
    return "int32";
  case KILN_DTYPE_INT64:
    return "int64";
  case KILN_DTYPE_STRING:
    return "string";
  case KILN_DTYPE_BOOL:
    return "bool";
  case KILN_DTYPE_FLOAT16:
    return "float16";
  case KILN_DTYPE_DOUBLE:
    return "float64";
  case KILN_DTYPE_UINT32:
    return "uint32";
  case KILN_DTYPE_UINT64:
    return "uint64";
  case 14:
    return "complex64";
  case 15:
    return "complex128";
  case KILN_DTYPE_BFLOAT16:
    return "bfloat16";
  case 17:
    return "float8e4m3fn";
  case 18:
    return "float8e4m3fnuz";
  case 19:
    return "float8e5m2";
  case 20:
    return "float8e5m2fnuz";
  case 21:
    return "uint4";
  case 22:
    return "int4";
  case 23:
    return "float4e2m1";
  case 24:
    return "float8e8m0";
  case 25:
    return "uint2";
  case 26:
    return "int2";
  default:
    return "unknown";
  }
}

extern "C" float kiln_float16_to_float(uint16_t Bits16) {
  uint32_t Sign = static_cast<uint32_t>(Bits16 & 0x8000u) << 16;
  uint32_t Exp = (Bits16 >> 10) & 0x1fu, Mant = Bits16 & 0x3ffu, Bits;
  if (Exp == 0) {
    float F = std::ldexp(static_cast<float>(Mant), -24); // zero or subnormal
    return Sign ? -F : F;
  }
  if (Exp == 31)
    Bits = Sign | 0x7f800000u | (Mant << 13); // inf / NaN
  else
    Bits = Sign | ((Exp + 112) << 23) | (Mant << 13);
  float F;
  std::memcpy(&F, &Bits, sizeof(F));
  return F;
}

extern "C" float kiln_bfloat16_to_float(uint16_t Bits16) {
  uint32_t Bits = static_cast<uint32_t>(Bits16) << 16;
  float F;
  std::memcpy(&F, &Bits, sizeof(F));
  return F;
}
