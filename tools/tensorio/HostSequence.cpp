#include "tensorio/HostSequence.h"

#include <cstring>

namespace kiln::tensorio {

bool toKilnSequence(const HostSequence &In, kiln_sequence *Out,
                    std::string &Err) {
  int32_t DType = kiln_sequence_dtype(Out);
  for (size_t I = 0; I < In.Elements.size(); ++I)
    if (In.Elements[I].DType != DType) {
      Err = "element " + std::to_string(I) + " is " +
            kiln_dtype_name(In.Elements[I].DType) + ", expected " +
            kiln_dtype_name(DType);
      return false;
    }
  kiln_sequence_set_none(Out, In.None);
  kiln_sequence_clear(Out);
  for (const HostTensor &E : In.Elements) {
    kiln_tensor View{nullptr,
                     E.DType,
                     static_cast<int32_t>(E.Shape.size()),
                     E.Shape.data(),
                     const_cast<uint8_t *>(E.Bytes.data()),
                     E.Bytes.size()};
    if (kiln_sequence_append(Out, &View) != KILN_OK) {
      Err = kiln_last_error();
      return false;
    }
  }
  return true;
}

void fromKilnSequence(const kiln_sequence *In, HostSequence &Out) {
  Out.DType = kiln_sequence_dtype(In);
  Out.None = kiln_sequence_is_none(In) != 0;
  Out.Elements.clear();
  for (int64_t I = 0, N = kiln_sequence_length(In); I < N; ++I) {
    kiln_tensor V;
    if (kiln_sequence_at(In, I, &V) != KILN_OK)
      break;
    HostTensor T;
    T.DType = V.dtype;
    T.Shape.assign(V.shape, V.shape + V.rank);
    const auto *Data = static_cast<const uint8_t *>(V.data);
    T.Bytes.assign(Data, Data + V.size_bytes);
    Out.Elements.push_back(std::move(T));
  }
}

} // namespace kiln::tensorio
