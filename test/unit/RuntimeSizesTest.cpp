// Models with run-time sizes (model ABI 9, KILN_MODEL_RUNTIME_SIZES): the
// symbols a run's inputs bind, the shape function, the sizes the runtime
// stores in the arena, and the allocator of buffers of run-time size.
#include "../../runtime/lib/RuntimeSizes.h"

#include "kiln/kiln_rt.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

bool contains(const std::string &S, const std::string &Part) {
  return S.find(Part) != std::string::npos;
}

/// y[i] = x[i, 0] + x[i, 1] + a[i] for i < n, with n read from the arena
/// where the runtime stores it (the first dynamic input dim); the sum of
/// the rows also goes through a buffer of the run's allocator.
void rowSums(void *const *In, void *const *Out, void *Arena) {
  int64_t N;
  std::memcpy(&N, static_cast<char *>(Arena) + KILN_ARENA_SIZES, sizeof(N));
  int64_t Allocator;
  std::memcpy(&Allocator, static_cast<char *>(Arena) + KILN_ARENA_ALLOCATOR, sizeof(Allocator));
  auto *Tmp = static_cast<float *>(kilnDynAlloc(Allocator, N * sizeof(float)));
  const auto *X = static_cast<const float *>(In[0]);
  const auto *A = static_cast<const float *>(In[1]);
  for (int64_t I = 0; I < N; ++I)
    Tmp[I] = X[2 * I] + X[2 * I + 1];
  auto *Y = static_cast<float *>(Out[0]);
  for (int64_t I = 0; I < N; ++I)
    Y[I] = Tmp[I] + A[I];
  kilnDynFree(Allocator, Tmp);
}

const int64_t XShape[] = {-1, 2}, AShape[] = {-1}, YShape[] = {-1};
const kiln_tensor_info Inputs[] = {{"x", KILN_DTYPE_FLOAT, 2, XShape},
                                   {"a", KILN_DTYPE_FLOAT, 1, AShape}};
const kiln_tensor_info Outputs[] = {{"y", KILN_DTYPE_FLOAT, 1, YShape}};
const kiln_partition_info Parts[] = {{"cpu_0", "cpu", 1, rowSums}};
const char *const Symbols[] = {"n"};
// x binds n; a's dim is n too.
const int32_t DimSymbols[] = {0, -1, 0};
// y: [n]
const int64_t Sizes[] = {KILN_SIZE_SYMBOL, 0, KILN_SIZE_END, 0};
const int64_t Max[] = {100};

kiln_model_info model() {
  kiln_model_info M{};
  M.abi_version = KILN_ABI_VERSION;
  M.name = "rowsums";
  M.producer = "test";
  M.num_inputs = 2;
  M.inputs = Inputs;
  M.num_outputs = 1;
  M.outputs = Outputs;
  M.arena_size = 64;
  M.arena_alignment = 64;
  M.num_partitions = 1;
  M.partitions = Parts;
  M.flags = KILN_MODEL_CHECKS | KILN_MODEL_RUNTIME_SIZES;
  M.num_symbols = 1;
  M.symbol_names = Symbols;
  M.input_dim_symbols = DimSymbols;
  M.num_output_sizes = 4;
  M.output_sizes = Sizes;
  M.symbol_max = Max;
  return M;
}

kiln_tensor tensor(const char *Name, const int64_t *Shape, int32_t Rank, std::vector<float> &Data) {
  return {Name, KILN_DTYPE_FLOAT, Rank, Shape, Data.data(), Data.size() * sizeof(float)};
}

TEST(RuntimeSizes, RunsAtEverySize) {
  kiln_model_info M = model();
  kiln_session *S = nullptr;
  ASSERT_EQ(kiln_session_create(&M, &S), KILN_OK) << kiln_last_error();
  EXPECT_EQ(kiln_model_has_runtime_sizes(&M), 1);
  for (int64_t N : {3, 1, 7, 0, 7}) {
    std::vector<float> X(2 * N), A(N), Y(N, -1.0f);
    for (int64_t I = 0; I < N; ++I) {
      X[2 * I] = static_cast<float>(I);
      X[2 * I + 1] = 10.0f;
      A[I] = 0.5f;
    }
    int64_t XS[] = {N, 2}, AS[] = {N}, YS[] = {N};
    kiln_tensor In[] = {tensor("x", XS, 2, X), tensor("a", AS, 1, A)};
    int64_t Shape[1] = {-1};
    ASSERT_EQ(kiln_model_output_shape(&M, In, 2, 0, Shape), KILN_OK) << kiln_last_error();
    EXPECT_EQ(Shape[0], N);
    kiln_tensor Out[] = {tensor("y", YS, 1, Y)};
    ASSERT_EQ(kiln_session_run(S, In, 2, Out, 1), KILN_OK) << kiln_session_error(S);
    for (int64_t I = 0; I < N; ++I)
      EXPECT_EQ(Y[I], static_cast<float>(I) + 10.5f);
  }
  kiln_session_destroy(S);
}

TEST(RuntimeSizes, DimSymbolsByInputAndDim) {
  kiln_model_info M = model();
  EXPECT_EQ(kiln_model_dim_symbol(&M, 0, 0), 0);
  EXPECT_EQ(kiln_model_dim_symbol(&M, 0, 1), -1); // static
  EXPECT_EQ(kiln_model_dim_symbol(&M, 1, 0), 0);  // after x's two dims
  EXPECT_EQ(kiln_model_dim_symbol(&M, 1, 1), -1); // out of range
  EXPECT_EQ(kiln_model_dim_symbol(&M, 2, 0), -1);
  EXPECT_EQ(kiln_model_dim_symbol(nullptr, 0, 0), -1);
  M.flags &= ~KILN_MODEL_RUNTIME_SIZES;
  EXPECT_EQ(kiln_model_dim_symbol(&M, 0, 0), -1);
}

TEST(RuntimeSizes, InputsThatDisagreeOnASymbolFailNamingBoth) {
  kiln_model_info M = model();
  kiln_session *S = nullptr;
  ASSERT_EQ(kiln_session_create(&M, &S), KILN_OK);
  std::vector<float> X(6), A(4), Y(3);
  int64_t XS[] = {3, 2}, AS[] = {4}, YS[] = {3};
  kiln_tensor In[] = {tensor("x", XS, 2, X), tensor("a", AS, 1, A)};
  kiln_tensor Out[] = {tensor("y", YS, 1, Y)};
  EXPECT_EQ(kiln_session_run(S, In, 2, Out, 1), KILN_ERROR_SHAPE_MISMATCH);
  EXPECT_TRUE(contains(kiln_session_error(S), "inputs \"x\" and \"a\" disagree on dimension \"n\": 3 and 4"))
      << kiln_session_error(S);
  int64_t Shape[1];
  EXPECT_EQ(kiln_model_output_shape(&M, In, 2, 0, Shape), KILN_ERROR_SHAPE_MISMATCH);
  kiln_session_destroy(S);
}

TEST(RuntimeSizes, BoundAndOutputBufferAreChecked) {
  kiln_model_info M = model();
  kiln_session *S = nullptr;
  ASSERT_EQ(kiln_session_create(&M, &S), KILN_OK);
  std::vector<float> X(202), A(101), Y(101);
  int64_t XS[] = {101, 2}, AS[] = {101}, YS[] = {101};
  kiln_tensor In[] = {tensor("x", XS, 2, X), tensor("a", AS, 1, A)};
  kiln_tensor Out[] = {tensor("y", YS, 1, Y)};
  EXPECT_EQ(kiln_session_run(S, In, 2, Out, 1), KILN_ERROR_SHAPE_MISMATCH);
  EXPECT_TRUE(contains(kiln_session_error(S), "beyond the bound 100")) << kiln_session_error(S);
  // An output buffer of the wrong shape for these inputs.
  int64_t XS2[] = {5, 2}, AS2[] = {5}, YS2[] = {4};
  kiln_tensor In2[] = {tensor("x", XS2, 2, X), tensor("a", AS2, 1, A)};
  kiln_tensor Out2[] = {tensor("y", YS2, 1, Y)};
  EXPECT_EQ(kiln_session_run(S, In2, 2, Out2, 1), KILN_ERROR_SHAPE_MISMATCH);
  EXPECT_TRUE(contains(kiln_session_error(S), "expected shape [5]")) << kiln_session_error(S);
  kiln_session_destroy(S);
}

TEST(RuntimeSizes, MalformedTablesAreRejected) {
  kiln_model_info M = model();
  M.num_output_sizes = 2; // the program lacks its END
  kiln_session *S = nullptr;
  EXPECT_EQ(kiln_session_create(&M, &S), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(kiln_last_error(), "no size program")) << kiln_last_error();
  M = model();
  M.input_dim_symbols = nullptr;
  EXPECT_EQ(kiln_session_create(&M, &S), KILN_ERROR_INVALID_ARGUMENT);
}

TEST(DynAllocator, GrowsToTheLargestRunThenReusesItsBlock) {
  kiln::rt::DynAllocator A;
  // First run: no block yet, so memory of its own; the block grows after.
  void *P = A.allocate(1000), *Q = A.allocate(3000);
  A.release(P);
  void *R = A.allocate(500);
  A.release(Q);
  A.release(R);
  EXPECT_EQ(A.capacity(), 0u);
  A.reset();
  // (Memory of its own is not reused within the run: 1024 + 3008 + 512.)
  EXPECT_EQ(A.capacity(), 4544u);
  // Same pattern: everything fits the block, first fit reuses freed room.
  char *Block = static_cast<char *>(A.allocate(1000));
  char *Second = static_cast<char *>(A.allocate(3000));
  EXPECT_EQ(Second, Block + 1024);
  A.release(Block);
  EXPECT_EQ(static_cast<char *>(A.allocate(500)), Block);
  A.reset();
  EXPECT_EQ(A.capacity(), 4544u);
}

} // namespace
