#include "Info.h"

#include "ModelLibrary.h"
#include "Runner.h"

#include "kiln/kiln.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace kiln::run {

int listProviders() {
  for (const ProviderStatus &P : availableProviders()) {
    if (P.Available)
      std::printf("%s: available%s%s\n", P.Name.c_str(), P.Device.empty() ? "" : " (",
                  P.Device.empty() ? "" : (P.Device + ")").c_str());
    else
      std::printf("%s: unavailable: %s\n", P.Name.c_str(), P.Reason.c_str());
  }
  return ExitOk;
}

namespace {

/// The values one dimension takes across the listed shape variants.
std::vector<int64_t> valuesAcross(const kiln_model_info &M, bool IsOutput, int32_t Index,
                                  int32_t Dim) {
  std::vector<int64_t> V;
  for (int32_t I = 0; I < listedVariants(M); ++I) {
    const kiln_model_info &S = *M.shape_variants[I];
    const kiln_tensor_info &T = (IsOutput ? S.outputs : S.inputs)[Index];
    V.push_back(Dim < T.rank ? T.shape[Dim] : -1);
  }
  return V;
}

/// Names the symbolic dimension `Dim` of a tensor of a shape-variant model.
/// The descriptor lists the symbols, not which dimension is which, but the
/// variants enumerate the listed sizes with the first symbol varying
/// slowest: an input dimension's values across the variants give its
/// symbol by how long they stay the same. A dimension whose values match
/// no input's symbol (derived, like 2 * seq) stays "?".
std::string symbolName(const kiln_model_info &M, bool IsOutput, int32_t Index, int32_t Dim) {
  std::vector<std::vector<int64_t>> Symbols;
  for (int32_t I = 0; I < M.num_inputs; ++I)
    for (int32_t D = 0; D < M.inputs[I].rank; ++D)
      if (M.inputs[I].shape[D] < 0) {
        std::vector<int64_t> V = valuesAcross(M, false, I, D);
        if (std::find(Symbols.begin(), Symbols.end(), V) == Symbols.end())
          Symbols.push_back(V);
      }
  if (static_cast<int32_t>(Symbols.size()) != M.num_dim_names)
    return "?";
  auto run = [](const std::vector<int64_t> &V) {
    size_t N = 1;
    while (N < V.size() && V[N] == V[0])
      ++N;
    return N;
  };
  std::stable_sort(Symbols.begin(), Symbols.end(),
                   [&](const auto &A, const auto &B) { return run(A) > run(B); });
  auto It = std::find(Symbols.begin(), Symbols.end(), valuesAcross(M, IsOutput, Index, Dim));
  return It == Symbols.end() ? "?" : M.dim_names[It - Symbols.begin()];
}

/// "float32 [batch,3,224,224]": symbolic dimensions by their names.
std::string describe(const kiln_model_info &M, const kiln_tensor_info &T, int32_t Kind,
                     int32_t Index, bool IsOutput) {
  std::string S = kiln_dtype_name(T.dtype);
  if (Kind == KILN_VALUE_SEQUENCE)
    S = "sequence of " + S;
  else if (Kind == KILN_VALUE_OPTIONAL)
    S = "optional " + S;
  if (T.rank < 0)
    return S + " [?]";
  S += " [";
  bool Variants = M.abi_version >= 7 && (M.flags & KILN_MODEL_SHAPE_VARIANTS);
  for (int32_t D = 0; D < T.rank; ++D) {
    S += D ? "," : "";
    if (T.shape[D] < 0)
      S += Variants ? symbolName(M, IsOutput, Index, D) : "?";
    else
      S += std::to_string(T.shape[D]);
  }
  return S + "]";
}

void printPartitions(const char *What, int32_t N, const kiln_partition_info *P) {
  if (N <= 0)
    return;
  std::printf("%s:", What);
  for (int32_t I = 0; I < N; ++I)
    std::printf("%s %s (%s)", I ? "," : "", P[I].name, P[I].provider);
  std::printf("\n");
}

} // namespace

int32_t listedVariants(const kiln_model_info &M) {
  // The generic code binds more symbols than a listed variant: the listed
  // dims besides any that every variant leaves to run time (a batch).
  auto symbols = [](const kiln_model_info *V) {
    return kiln_model_has_runtime_sizes(V) ? V->num_symbols : 0;
  };
  int32_t N = M.num_shape_variants;
  if (N > 1 && symbols(M.shape_variants[N - 1]) > symbols(M.shape_variants[0]))
    --N;
  return N;
}

int printInfo(const Options &Opts) {
  ModelLibrary Lib;
  std::string Err;
  if (!Lib.load(Opts.Library, Err)) {
    std::fprintf(stderr, "kiln-run: error: %s\n", Err.c_str());
    return ExitError;
  }
  const kiln_model_info &M = *Lib.model();
  bool Variants = M.abi_version >= 7 && (M.flags & KILN_MODEL_SHAPE_VARIANTS);
  const kiln_model_info &First = Variants && M.num_shape_variants ? *M.shape_variants[0] : M;
  std::printf("model: %s (%s, model ABI %u)\n", M.name ? M.name : "?",
              M.producer ? M.producer : "?", M.abi_version);
  std::printf("target cpu: %s\n",
              First.abi_version >= 8 && First.target_cpu ? First.target_cpu : "? (before ABI 8)");
  for (int Out = 0; Out < 2; ++Out) {
    int32_t N = Out ? M.num_outputs : M.num_inputs;
    const kiln_tensor_info *T = Out ? M.outputs : M.inputs;
    const int32_t *Kinds = M.abi_version >= 6 ? (Out ? M.output_kinds : M.input_kinds) : nullptr;
    for (int32_t I = 0; I < N; ++I)
      std::printf("%s %d: %s: %s\n", Out ? "output" : "input", I, T[I].name,
                  describe(M, T[I], Kinds ? Kinds[I] : KILN_VALUE_TENSOR, I, Out).c_str());
  }
  if (Variants) {
    // Dims that every variant leaves to run time (a batch) are not listed.
    auto runtimeInVariants = [&](const char *Name) {
      if (!kiln_model_has_runtime_sizes(&First))
        return false;
      for (int32_t J = 0; J < First.num_symbols; ++J)
        if (std::string(First.symbol_names[J]) == Name)
          return true;
      return false;
    };
    std::string Listed, Any;
    for (int32_t I = 0; I < M.num_dim_names; ++I) {
      std::string &To = runtimeInVariants(M.dim_names[I]) ? Any : Listed;
      To += (To.empty() ? "" : ", ") + std::string(M.dim_names[I]);
    }
    std::printf("shape variants: %d (%s resolved per run among the compiled sizes%s%s)\n",
                listedVariants(M), Listed.c_str(),
                Any.empty() ? "" : ("; " + Any + " any size in each").c_str(),
                listedVariants(M) < M.num_shape_variants
                    ? "; any other size runs generic code with run-time sizes"
                    : "");
  }
  if (kiln_model_has_runtime_sizes(&M)) {
    std::printf("run-time sizes: compiled once for every size of ");
    for (int32_t I = 0; I < M.num_symbols; ++I)
      std::printf("%s%s", I ? ", " : "", M.symbol_names[I]);
    std::printf("\n");
  }
  // Partitions of one variant run inline in one host function: the
  // providers it needs say where its kernels run.
  bool Cuda = First.abi_version >= 2 && (First.required_providers & KILN_PROVIDER_CUDA);
  std::printf("providers: %s\n", Cuda ? "cuda, cpu (fallback: cpu only)" : "cpu");
  if (Variants)
    std::printf("(providers, partitions and profiling of the first shape variant)\n");
  printPartitions("partitions", First.num_partitions, First.partitions);
  if (First.abi_version >= 2)
    printPartitions("cpu fallback partitions", First.num_fallback_partitions,
                    First.fallback_partitions);
  uint32_t Hooks = KILN_MODEL_PROFILE_HOOKS | KILN_MODEL_FALLBACK_PROFILE_HOOKS |
                   KILN_MODEL_DEVICE_IO_PROFILE_HOOKS;
  std::printf("profiling: %s\n", First.abi_version >= 8 && (First.flags & Hooks)
                                     ? "per node on the CPU, per kernel and copy on CUDA"
                                     : "per partition and device kernel (no per-node hooks)");
  // What a session picks here, and why.
  kiln_session_options SessionOpts{};
  SessionOpts.force_cpu = Opts.ForceCpu;
  SessionOpts.num_threads = Opts.Threads;
  Session S(&M, SessionOpts);
  if (!S.valid()) {
    std::printf("on this machine: cannot run: %s\n", S.createStatus().message().c_str());
    return ExitError;
  }
  std::string Note = S.providerNote();
  std::printf("on this machine: runs on %s%s%s%s\n", S.provider().c_str(),
              Note.empty() ? "" : " (", Note.c_str(), Note.empty() ? "" : ")");
  return ExitOk;
}

} // namespace kiln::run
