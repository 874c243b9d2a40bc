#include "tensorio/SequenceProto.h"

#include "tensorio/TensorProto.h"

#include "kiln_onnx.pb.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <fstream>
#include <sstream>

namespace kiln::tensorio {

namespace {

using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;

// Field numbers SequenceProto and OptionalProto share (onnx-data.proto):
// the tensor(s), sparse tensor(s), sequence(s), map(s) and optional(s) of
// the value.
enum FieldNumber : uint32_t {
  NameField = 1,
  ElemTypeField = 2,
  TensorField = 3,
  SparseField = 4,
  SequenceField = 5,
  MapField = 6,
  OptionalField = 7
};
// Their elem_type values.
enum ElemType : uint64_t { Undefined = 0, Tensor = 1, Sequence = 3 };

/// One field of a serialized message: a varint or a length-delimited
/// payload.
struct Field {
  uint32_t Number = 0;
  bool IsVarint = false;
  uint64_t Varint = 0;
  std::string Bytes;
};

/// Splits a message into its fields; false unless Bytes is a well-formed
/// message whose fields are all varints or length-delimited.
bool splitFields(const std::string &Bytes, std::vector<Field> &Fields) {
  CodedInputStream In(reinterpret_cast<const uint8_t *>(Bytes.data()),
                      static_cast<int>(Bytes.size()));
  while (uint32_t Tag = In.ReadTag()) {
    Field F;
    F.Number = Tag >> 3;
    uint32_t Length = 0;
    switch (Tag & 7) {
    case 0:
      F.IsVarint = true;
      if (!In.ReadVarint64(&F.Varint))
        return false;
      break;
    case 2:
      if (!In.ReadVarint32(&Length) ||
          !In.ReadString(&F.Bytes, static_cast<int>(Length)))
        return false;
      break;
    default:
      return false;
    }
    Fields.push_back(std::move(F));
  }
  return In.ConsumedEntireMessage();
}

/// Whether Bytes has the layout both messages share: fields 1-7, only
/// elem_type a varint. (A TensorProto has other fields, so it does not.)
bool splitValueMessage(const std::string &Bytes, std::vector<Field> &Fields) {
  if (!splitFields(Bytes, Fields))
    return false;
  for (const Field &F : Fields)
    if (F.Number < NameField || F.Number > OptionalField ||
        F.IsVarint != (F.Number == ElemTypeField))
      return false;
  return true;
}

const char *unsupportedContent(uint32_t Number) {
  switch (Number) {
  case SparseField:
    return "sparse tensors";
  case SequenceField:
    return "nested sequences";
  case MapField:
    return "maps";
  default:
    return "optionals inside sequences";
  }
}

bool parseTensor(const std::string &Bytes, const std::string &Source,
                 HostTensor &Out, std::string &Err) {
  kiln_onnx::TensorProto P;
  if (!P.ParseFromString(Bytes)) {
    Err = Source + " is not a valid ONNX TensorProto";
    return false;
  }
  return fromTensorProto(P, Source, Out, Err);
}

bool parseSequence(const std::string &Bytes, const std::string &Source,
                   HostSequence &Out, std::string &Err) {
  std::vector<Field> Fields;
  if (!splitValueMessage(Bytes, Fields)) {
    Err = Source + " is not a valid ONNX SequenceProto";
    return false;
  }
  Out = HostSequence();
  for (const Field &F : Fields) {
    if (F.Number == NameField) {
      Out.Name = F.Bytes;
    } else if (F.Number == ElemTypeField) {
      if (F.Varint != Undefined && F.Varint != Tensor) {
        Err = Source + ": sequences of elem_type " + std::to_string(F.Varint) +
              " are not supported (only tensors)";
        return false;
      }
    } else if (F.Number == TensorField) {
      HostTensor T;
      std::string Label =
          Source + " element " + std::to_string(Out.Elements.size());
      if (!parseTensor(F.Bytes, Label, T, Err))
        return false;
      if (!Out.Elements.empty() && T.DType != Out.DType) {
        Err = Label + " is " + kiln_dtype_name(T.DType) + ", element 0 " +
              kiln_dtype_name(Out.DType);
        return false;
      }
      Out.DType = T.DType;
      Out.Elements.push_back(std::move(T));
    } else {
      Err = Source + ": " + unsupportedContent(F.Number) + " are not supported";
      return false;
    }
  }
  return true;
}

bool parseOptional(const std::vector<Field> &Fields, bool OfSequence,
                   const std::string &Source, HostSequence &Out,
                   std::string &Err) {
  Out = HostSequence();
  Out.None = true;
  std::string Name;
  for (const Field &F : Fields) {
    if (F.Number == NameField) {
      Name = F.Bytes;
    } else if (F.Number == ElemTypeField) {
      // The value field says what the optional holds.
    } else if (F.Number == TensorField && !OfSequence) {
      HostTensor T;
      if (!parseTensor(F.Bytes, Source + " value", T, Err))
        return false;
      Out.None = false;
      Out.DType = T.DType;
      Out.Elements.assign(1, std::move(T));
    } else if (F.Number == SequenceField && OfSequence) {
      if (!parseSequence(F.Bytes, Source + " value", Out, Err))
        return false;
    } else {
      Err = Source + " holds " +
            (F.Number == TensorField     ? "a tensor"
             : F.Number == SequenceField ? "a sequence"
                                         : unsupportedContent(F.Number)) +
            "; the model takes an optional " +
            (OfSequence ? "sequence" : "tensor");
      return false;
    }
  }
  Out.Name = Name;
  return true;
}

void putVarint(CodedOutputStream &Out, uint32_t Number, uint64_t V) {
  Out.WriteTag(Number << 3);
  Out.WriteVarint64(V);
}

void putBytes(CodedOutputStream &Out, uint32_t Number, const std::string &B) {
  Out.WriteTag(Number << 3 | 2);
  Out.WriteVarint32(static_cast<uint32_t>(B.size()));
  Out.WriteString(B);
}

std::string tensorBytes(const HostTensor &T) {
  kiln_onnx::TensorProto P;
  toTensorProto(T, P);
  return P.SerializeAsString();
}

/// A SequenceProto of V's elements, named when Name is not empty.
std::string sequenceBytes(const HostSequence &V, const std::string &Name) {
  std::string S;
  {
    google::protobuf::io::StringOutputStream Stream(&S);
    CodedOutputStream Out(&Stream);
    if (!Name.empty())
      putBytes(Out, NameField, Name);
    putVarint(Out, ElemTypeField, Tensor);
    for (const HostTensor &T : V.Elements)
      putBytes(Out, TensorField, tensorBytes(T));
  }
  return S;
}

} // namespace

bool parseValueProto(const std::string &Bytes, int32_t Kind,
                     const std::string &Source, HostSequence &Out,
                     std::string &Err) {
  if (Kind == KILN_VALUE_SEQUENCE)
    return parseSequence(Bytes, Source, Out, Err);
  if (Kind != KILN_VALUE_OPTIONAL && Kind != KILN_VALUE_OPTIONAL_SEQUENCE) {
    Err = Source + ": not a sequence or optional value (kind " +
          std::to_string(Kind) + ")";
    return false;
  }
  bool OfSequence = Kind == KILN_VALUE_OPTIONAL_SEQUENCE;
  std::vector<Field> Fields;
  if (splitValueMessage(Bytes, Fields))
    return parseOptional(Fields, OfSequence, Source, Out, Err);
  // An optional tensor that has a value may come as the tensor itself.
  kiln_onnx::TensorProto P;
  if (!OfSequence && P.ParseFromString(Bytes)) {
    Out = HostSequence();
    Out.Elements.emplace_back();
    if (!fromTensorProto(P, Source, Out.Elements[0], Err))
      return false;
    Out.Name = Out.Elements[0].Name;
    Out.DType = Out.Elements[0].DType;
    return true;
  }
  Err = Source + " is not a valid ONNX OptionalProto" +
        (OfSequence ? "" : " or TensorProto");
  return false;
}

bool readValueProto(const std::string &Path, int32_t Kind, HostSequence &Out,
                    std::string &Err) {
  std::ifstream In(Path, std::ios::binary);
  if (!In) {
    Err = "cannot open \"" + Path + "\"";
    return false;
  }
  std::ostringstream Bytes;
  Bytes << In.rdbuf();
  return parseValueProto(Bytes.str(), Kind, "\"" + Path + "\"", Out, Err);
}

std::string serializeValueProto(int32_t Kind, const HostSequence &V) {
  if (Kind == KILN_VALUE_SEQUENCE)
    return sequenceBytes(V, V.Name);
  std::string S;
  {
    google::protobuf::io::StringOutputStream Stream(&S);
    CodedOutputStream Out(&Stream);
    if (!V.Name.empty())
      putBytes(Out, NameField, V.Name);
    if (V.None) {
      putVarint(Out, ElemTypeField, Undefined);
    } else if (Kind == KILN_VALUE_OPTIONAL_SEQUENCE) {
      putVarint(Out, ElemTypeField, Sequence);
      putBytes(Out, SequenceField, sequenceBytes(V, ""));
    } else {
      putVarint(Out, ElemTypeField, Tensor);
      if (!V.Elements.empty())
        putBytes(Out, TensorField, tensorBytes(V.Elements[0]));
    }
  }
  return S;
}

bool writeValueProto(const std::string &Path, int32_t Kind,
                     const HostSequence &V, std::string &Err) {
  std::string Bytes = serializeValueProto(Kind, V);
  std::ofstream F(Path, std::ios::binary);
  if (!F ||
      !F.write(Bytes.data(), static_cast<std::streamsize>(Bytes.size())) ||
      !F.flush()) {
    Err = "cannot write \"" + Path + "\"";
    return false;
  }
  return true;
}

} // namespace kiln::tensorio
