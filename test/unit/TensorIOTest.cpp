// .npy and TensorProto reading/writing, comparison and file names.
#include "tensorio/Compare.h"
#include "tensorio/FileName.h"
#include "tensorio/Npy.h"
#include "tensorio/TensorProto.h"

#include "kiln_onnx.pb.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <unistd.h>

using namespace kiln::tensorio;

namespace {

std::string tempPath(const std::string &Stem) {
  return ::testing::TempDir() + "kiln_tio_" + std::to_string(getpid()) + "_" +
         Stem;
}

template <typename T>
HostTensor makeTensor(int32_t DType, std::vector<int64_t> Shape,
                      const std::vector<T> &Values) {
  HostTensor H;
  H.DType = DType;
  H.Shape = std::move(Shape);
  H.Bytes.resize(Values.size() * sizeof(T));
  if (!Values.empty())
    std::memcpy(H.Bytes.data(), Values.data(), H.Bytes.size());
  return H;
}

void writeFile(const std::string &Path, const std::string &Data) {
  std::ofstream(Path, std::ios::binary) << Data;
}

TEST(Npy, RoundTripDtypes) {
  std::vector<HostTensor> Cases = {
      makeTensor<float>(KILN_DTYPE_FLOAT, {2, 3}, {1, 2, 3, 4, 5, -6.5f}),
      makeTensor<double>(KILN_DTYPE_DOUBLE, {3}, {1e300, -2, 0.5}),
      makeTensor<int64_t>(KILN_DTYPE_INT64, {1, 1, 2}, {-1, INT64_MAX}),
      makeTensor<int32_t>(KILN_DTYPE_INT32, {}, {42}),
      makeTensor<uint8_t>(KILN_DTYPE_UINT8, {4}, {0, 1, 254, 255}),
      makeTensor<int8_t>(KILN_DTYPE_INT8, {2}, {-128, 127}),
      makeTensor<uint8_t>(KILN_DTYPE_BOOL, {2, 1}, {1, 0}),
      makeTensor<uint16_t>(KILN_DTYPE_FLOAT16, {2}, {0x3c00, 0xc000}),
      makeTensor<uint64_t>(KILN_DTYPE_UINT64, {0, 3}, {}),
  };
  for (const HostTensor &In : Cases) {
    std::string Path = tempPath("rt.npy"), Err;
    ASSERT_TRUE(writeNpy(Path, In, Err)) << Err;
    HostTensor Out;
    ASSERT_TRUE(readNpy(Path, Out, Err)) << Err;
    EXPECT_EQ(Out.DType, In.DType) << kiln_dtype_name(In.DType);
    EXPECT_EQ(Out.Shape, In.Shape) << kiln_dtype_name(In.DType);
    EXPECT_EQ(Out.Bytes, In.Bytes) << kiln_dtype_name(In.DType);
    // numpy aligns the data to 64 bytes.
    std::ifstream F(Path, std::ios::binary | std::ios::ate);
    EXPECT_EQ((static_cast<size_t>(F.tellg()) - In.Bytes.size()) % 64, 0u);
    std::remove(Path.c_str());
  }
  EXPECT_EQ(npyDescr(KILN_DTYPE_FLOAT), "<f4");
  EXPECT_EQ(npyDescr(KILN_DTYPE_BOOL), "|b1");
  EXPECT_EQ(npyDescr(KILN_DTYPE_BFLOAT16), "");
}

std::string npyImage(const std::string &Dict, const std::string &Data,
                     int Version = 1) {
  std::string H = Dict + "\n";
  std::string S = "\x93NUMPY";
  S += static_cast<char>(Version);
  S += '\0';
  for (int I = 0; I < (Version == 1 ? 2 : 4); ++I)
    S += static_cast<char>((H.size() >> (8 * I)) & 0xff);
  return S + H + Data;
}

TEST(Npy, ParsesVersion2AndRejectsBadFiles) {
  HostTensor T;
  std::string Err;
  float V[2] = {1.5f, 2.5f};
  std::string Data(reinterpret_cast<char *>(V), 8);
  ASSERT_TRUE(parseNpy(npyImage("{'descr': '<f4', 'fortran_order': False, "
                                "'shape': (2,), }",
                                Data, 2),
                       "v2", T, Err))
      << Err;
  EXPECT_EQ(T.Shape, std::vector<int64_t>{2});
  EXPECT_EQ(T.elementAsDouble(1), 2.5);

  EXPECT_FALSE(parseNpy(npyImage("{'descr': '<f4', 'fortran_order': True, "
                                 "'shape': (1, 2), }",
                                 Data),
                        "f.npy", T, Err));
  EXPECT_NE(Err.find("Fortran-order"), std::string::npos) << Err;
  EXPECT_NE(Err.find("f.npy"), std::string::npos) << Err;

  EXPECT_FALSE(parseNpy(npyImage("{'descr': '<c8', 'fortran_order': False, "
                                 "'shape': (1,), }",
                                 Data),
                        "c.npy", T, Err));
  EXPECT_NE(Err.find("unsupported .npy dtype '<c8'"), std::string::npos) << Err;

  EXPECT_FALSE(parseNpy(npyImage("{'descr': '>f4', 'fortran_order': False, "
                                 "'shape': (2,), }",
                                 Data),
                        "be.npy", T, Err));
  EXPECT_NE(Err.find("big-endian"), std::string::npos) << Err;

  EXPECT_FALSE(parseNpy(npyImage("{'descr': '<f4', 'fortran_order': False, "
                                 "'shape': (3,), }",
                                 Data),
                        "short.npy", T, Err));
  EXPECT_NE(Err.find("truncated"), std::string::npos) << Err;

  EXPECT_FALSE(parseNpy("not numpy at all", "x", T, Err));
  EXPECT_NE(Err.find("bad magic"), std::string::npos);
  EXPECT_FALSE(readNpy(tempPath("missing.npy"), T, Err));
  EXPECT_NE(Err.find("cannot open"), std::string::npos);
}

TEST(TensorProto, RawAndTypedFields) {
  std::string Path = tempPath("t.pb"), Err;
  kiln_onnx::TensorProto P;
  P.set_name("x");
  P.set_data_type(kiln_onnx::TensorProto::FLOAT);
  P.add_dims(2);
  P.add_dims(2);
  for (float F : {1.f, 2.f, 3.f, 4.f})
    P.add_float_data(F);
  writeFile(Path, P.SerializeAsString());
  HostTensor T;
  ASSERT_TRUE(readTensorProto(Path, T, Err)) << Err;
  EXPECT_EQ(T.Name, "x");
  EXPECT_EQ(T.DType, KILN_DTYPE_FLOAT);
  EXPECT_EQ(T.Shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(T.elementAsDouble(3), 4);

  // raw_data wins and is taken as-is.
  kiln_onnx::TensorProto R;
  R.set_data_type(kiln_onnx::TensorProto::INT64);
  R.add_dims(3);
  int64_t Raw[3] = {7, -8, 9};
  R.set_raw_data(Raw, sizeof(Raw));
  ASSERT_TRUE(fromTensorProto(R, "raw", T, Err)) << Err;
  EXPECT_EQ(T.elementAsDouble(1), -8);

  // Narrow types live in int32_data.
  kiln_onnx::TensorProto B;
  B.set_data_type(kiln_onnx::TensorProto::BOOL);
  B.add_dims(3);
  for (int V : {1, 0, 1})
    B.add_int32_data(V);
  ASSERT_TRUE(fromTensorProto(B, "bool", T, Err)) << Err;
  EXPECT_EQ(T.Bytes, (std::vector<uint8_t>{1, 0, 1}));

  kiln_onnx::TensorProto H;
  H.set_data_type(kiln_onnx::TensorProto::FLOAT16);
  H.add_dims(2);
  H.add_int32_data(0x3c00); // 1.0
  H.add_int32_data(0xc100); // -2.5
  ASSERT_TRUE(fromTensorProto(H, "f16", T, Err)) << Err;
  EXPECT_EQ(T.elementAsDouble(0), 1.0);
  EXPECT_EQ(T.elementAsDouble(1), -2.5);

  kiln_onnx::TensorProto I8;
  I8.set_data_type(kiln_onnx::TensorProto::INT8);
  I8.add_dims(2);
  I8.add_int32_data(-5);
  I8.add_int32_data(100);
  ASSERT_TRUE(fromTensorProto(I8, "i8", T, Err)) << Err;
  EXPECT_EQ(T.elementAsDouble(0), -5);

  kiln_onnx::TensorProto D;
  D.set_data_type(kiln_onnx::TensorProto::DOUBLE);
  D.add_double_data(0.25); // scalar
  ASSERT_TRUE(fromTensorProto(D, "f64", T, Err)) << Err;
  EXPECT_TRUE(T.Shape.empty());
  EXPECT_EQ(T.elementAsDouble(0), 0.25);

  kiln_onnx::TensorProto U;
  U.set_data_type(kiln_onnx::TensorProto::UINT32);
  U.add_dims(1);
  U.add_uint64_data(4000000000u);
  ASSERT_TRUE(fromTensorProto(U, "u32", T, Err)) << Err;
  EXPECT_EQ(T.Bytes.size(), 4u);
  EXPECT_EQ(T.elementAsDouble(0), 4000000000.0);
  std::remove(Path.c_str());
}

// A string tensor becomes one `const char *` per element, pointing into
// storage that moves with the tensor.
TEST(TensorProto, Strings) {
  HostTensor T;
  std::string Err;
  kiln_onnx::TensorProto S;
  S.set_name("s");
  S.set_data_type(kiln_onnx::TensorProto::STRING);
  S.add_dims(2);
  S.add_string_data("hi");
  S.add_string_data("");
  ASSERT_TRUE(fromTensorProto(S, "s.pb", T, Err)) << Err;
  HostTensor Moved = std::move(T);
  ASSERT_EQ(Moved.Bytes.size(), 2 * sizeof(const char *));
  const char *P[2];
  std::memcpy(P, Moved.Bytes.data(), sizeof(P));
  EXPECT_STREQ(P[0], "hi");
  EXPECT_STREQ(P[1], "");
  S.add_string_data("extra");
  EXPECT_FALSE(fromTensorProto(S, "s.pb", T, Err));
  EXPECT_NE(Err.find("holds 3 strings"), std::string::npos) << Err;
}

TEST(TensorProto, RejectsUnsupported) {
  HostTensor T;
  std::string Err;

  kiln_onnx::TensorProto E;
  E.set_data_type(kiln_onnx::TensorProto::FLOAT);
  E.add_dims(1);
  E.set_data_location(kiln_onnx::TensorProto::EXTERNAL);
  auto *Entry = E.add_external_data();
  Entry->set_key("location");
  Entry->set_value("weights.bin");
  EXPECT_FALSE(fromTensorProto(E, "e.pb", T, Err));
  EXPECT_NE(Err.find("external data"), std::string::npos);

  kiln_onnx::TensorProto Short;
  Short.set_data_type(kiln_onnx::TensorProto::FLOAT);
  Short.add_dims(3);
  Short.add_float_data(1);
  EXPECT_FALSE(fromTensorProto(Short, "short.pb", T, Err));
  EXPECT_NE(Err.find("needs 12"), std::string::npos) << Err;

  std::string Path = tempPath("garbage.pb");
  writeFile(Path, "\xff\xff\xff garbage");
  EXPECT_FALSE(readTensorProto(Path, T, Err));
  EXPECT_NE(Err.find("not a valid ONNX TensorProto"), std::string::npos);
  std::remove(Path.c_str());
}

TEST(TensorProto, WriteReadRoundTrip) {
  HostTensor In = makeTensor<int32_t>(KILN_DTYPE_INT32, {3}, {1, -2, 3});
  In.Name = "ids";
  std::string Path = tempPath("w.pb"), Err;
  ASSERT_TRUE(writeTensorProto(Path, In, Err)) << Err;
  HostTensor Out;
  ASSERT_TRUE(readTensorProto(Path, Out, Err)) << Err;
  EXPECT_EQ(Out.Name, "ids");
  EXPECT_EQ(Out.Shape, In.Shape);
  EXPECT_EQ(Out.Bytes, In.Bytes);
  std::remove(Path.c_str());
}

TEST(Compare, ReportsWorstElement) {
  HostTensor Exp =
      makeTensor<float>(KILN_DTYPE_FLOAT, {2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor Got = Exp;
  CompareResult R = compareTensors(Got, Exp, 1e-3, 1e-5);
  EXPECT_TRUE(R.Ok);
  EXPECT_EQ(R.MaxAbsErr, 0);
  EXPECT_EQ(R.summary(), "OK max abs err 0");

  float *G = reinterpret_cast<float *>(Got.Bytes.data());
  G[1] = 2.0005f; // within rtol
  G[4] = 5.5f;    // worst
  G[5] = 6.1f;
  R = compareTensors(Got, Exp, 1e-3, 1e-5);
  EXPECT_FALSE(R.Ok);
  EXPECT_EQ(R.NumMismatches, 2);
  EXPECT_EQ(R.WorstIndex, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(R.Got, 5.5);
  EXPECT_EQ(R.Expected, 5);
  EXPECT_DOUBLE_EQ(R.AbsErr, 0.5);
  EXPECT_EQ(R.summary(), "MISMATCH at [1,1]: got 5.5 expected 5 (abs err "
                         "0.5), 2 elements differ");

  // Looser tolerances accept the same data: |a-b| <= atol + rtol*|b|.
  EXPECT_TRUE(compareTensors(Got, Exp, 0.1, 0).Ok);
  EXPECT_FALSE(compareTensors(Got, Exp, 0, 0.4).Ok);
  EXPECT_TRUE(compareTensors(Got, Exp, 0, 0.5).Ok);
}

TEST(Compare, NanInfAndMismatchedTensors) {
  const float NaN = std::numeric_limits<float>::quiet_NaN();
  const float Inf = std::numeric_limits<float>::infinity();
  HostTensor Exp = makeTensor<float>(KILN_DTYPE_FLOAT, {3}, {NaN, Inf, 1});
  HostTensor Got = Exp;
  EXPECT_TRUE(compareTensors(Got, Exp, 0, 0).Ok);

  reinterpret_cast<float *>(Got.Bytes.data())[0] = 0;
  CompareResult R = compareTensors(Got, Exp, 1, 1);
  EXPECT_FALSE(R.Ok);
  EXPECT_EQ(R.WorstIndex, std::vector<int64_t>{0});
  EXPECT_TRUE(std::isinf(R.AbsErr));

  Got = Exp;
  reinterpret_cast<float *>(Got.Bytes.data())[1] = -Inf;
  EXPECT_FALSE(compareTensors(Got, Exp, 1, 1).Ok);

  HostTensor Ints = makeTensor<int64_t>(KILN_DTYPE_INT64, {3}, {1, 2, 3});
  R = compareTensors(Ints, Exp, 0, 0);
  EXPECT_FALSE(R.Ok);
  EXPECT_EQ(R.Error, "dtype int64 differs from expected float32");

  HostTensor Wide = makeTensor<float>(KILN_DTYPE_FLOAT, {1, 3}, {0, 0, 0});
  R = compareTensors(Wide, Exp, 0, 0);
  EXPECT_EQ(R.Error, "shape [1,3] differs from expected [3]");

  HostTensor IA = makeTensor<int64_t>(KILN_DTYPE_INT64, {3}, {1, 2, 3});
  HostTensor IB = makeTensor<int64_t>(KILN_DTYPE_INT64, {3}, {1, 2, 4});
  R = compareTensors(IB, IA, 0, 0);
  EXPECT_EQ(R.WorstIndex, std::vector<int64_t>{2});
}

TEST(HalfFloat, Conversions) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.5f), 0xc100);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(1e6f), 0x7c00);
  EXPECT_EQ(floatToHalf(5.960464477539063e-08f), 0x0001); // smallest subnormal
  for (uint16_t H : {0x0000, 0x0001, 0x03ff, 0x0400, 0x3555, 0x7bff, 0xbc00})
    EXPECT_EQ(floatToHalf(halfToFloat(H)), H) << H;
  EXPECT_TRUE(std::isnan(halfToFloat(0x7e00)));
  EXPECT_EQ(bfloat16ToFloat(0x3f80), 1.0f);
}

TEST(FileName, Sanitize) {
  EXPECT_EQ(sanitizeFileName("logits"), "logits");
  EXPECT_EQ(sanitizeFileName("out/prod:0"), "out_prod_0");
  EXPECT_EQ(sanitizeFileName("a b.c-d_e"), "a_b.c-d_e");
  EXPECT_EQ(sanitizeFileName("../etc/passwd"), ".._etc_passwd");
  EXPECT_EQ(sanitizeFileName(".."), "_..");
  EXPECT_EQ(sanitizeFileName(""), "_");
  EXPECT_EQ(sanitizeFileName("\xc3\xa9"), "__"); // UTF-8 bytes
}

TEST(Index, Unflatten) {
  EXPECT_EQ(unflattenIndex(5, {2, 3}), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(unflattenIndex(0, {}), std::vector<int64_t>{});
  EXPECT_EQ(formatShape({1, 784}), "[1,784]");
}

} // namespace
