//===- TensorFileFuzzer.cpp - kiln-run's .npy and .pb readers -------------===//
//
// The first byte picks the reader: .npy images, TensorProto (.pb), and the
// Sequence/Optional protos of sequence and optional inputs. Each must accept or
// refuse with a message, never read past its input or allocate what a header
// merely claims.
//
//===----------------------------------------------------------------------===//
#include "kiln/model_abi.h"
#include "tensorio/Npy.h"
#include "tensorio/SequenceProto.h"
#include "tensorio/TensorProto.h"

#include "kiln_onnx.pb.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  if (Size == 0)
    return 0;
  std::string Bytes(reinterpret_cast<const char *>(Data) + 1, Size - 1);
  std::string Err;
  switch (Data[0] % 5) {
  case 0: {
    kiln::tensorio::HostTensor T;
    kiln::tensorio::parseNpy(Bytes, "fuzz.npy", T, Err);
    break;
  }
  case 1: {
    kiln_onnx::TensorProto P;
    kiln::tensorio::HostTensor T;
    if (P.ParseFromString(Bytes))
      kiln::tensorio::fromTensorProto(P, "fuzz.pb", T, Err);
    break;
  }
  default: {
    kiln::tensorio::HostSequence S;
    // Kinds 1-3: sequence, optional, optional sequence.
    kiln::tensorio::parseValueProto(Bytes, Data[0] % 5 - 1, "fuzz.pb", S, Err);
    break;
  }
  }
  return 0;
}
