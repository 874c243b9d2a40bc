//===- SessionFuzzer.cpp - libkiln_rt's checks of caller tensors ----------===//
//
// The bytes choose a model (hand-written fakes of test/unit/FakeModels),
// then for each input and output a name, dtype, rank, dims and buffer
// size, and run it. Buffers really are as large as size_bytes says, and a
// value the model takes as a sequence gets a real kiln_sequence (its dtype
// fuzzed too): the runtime must refuse every mismatch before it touches
// memory beyond them.
//
//===----------------------------------------------------------------------===//
#include "../runtime/lib/Error.h"
#include "FakeModels.h"
#include "kiln/kiln_rt.h"
#include "kiln/model_abi.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

/// Reads the fuzzer's bytes front to back; zeros once they run out.
struct Bytes {
  const uint8_t *Data;
  size_t Size;
  template <typename T> T take() {
    T V{};
    size_t N = Size < sizeof(T) ? Size : sizeof(T);
    std::memcpy(&V, Data, N);
    Data += N;
    Size -= N;
    return V;
  }
};

struct Tensor {
  std::string Name;
  std::vector<int64_t> Shape;
  std::vector<uint8_t> Buffer;
  kiln_sequence *Seq = nullptr;
  ~Tensor() { kiln_sequence_destroy(Seq); }
};

void fill(Bytes &B, const kiln_model_info *M, bool IsOutput,
          std::vector<Tensor> &Store, std::vector<kiln_tensor> &Out) {
  const kiln_tensor_info *Infos = IsOutput ? M->outputs : M->inputs;
  int32_t N = IsOutput ? M->num_outputs : M->num_inputs;
  int32_t Count = B.take<uint8_t>() % 4;
  Store.resize(Count);
  Out.resize(Count);
  for (int32_t I = 0; I < Count; ++I) {
    Tensor &T = Store[I];
    kiln_tensor &K = Out[I];
    uint8_t Choice = B.take<uint8_t>();
    // Mostly the model's own tensor, with one property changed.
    const kiln_tensor_info *Info = N > 0 ? &Infos[Choice % N] : nullptr;
    T.Name = (Choice & 0x80) || !Info ? "x" + std::to_string(Choice & 7)
                                      : Info->name;
    K.name = (Choice & 0x40) ? nullptr : T.Name.c_str();
    K.dtype = (Choice & 0x20) || !Info ? B.take<int8_t>() : Info->dtype;
    int32_t Rank =
        (Choice & 0x10) || !Info ? B.take<uint8_t>() % 6 : Info->rank;
    if (Rank < 0 || Rank > 8)
      Rank = 2;
    T.Shape.resize(Rank);
    for (int32_t D = 0; D < Rank; ++D) {
      uint8_t How = B.take<uint8_t>();
      bool Keep = Info && Info->shape && D < Info->rank && !(How & 1);
      T.Shape[D] = Keep        ? Info->shape[D]
                   : (How & 2) ? B.take<int64_t>()
                               : B.take<uint8_t>() % 5;
    }
    K.rank = (B.take<uint8_t>() & 0x0f) == 0 ? -1 : Rank;
    K.shape = T.Shape.empty() ? nullptr : T.Shape.data();
    T.Buffer.resize(B.take<uint16_t>() % 257);
    K.data = T.Buffer.empty() && (Choice & 1) ? nullptr : T.Buffer.data();
    K.size_bytes = T.Buffer.size();
    // The model value it binds to, as the runtime matches it.
    int32_t Bound = kiln::rt::matchTensor(Infos, N, K, I);
    if (Bound >= 0 &&
        kiln_model_value_kind(M, IsOutput, Bound) != KILN_VALUE_TENSOR) {
      if (kiln_sequence_create(B.take<uint8_t>() % 20, &T.Seq) != KILN_OK)
        kiln_sequence_create(KILN_DTYPE_FLOAT, &T.Seq);
      K.data = T.Seq;
    }
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  static const kiln_model_info *Models[] = {
      fake::addModel(), fake::twoPartitionModel(), fake::dynamicModel()};
  Bytes B{Data, Size};
  const kiln_model_info *M = Models[B.take<uint8_t>() % 3];
  kiln_session *S = nullptr;
  if (kiln_session_create(M, &S) != KILN_OK)
    return 0;
  std::vector<Tensor> InStore, OutStore;
  std::vector<kiln_tensor> In, Out;
  fill(B, M, /*IsOutput=*/false, InStore, In);
  fill(B, M, /*IsOutput=*/true, OutStore, Out);
  kiln_session_run(S, In.data(), static_cast<int32_t>(In.size()), Out.data(),
                   static_cast<int32_t>(Out.size()));
  kiln_session_destroy(S);
  return 0;
}
