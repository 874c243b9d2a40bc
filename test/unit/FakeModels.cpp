#include "FakeModels.h"

#include "../../runtime/lib/DynamicOps.h"
#include "../../runtime/lib/SequenceOps.h"

#include <cstdint>
#include <cstring>

namespace fake {

const int64_t Shape23[2] = {2, 3};

kiln_model_info modelInfo(const char *Name, const kiln_tensor_info *In, int32_t NumIn,
                          const kiln_tensor_info *Out, int32_t NumOut,
                          const kiln_partition_info *Part) {
  kiln_model_info M{};
  M.abi_version = KILN_ABI_VERSION;
  M.name = Name;
  M.producer = "kiln test";
  M.num_inputs = NumIn;
  M.inputs = In;
  M.num_outputs = NumOut;
  M.outputs = Out;
  M.num_partitions = Part ? 1 : 0;
  M.partitions = Part;
  return M;
}

OldAbiAdd::OldAbiAdd(uint32_t Abi, size_t Prefix) : Buf(sizeof(kiln_model_info), 0xff) {
  std::memcpy(Buf.data(), addModel(), Prefix);
  info()->abi_version = Abi;
}
static const int64_t Shape1[1] = {1};

static void addFn(void *const *In, void *const *Out, void *) {
  auto *A = static_cast<const float *>(In[0]);
  auto *B = static_cast<const float *>(In[1]);
  auto *Y = static_cast<float *>(Out[0]);
  for (int I = 0; I < 6; ++I)
    Y[I] = A[I] + B[I];
}

const kiln_model_info *addModel() {
  static const kiln_tensor_info Inputs[] = {
      {"a", KILN_DTYPE_FLOAT, 2, Shape23}, {"b", KILN_DTYPE_FLOAT, 2, Shape23}};
  static const kiln_tensor_info Outputs[] = {
      {"y", KILN_DTYPE_FLOAT, 2, Shape23}};
  static const kiln_partition_info Parts[] = {{"cpu_0", "cpu", 1, addFn}};
  static const kiln_model_info Info = {
      KILN_ABI_VERSION, "add", "kiln test", 2, Inputs, 1,
      Outputs,          0,     0,           1, Parts,
      0,                0,     nullptr,     0,
      0,                nullptr, nullptr,   nullptr,
      0,                nullptr, 0,
      nullptr,          nullptr, 0,         nullptr,
      0,                nullptr};
  return &Info;
}

static void scaleFn(void *const *In, void *const *, void *Arena) {
  auto *A = static_cast<const float *>(In[0]);
  auto *T = static_cast<float *>(Arena);
  for (int I = 0; I < 6; ++I)
    T[I] = 2 * A[I];
}

static void accumulateFn(void *const *In, void *const *Out, void *Arena) {
  auto *B = static_cast<const float *>(In[1]);
  auto *T = static_cast<const float *>(Arena);
  auto *Y = static_cast<float *>(Out[0]);
  for (int I = 0; I < 6; ++I)
    Y[I] = T[I] + B[I];
  *static_cast<int32_t *>(Out[1]) =
      Arena && reinterpret_cast<uintptr_t>(Arena) % 64 == 0;
}

const kiln_model_info *twoPartitionModel() {
  static const kiln_tensor_info Inputs[] = {
      {"a", KILN_DTYPE_FLOAT, 2, Shape23}, {"b", KILN_DTYPE_FLOAT, 2, Shape23}};
  static const kiln_tensor_info Outputs[] = {
      {"sum", KILN_DTYPE_FLOAT, 2, Shape23},
      {"arena_ok", KILN_DTYPE_INT32, 1, Shape1}};
  static const kiln_partition_info Parts[] = {
      {"scale", "cpu", 1, scaleFn},
      {"accumulate", "fake_accel", 1, accumulateFn}};
  static const kiln_model_info Info = {
      KILN_ABI_VERSION, "two", "kiln test", 2, Inputs, 2,
      Outputs,          24,    64,          2, Parts,
      0,                0,     nullptr,     0,
      0,                nullptr, nullptr,   nullptr,
      0,                nullptr, 0,
      nullptr,          nullptr, 0,         nullptr,
      0,                nullptr};
  return &Info;
}

static void scaleBatchFn(void *const *In, void *const *Out, void *) {
  auto *X = static_cast<const float *>(In[0]);
  auto *W = static_cast<const float *>(In[1]);
  auto *Y = static_cast<float *>(Out[0]);
  auto *Sum = static_cast<float *>(Out[1]);
  *Sum = 0;
  for (int I = 0; I < 3; ++I) {
    Y[I] = X[I] * W[I];
    *Sum += W[I];
  }
}

const kiln_model_info *batchModel() {
  static const int64_t Shape13[2] = {1, 3}, Shape3[1] = {3};
  static const kiln_tensor_info Inputs[] = {
      {"x", KILN_DTYPE_FLOAT, 2, Shape13}, {"w", KILN_DTYPE_FLOAT, 1, Shape3}};
  static const kiln_tensor_info Outputs[] = {
      {"y", KILN_DTYPE_FLOAT, 2, Shape13}, {"wsum", KILN_DTYPE_FLOAT, 1, Shape1}};
  static const int32_t InAxes[] = {0, -1}, OutAxes[] = {0, -1};
  static const kiln_partition_info Parts[] = {{"cpu_0", "cpu", 1, scaleBatchFn}};
  static const kiln_model_info Info = {
      KILN_ABI_VERSION, "scale_batch", "kiln test", 2, Inputs, 2, Outputs,
      0, 0, 1, Parts, 0, 0, nullptr, 0, KILN_MODEL_DYNAMIC_BATCH, InAxes,
      OutAxes, "N", 0, nullptr, 0, nullptr, nullptr,
      0, nullptr, 0, nullptr};
  return &Info;
}

static int64_t addressOf(const void *P) {
  return static_cast<int64_t>(reinterpret_cast<uintptr_t>(P));
}

// What compiled code does: read the input handle from its slot, call the
// runtime, store the result handle in the output slot.
static void seqInsertFn(void *const *In, void *const *Out, void *) {
  static const char Insert[] = "node \"ins\" (SequenceInsert)";
  static const char Length[] = "node \"len\" (SequenceLength)";
  int64_t Seq = *static_cast<const int64_t *>(In[0]);
  int64_t Pos = *static_cast<const int64_t *>(In[2]);
  int64_t Result = kilnSeqInsert(Seq, addressOf(In[1]), KILN_DTYPE_FLOAT, 2,
                                 addressOf(Shape23), Pos, 1, addressOf(Insert));
  *static_cast<int64_t *>(Out[0]) = Result;
  *static_cast<int64_t *>(Out[1]) = kilnSeqLength(Result, addressOf(Length));
}

const kiln_model_info *seqInsertModel() {
  static const kiln_tensor_info Inputs[] = {
      {"seq", KILN_DTYPE_FLOAT, -1, nullptr},
      {"x", KILN_DTYPE_FLOAT, 2, Shape23},
      {"pos", KILN_DTYPE_INT64, 1, Shape1}};
  static const kiln_tensor_info Outputs[] = {
      {"out", KILN_DTYPE_FLOAT, -1, nullptr},
      {"len", KILN_DTYPE_INT64, 1, Shape1}};
  static const int32_t InKinds[] = {KILN_VALUE_SEQUENCE, KILN_VALUE_TENSOR,
                                    KILN_VALUE_TENSOR};
  static const int32_t OutKinds[] = {KILN_VALUE_SEQUENCE, KILN_VALUE_TENSOR};
  static const kiln_partition_info Parts[] = {{"cpu_0", "cpu", 2, seqInsertFn}};
  static const kiln_model_info Info = {
      KILN_ABI_VERSION, "seq_insert", "kiln test", 3, Inputs, 2, Outputs,
      0, 0, 1, Parts, 0, 0, nullptr, 0, 0, nullptr, nullptr, nullptr, 0,
      nullptr, 0, InKinds, OutKinds,
      0, nullptr, 0, nullptr};
  return &Info;
}

static void optionalGetFn(void *const *In, void *const *Out, void *) {
  static const char Has[] = "node \"has\" (OptionalHasElement)";
  static const char Get[] = "node \"get\" (OptionalGetElement)";
  int64_t Maybe = *static_cast<const int64_t *>(In[0]);
  *static_cast<uint8_t *>(Out[0]) =
      static_cast<uint8_t>(kilnSeqHasValue(Maybe, addressOf(Has)));
  *static_cast<int64_t *>(Out[1]) = kilnSeqGetValue(Maybe, addressOf(Get));
}

const kiln_model_info *optionalGetModel() {
  static const int64_t ElementShape[2] = {-1, 3};
  static const kiln_tensor_info Inputs[] = {
      {"maybe", KILN_DTYPE_FLOAT, 2, ElementShape}};
  static const kiln_tensor_info Outputs[] = {
      {"has", KILN_DTYPE_BOOL, 1, Shape1},
      {"seq", KILN_DTYPE_FLOAT, 2, ElementShape}};
  static const int32_t InKinds[] = {KILN_VALUE_OPTIONAL_SEQUENCE};
  static const int32_t OutKinds[] = {KILN_VALUE_TENSOR, KILN_VALUE_SEQUENCE};
  static const kiln_partition_info Parts[] = {
      {"cpu_0", "cpu", 2, optionalGetFn}};
  static const kiln_model_info Info = {
      KILN_ABI_VERSION, "opt_get", "kiln test", 1, Inputs, 2, Outputs,
      0, 0, 1, Parts, 0, 0, nullptr, 0, 0, nullptr, nullptr, nullptr, 0,
      nullptr, 0, InKinds, OutKinds,
      0, nullptr, 0, nullptr};
  return &Info;
}

static void dynamicFn(void *const *In, void *const *Out, void *) {
  static const char NonZero[] = "node \"nz\" (NonZero)";
  static const char Unique[] = "node \"u\" (Unique)";
  const auto *X = static_cast<const float *>(In[0]);
  *static_cast<int64_t *>(Out[0]) =
      kilnNonZero(addressOf(X), KILN_DTYPE_FLOAT, 2, addressOf(Shape23),
                  addressOf(NonZero));
  *static_cast<int64_t *>(Out[1]) =
      kilnUnique(addressOf(X), KILN_DTYPE_FLOAT, 2, addressOf(Shape23), 0, 0,
                 1, 0, addressOf(Unique));
  int64_t N = 0;
  for (int I = 0; I < 6; ++I)
    N += X[I] != 0;
  *static_cast<int64_t *>(Out[2]) = N;
}

const kiln_model_info *dynamicModel() {
  static const int64_t IdxShape[2] = {2, -1};
  static const kiln_tensor_info Inputs[] = {
      {"x", KILN_DTYPE_FLOAT, 2, Shape23}};
  static const kiln_tensor_info Outputs[] = {
      {"idx", KILN_DTYPE_INT64, 2, IdxShape},
      {"u", KILN_DTYPE_FLOAT, -1, nullptr},
      {"n", KILN_DTYPE_INT64, 1, Shape1}};
  static const int32_t OutKinds[] = {KILN_VALUE_DYNAMIC, KILN_VALUE_DYNAMIC,
                                     KILN_VALUE_TENSOR};
  static const kiln_partition_info Parts[] = {{"cpu_0", "cpu", 2, dynamicFn}};
  static const kiln_model_info Info = {
      KILN_ABI_VERSION, "dynamic", "kiln test", 1, Inputs, 3, Outputs,
      0, 0, 1, Parts, 0, 0, nullptr, 0, 0, nullptr, nullptr, nullptr, 0,
      nullptr, 0, nullptr, OutKinds,
      0, nullptr, 0, nullptr};
  return &Info;
}

kiln_tensor floatTensor(const char *Name, std::vector<float> &V,
                        const int64_t *Shape, int32_t Rank) {
  return {Name,  KILN_DTYPE_FLOAT, Rank,
          Shape, V.data(),         V.size() * sizeof(float)};
}

} // namespace fake
