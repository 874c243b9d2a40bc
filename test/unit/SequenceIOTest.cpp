// SequenceProto/OptionalProto files, sequence comparison and the exchange
// with kiln_sequence.
#include "tensorio/Compare.h"
#include "tensorio/HostSequence.h"
#include "tensorio/SequenceProto.h"

#include "kiln_onnx.pb.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <unistd.h>

using namespace kiln::tensorio;

namespace {

// Messages as ONNX's numpy_helper (onnx 1.23) serializes them.
// from_list([float32 [1.5, 2], float32 [[3, 4]]], name="s")
const char OnnxSequence[] =
    "\x0a\x01\x73\x10\x01\x1a\x0e\x08\x02\x10\x01\x4a\x08\x00\x00\xc0\x3f\x00"
    "\x00\x00\x40\x1a\x10\x08\x01\x08\x02\x10\x01\x4a\x08\x00\x00\x40\x40\x00"
    "\x00\x80\x40";
// from_optional(int64 [7, 8, 9], name="o")
const char OnnxOptionalTensor[] =
    "\x0a\x01\x6f\x10\x01\x1a\x1e\x08\x03\x10\x07\x4a\x18\x07\x00\x00\x00\x00"
    "\x00\x00\x00\x08\x00\x00\x00\x00\x00\x00\x00\x09\x00\x00\x00\x00\x00\x00"
    "\x00";
// from_optional([int32 [5]], name="os")
const char OnnxOptionalSequence[] = "\x0a\x02\x6f\x73\x10\x03\x2a\x0e\x10\x01"
                                    "\x1a\x0a\x08\x01\x10\x06\x4a\x04\x05\x00"
                                    "\x00\x00";
// from_optional(None, name="n")
const char OnnxNone[] = "\x0a\x01\x6e\x10\x00";

template <size_t N> std::string bytes(const char (&S)[N]) {
  return std::string(S, N - 1);
}

std::string tempPath(const std::string &Stem) {
  return ::testing::TempDir() + "kiln_sio_" + std::to_string(getpid()) + "_" +
         Stem;
}

/// A length-delimited field, hand-encoded (payloads here are < 128 bytes).
std::string lengthField(int Number, const std::string &Payload) {
  return std::string(1, static_cast<char>(Number << 3 | 2)) +
         static_cast<char>(Payload.size()) + Payload;
}

HostTensor floats(std::vector<int64_t> Shape, std::vector<float> V) {
  HostTensor T;
  T.DType = KILN_DTYPE_FLOAT;
  T.Shape = std::move(Shape);
  T.Bytes.resize(V.size() * 4);
  if (!V.empty()) // (memcpy from an empty vector's null data is UB)
    std::memcpy(T.Bytes.data(), V.data(), T.Bytes.size());
  return T;
}

TEST(SequenceProto, ReadsOnnxSequence) {
  std::string Path = tempPath("s.pb"), Err;
  std::ofstream(Path, std::ios::binary) << bytes(OnnxSequence);
  HostSequence S;
  ASSERT_TRUE(readValueProto(Path, KILN_VALUE_SEQUENCE, S, Err)) << Err;
  EXPECT_EQ(S.Name, "s");
  EXPECT_FALSE(S.None);
  EXPECT_EQ(S.DType, KILN_DTYPE_FLOAT);
  ASSERT_EQ(S.Elements.size(), 2u);
  EXPECT_EQ(S.Elements[0].Shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(S.Elements[0].elementAsDouble(0), 1.5);
  EXPECT_EQ(S.Elements[1].Shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(S.Elements[1].elementAsDouble(1), 4);
  std::remove(Path.c_str());

  // An empty sequence.
  ASSERT_TRUE(parseValueProto(bytes("\x0a\x01\x65\x10\x01"),
                              KILN_VALUE_SEQUENCE, "e", S, Err))
      << Err;
  EXPECT_EQ(S.Name, "e");
  EXPECT_TRUE(S.Elements.empty());
}

TEST(SequenceProto, ReadsOnnxOptionals) {
  HostSequence S;
  std::string Err;
  ASSERT_TRUE(parseValueProto(bytes(OnnxOptionalTensor), KILN_VALUE_OPTIONAL,
                              "o", S, Err))
      << Err;
  EXPECT_EQ(S.Name, "o");
  EXPECT_FALSE(S.None);
  ASSERT_EQ(S.Elements.size(), 1u);
  EXPECT_EQ(S.Elements[0].DType, KILN_DTYPE_INT64);
  EXPECT_EQ(S.Elements[0].elementAsDouble(2), 9);

  ASSERT_TRUE(parseValueProto(bytes(OnnxOptionalSequence),
                              KILN_VALUE_OPTIONAL_SEQUENCE, "os", S, Err))
      << Err;
  EXPECT_EQ(S.Name, "os");
  EXPECT_FALSE(S.None);
  ASSERT_EQ(S.Elements.size(), 1u);
  EXPECT_EQ(S.Elements[0].DType, KILN_DTYPE_INT32);
  EXPECT_EQ(S.Elements[0].elementAsDouble(0), 5);

  for (int32_t Kind : {KILN_VALUE_OPTIONAL, KILN_VALUE_OPTIONAL_SEQUENCE}) {
    ASSERT_TRUE(parseValueProto(bytes(OnnxNone), Kind, "n", S, Err)) << Err;
    EXPECT_EQ(S.Name, "n");
    EXPECT_TRUE(S.None);
    EXPECT_TRUE(S.Elements.empty());
  }
}

TEST(SequenceProto, OptionalTensorAsTensorProto) {
  kiln_onnx::TensorProto P;
  P.set_name("t");
  P.set_data_type(kiln_onnx::TensorProto::FLOAT);
  P.add_dims(1);
  P.add_float_data(2.5f);
  HostSequence S;
  std::string Err;
  ASSERT_TRUE(
      parseValueProto(P.SerializeAsString(), KILN_VALUE_OPTIONAL, "t", S, Err))
      << Err;
  EXPECT_EQ(S.Name, "t");
  ASSERT_EQ(S.Elements.size(), 1u);
  EXPECT_EQ(S.Elements[0].elementAsDouble(0), 2.5);
  // Not for a sequence.
  EXPECT_FALSE(parseValueProto(P.SerializeAsString(), KILN_VALUE_SEQUENCE,
                               "t.pb", S, Err));
  EXPECT_EQ(Err, "t.pb is not a valid ONNX SequenceProto");
}

TEST(SequenceProto, RejectsWhatKilnCannotHold) {
  HostSequence S;
  std::string Err;
  EXPECT_FALSE(parseValueProto(bytes(OnnxOptionalSequence), KILN_VALUE_OPTIONAL,
                               "f.pb", S, Err));
  EXPECT_EQ(Err, "f.pb holds a sequence; the model takes an optional tensor");
  EXPECT_FALSE(parseValueProto(bytes(OnnxOptionalTensor),
                               KILN_VALUE_OPTIONAL_SEQUENCE, "f.pb", S, Err));
  EXPECT_EQ(Err, "f.pb holds a tensor; the model takes an optional sequence");

  std::string Nested = lengthField(5, "\x10\x01");
  EXPECT_FALSE(parseValueProto(Nested, KILN_VALUE_SEQUENCE, "f.pb", S, Err));
  EXPECT_EQ(Err, "f.pb: nested sequences are not supported");
  EXPECT_FALSE(
      parseValueProto(bytes("\x10\x04"), KILN_VALUE_SEQUENCE, "f.pb", S, Err));
  EXPECT_EQ(Err, "f.pb: sequences of elem_type 4 are not supported (only "
                 "tensors)");

  // Elements of two dtypes.
  kiln_onnx::TensorProto F, I;
  F.set_data_type(kiln_onnx::TensorProto::FLOAT);
  F.add_float_data(1);
  I.set_data_type(kiln_onnx::TensorProto::INT64);
  I.add_int64_data(1);
  std::string Mixed = lengthField(3, F.SerializeAsString()) +
                      lengthField(3, I.SerializeAsString());
  EXPECT_FALSE(parseValueProto(Mixed, KILN_VALUE_SEQUENCE, "f.pb", S, Err));
  EXPECT_EQ(Err, "f.pb element 1 is int64, element 0 float32");

  EXPECT_FALSE(
      parseValueProto("\xff\xff\xff", KILN_VALUE_OPTIONAL, "g.pb", S, Err));
  EXPECT_EQ(Err, "g.pb is not a valid ONNX OptionalProto or TensorProto");
  EXPECT_FALSE(
      readValueProto(tempPath("missing.pb"), KILN_VALUE_SEQUENCE, S, Err));
  EXPECT_NE(Err.find("cannot open"), std::string::npos);
}

TEST(SequenceProto, WriteReadRoundTrip) {
  HostSequence V;
  V.Name = "v";
  V.DType = KILN_DTYPE_FLOAT;
  V.Elements = {floats({2}, {1, 2}), floats({}, {3})};
  for (int32_t Kind : {KILN_VALUE_SEQUENCE, KILN_VALUE_OPTIONAL_SEQUENCE}) {
    std::string Path = tempPath("rt.pb"), Err;
    ASSERT_TRUE(writeValueProto(Path, Kind, V, Err)) << Err;
    HostSequence Back;
    ASSERT_TRUE(readValueProto(Path, Kind, Back, Err)) << Err;
    EXPECT_EQ(Back.Name, "v");
    ASSERT_EQ(Back.Elements.size(), 2u);
    EXPECT_EQ(Back.Elements[1].Shape, std::vector<int64_t>{});
    EXPECT_EQ(Back.Elements[1].Bytes, V.Elements[1].Bytes);
    std::remove(Path.c_str());
  }
  HostSequence One = V;
  One.Elements.resize(1);
  HostSequence Back;
  std::string Err;
  ASSERT_TRUE(parseValueProto(serializeValueProto(KILN_VALUE_OPTIONAL, One),
                              KILN_VALUE_OPTIONAL, "x", Back, Err))
      << Err;
  ASSERT_EQ(Back.Elements.size(), 1u);
  EXPECT_EQ(Back.Elements[0].Bytes, One.Elements[0].Bytes);

  // A none optional is written as ONNX writes it.
  HostSequence None;
  None.Name = "n";
  None.None = true;
  EXPECT_EQ(serializeValueProto(KILN_VALUE_OPTIONAL, None), bytes(OnnxNone));
}

TEST(SequenceCompare, NoneLengthAndElements) {
  HostSequence Exp;
  Exp.DType = KILN_DTYPE_FLOAT;
  Exp.Elements = {floats({2}, {1, 2}), floats({3}, {3, 4, 5}),
                  floats({1}, {6})};
  HostSequence Got = Exp;
  SequenceCompareResult R = compareSequences(Got, Exp, 1e-3, 1e-5);
  EXPECT_TRUE(R.Ok);
  EXPECT_EQ(R.summary("y"), "OK max abs err 0 (3 tensors)");

  reinterpret_cast<float *>(Got.Elements[1].Bytes.data())[2] = 5.5f;
  reinterpret_cast<float *>(Got.Elements[2].Bytes.data())[0] = 6.25f;
  R = compareSequences(Got, Exp, 1e-3, 1e-5);
  EXPECT_FALSE(R.Ok);
  EXPECT_EQ(R.WorstElement, 1);
  EXPECT_EQ(R.NumElementMismatches, 2);
  EXPECT_EQ(R.summary("y"), "MISMATCH in y[1] at [2]: got 5.5 expected 5 (abs "
                            "err 0.5); 2 of 3 tensors differ");

  Got.Elements[1] = floats({1, 3}, {3, 4, 5});
  R = compareSequences(Got, Exp, 1e-3, 1e-5);
  EXPECT_EQ(R.summary("y"),
            "ERROR: y[1]: shape [1,3] differs from expected [3]");

  Got.Elements.pop_back();
  EXPECT_EQ(compareSequences(Got, Exp, 0, 0).summary("y"),
            "ERROR: length 2 differs from expected 3");

  HostSequence None;
  None.None = true;
  EXPECT_EQ(compareSequences(None, Exp, 0, 0).summary("y"),
            "ERROR: got none, expected a value");
  EXPECT_EQ(compareSequences(Exp, None, 0, 0).summary("y"),
            "ERROR: got a value, expected none");
  EXPECT_EQ(compareSequences(None, None, 0, 0).summary("y"), "OK (none)");
  EXPECT_EQ(compareSequences(HostSequence(), HostSequence(), 0, 0).summary("y"),
            "OK (empty sequence)");
}

TEST(HostSequence, KilnSequenceRoundTrip) {
  HostSequence In;
  In.Elements = {floats({2}, {1, 2}), floats({0, 3}, {})};
  kiln_sequence *K = nullptr;
  ASSERT_EQ(kiln_sequence_create(KILN_DTYPE_FLOAT, &K), KILN_OK);
  std::string Err;
  ASSERT_TRUE(toKilnSequence(In, K, Err)) << Err;
  EXPECT_EQ(kiln_sequence_length(K), 2);
  HostSequence Out;
  fromKilnSequence(K, Out);
  EXPECT_EQ(Out.DType, KILN_DTYPE_FLOAT);
  ASSERT_EQ(Out.Elements.size(), 2u);
  EXPECT_EQ(Out.Elements[0].Bytes, In.Elements[0].Bytes);
  EXPECT_EQ(Out.Elements[1].Shape, (std::vector<int64_t>{0, 3}));

  In.None = true;
  In.Elements.clear();
  ASSERT_TRUE(toKilnSequence(In, K, Err)) << Err;
  EXPECT_TRUE(kiln_sequence_is_none(K));
  fromKilnSequence(K, Out);
  EXPECT_TRUE(Out.None);
  EXPECT_TRUE(Out.Elements.empty());

  HostSequence Ints;
  Ints.Elements = {HostTensor()};
  Ints.Elements[0].DType = KILN_DTYPE_INT64;
  EXPECT_FALSE(toKilnSequence(Ints, K, Err));
  EXPECT_EQ(Err, "element 0 is int64, expected float32");
  kiln_sequence_destroy(K);
}

} // namespace
