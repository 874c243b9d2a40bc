// A stand-in for a kiln-compiled model with outputs whose shape only the
// data decides (model ABI 6, KILN_VALUE_DYNAMIC), for kiln-run's
// end-to-end tests. Like compiled code, it calls the runtime's kilnNonZero
// and kilnUnique, left undefined here and resolved from the loading
// program.
//
// Input: "x" float32[2,3]. Outputs: "nz" = NonZero(x) (int64 [2,?]), "u"
// = Unique(x) (sorted float32 values, rank unknown), both dynamic, and "y"
// float32[2,3] = 2x, a plain tensor.
#include "kiln/model_abi.h"

#include <cstdint>

extern "C" {
int64_t kilnNonZero(int64_t, int32_t, int32_t, int64_t, int64_t);
int64_t kilnUnique(int64_t, int32_t, int32_t, int64_t, int64_t, int32_t,
                   int32_t, int32_t, int64_t);
}

namespace {

const int64_t Shape23[2] = {2, 3};
const int64_t NzShape[2] = {2, -1};

int64_t addressOf(const void *P) {
  return static_cast<int64_t>(reinterpret_cast<uintptr_t>(P));
}

void run(void *const *In, void *const *Out, void *) {
  static const char NonZero[] = "node \"nz\" (NonZero)";
  static const char Unique[] = "node \"u\" (Unique)";
  const auto *X = static_cast<const float *>(In[0]);
  *static_cast<int64_t *>(Out[0]) =
      kilnNonZero(addressOf(X), KILN_DTYPE_FLOAT, 2, addressOf(Shape23),
                  addressOf(NonZero));
  *static_cast<int64_t *>(Out[1]) =
      kilnUnique(addressOf(X), KILN_DTYPE_FLOAT, 2, addressOf(Shape23), 0, 0, 1,
                 0, addressOf(Unique));
  auto *Y = static_cast<float *>(Out[2]);
  for (int I = 0; I < 6; ++I)
    Y[I] = X[I] * 2;
}

const kiln_tensor_info Inputs[] = {{"x", KILN_DTYPE_FLOAT, 2, Shape23}};
const kiln_tensor_info Outputs[] = {{"nz", KILN_DTYPE_INT64, 2, NzShape},
                                    {"u", KILN_DTYPE_FLOAT, -1, nullptr},
                                    {"y", KILN_DTYPE_FLOAT, 2, Shape23}};
const int32_t OutputKinds[] = {KILN_VALUE_DYNAMIC, KILN_VALUE_DYNAMIC,
                               KILN_VALUE_TENSOR};
const kiln_partition_info Partitions[] = {{"cpu_0", "cpu", 3, run}};

kiln_model_info makeInfo() {
  kiln_model_info M{};
  M.abi_version = KILN_ABI_VERSION;
  M.name = "fakedyn";
  M.producer = "kiln test";
  M.num_inputs = 1;
  M.inputs = Inputs;
  M.num_outputs = 3;
  M.outputs = Outputs;
  M.num_partitions = 1;
  M.partitions = Partitions;
  M.output_kinds = OutputKinds;
  return M;
}

const kiln_model_info Info = makeInfo();

} // namespace

extern "C" const kiln_model_info *kiln_model(void) { return &Info; }
