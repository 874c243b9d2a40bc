#include "tensorio/TensorProto.h"

#include "kiln_onnx.pb.h"

#include <cstring>
#include <fstream>

namespace kiln::tensorio {

namespace {

/// Copies a typed repeated field, narrowing each value to Elem.
template <typename Elem, typename Field>
void copyNarrowed(const Field &Values, std::vector<uint8_t> &Bytes) {
  Bytes.resize(Values.size() * sizeof(Elem));
  for (int I = 0; I < Values.size(); ++I) {
    Elem V = static_cast<Elem>(Values.Get(I));
    std::memcpy(Bytes.data() + I * sizeof(Elem), &V, sizeof(Elem));
  }
}

} // namespace

bool fromTensorProto(const kiln_onnx::TensorProto &P, const std::string &Source,
                     HostTensor &Out, std::string &Err) {
  Out.Name = P.name();
  Out.DType = P.data_type();
  Out.Shape.assign(P.dims().begin(), P.dims().end());
  std::string Label =
      Source + (P.name().empty() ? "" : " (\"" + P.name() + "\")");
  if (P.data_location() == kiln_onnx::TensorProto::EXTERNAL ||
      P.external_data_size() > 0) {
    Err = Label + ": tensors with external data are not supported";
    return false;
  }
  if (Out.DType == KILN_DTYPE_STRING) {
    // One `const char *` per element into a shared buffer of the strings.
    if (P.string_data_size() != Out.numElements()) {
      Err = Label + ": holds " + std::to_string(P.string_data_size()) +
            " strings, shape " + formatShape(Out.Shape) + " needs " +
            std::to_string(Out.numElements());
      return false;
    }
    Out.StringData = std::make_shared<std::string>();
    std::vector<size_t> Offsets;
    for (const std::string &S : P.string_data()) {
      Offsets.push_back(Out.StringData->size());
      Out.StringData->append(S);
      Out.StringData->push_back('\0');
    }
    Out.Bytes.resize(Offsets.size() * sizeof(const char *));
    for (size_t I = 0; I < Offsets.size(); ++I) {
      const char *Ptr = Out.StringData->data() + Offsets[I];
      std::memcpy(Out.Bytes.data() + I * sizeof(Ptr), &Ptr, sizeof(Ptr));
    }
    return true;
  }
  if (P.has_segment()) {
    Err = Label + ": segmented tensors are not supported";
    return false;
  }
  size_t ElemSize = kiln_dtype_size(Out.DType);
  if (ElemSize == 0) {
    Err = Label + ": unsupported dtype " + std::to_string(Out.DType);
    return false;
  }
  uint64_t Need;
  if (!Out.byteSize(Label, Need, Err))
    return false;

  if (P.has_raw_data()) {
    const std::string &Raw = P.raw_data();
    Out.Bytes.assign(Raw.begin(), Raw.end());
  } else {
    switch (Out.DType) {
    case KILN_DTYPE_FLOAT:
    case 14: // complex64: interleaved float pairs
      copyNarrowed<float>(P.float_data(), Out.Bytes);
      break;
    case KILN_DTYPE_DOUBLE:
    case 15: // complex128
      copyNarrowed<double>(P.double_data(), Out.Bytes);
      break;
    case KILN_DTYPE_INT64:
      copyNarrowed<int64_t>(P.int64_data(), Out.Bytes);
      break;
    case KILN_DTYPE_UINT32:
    case KILN_DTYPE_UINT64:
      if (ElemSize == 4)
        copyNarrowed<uint32_t>(P.uint64_data(), Out.Bytes);
      else
        copyNarrowed<uint64_t>(P.uint64_data(), Out.Bytes);
      break;
    case KILN_DTYPE_INT32:
      copyNarrowed<int32_t>(P.int32_data(), Out.Bytes);
      break;
    // Narrow types live in int32_data; 16-bit floats as their bit pattern.
    case KILN_DTYPE_INT16:
      copyNarrowed<int16_t>(P.int32_data(), Out.Bytes);
      break;
    case KILN_DTYPE_UINT16:
    case KILN_DTYPE_FLOAT16:
    case KILN_DTYPE_BFLOAT16:
      copyNarrowed<uint16_t>(P.int32_data(), Out.Bytes);
      break;
    case KILN_DTYPE_INT8:
      copyNarrowed<int8_t>(P.int32_data(), Out.Bytes);
      break;
    default: // bool, uint8, float8 variants
      copyNarrowed<uint8_t>(P.int32_data(), Out.Bytes);
      break;
    }
  }
  // Sub-byte integers come packed (low bits first); kiln takes one per byte.
  bool Nibbles = Out.DType == KILN_DTYPE_UINT4 || Out.DType == KILN_DTYPE_INT4 ||
                 Out.DType == KILN_DTYPE_FLOAT4E2M1;
  bool Crumbs = Out.DType == KILN_DTYPE_UINT2 || Out.DType == KILN_DTYPE_INT2;
  if (int PerByte = Nibbles ? 2 : Crumbs ? 4 : 0) {
    size_t N = static_cast<size_t>(Out.numElements());
    if (Out.Bytes.size() != (N + PerByte - 1) / PerByte) {
      Err = Label + ": holds " + std::to_string(Out.Bytes.size()) +
            " bytes of packed data, shape " + formatShape(Out.Shape) + " needs " +
            std::to_string((N + PerByte - 1) / PerByte);
      return false;
    }
    int Bits = 8 / PerByte;
    std::vector<uint8_t> Packed(Out.Bytes.begin(), Out.Bytes.end());
    Out.Bytes.assign(N, 0);
    for (size_t I = 0; I < N; ++I)
      Out.Bytes[I] = (Packed[I / PerByte] >> (Bits * (I % PerByte))) & ((1 << Bits) - 1);
  }
  if (Out.Bytes.size() != Need) {
    Err = Label + ": holds " + std::to_string(Out.Bytes.size()) +
          " bytes of data, but shape " + formatShape(Out.Shape) + " of " +
          kiln_dtype_name(Out.DType) + " needs " + std::to_string(Need);
    return false;
  }
  return true;
}

bool readTensorProto(const std::string &Path, HostTensor &Out,
                     std::string &Err) {
  std::ifstream In(Path, std::ios::binary);
  if (!In) {
    Err = "cannot open \"" + Path + "\"";
    return false;
  }
  kiln_onnx::TensorProto P;
  if (!P.ParseFromIstream(&In)) {
    Err = "\"" + Path + "\" is not a valid ONNX TensorProto";
    return false;
  }
  return fromTensorProto(P, "\"" + Path + "\"", Out, Err);
}

void toTensorProto(const HostTensor &T, kiln_onnx::TensorProto &P) {
  P.set_name(T.Name);
  P.set_data_type(T.DType);
  for (int64_t D : T.Shape)
    P.add_dims(D);
  P.set_raw_data(T.Bytes.data(), T.Bytes.size());
}

bool writeTensorProto(const std::string &Path, const HostTensor &T,
                      std::string &Err) {
  kiln_onnx::TensorProto P;
  toTensorProto(T, P);
  std::ofstream F(Path, std::ios::binary);
  if (!F || !P.SerializeToOstream(&F) || !F.flush()) {
    Err = "cannot write \"" + Path + "\"";
    return false;
  }
  return true;
}

} // namespace kiln::tensorio
