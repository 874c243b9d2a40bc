// A stand-in for a kiln-compiled model library, for kiln-run's end-to-end
// tests. Built twice: libfake.so exports kiln_model and kiln_model_fake;
// libfakenamed.so exports only kiln_model_fakenamed, to exercise the
// name-derived fallback.
//
// "a", "b": float32[2,3]. "out/sum:0" = a + b (float32[2,3]); "count" =
// number of a's elements > 0 (int64[1]). Two partitions pass a + b through
// the arena. Built a third time as libfakecuda.so (FAKE_CUDA): an ABI-2
// model that wants CUDA, whose first partition calls the mgpu* shims, with
// the CPU partitions as its fallback.
#include "kiln/model_abi.h"

#include <cstddef>
#include <cstdint>

#define KILN_CAT2(A, B) A##B
#define KILN_CAT(A, B) KILN_CAT2(A, B)
#define KILN_STR2(A) #A
#define KILN_STR(A) KILN_STR2(A)

namespace {

const int64_t Shape23[2] = {2, 3};
const int64_t Shape1[1] = {1};

void addToArena(void *const *In, void *const *, void *Arena) {
  auto *A = static_cast<const float *>(In[0]);
  auto *B = static_cast<const float *>(In[1]);
  auto *T = static_cast<float *>(Arena);
  for (int I = 0; I < 6; ++I)
    T[I] = A[I] + B[I];
}

void finish(void *const *In, void *const *Out, void *Arena) {
  auto *A = static_cast<const float *>(In[0]);
  auto *T = static_cast<const float *>(Arena);
  auto *Y = static_cast<float *>(Out[0]);
  int64_t Count = 0;
  for (int I = 0; I < 6; ++I) {
    Y[I] = T[I];
    Count += A[I] > 0;
  }
  *static_cast<int64_t *>(Out[1]) = Count;
}

#ifdef FAKE_CUDA
// What a CUDA partition lowered by gpu-to-llvm references: undefined here,
// resolved from the loading program (kiln-run exports libkiln_rt's).
extern "C" {
void *mgpuStreamCreate();
void mgpuStreamSynchronize(void *);
void mgpuStreamDestroy(void *);
void *mgpuMemAlloc(uint64_t, void *, bool);
void mgpuMemFree(void *, void *);
void mgpuMemcpy(void *, void *, std::size_t, void *);
}

// a + b like addToArena, but a makes a round trip through device memory.
void cudaAddToArena(void *const *In, void *const *, void *Arena) {
  void *S = mgpuStreamCreate();
  void *D = mgpuMemAlloc(24, S, false);
  auto *T = static_cast<float *>(Arena);
  mgpuMemcpy(D, In[0], 24, S);
  mgpuMemcpy(T, D, 24, S);
  mgpuStreamSynchronize(S);
  mgpuMemFree(D, S);
  mgpuStreamDestroy(S);
  auto *B = static_cast<const float *>(In[1]);
  for (int I = 0; I < 6; ++I)
    T[I] += B[I];
}
#endif

const kiln_tensor_info Inputs[] = {{"a", KILN_DTYPE_FLOAT, 2, Shape23},
                                   {"b", KILN_DTYPE_FLOAT, 2, Shape23}};
const kiln_tensor_info Outputs[] = {{"out/sum:0", KILN_DTYPE_FLOAT, 2, Shape23},
                                    {"count", KILN_DTYPE_INT64, 1, Shape1}};
const kiln_partition_info Partitions[] = {{"cpu_0", "cpu", 1, addToArena},
                                          {"cpu_1", "cpu", 2, finish}};
#ifdef FAKE_CUDA
const kiln_partition_info CudaPartitions[] = {
    {"cuda_0", "cuda", 1, cudaAddToArena}, {"cpu_1", "cpu", 2, finish}};
const kiln_model_info Info = {KILN_ABI_VERSION,
                              KILN_STR(FAKE_NAME),
                              "kiln test",
                              2,
                              Inputs,
                              2,
                              Outputs,
                              64,
                              64,
                              2,
                              CudaPartitions,
                              KILN_PROVIDER_CUDA,
                              2,
                              Partitions,
                              64};
#else
const kiln_model_info Info = {KILN_ABI_VERSION,
                              KILN_STR(FAKE_NAME),
                              "kiln test",
                              2,
                              Inputs,
                              2,
                              Outputs,
                              64,
                              64,
                              2,
                              Partitions,
                              0,
                              0,
                              nullptr,
                              0};
#endif

} // namespace

extern "C" const kiln_model_info *KILN_CAT(kiln_model_, FAKE_NAME)(void) {
  return &Info;
}

#ifdef FAKE_GENERIC_ENTRY
extern "C" const kiln_model_info *kiln_model(void) { return &Info; }
#endif
