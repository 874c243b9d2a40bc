// Stress of the shared thread pool (ctest threads.stress): four sessions of
// one model at two threads each, on four caller threads, 1000 runs each,
// while a fifth thread creates, runs and destroys sessions (every other one
// on threads of its own made through the app's thread hooks); every output
// must equal, bit for bit, a run of a one-thread session, and every thread
// the hooks made must be joined.
//
// usage: kiln_threads_stress LIB.so [RUNS]   (static input shapes only)
#include "kiln/kiln_rt.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Buffers {
  std::vector<std::vector<char>> In, Out;
  std::vector<kiln_tensor> InT, OutT;
};

/// Inputs filled with a fixed pattern (floats in [-1, 1), integers 0..7),
/// outputs zeroed, all sized from the model's static shapes.
Buffers buffers(const kiln_model_info &M) {
  Buffers B;
  auto make = [](const kiln_tensor_info &T, std::vector<char> &Data, bool Fill) {
    uint64_t N = 1;
    for (int32_t D = 0; D < T.rank; ++D)
      N *= static_cast<uint64_t>(T.shape[D]);
    size_t Size = kiln_dtype_size(T.dtype);
    Data.assign(N * Size + 1, 0);
    for (uint64_t I = 0; Fill && I < N; ++I) {
      if (T.dtype == KILN_DTYPE_FLOAT) {
        float V = static_cast<float>((I * 7919) % 2000) / 1000.0f - 1.0f;
        std::memcpy(&Data[I * Size], &V, sizeof V);
      } else if (T.dtype == KILN_DTYPE_INT64) {
        int64_t V = static_cast<int64_t>(I % 8);
        std::memcpy(&Data[I * Size], &V, sizeof V);
      }
    }
    return kiln_tensor{T.name, T.dtype, T.rank, T.shape, Data.data(), N * Size};
  };
  B.In.resize(M.num_inputs);
  B.Out.resize(M.num_outputs);
  for (int32_t I = 0; I < M.num_inputs; ++I)
    B.InT.push_back(make(M.inputs[I], B.In[I], true));
  for (int32_t I = 0; I < M.num_outputs; ++I)
    B.OutT.push_back(make(M.outputs[I], B.Out[I], false));
  return B;
}

bool run(kiln_session *S, Buffers &B) {
  return kiln_session_run(S, B.InT.data(), static_cast<int32_t>(B.InT.size()), B.OutT.data(),
                          static_cast<int32_t>(B.OutT.size())) == KILN_OK;
}

/// The app's own threads for sessions with thread hooks.
std::atomic<int> HookCreated{0}, HookJoined{0};
void *createThread(void *, void (*Worker)(void *), void *Arg) {
  ++HookCreated;
  return new std::thread(Worker, Arg);
}
void joinThread(void *, void *Handle) {
  auto *T = static_cast<std::thread *>(Handle);
  T->join();
  delete T;
  ++HookJoined;
}

kiln_session *create(const kiln_model_info *M, int32_t Threads,
                     bool Hooks = false) {
  kiln_session_options O{};
  O.num_threads = Threads;
  if (Hooks) {
    O.create_thread = createThread;
    O.join_thread = joinThread;
  }
  kiln_session *S = nullptr;
  if (kiln_session_create_with_options(M, &O, &S) != KILN_OK) {
    std::fprintf(stderr, "kiln_threads_stress: %s\n", kiln_last_error());
    std::exit(2);
  }
  return S;
}

} // namespace

int main(int Argc, char **Argv) {
  if (Argc < 2) {
    std::fprintf(stderr, "usage: kiln_threads_stress LIB.so [RUNS]\n");
    return 2;
  }
  int Runs = Argc > 2 ? std::atoi(Argv[2]) : 1000;
  void *Handle = dlopen(Argv[1], RTLD_NOW | RTLD_LOCAL);
  void *Sym = Handle ? dlsym(Handle, KILN_MODEL_ENTRY_SYMBOL) : nullptr;
  if (!Sym) {
    std::fprintf(stderr, "kiln_threads_stress: cannot load %s: %s\n", Argv[1], dlerror());
    return 2;
  }
  const kiln_model_info *M = reinterpret_cast<kiln_model_entry_fn>(Sym)();
  Buffers Ref = buffers(*M);
  kiln_session *One = create(M, 1);
  if (!run(One, Ref)) {
    std::fprintf(stderr, "kiln_threads_stress: %s\n", kiln_last_error());
    return 2;
  }
  kiln_session_destroy(One);

  std::atomic<int> Wrong{0}, Failed{0}, Churned{0};
  std::atomic<bool> Done{false};
  auto Same = [&](const Buffers &B) {
    for (size_t I = 0; I < B.Out.size(); ++I)
      if (B.Out[I] != Ref.Out[I])
        return false;
    return true;
  };
  std::vector<std::thread> Callers;
  for (int C = 0; C < 4; ++C)
    Callers.emplace_back([&] {
      kiln_session *S = create(M, 2);
      Buffers B = buffers(*M);
      for (int R = 0; R < Runs; ++R) {
        for (auto &O : B.Out)
          std::fill(O.begin(), O.end(), 0);
        if (!run(S, B))
          ++Failed;
        else if (!Same(B))
          ++Wrong;
      }
      kiln_session_destroy(S);
    });
  // Sessions created and destroyed while the others run.
  std::thread Churn([&] {
    while (!Done) {
      kiln_session *S = create(M, 2, Churned % 2 == 1);
      Buffers B = buffers(*M);
      if (!run(S, B))
        ++Failed;
      else if (!Same(B))
        ++Wrong;
      kiln_session_destroy(S);
      ++Churned;
    }
  });
  for (std::thread &T : Callers)
    T.join();
  Done = true;
  Churn.join();
  std::printf("4 sessions x 2 threads x %d runs, %d sessions created and "
              "destroyed meanwhile "
              "(%d app threads made and %d joined through the hooks): "
              "%d failed, %d differ from the 1-thread run\n",
              Runs, Churned.load(), HookCreated.load(), HookJoined.load(),
              Failed.load(), Wrong.load());
  bool Hooked = Churned < 2 || (HookCreated > 0 && HookCreated == HookJoined);
  return Failed || Wrong || !Churned || !Hooked ? 1 : 0;
}
