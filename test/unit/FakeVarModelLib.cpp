// A stand-in for a kiln-compiled model with shape variants (model ABI 7,
// KILN_MODEL_SHAPE_VARIANTS), for kiln-run's end-to-end tests: as if
// compiled with --dim-values n=2,4.
//
// Input: "x" float32[n]. Outputs: "y" float32[n] = the running sum of x,
// and "n" int64[1] = n.
#include "kiln/model_abi.h"

#include <cstdint>

namespace {

template <int N> void runningSum(void *const *In, void *const *Out, void *) {
  const auto *X = static_cast<const float *>(In[0]);
  auto *Y = static_cast<float *>(Out[0]);
  float Sum = 0;
  for (int I = 0; I < N; ++I)
    Y[I] = Sum += X[I];
  *static_cast<int64_t *>(Out[1]) = N;
}

const int64_t AnyN[1] = {-1}, Two[1] = {2}, Four[1] = {4}, One[1] = {1};
const kiln_tensor_info Inputs[] = {{"x", KILN_DTYPE_FLOAT, 1, AnyN}};
const kiln_tensor_info Outputs[] = {{"y", KILN_DTYPE_FLOAT, 1, AnyN},
                                    {"n", KILN_DTYPE_INT64, 1, One}};
const kiln_tensor_info Inputs2[] = {{"x", KILN_DTYPE_FLOAT, 1, Two}};
const kiln_tensor_info Outputs2[] = {{"y", KILN_DTYPE_FLOAT, 1, Two},
                                     {"n", KILN_DTYPE_INT64, 1, One}};
const kiln_tensor_info Inputs4[] = {{"x", KILN_DTYPE_FLOAT, 1, Four}};
const kiln_tensor_info Outputs4[] = {{"y", KILN_DTYPE_FLOAT, 1, Four},
                                     {"n", KILN_DTYPE_INT64, 1, One}};
const kiln_partition_info Partitions2[] = {{"cpu_0", "cpu", 1, runningSum<2>}};
const kiln_partition_info Partitions4[] = {{"cpu_0", "cpu", 1, runningSum<4>}};
const char *const DimNames[] = {"n"};

kiln_model_info makeInfo(const kiln_tensor_info *In,
                         const kiln_tensor_info *Out,
                         const kiln_partition_info *Parts) {
  kiln_model_info M{};
  M.abi_version = KILN_ABI_VERSION;
  M.name = "fakevar";
  M.producer = "kiln test";
  M.num_inputs = 1;
  M.inputs = In;
  M.num_outputs = 2;
  M.outputs = Out;
  M.num_partitions = Parts ? 1 : 0;
  M.partitions = Parts;
  return M;
}

const kiln_model_info Variant2 = makeInfo(Inputs2, Outputs2, Partitions2);
const kiln_model_info Variant4 = makeInfo(Inputs4, Outputs4, Partitions4);
const kiln_model_info *const Variants[] = {&Variant2, &Variant4};

kiln_model_info makeTop() {
  kiln_model_info M = makeInfo(Inputs, Outputs, nullptr);
  M.flags = KILN_MODEL_SHAPE_VARIANTS;
  M.num_shape_variants = 2;
  M.shape_variants = Variants;
  M.num_dim_names = 1;
  M.dim_names = DimNames;
  return M;
}

const kiln_model_info Info = makeTop();

} // namespace

extern "C" const kiln_model_info *kiln_model(void) { return &Info; }
