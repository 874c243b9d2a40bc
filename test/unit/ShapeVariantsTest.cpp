// Sessions of ABI-7 models with shape variants (KILN_MODEL_SHAPE_VARIANTS):
// one compiled model per value of a symbolic dimension, picked per run by
// the input shapes.
#include "FakeModels.h"

#include "kiln/kiln.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

using fake::floatTensor;
using fake::Shape23;

namespace {

bool contains(const std::string &S, const std::string &Part) {
  return S.find(Part) != std::string::npos;
}

/// Row sums of x[1,S,2] into y[1,S], and the variant's index into which[1].
template <int S, int Index>
void rowSums(void *const *In, void *const *Out, void *) {
  const auto *X = static_cast<const float *>(In[0]);
  auto *Y = static_cast<float *>(Out[0]);
  for (int I = 0; I < S; ++I)
    Y[I] = X[2 * I] + X[2 * I + 1];
  *static_cast<int32_t *>(Out[1]) = Index;
}

/// "rows", compiled with --dim-values seq=2,3: input x float32[1,seq,2];
/// outputs y float32[1,seq] and which int32[1]. Holds pointers into
/// itself: not copyable.
struct RowsModel {
  RowsModel() {
    for (int V = 0; V < 2; ++V) {
      VIn[V][0] = {"x", KILN_DTYPE_FLOAT, 3, VX[V]};
      VOut[V][0] = {"y", KILN_DTYPE_FLOAT, 2, VY[V]};
      VOut[V][1] = {"which", KILN_DTYPE_INT32, 1, One};
      Var[V] = fake::modelInfo(V ? "rows_seq3" : "rows_seq2", VIn[V], 1, VOut[V], 2, &Parts[V]);
      Ptrs[V] = &Var[V];
    }
    Top = fake::modelInfo("rows", TopIn, 1, TopOut, 2);
    Top.flags = KILN_MODEL_SHAPE_VARIANTS;
    Top.num_shape_variants = 2;
    Top.shape_variants = Ptrs;
    Top.num_dim_names = 1;
    Top.dim_names = DimNames;
  }
  RowsModel(const RowsModel &) = delete;
  RowsModel &operator=(const RowsModel &) = delete;

  const int64_t TopX[3] = {1, -1, 2}, TopY[2] = {1, -1}, One[1] = {1};
  const int64_t VX[2][3] = {{1, 2, 2}, {1, 3, 2}}, VY[2][2] = {{1, 2}, {1, 3}};
  const char *DimNames[1] = {"seq"};
  kiln_tensor_info TopIn[1] = {{"x", KILN_DTYPE_FLOAT, 3, TopX}};
  kiln_tensor_info TopOut[2] = {{"y", KILN_DTYPE_FLOAT, 2, TopY},
                                {"which", KILN_DTYPE_INT32, 1, One}};
  kiln_tensor_info VIn[2][1], VOut[2][2];
  kiln_partition_info Parts[2] = {{"sum_2", "cpu", 1, rowSums<2, 0>},
                                  {"sum_3", "cpu", 1, rowSums<3, 1>}};
  kiln_model_info Top{}, Var[2]{};
  const kiln_model_info *Ptrs[2];
};

/// Runs S on x of shape [Batch, Seq, 2] (x[i] = i) with outputs y
/// [Batch, YSeq] and which; returns the status.
struct RowsRun {
  kiln_status operator()(kiln_session *S, int64_t Batch, int64_t Seq,
                         int64_t YSeq = -1) {
    XShape[0] = Batch;
    XShape[1] = Seq;
    YShape[0] = Batch;
    YShape[1] = YSeq < 0 ? Seq : YSeq;
    X.assign(Batch * Seq * 2, 0);
    for (size_t I = 0; I < X.size(); ++I)
      X[I] = static_cast<float>(I);
    Y.assign(Batch * YShape[1], -1);
    Which = -1;
    kiln_tensor In[] = {floatTensor("x", X, XShape, 3)};
    kiln_tensor Out[] = {floatTensor("y", Y, YShape, 2),
                         {"which", KILN_DTYPE_INT32, 1, One, &Which, 4}};
    return kiln_session_run(S, In, 1, Out, 2);
  }
  int64_t XShape[3] = {1, 0, 2}, YShape[2] = {1, 0};
  const int64_t One[1] = {1};
  std::vector<float> X, Y;
  int32_t Which = -1;
};

TEST(ShapeVariants, DispatchesByShape) {
  RowsModel M;
  kiln_session *S = nullptr;
  ASSERT_EQ(kiln_session_create(&M.Top, &S), KILN_OK) << kiln_last_error();
  EXPECT_EQ(kiln_session_model(S), &M.Top);
  EXPECT_STREQ(kiln_session_provider(S), "cpu");
  EXPECT_STREQ(kiln_session_provider_note(S), "");
  EXPECT_FALSE(kiln_session_has_device_io(S));
  RowsRun R;
  ASSERT_EQ(R(S, 1, 3), KILN_OK) << kiln_session_error(S);
  EXPECT_EQ(R.Which, 1);
  EXPECT_EQ(R.Y, (std::vector<float>{1, 5, 9}));
  ASSERT_EQ(R(S, 1, 2), KILN_OK) << kiln_session_error(S);
  EXPECT_EQ(R.Which, 0);
  EXPECT_EQ(R.Y, (std::vector<float>{1, 5}));
  kiln_session_destroy(S);
}

TEST(ShapeVariants, LaterVariantsAreCreatedOnFirstUse) {
  RowsModel M;
  // Variant 1's arena cannot be made; only a run that selects it finds out.
  M.Var[1].arena_size = 16;
  M.Var[1].arena_alignment = 3;
  kiln::Session S(&M.Top);
  ASSERT_TRUE(S.valid()) << S.createStatus().message();
  RowsRun R;
  ASSERT_EQ(R(S.get(), 1, 2), KILN_OK);
  EXPECT_EQ(R(S.get(), 1, 3), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_session_error(S.get()),
               "shape variant 1: arena alignment 3 is not a power of two");
  EXPECT_STREQ(kiln_last_error(), kiln_session_error(S.get()));
  // The failure is not sticky for the other variant.
  ASSERT_EQ(R(S.get(), 1, 2), KILN_OK);
  EXPECT_EQ(R.Which, 0);

  // Variant 0 is made at create: its failure fails create.
  RowsModel Bad;
  Bad.Var[0].arena_size = 16;
  Bad.Var[0].arena_alignment = 3;
  kiln_session *Raw = nullptr;
  EXPECT_EQ(kiln_session_create(&Bad.Top, &Raw), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(Raw, nullptr);
  EXPECT_STREQ(kiln_last_error(),
               "shape variant 0: arena alignment 3 is not a power of two");
}

TEST(ShapeVariants, AlternatingSizes) {
  RowsModel M;
  kiln::Session S(&M.Top);
  ASSERT_TRUE(S.valid()) << S.createStatus().message();
  RowsRun R;
  for (int I = 0; I < 10; ++I) {
    int64_t Seq = I % 2 ? 2 : 3;
    ASSERT_EQ(R(S.get(), 1, Seq), KILN_OK) << kiln_session_error(S.get());
    EXPECT_EQ(R.Which, Seq - 2);
    EXPECT_EQ(R.Y.back(), static_cast<float>(4 * Seq - 3));
  }
}

TEST(ShapeVariants, NoVariantMatches) {
  RowsModel M;
  kiln::Session S(&M.Top);
  ASSERT_TRUE(S.valid());
  RowsRun R;
  EXPECT_EQ(R(S.get(), 1, 5), KILN_ERROR_SHAPE_MISMATCH);
  EXPECT_STREQ(kiln_session_error(S.get()),
               "input \"x\" has shape [1,5,2]; the model was compiled for "
               "[1,2,2] or [1,3,2] (symbolic dimensions: seq; kiln compile "
               "--dim-values)");
  EXPECT_STREQ(kiln_last_error(), kiln_session_error(S.get()));
  // A wrong rank matches nothing either.
  std::vector<float> X(6);
  kiln_tensor In[] = {floatTensor("x", X, Shape23, 2)};
  const kiln_model_info *V = &M.Top;
  EXPECT_EQ(kiln_model_select(&M.Top, In, 1, &V), KILN_ERROR_SHAPE_MISMATCH);
  EXPECT_EQ(V, nullptr);
  EXPECT_TRUE(contains(kiln_last_error(), "input \"x\" has shape [2,3]"))
      << kiln_last_error();

}

TEST(ShapeVariants, WrongInputCountIsReportedAsUsual) {
  RowsModel M;
  kiln::Session S(&M.Top);
  ASSERT_TRUE(S.valid());
  EXPECT_EQ(kiln_session_run(S.get(), nullptr, 0, nullptr, 0),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_session_error(S.get()), "expected 1 inputs, got 0");
}

TEST(ShapeVariants, WrongOutputShapeForTheVariant) {
  RowsModel M;
  kiln::Session S(&M.Top);
  ASSERT_TRUE(S.valid());
  RowsRun R;
  EXPECT_EQ(R(S.get(), 1, 3, /*YSeq=*/2), KILN_ERROR_SHAPE_MISMATCH);
  EXPECT_STREQ(kiln_session_error(S.get()),
               "output \"y\": expected shape [1,3], got [1,2]");
}

template <int Index> void writeIndex(void *const *, void *const *Out, void *) {
  *static_cast<int32_t *>(Out[0]) = Index;
}

/// "pair": inputs a float32[n] and b float32[n] compiled for n = 2 and 3
/// (a and b each have their own -1); output which int32[1].
struct PairModel {
  PairModel() {
    for (int V = 0; V < 2; ++V) {
      VIn[V][0] = {"a", KILN_DTYPE_FLOAT, 1, Dims[V]};
      VIn[V][1] = {"b", KILN_DTYPE_FLOAT, 1, Dims[V]};
      Var[V] = fake::modelInfo("pair", VIn[V], 2, Out, 1, &Parts[V]);
      Ptrs[V] = &Var[V];
    }
    Top = fake::modelInfo("pair", TopIn, 2, Out, 1);
    Top.flags = KILN_MODEL_SHAPE_VARIANTS;
    Top.num_shape_variants = 2;
    Top.shape_variants = Ptrs;
  }
  PairModel(const PairModel &) = delete;
  PairModel &operator=(const PairModel &) = delete;

  const int64_t Any[1] = {-1}, One[1] = {1}, Dims[2][1] = {{2}, {3}};
  kiln_tensor_info TopIn[2] = {{"a", KILN_DTYPE_FLOAT, 1, Any},
                               {"b", KILN_DTYPE_FLOAT, 1, Any}};
  kiln_tensor_info Out[1] = {{"which", KILN_DTYPE_INT32, 1, One}};
  kiln_tensor_info VIn[2][2];
  kiln_partition_info Parts[2] = {{"p2", "cpu", 1, writeIndex<0>},
                                  {"p3", "cpu", 1, writeIndex<1>}};
  kiln_model_info Top{}, Var[2]{};
  const kiln_model_info *Ptrs[2];
};

TEST(ShapeVariants, CombinationNotCompiled) {
  PairModel M;
  kiln::Session S(&M.Top);
  ASSERT_TRUE(S.valid()) << S.createStatus().message();
  std::vector<float> A(3), B(3);
  const int64_t Two[1] = {2}, Three[1] = {3};
  int32_t Which = -1;
  const int64_t One[1] = {1};
  // By name, in any order.
  kiln_tensor In[] = {floatTensor("b", B, Three, 1),
                      floatTensor("a", A, Three, 1)};
  kiln_tensor Out[] = {{"which", KILN_DTYPE_INT32, 1, One, &Which, 4}};
  ASSERT_TRUE(S.run(In, 2, Out, 1));
  EXPECT_EQ(Which, 1);
  In[0].shape = Two;
  kiln::Status St = S.run(In, 2, Out, 1);
  EXPECT_EQ(St.code(), KILN_ERROR_SHAPE_MISMATCH);
  EXPECT_EQ(St.message(),
            "the input shapes (a [3], b [2]) are a combination that was not "
            "compiled; the model was compiled for: a [2], b [2]; a [3], b [3] "
            "(kiln compile --dim-values)");
  EXPECT_STREQ(kiln_session_error(S.get()), St.message().c_str());
  // By position.
  In[0].name = In[1].name = nullptr;
  In[1].shape = Two;
  ASSERT_TRUE(S.run(In, 2, Out, 1));
  EXPECT_EQ(Which, 0);
}

TEST(ShapeVariants, OutputShapeFollowsTheSelectedVariant) {
  RowsModel M;
  std::vector<float> X(6);
  const int64_t XShape[3] = {1, 3, 2}, Bad[3] = {1, 4, 2};
  kiln_tensor In[] = {floatTensor("x", X, XShape, 3)};
  int64_t Y[2] = {0, 0};
  ASSERT_EQ(kiln_model_output_shape(&M.Top, In, 1, 0, Y), KILN_OK);
  EXPECT_EQ(Y[0], 1);
  EXPECT_EQ(Y[1], 3);
  // No variant for a sequence of 4: the selection's error.
  In[0].shape = Bad;
  EXPECT_EQ(kiln_model_output_shape(&M.Top, In, 1, 0, Y),
            KILN_ERROR_SHAPE_MISMATCH);
}

TEST(ShapeVariants, ModelSelect) {
  RowsModel M;
  std::vector<float> X(4);
  const int64_t XShape[3] = {1, 2, 2};
  kiln_tensor In[] = {floatTensor(nullptr, X, XShape, 3)};
  const kiln_model_info *V = nullptr;
  ASSERT_EQ(kiln_model_select(&M.Top, In, 1, &V), KILN_OK);
  EXPECT_EQ(V, &M.Var[0]);
  // With no inputs to go by, the first variant.
  ASSERT_EQ(kiln_model_select(&M.Top, nullptr, 0, &V), KILN_OK);
  EXPECT_EQ(V, &M.Var[0]);

  // An ordinary model is its own variant.
  std::vector<float> A(6);
  kiln_tensor AddIn[] = {floatTensor("a", A, Shape23, 2)};
  ASSERT_EQ(kiln_model_select(fake::addModel(), AddIn, 1, &V), KILN_OK);
  EXPECT_EQ(V, fake::addModel());

  EXPECT_EQ(kiln_model_select(nullptr, In, 1, &V), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_model_select(&M.Top, In, 1, nullptr),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_model_select(&M.Top, nullptr, 1, &V),
            KILN_ERROR_INVALID_ARGUMENT);
  // Cheap, not a validation, but no crash on a missing variant.
  M.Ptrs[1] = nullptr;
  EXPECT_EQ(kiln_model_select(&M.Top, In, 1, &V), KILN_ERROR_INVALID_ARGUMENT);
}

/// The message create gives for M, "" if it succeeds.
std::string createError(const kiln_model_info &M) {
  kiln_session *S = nullptr;
  kiln_status St = kiln_session_create(&M, &S);
  kiln_session_destroy(S);
  return St == KILN_OK ? "" : kiln_last_error();
}

TEST(ShapeVariants, MalformedVariantsAreRejected) {
  {
    RowsModel M;
    M.Ptrs[1] = nullptr;
    EXPECT_EQ(createError(M.Top),
              "malformed model info: shape variant 1 is NULL");
  }
  {
    RowsModel M;
    M.Top.shape_variants = nullptr;
    EXPECT_EQ(createError(M.Top), "malformed model info: shape variant count "
                                  "is 2 or the array is missing");
    M.Top.shape_variants = M.Ptrs;
    M.Top.num_shape_variants = 0;
    EXPECT_EQ(createError(M.Top), "malformed model info: shape variant count "
                                  "is 0 or the array is missing");
  }
  {
    RowsModel M;
    M.VIn[1][0].rank = 2;
    EXPECT_EQ(createError(M.Top), "malformed model info: shape variant 1 "
                                  "input \"x\" has rank 2, the model's 3");
  }
  {
    // Only the model's -1 dimensions may differ.
    RowsModel M;
    const int64_t Wide[3] = {1, 3, 4};
    M.VIn[1][0].shape = Wide;
    EXPECT_EQ(createError(M.Top),
              "malformed model info: shape variant 1 input \"x\" has shape "
              "[1,3,4], the model's [1,?,2]");
  }
  {
    RowsModel M;
    M.Var[0].flags = KILN_MODEL_SHAPE_VARIANTS;
    EXPECT_EQ(createError(M.Top), "malformed model info: shape variant 0 has "
                                  "shape variants itself");
  }
  {
    RowsModel M;
    M.VOut[1][0].name = "z";
    EXPECT_EQ(createError(M.Top), "malformed model info: shape variant 1 "
                                  "output #0 is \"z\", the model's \"y\"");
  }
  {
    RowsModel M;
    M.VOut[0][1].dtype = KILN_DTYPE_INT64;
    EXPECT_EQ(createError(M.Top),
              "malformed model info: shape variant 0 output \"which\" has "
              "dtype int64, the model's int32");
  }
  {
    // A variant is a whole model, checked at create.
    RowsModel M;
    M.Parts[1].fn = nullptr;
    EXPECT_EQ(createError(M.Top),
              "shape variant 1: model partition #0 has no entry point");
  }
  {
    RowsModel M;
    M.Top.num_partitions = 1;
    M.Top.partitions = M.Parts;
    EXPECT_EQ(createError(M.Top), "malformed model info: a model with shape "
                                  "variants has partitions of its own");
  }
  {
    // -1 dims belong to shape-variants models only.
    RowsModel M;
    M.Top.flags = 0;
    EXPECT_EQ(createError(M.Top), "model input \"x\" has a dynamic or "
                                  "negative dim: [1,-1,2]");
  }
}

struct Recorded {
  std::string Name, OpName;
  int32_t IsEnd;
};

void record(const kiln_profile_event *E, int32_t IsEnd, void *User) {
  static_cast<std::vector<Recorded> *>(User)->push_back(
      {E->name, E->op_name, IsEnd});
}

TEST(ShapeVariants, ProfilerEventsComeFromTheVariant) {
  RowsModel M;
  kiln_session *S = nullptr;
  ASSERT_EQ(kiln_session_create(&M.Top, &S), KILN_OK);
  std::vector<Recorded> Events;
  ASSERT_EQ(kiln_session_set_profiler(S, record, &Events), KILN_OK);
  RowsRun R;
  ASSERT_EQ(R(S, 1, 3), KILN_OK);
  ASSERT_EQ(Events.size(), 4u);
  EXPECT_EQ(Events[0].Name, "model_run");
  EXPECT_EQ(Events[0].OpName, "rows_seq3");
  EXPECT_EQ(Events[1].Name, "sum_3");
  EXPECT_EQ(Events[2].IsEnd, 1);
  ASSERT_EQ(R(S, 1, 2), KILN_OK);
  ASSERT_EQ(Events.size(), 8u);
  EXPECT_EQ(Events[5].Name, "sum_2");
  // Turned off for every variant.
  ASSERT_EQ(kiln_session_set_profiler(S, nullptr, nullptr), KILN_OK);
  ASSERT_EQ(R(S, 1, 3), KILN_OK);
  ASSERT_EQ(R(S, 1, 2), KILN_OK);
  EXPECT_EQ(Events.size(), 8u);
  kiln_session_destroy(S);
}

TEST(ShapeVariants, DeviceRunNeedsCuda) {
  RowsModel M;
  kiln_session_options Opts{};
  Opts.force_cpu = 1;
  kiln::Session S(&M.Top, Opts);
  ASSERT_TRUE(S.valid());
  kiln::Status St = S.runDevice(nullptr, 0, nullptr, 0);
  EXPECT_EQ(St.code(), KILN_ERROR_PROVIDER);
  EXPECT_TRUE(contains(St.message(), "needs a CUDA session")) << St.message();
}

TEST(ShapeVariants, Abi6ModelsNeverReadVariants) {
  // An ABI-6 model ends before num_shape_variants: what follows is poison,
  // and a flag bit that ABI 6 did not define means nothing.
  fake::OldAbiAdd Old(6, offsetof(kiln_model_info, num_shape_variants));
  kiln_model_info *M = Old.info();
  M->flags = KILN_MODEL_SHAPE_VARIANTS;
  kiln::Session S(M);
  ASSERT_TRUE(S.valid()) << S.createStatus().message();
  std::vector<float> A(6, 1), B(6, 2), Y(6);
  kiln_tensor In[] = {floatTensor("a", A, Shape23, 2),
                      floatTensor("b", B, Shape23, 2)};
  kiln_tensor Out[] = {floatTensor("y", Y, Shape23, 2)};
  ASSERT_TRUE(S.run(In, 2, Out, 1));
  EXPECT_EQ(Y[0], 3);
  const kiln_model_info *V = nullptr;
  ASSERT_EQ(kiln_model_select(M, In, 2, &V), KILN_OK);
  EXPECT_EQ(V, M);
}

} // namespace
