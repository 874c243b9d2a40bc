// kiln_session: validates caller tensors against the model's static
// signature and runs its partitions in order on a per-session arena.
#include "AmxTiles.h"
#include "CudaDriver.h"
#include "DeviceMemory.h"
#include "DynamicOps.h"
#include "Error.h"
#include "ProfileHooks.h"
#include "RuntimeSizes.h"
#include "Sequence.h"
#include "SequenceOps.h"
#include "TextOps.h"
#include "ThreadPool.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include <unistd.h>

using kiln::rt::fail;
using kiln::rt::formatShape;
using kiln::rt::matchTensor;
using kiln::rt::quoted;

namespace {
/// One compiled variant of the model with the memory it runs in.
struct Variant {
  int32_t NumPartitions = 0;
  const kiln_partition_info *Partitions = nullptr;
  uint64_t ArenaSize = 0;
  // The arena's first 8 bytes hold a failed run-time check's message.
  bool Checks = false;
  // The partitions call kilnProfileBegin/End with the context in the
  // arena's bytes 8-15 (ABI 8).
  bool Hooks = false;
  void *Arena = nullptr;
  kiln::rt::cuda::DeviceMemory Device;
};
} // namespace

struct kiln_session {
  const kiln_model_info *Model = nullptr;
  // The variant chosen at create: the model's own, or for a model that
  // needs a provider this machine lacks, its CPU fallback. A CUDA session
  // of a model with device I/O also holds that variant; Active is the one
  // the current run uses.
  Variant Main, DeviceIO;
  Variant *Active = &Main;
  bool HasDeviceIO = false;
  bool UsesCuda = false;
  std::string Provider = "cpu", ProviderNote;
  // Strings the last run made (StringConcat); outputs may point at them.
  std::deque<std::string> RunStrings;
  // Bytes each model input/output occupies, computed once at create; for
  // a sequence or optional value, its int64 handle slot.
  std::vector<uint64_t> InputBytes, OutputBytes;
  // What this run's bound tensors occupy (with run-time sizes, their
  // sizes; else the above): what a CUDA run stages.
  std::vector<uint64_t> InputRunBytes, OutputRunBytes;
  // KILN_VALUE_* of each input/output, and whether any is not a tensor.
  std::vector<int32_t> InputKinds, OutputKinds;
  bool HasValueIO = false;
  // The handle slots the partitions get for sequence/optional values, and
  // the caller's objects that receive the outputs.
  std::vector<int64_t> InputSlots, OutputSlots;
  std::vector<kiln_sequence *> OutputSeqs;
  // Per-run bindings in model order; kept here so run() never allocates.
  std::vector<void *> InputPtrs, OutputPtrs;
  // A CUDA run's bindings while Input/OutputPtrs point into pinned staging.
  std::vector<void *> CallerInputPtrs, CallerOutputPtrs;
  kiln_profile_callback Profiler = nullptr;
  void *ProfilerUser = nullptr;
  // What the partitions' profiling hooks report to (ABI 8).
  kiln::rt::ProfileContext ProfileHooks;
  std::string Error;
  // A model with shape variants runs none of its own: one session per
  // compiled variant, variant 0's made at create (so that its provider and
  // arena errors show there), the others on first use with Options.
  std::vector<kiln_session *> Variants;
  kiln_session_options Options{};
  // A model with run-time sizes (ABI 9): this run's sizes, and the memory
  // of its buffers of run-time size, kept from run to run.
  bool RuntimeSizes = false;
  kiln::rt::RunSizes Sizes;
  kiln::rt::DynAllocator Dyn;
  // Threads for the parallel loops of a run (kiln_session_options), and
  // the pool of the session's thread hooks (null: the shared pool).
  int32_t Threads = 1;
  std::shared_ptr<kiln::rt::Pool> Pool;
};

// Keeps MgpuShims.o (the mgpu* symbols compiled models call) in every
// static link of libkiln_rt.
__attribute__((used)) static size_t (*const KeepMgpuShims)() =
    &kiln::rt::cuda::cachedModuleCount;
// Likewise SequenceOps.o (the kilnSeq* functions).
__attribute__((used)) static int64_t (*const KeepSequenceOps)(int32_t,
                                                              int32_t) =
    &kilnSeqNew;
// And DynamicOps.o (kilnNonZero, kilnUnique, ...).
__attribute__((used)) static int64_t (*const KeepDynamicOps)(
    int64_t, int32_t, int32_t, int64_t, int64_t) = &kilnNonZero;
// And ProfileHooks.o (kilnProfileBegin/End).
__attribute__((used)) static void (*const KeepProfileHooks)(int64_t, int64_t) =
    &kilnProfileBegin;
// And ThreadPool.o (kilnParallelFor, kilnThreadScratch).
__attribute__((used)) static void (*const KeepThreadPool)(
    kiln_task_fn, void *, int64_t, int64_t) = &kilnParallelFor;
// And RuntimeSizes.o (kilnDynAlloc, kilnDynFree, kilnRunFailed).
__attribute__((used)) static void *(*const KeepRuntimeSizes)(int64_t, int64_t) =
    &kilnDynAlloc;
// And TextOps.o (kilnRegexFullMatch, kilnTfIdfVectorizer).
__attribute__((used)) static void (*const KeepTextOps)(int64_t, int64_t,
                                                       int64_t, int64_t,
                                                       int64_t) =
    &kilnRegexFullMatch;

namespace {

using kiln::rt::nowNs;


/// KILN_VALUE_* of input/output I: all are tensors before ABI 6.
int32_t kindOf(const kiln_model_info &M, bool IsOutput, int32_t I) {
  if (M.abi_version < 6)
    return KILN_VALUE_TENSOR;
  const int32_t *Kinds = IsOutput ? M.output_kinds : M.input_kinds;
  return Kinds ? Kinds[I] : KILN_VALUE_TENSOR;
}

/// "a sequence", "an optional tensor", ...
const char *kindName(int32_t Kind) {
  switch (Kind) {
  case KILN_VALUE_SEQUENCE:
    return "a sequence";
  case KILN_VALUE_OPTIONAL:
    return "an optional tensor";
  case KILN_VALUE_OPTIONAL_SEQUENCE:
    return "an optional sequence";
  case KILN_VALUE_DYNAMIC:
    return "a dynamic-shape tensor";
  default:
    return "a tensor";
  }
}

/// "[1,?,64]": "?" for an unknown (-1) dimension.
std::string shapeText(const int64_t *Shape, int32_t Rank) {
  std::string S = "[";
  for (int32_t D = 0; D < Rank; ++D)
    S += (D ? "," : "") +
         (Shape[D] < 0 ? std::string("?") : std::to_string(Shape[D]));
  return S + "]";
}

/// The element shape of a sequence/optional value, "?" where unknown.
std::string elementShape(const kiln_tensor_info &Info) {
  if (Info.rank < 0)
    return "of any shape";
  return shapeText(Info.shape, Info.rank);
}

/// Checks the element description of a sequence/optional value; what the
/// partitions get for it is an int64 handle slot.
kiln_status checkValueInfo(const kiln_tensor_info &Info,
                           const std::string &Label, uint64_t &Bytes) {
  std::string Problem = kiln::rt::seqDTypeProblem(Info.dtype);
  if (!Problem.empty())
    return fail(KILN_ERROR_INVALID_ARGUMENT, Label + ": " + Problem);
  if (Info.rank < -1 || (Info.rank > 0 && !Info.shape))
    return fail(KILN_ERROR_INVALID_ARGUMENT, Label + " has an invalid shape");
  for (int32_t D = 0; D < Info.rank; ++D)
    if (Info.shape[D] < -1)
      return fail(KILN_ERROR_INVALID_ARGUMENT,
                  Label + " has a negative dim: " +
                      formatShape(Info.shape, Info.rank));
  Bytes = sizeof(int64_t);
  return KILN_OK;
}

/// Checks one model tensor description and returns its size in bytes (0
/// with a Symbolic (-1) dimension, which only a shape-variants model's own
/// info has: it never binds buffers).
kiln_status checkInfo(const kiln_tensor_info &Info, int32_t ValueKind,
                      const char *Kind, int32_t Index, bool Symbolic,
                      uint64_t &Bytes) {
  std::string Label =
      std::string("model ") + Kind + " #" + std::to_string(Index);
  if (!Info.name)
    return fail(KILN_ERROR_INVALID_ARGUMENT, Label + " has no name");
  Label = std::string("model ") + Kind + " " + quoted(Info.name);
  if (ValueKind < KILN_VALUE_TENSOR || ValueKind > KILN_VALUE_DYNAMIC)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                Label + " has an unknown value kind " +
                    std::to_string(ValueKind));
  if (ValueKind == KILN_VALUE_DYNAMIC && std::strcmp(Kind, "output") != 0)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                Label + " has value kind " + std::to_string(ValueKind) +
                    " (a dynamic-shape tensor), which only outputs can have");
  if (ValueKind != KILN_VALUE_TENSOR)
    return checkValueInfo(Info, Label, Bytes);
  size_t ElemSize = kiln_dtype_size(Info.dtype);
  if (ElemSize == 0)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                Label + " has unsupported dtype " +
                    kiln_dtype_name(Info.dtype) + " (" +
                    std::to_string(Info.dtype) + ")");
  if (Info.rank < 0 || (Info.rank > 0 && !Info.shape))
    return fail(KILN_ERROR_INVALID_ARGUMENT, Label + " has an invalid shape");
  uint64_t N = ElemSize;
  bool HasSymbolic = false;
  for (int32_t D = 0; D < Info.rank; ++D) {
    int64_t Dim = Info.shape[D];
    if (Symbolic && Dim == -1) {
      HasSymbolic = true;
      continue;
    }
    if (Dim < 0)
      return fail(KILN_ERROR_INVALID_ARGUMENT,
                  Label + " has a dynamic or negative dim: " +
                      formatShape(Info.shape, Info.rank));
    if (Dim != 0 &&
        N > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(Dim))
      return fail(KILN_ERROR_INVALID_ARGUMENT, Label + " is too large");
    N *= static_cast<uint64_t>(Dim);
  }
  Bytes = HasSymbolic ? 0 : N;
  return KILN_OK;
}

bool isAbi2(const kiln_model_info &M) { return M.abi_version >= 2; }
uint32_t flagsOf(const kiln_model_info &M) {
  return M.abi_version >= 3 ? M.flags : 0;
}

bool hasShapeVariants(const kiln_model_info &M) {
  return M.abi_version >= 7 && (M.flags & KILN_MODEL_SHAPE_VARIANTS);
}

kiln_status checkPartitions(const kiln_partition_info *Parts, int32_t N,
                            const char *Which) {
  if (N < 0 || (N > 0 && !Parts))
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                std::string("malformed model info: ") + Which +
                    " count is negative or the array is missing");
  for (int32_t I = 0; I < N; ++I)
    if (!Parts[I].fn)
      return fail(KILN_ERROR_INVALID_ARGUMENT,
                  std::string("model ") + Which + " #" + std::to_string(I) +
                      " has no entry point");
  return KILN_OK;
}

bool envFlag(const char *Name) {
  const char *V = std::getenv(Name);
  return V && *V && std::strcmp(V, "0") != 0;
}

/// Whether a variant's partitions call the profiling hooks (ABI 8).
bool hooksOf(const kiln_model_info &M, uint32_t Flag) {
  return M.abi_version >= 8 && (flagsOf(M) & Flag);
}

/// Picks the partition list: the model's own unless it needs a provider
/// that is missing or refused, then the CPU fallback.
void setVariant(Variant &V, int32_t NumPartitions, const kiln_partition_info *Partitions,
                uint64_t ArenaSize, bool Checks, bool Hooks) {
  V.NumPartitions = NumPartitions;
  V.Partitions = Partitions;
  V.ArenaSize = ArenaSize;
  V.Checks = Checks;
  V.Hooks = Hooks;
}

kiln_status selectProvider(const kiln_model_info &M,
                           const kiln_session_options &Opts, kiln_session &S) {
  setVariant(S.Main, M.num_partitions, M.partitions, M.arena_size,
             flagsOf(M) & KILN_MODEL_CHECKS, hooksOf(M, KILN_MODEL_PROFILE_HOOKS));
  uint32_t Required = isAbi2(M) ? M.required_providers : 0;
  if (Required == 0)
    return KILN_OK;
  std::string Why;
  uint32_t Unknown = Required & ~KILN_PROVIDER_CUDA;
  if (Unknown)
    Why = "the model needs execution providers this runtime does not know "
          "(bits 0x" +
          [&] {
            char Buf[16];
            std::snprintf(Buf, sizeof(Buf), "%x", Unknown);
            return std::string(Buf);
          }() +
          ")";
  else if (Opts.force_cpu)
    Why = "CPU requested";
  else if (envFlag("KILN_FORCE_CPU"))
    Why = "CPU requested by KILN_FORCE_CPU";
  else if (std::string NoCuda; !kiln::rt::cuda::cudaAvailable(NoCuda))
    Why = "CUDA unavailable: " + NoCuda;
  if (Why.empty()) {
    S.UsesCuda = true;
    S.Provider = "cuda";
    // Host buffers of run-time size cross to and from the device: page-
    // locked, like the arena, so that their copies are DMA.
    S.Dyn.setBacking(kiln::rt::cuda::pinnedHostBacking());
    if (M.abi_version >= 5 && M.num_device_io_partitions > 0) {
      S.HasDeviceIO = true;
      setVariant(S.DeviceIO, M.num_device_io_partitions, M.device_io_partitions,
                 M.device_io_arena_size, flagsOf(M) & KILN_MODEL_DEVICE_IO_CHECKS,
                 hooksOf(M, KILN_MODEL_DEVICE_IO_PROFILE_HOOKS));
    }
    return KILN_OK;
  }
  bool HasFallback =
      M.num_fallback_partitions > 0 || M.num_partitions == 0;
  if (!HasFallback)
    return fail(KILN_ERROR_PROVIDER,
                "model " + quoted(M.name ? M.name : "?") +
                    " needs CUDA and has no CPU fallback: " + Why);
  setVariant(S.Main, M.num_fallback_partitions, M.fallback_partitions, M.fallback_arena_size,
             flagsOf(M) & KILN_MODEL_FALLBACK_CHECKS,
             hooksOf(M, KILN_MODEL_FALLBACK_PROFILE_HOOKS));
  S.ProviderNote = Why;
  return KILN_OK;
}

kiln_status checkModel(const kiln_model_info &M, kiln_session &S);

kiln_status malformed(const std::string &What) {
  return fail(KILN_ERROR_INVALID_ARGUMENT, "malformed model info: " + What);
}

/// The variants of a shape-variants model are whole models that agree with
/// its info on everything but its symbolic (-1) dimensions.
kiln_status checkShapeVariants(const kiln_model_info &M) {
  if (M.num_partitions != 0 || M.num_fallback_partitions != 0 ||
      M.num_device_io_partitions != 0)
    return malformed("a model with shape variants has partitions of its own");
  if (M.num_shape_variants < 1 || !M.shape_variants)
    return malformed("shape variant count is " +
                     std::to_string(M.num_shape_variants) +
                     " or the array is missing");
  if (M.num_dim_names < 0 || (M.num_dim_names > 0 && !M.dim_names))
    return malformed("dimension name count is negative or the array is "
                     "missing");
  for (int32_t I = 0; I < M.num_shape_variants; ++I) {
    const kiln_model_info *V = M.shape_variants[I];
    std::string Label = "shape variant " + std::to_string(I);
    if (!V)
      return malformed(Label + " is NULL");
    if (V->abi_version != M.abi_version)
      return malformed(Label + " has ABI version " +
                       std::to_string(V->abi_version) + ", the model " +
                       std::to_string(M.abi_version));
    if (V->flags & KILN_MODEL_SHAPE_VARIANTS)
      return malformed(Label + " has shape variants itself");
    // A variant with run-time sizes (the generic code for the sizes not
    // listed, or one that leaves the batch to run time) takes any size of
    // its symbolic dims.
    bool Generic = kiln::rt::hasRuntimeSizes(*V);
    if (V->num_inputs != M.num_inputs || V->num_outputs != M.num_outputs)
      return malformed(Label + " has " + std::to_string(V->num_inputs) +
                       " inputs and " + std::to_string(V->num_outputs) +
                       " outputs, the model " + std::to_string(M.num_inputs) +
                       " and " + std::to_string(M.num_outputs));
    // The variant is what a run executes: check it whole now rather than
    // at the run that first selects it.
    kiln_session Scratch;
    if (kiln_status St = checkModel(*V, Scratch))
      return fail(St, Label + ": " + kiln_last_error());
    for (int Out = 0; Out < 2; ++Out)
      for (int32_t J = 0; J < (Out ? M.num_outputs : M.num_inputs); ++J) {
        const kiln_tensor_info &Want = (Out ? M.outputs : M.inputs)[J];
        const kiln_tensor_info &Got = (Out ? V->outputs : V->inputs)[J];
        std::string What = Label + (Out ? " output " : " input ");
        if (std::strcmp(Want.name, Got.name) != 0)
          return malformed(What + "#" + std::to_string(J) + " is " +
                           quoted(Got.name) + ", the model's " +
                           quoted(Want.name));
        What += quoted(Got.name);
        if (Got.dtype != Want.dtype)
          return malformed(What + " has dtype " + kiln_dtype_name(Got.dtype) +
                           ", the model's " + kiln_dtype_name(Want.dtype));
        if (kindOf(*V, Out, J) != kindOf(M, Out, J))
          return malformed(What + " is " + kindName(kindOf(*V, Out, J)) +
                           ", the model's " + kindName(kindOf(M, Out, J)));
        if (Got.rank != Want.rank)
          return malformed(What + " has rank " + std::to_string(Got.rank) +
                           ", the model's " + std::to_string(Want.rank));
        for (int32_t D = 0; D < Want.rank; ++D)
          if (Want.shape[D] != -1 && Got.shape[D] != Want.shape[D] &&
              !(Generic && Got.shape[D] == -1))
            return malformed(What + " has shape " +
                             shapeText(Got.shape, Got.rank) + ", the model's " +
                             shapeText(Want.shape, Want.rank));
      }
  }
  return KILN_OK;
}

/// Whether caller tensor T fits input Index of variant V: its rank and
/// static dims. Sequence and optional inputs fit any variant.
bool fitsVariant(const kiln_model_info &V, int32_t Index,
                 const kiln_tensor &T) {
  if (kindOf(V, false, Index) != KILN_VALUE_TENSOR)
    return true;
  const kiln_tensor_info &Info = V.inputs[Index];
  if (T.rank != Info.rank || (T.rank > 0 && !T.shape))
    return false;
  // Run-time sizes: any size of its symbolic dims.
  bool Any = kiln::rt::hasRuntimeSizes(V);
  for (int32_t D = 0; D < T.rank; ++D)
    if (!(Any && Info.shape[D] == -1) && T.shape[D] != Info.shape[D])
      return false;
  return true;
}

/// Input Index's compiled shape in variant V: a run-time size as its
/// symbol's name.
std::string variantShape(const kiln_model_info &V, int32_t Index) {
  const kiln_tensor_info &Info = V.inputs[Index];
  std::string S = "[";
  for (int32_t D = 0; D < Info.rank; ++D) {
    S += D ? "," : "";
    int32_t Sym = kiln_model_dim_symbol(&V, Index, D);
    S += Info.shape[D] >= 0 ? std::to_string(Info.shape[D])
         : Sym >= 0 && Sym < V.num_symbols && V.symbol_names[Sym]
             ? std::string(V.symbol_names[Sym])
             : std::string("?");
  }
  return S + "]";
}

/// "(symbolic dimensions: seq, len; kiln compile --dim-values)"
std::string dimNamesNote(const kiln_model_info &M) {
  std::string Names;
  for (int32_t J = 0; J < M.num_dim_names; ++J)
    Names +=
        (J ? ", " : "") + std::string(M.dim_names[J] ? M.dim_names[J] : "?");
  return "(" + (Names.empty() ? "" : "symbolic dimensions: " + Names + "; ") +
         "kiln compile --dim-values)";
}

/// The variant of shape-variants model M that runs Given (see
/// kiln_model_select); SHAPE_MISMATCH naming what matched nothing.
kiln_status selectVariant(const kiln_model_info &M, const kiln_tensor *Given,
                          int32_t NumGiven, int32_t &Selected) {
  Selected = -1;
  if (M.num_shape_variants < 1 || !M.shape_variants)
    return malformed("shape variant count is " +
                     std::to_string(M.num_shape_variants) +
                     " or the array is missing");
  for (int32_t I = 0; I < M.num_shape_variants; ++I) {
    const kiln_model_info *V = M.shape_variants[I];
    if (!V || V->num_inputs != M.num_inputs ||
        (V->num_inputs > 0 && !V->inputs))
      return malformed("shape variant " + std::to_string(I) +
                       " is NULL or has other inputs than the model");
  }
  // Caller tensors in model order (the first of each name; bind() reports
  // unknown and repeated ones).
  std::vector<const kiln_tensor *> ByInput(M.num_inputs, nullptr);
  for (int32_t I = 0; Given && I < NumGiven; ++I) {
    int32_t Index = matchTensor(M.inputs, M.num_inputs, Given[I], I);
    if (Index >= 0 && !ByInput[Index])
      ByInput[Index] = &Given[I];
  }
  auto Fits = [&](int32_t Variant, int32_t Index) {
    return !ByInput[Index] ||
           fitsVariant(*M.shape_variants[Variant], Index, *ByInput[Index]);
  };
  for (int32_t I = 0; I < M.num_shape_variants; ++I) {
    bool All = true;
    for (int32_t J = 0; All && J < M.num_inputs; ++J)
      All = Fits(I, J);
    if (All) {
      Selected = I;
      return KILN_OK;
    }
  }
  auto GivenShape = [&](int32_t J) {
    const kiln_tensor &T = *ByInput[J];
    return T.rank < 0 ? std::string("of rank ") + std::to_string(T.rank)
                      : formatShape(T.shape, T.rank);
  };
  // The first input that no variant takes, with the shapes it could have.
  for (int32_t J = 0; J < M.num_inputs; ++J) {
    bool Any = false;
    for (int32_t I = 0; !Any && I < M.num_shape_variants; ++I)
      Any = Fits(I, J);
    if (Any)
      continue;
    std::vector<std::string> Shapes;
    for (int32_t I = 0; I < M.num_shape_variants; ++I) {
      std::string S = variantShape(*M.shape_variants[I], J);
      if (std::find(Shapes.begin(), Shapes.end(), S) == Shapes.end())
        Shapes.push_back(S);
    }
    std::string List;
    for (size_t K = 0; K < Shapes.size(); ++K)
      List += (K == 0                   ? ""
               : K + 1 == Shapes.size() ? " or "
                                        : ", ") +
              Shapes[K];
    return fail(KILN_ERROR_SHAPE_MISMATCH, "input " + quoted(M.inputs[J].name) +
                                               " has shape " + GivenShape(J) +
                                               "; the model was compiled for " +
                                               List + " " + dimNamesNote(M));
  }
  // Each input fits some variant, but no one variant fits them all.
  auto Tensors = [&](auto &&ShapeOf) {
    std::string S;
    for (int32_t J = 0; J < M.num_inputs; ++J)
      if (ByInput[J] && kindOf(M, false, J) == KILN_VALUE_TENSOR)
        S += (S.empty() ? "" : ", ") + std::string(M.inputs[J].name) + " " +
             ShapeOf(J);
    return S;
  };
  std::string Compiled;
  for (int32_t I = 0; I < M.num_shape_variants; ++I)
    Compiled += (I ? "; " : "") + Tensors([&](int32_t J) {
                  return variantShape(*M.shape_variants[I], J);
                });
  return fail(KILN_ERROR_SHAPE_MISMATCH,
              "the input shapes (" + Tensors(GivenShape) +
                  ") are a combination that was not compiled; the model "
                  "was compiled for: " +
                  Compiled + " " + dimNamesNote(M));
}

/// Asks the OS for the AMX tile state when the model runs on tiles (ABI
/// 10; shape variants are checked one by one): without it the first tile
/// instruction kills the process.
kiln_status enableAmxTiles(const kiln_model_info &M) {
  if (M.abi_version < 10 || !(M.flags & KILN_MODEL_AMX_TILES))
    return KILN_OK;
  if (const char *Why = kiln::rt::requestAmxTiles())
    return fail(KILN_ERROR_PROVIDER,
                "model " + quoted(M.name ? M.name : "?") +
                    " runs on AMX tiles (compiled for " +
                    (M.target_cpu ? M.target_cpu : "?") +
                    ") but this machine cannot run them: " + Why +
                    "; recompile it for a --target-cpu without AMX (e.g. "
                    "icelake-server or x86-64-v3)");
  return KILN_OK;
}

kiln_status checkModel(const kiln_model_info &M, kiln_session &S) {
  if (M.abi_version < 1 || M.abi_version > KILN_ABI_VERSION)
    return fail(KILN_ERROR_ABI_MISMATCH,
                "model " + quoted(M.name ? M.name : "?") +
                    " was built for kiln model ABI version " +
                    std::to_string(M.abi_version) +
                    ", this runtime supports version " +
                    std::to_string(KILN_ABI_VERSION) + " (and reads older ones)");
  if (M.num_inputs < 0 || M.num_outputs < 0 || M.num_partitions < 0 ||
      (M.num_inputs > 0 && !M.inputs) || (M.num_outputs > 0 && !M.outputs) ||
      (M.num_partitions > 0 && !M.partitions))
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "malformed model info: negative count or missing array");
  if (M.abi_version >= 4 && (flagsOf(M) & KILN_MODEL_DYNAMIC_BATCH))
    return fail(KILN_ERROR_ABI_MISMATCH,
                "model " + quoted(M.name ? M.name : "?") +
                    " runs its batch once per sample, which this runtime no "
                    "longer does: recompile it (a symbolic batch now "
                    "compiles with run-time sizes)");
  S.InputBytes.resize(M.num_inputs);
  S.OutputBytes.resize(M.num_outputs);
  S.InputRunBytes.resize(M.num_inputs);
  S.OutputRunBytes.resize(M.num_outputs);
  S.InputKinds.resize(M.num_inputs);
  S.OutputKinds.resize(M.num_outputs);
  S.RuntimeSizes = kiln::rt::hasRuntimeSizes(M);
  bool Symbolic = hasShapeVariants(M) || S.RuntimeSizes;
  for (int32_t I = 0; I < M.num_inputs; ++I) {
    S.InputKinds[I] = kindOf(M, false, I);
    if (kiln_status St = checkInfo(M.inputs[I], S.InputKinds[I], "input", I,
                                   Symbolic, S.InputBytes[I]))
      return St;
  }
  for (int32_t I = 0; I < M.num_outputs; ++I) {
    S.OutputKinds[I] = kindOf(M, true, I);
    if (kiln_status St = checkInfo(M.outputs[I], S.OutputKinds[I], "output", I,
                                   Symbolic, S.OutputBytes[I]))
      return St;
  }
  for (const std::vector<int32_t> *Kinds : {&S.InputKinds, &S.OutputKinds})
    for (int32_t K : *Kinds)
      S.HasValueIO |= K != KILN_VALUE_TENSOR;
  if (kiln_status St =
          checkPartitions(M.partitions, M.num_partitions, "partition"))
    return St;
  if (isAbi2(M))
    if (kiln_status St = checkPartitions(M.fallback_partitions,
                                         M.num_fallback_partitions,
                                         "fallback partition"))
      return St;
  if (M.abi_version >= 5)
    if (kiln_status St = checkPartitions(M.device_io_partitions,
                                         M.num_device_io_partitions,
                                         "device I/O partition"))
      return St;
  if (kiln_status St = enableAmxTiles(M))
    return St;
  if (S.RuntimeSizes)
    return kiln::rt::checkRuntimeSizes(M);
  if (Symbolic)
    return checkShapeVariants(M);
  return KILN_OK;
}

kiln_status allocateArena(const kiln_model_info &M, Variant &S) {
  if (S.ArenaSize == 0)
    return KILN_OK;
  uint64_t Align = M.arena_alignment;
  if (Align & (Align - 1))
    return fail(KILN_ERROR_INVALID_ARGUMENT, "arena alignment " +
                                                 std::to_string(Align) +
                                                 " is not a power of two");
  if (Align < alignof(std::max_align_t))
    Align = alignof(std::max_align_t);
  if (S.ArenaSize > std::numeric_limits<uint64_t>::max() - Align)
    return fail(KILN_ERROR_OUT_OF_MEMORY, "arena size is too large");
  // aligned_alloc wants the size to be a multiple of the alignment.
  uint64_t Size = (S.ArenaSize + Align - 1) / Align * Align;
  // More than the machine's memory cannot work; with overcommit the
  // allocation would succeed and the run be killed later.
  long Pages = sysconf(_SC_PHYS_PAGES), PageSize = sysconf(_SC_PAGESIZE);
  if (Pages > 0 && PageSize > 0 &&
      Size / static_cast<uint64_t>(PageSize) > static_cast<uint64_t>(Pages))
    return fail(KILN_ERROR_OUT_OF_MEMORY,
                "cannot allocate a " + std::to_string(Size) +
                    "-byte arena for model " + quoted(M.name ? M.name : "?") +
                    ": the machine has " +
                    std::to_string(static_cast<uint64_t>(Pages) * PageSize) +
                    " bytes of memory");
  S.Arena = std::aligned_alloc(Align, Size);
  if (!S.Arena)
    return fail(KILN_ERROR_OUT_OF_MEMORY,
                "cannot allocate a " + std::to_string(Size) +
                    "-byte arena for model " + quoted(M.name ? M.name : "?"));
  return KILN_OK;
}

/// Validates the caller's kiln_sequence for sequence/optional value Index
/// and points its partition slot at it (inputs) or at 0 (outputs).
kiln_status bindValue(kiln_session &S, const kiln_tensor &T, int32_t Index,
                      bool IsOutput, const std::string &Label) {
  const kiln_tensor_info &Info =
      (IsOutput ? S.Model->outputs : S.Model->inputs)[Index];
  int32_t Kind = (IsOutput ? S.OutputKinds : S.InputKinds)[Index];
  auto *Seq = static_cast<kiln_sequence *>(T.data);
  if (!Seq)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                Label + ": data is NULL (" + kindName(Kind) +
                    " value is passed as a kiln_sequence*)");
  if (Seq->DType != Info.dtype)
    return fail(KILN_ERROR_DTYPE_MISMATCH,
                Label + ": expected " + kindName(Kind) + " of " +
                    kiln_dtype_name(Info.dtype) + ", got one of " +
                    kiln_dtype_name(Seq->DType));
  if (IsOutput) {
    S.OutputSlots[Index] = 0;
    S.OutputSeqs[Index] = Seq;
    S.OutputPtrs[Index] = &S.OutputSlots[Index];
    return KILN_OK;
  }
  if (Kind == KILN_VALUE_SEQUENCE && Seq->None)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                Label + ": a sequence input cannot be none");
  if (Kind == KILN_VALUE_OPTIONAL && Seq->Elements.size() != (Seq->None ? 0u : 1u))
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                Label + ": an optional tensor holds one element or is none, got " +
                    std::to_string(Seq->Elements.size()) + " elements");
  for (size_t E = 0; E < Seq->Elements.size(); ++E) {
    const std::vector<int64_t> &Shape = Seq->Elements[E]->Shape;
    bool Same =
        Info.rank < 0 || static_cast<int32_t>(Shape.size()) == Info.rank;
    for (int32_t D = 0; Same && Info.rank > 0 && D < Info.rank; ++D)
      Same = Info.shape[D] < 0 || Info.shape[D] == Shape[D];
    if (!Same)
      return fail(KILN_ERROR_SHAPE_MISMATCH,
                  Label + ": element " + std::to_string(E) + " has shape " +
                      formatShape(Shape.data(),
                                  static_cast<int32_t>(Shape.size())) +
                      ", the model expects " + elementShape(Info));
  }
  S.InputSlots[Index] =
      static_cast<int64_t>(reinterpret_cast<uintptr_t>(Seq));
  S.InputPtrs[Index] = &S.InputSlots[Index];
  return KILN_OK;
}

/// Matches caller tensors to model tensors (by name, else by position),
/// validates them and fills the session's Input/OutputPtrs in model order.
kiln_status bind(kiln_session &S, const kiln_tensor *Given, int32_t NumGiven,
                 bool IsOutput) {
  const kiln_model_info &M = *S.Model;
  const std::vector<uint64_t> &Needed = IsOutput ? S.OutputBytes : S.InputBytes;
  std::vector<uint64_t> &RunBytes =
      IsOutput ? S.OutputRunBytes : S.InputRunBytes;
  std::vector<void *> &Ptrs = IsOutput ? S.OutputPtrs : S.InputPtrs;
  const char *Kind = IsOutput ? "output" : "input";
  const kiln_tensor_info *Infos = IsOutput ? M.outputs : M.inputs;
  int32_t NumInfos = IsOutput ? M.num_outputs : M.num_inputs;
  if (NumGiven != NumInfos)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "expected " + std::to_string(NumInfos) + " " + Kind +
                    "s, got " + std::to_string(NumGiven));
  if (NumGiven > 0 && !Given)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                std::string(Kind) + " array is NULL");
  for (void *&P : Ptrs)
    P = nullptr;
  for (int32_t I = 0; I < NumGiven; ++I) {
    const kiln_tensor &T = Given[I];
    int32_t Index = matchTensor(Infos, NumInfos, T, I);
    if (T.name) {
      if (Index < 0) {
        std::string Known;
        for (int32_t J = 0; J < NumInfos; ++J)
          Known += (J ? ", " : "") + quoted(Infos[J].name);
        return fail(KILN_ERROR_INVALID_ARGUMENT,
                    std::string("unknown ") + Kind + " " + quoted(T.name) +
                        " (model " + Kind + "s: " + Known + ")");
      }
    }
    const kiln_tensor_info &Info = Infos[Index];
    std::string Label = std::string(Kind) + " " + quoted(Info.name);
    if (Ptrs[Index])
      return fail(KILN_ERROR_INVALID_ARGUMENT, Label + " is given twice");
    // A sequence/optional value: `data` is the caller's kiln_sequence.
    if ((IsOutput ? S.OutputKinds : S.InputKinds)[Index] != KILN_VALUE_TENSOR) {
      if (kiln_status St = bindValue(S, T, Index, IsOutput, Label))
        return St;
      RunBytes[Index] = Needed[Index];
      continue;
    }
    // A tensor with no elements needs no storage (numpy gives it none).
    // This run's dims where the model has run-time sizes.
    auto DimAt = [&](int32_t D) {
      if (S.RuntimeSizes)
        return (IsOutput ? S.Sizes.Outputs : S.Sizes.Inputs)[Index][D];
      return Info.shape[D];
    };
    int64_t Elements = 1;
    for (int32_t D = 0; D < Info.rank; ++D)
      Elements *= DimAt(D);
    if (!T.data && Elements != 0)
      return fail(KILN_ERROR_INVALID_ARGUMENT, Label + ": data is NULL");
    if (T.dtype != Info.dtype)
      return fail(KILN_ERROR_DTYPE_MISMATCH,
                  Label + ": expected dtype " + kiln_dtype_name(Info.dtype) +
                      ", got " + kiln_dtype_name(T.dtype));
    bool SkipShape = IsOutput && T.rank == 0 && !T.shape;
    if (!SkipShape) {
      if (T.rank < 0 || (T.rank > 0 && !T.shape))
        return fail(KILN_ERROR_INVALID_ARGUMENT,
                    Label + ": invalid rank or NULL shape");
      bool Same = T.rank == Info.rank;
      for (int32_t D = 0; Same && D < T.rank; ++D)
        Same = T.shape[D] == DimAt(D);
      if (!Same) {
        // Built only for the message: a successful run() does not allocate.
        std::vector<int64_t> Shape;
        for (int32_t D = 0; D < Info.rank; ++D)
          Shape.push_back(Info.shape[D] < 0 && !S.RuntimeSizes ? -1 : DimAt(D));
        return fail(KILN_ERROR_SHAPE_MISMATCH,
                    Label + ": expected shape " +
 formatShape(Shape.data(), Info.rank) + ", got " + formatShape(T.shape, T.rank));
      }
    }
    uint64_t Bytes = S.RuntimeSizes
                         ? static_cast<uint64_t>(Elements) * kiln_dtype_size(Info.dtype)
                         : Needed[Index];
    if (T.size_bytes < Bytes)
      return fail(KILN_ERROR_INVALID_ARGUMENT,
                  Label + ": buffer holds " + std::to_string(T.size_bytes) +
                      " bytes, needs " + std::to_string(Bytes));
    RunBytes[Index] = Bytes;
    // Empty tensors still get a non-null slot (the model never reads it).
    static char EmptyTensor;
    Ptrs[Index] = T.data ? T.data : &EmptyTensor;
  }
  return KILN_OK;
}

/// The error of a failed run-time check, or else of a failed kilnSeq*
/// call, if the run had one.
kiln_status checkStatus(const Variant &S) {
  if (!S.Checks || !S.Arena)
    return kiln::rt::seqRunStatus();
  const char *Msg;
  std::memcpy(&Msg, S.Arena, sizeof(Msg));
  if (!Msg)
    return kiln::rt::seqRunStatus();
  return fail(KILN_ERROR_SHAPE_MISMATCH, std::string("run-time check failed: ") + Msg);
}

/// What is wrong with the box a run made for a dynamic-shape output: it
/// holds one tensor, of the output's rank and known dimensions. "" if
/// nothing.
std::string dynamicProblem(const kiln_sequence &Box,
                           const kiln_tensor_info &Info) {
  if (Box.None || Box.Elements.size() != 1)
    return "the model made a dynamic-shape tensor of " +
           std::string(Box.None ? "none" : std::to_string(Box.Elements.size()) +
                                               " elements");
  const std::vector<int64_t> &Shape = Box.Elements[0]->Shape;
  bool Same = Info.rank < 0 || static_cast<int32_t>(Shape.size()) == Info.rank;
  for (int32_t D = 0; Same && Info.rank > 0 && D < Info.rank; ++D)
    Same = Info.shape[D] < 0 || Info.shape[D] == Shape[D];
  if (Same)
    return "";
  return "the model made a tensor of shape " +
         formatShape(Shape.data(), static_cast<int32_t>(Shape.size())) +
         ", the model info says " + elementShape(Info);
}

/// Copies the sequence/optional outputs a successful run set into the
/// caller's objects: all checked first, so that a bad one changes none.
kiln_status deliverValues(kiln_session &S) {
  const kiln_model_info &M = *S.Model;
  for (int32_t I = 0; I < M.num_outputs; ++I) {
    int32_t Kind = S.OutputKinds[I];
    if (Kind == KILN_VALUE_TENSOR)
      continue;
    std::string Label = "output " + quoted(M.outputs[I].name);
    const auto *Result = reinterpret_cast<const kiln_sequence *>(
        static_cast<uintptr_t>(S.OutputSlots[I]));
    std::string Problem;
    if (!Result)
      Problem = "the model set no value";
    else if (Result->DType != M.outputs[I].dtype)
      Problem = std::string("the model made ") + kindName(Kind) + " of " +
                kiln_dtype_name(Result->DType);
    else if (Kind == KILN_VALUE_SEQUENCE && Result->None)
      Problem = "the model made a none sequence";
    else if (Kind == KILN_VALUE_OPTIONAL &&
             Result->Elements.size() != (Result->None ? 0u : 1u))
      Problem = "the model made an optional tensor of " +
                std::to_string(Result->Elements.size()) + " elements";
    else if (Kind == KILN_VALUE_DYNAMIC)
      Problem = dynamicProblem(*Result, M.outputs[I]);
    if (!Problem.empty())
      return fail(KILN_ERROR_INTERNAL, Label + ": " + Problem);
  }
  // Copies first: a result may be a caller's object that is also an output.
  std::vector<kiln_sequence> Results;
  for (int32_t I = 0; I < M.num_outputs; ++I)
    if (S.OutputKinds[I] != KILN_VALUE_TENSOR)
      Results.push_back(*reinterpret_cast<const kiln_sequence *>(
          static_cast<uintptr_t>(S.OutputSlots[I])));
  auto Next = Results.begin();
  for (int32_t I = 0; I < M.num_outputs; ++I) {
    if (S.OutputKinds[I] == KILN_VALUE_TENSOR)
      continue;
    kiln_sequence &Dst = *S.OutputSeqs[I];
    Dst.None = Next->None;
    Dst.Elements = std::move(Next->Elements);
    ++Next;
  }
  return KILN_OK;
}

kiln_status runPartitions(kiln_session &S) {
  void *const *In = S.InputPtrs.data();
  void *const *Out = S.OutputPtrs.data();
  Variant &V = *S.Active;
  if (V.Checks && V.Arena)
    std::memset(V.Arena, 0, sizeof(const char *));
  if (V.Hooks && V.Arena) {
    // The partitions read it once per run: the profiler's context, or 0.
    S.ProfileHooks.Callback = S.Profiler;
    S.ProfileHooks.User = S.ProfilerUser;
    void *Context = S.Profiler ? &S.ProfileHooks : nullptr;
    std::memcpy(static_cast<char *>(V.Arena) + 8, &Context, sizeof(Context));
  }
  if (S.RuntimeSizes && V.Arena) {
    void *Allocator = &S.Dyn;
    std::memcpy(static_cast<char *>(V.Arena) + KILN_ARENA_ALLOCATOR, &Allocator,
                sizeof(Allocator));
    S.Sizes.store(*S.Model, V.Arena);
  }
  // A failed fatal check (run-time sizes) ends the partition at once.
  auto Call = [&](const kiln_partition_info &P) {
    if (!S.RuntimeSizes) {
      P.fn(In, Out, V.Arena);
      return true;
    }
    bool Done = kiln::rt::runGuarded(P.fn, In, Out, V.Arena);
    S.Dyn.reset();
    return Done;
  };
  auto Ended = [&]() {
    kiln_status St = checkStatus(V);
    return St != KILN_OK ? St
                         : fail(KILN_ERROR_OUT_OF_MEMORY,
                                "out of memory for a buffer of run-time size");
  };
  if (!S.Profiler) {
    for (int32_t I = 0; I < V.NumPartitions; ++I)
      if (!Call(V.Partitions[I]))
        return Ended();
    return checkStatus(V);
  }
  for (int32_t I = 0; I < V.NumPartitions; ++I) {
    const kiln_partition_info &P = V.Partitions[I];
    kiln_profile_event E{P.name ? P.name : "",
                         P.provider ? P.provider : S.Provider.c_str(),
                         "partition",
                         KILN_EVENT_PARTITION,
                         nowNs(),
                         0,
                         0,
                         nullptr};
    S.Profiler(&E, 0, S.ProfilerUser);
    if (!Call(P))
      return Ended();
    E.duration_ns = nowNs() - E.start_ns;
    S.Profiler(&E, 1, S.ProfilerUser);
  }
  return checkStatus(V);
}

/// Runs the partitions of a "cuda" session: the CUDA failures the mgpu
/// shims record on this thread become the run's error.
kiln_status runCudaPartitions(kiln_session &S) {
  namespace cuda = kiln::rt::cuda;
  cuda::clearErrors();
  // (With availability faked for tests there is no context: let the
  // partitions' shims fail and be reported.)
  if (!cuda::availabilityFaked() && !cuda::makeContextCurrent()) {
    std::string Msg = "CUDA error: " + cuda::firstError();
    cuda::clearErrors();
    return fail(KILN_ERROR_PROVIDER, Msg);
  }
  // The caller's host buffers are pageable: inputs and outputs go through
  // pinned staging, so that their copies are asynchronous DMA on the
  // session's stream like all others. (Device I/O needs none.)
  bool Staged = false;
  if (S.Active == &S.Main) {
    auto Aligned = [](uint64_t B) { return (B + 63) & ~uint64_t(63); };
    uint64_t Total = 0;
    for (uint64_t B : S.InputRunBytes)
      Total += Aligned(B);
    for (uint64_t B : S.OutputRunBytes)
      Total += Aligned(B);
    if (char *Staging = static_cast<char *>(cuda::stagingBuffer(S.Active->Device, Total))) {
      Staged = true;
      S.CallerInputPtrs = S.InputPtrs;
      S.CallerOutputPtrs = S.OutputPtrs;
      for (size_t I = 0; I < S.InputPtrs.size(); ++I) {
        std::memcpy(Staging, S.InputPtrs[I], S.InputRunBytes[I]);
        S.InputPtrs[I] = Staging;
        Staging += Aligned(S.InputRunBytes[I]);
      }
      for (size_t I = 0; I < S.OutputPtrs.size(); ++I) {
        // A sequence output's handle slot starts 0, staged or not.
        if (S.OutputKinds[I] != KILN_VALUE_TENSOR)
          std::memset(Staging, 0, sizeof(int64_t));
        S.OutputPtrs[I] = Staging;
        Staging += Aligned(S.OutputRunBytes[I]);
      }
    }
  }
  cuda::beginDeviceRun(&S.Active->Device, S.Active->Arena, S.Active->ArenaSize, S.Profiler,
                       S.ProfilerUser);
  kiln_status St = runPartitions(S);
  cuda::endDeviceRun();
  if (St == KILN_OK && !cuda::hasError())
    S.Active->Device.ConstantsCurrent = true;
  if (St == KILN_OK && cuda::hasError()) {
    std::string Msg = "CUDA error during run: " + cuda::firstError();
    if (cuda::errorCount() > 1)
      Msg += " (and " + std::to_string(cuda::errorCount() - 1) +
             " later CUDA errors)";
    St = fail(KILN_ERROR_PROVIDER, Msg);
  }
  cuda::clearErrors();
  if (Staged) {
    // A failed run leaves the caller's outputs untouched.
    for (size_t I = 0; I < S.OutputPtrs.size() && St == KILN_OK; ++I)
      std::memcpy(S.CallerOutputPtrs[I], S.OutputPtrs[I], S.OutputRunBytes[I]);
    S.InputPtrs.swap(S.CallerInputPtrs);
    S.OutputPtrs.swap(S.CallerOutputPtrs);
  }
  return St;
}

kiln_status runOnce(kiln_session &S) {
  auto Previous = kiln::rt::setRunThreads({S.Threads, S.Pool.get()});
  kiln_status St = S.UsesCuda ? runCudaPartitions(S) : runPartitions(S);
  kiln::rt::setRunThreads(Previous);
  return St;
}

kiln_status runSession(kiln_session *S, const kiln_tensor *Inputs, int32_t NumInputs,
                       kiln_tensor *Outputs, int32_t NumOutputs);

/// The session of shape variant I, created on first use.
kiln_status variantSession(kiln_session &S, int32_t I, kiln_session *&Out) {
  if (!S.Variants[I]) {
    kiln_session *V = nullptr;
    // Variants run on the model's threads: its count, its pool.
    kiln_session_options Options = S.Options;
    Options.num_threads = S.Threads;
    Options.create_thread = nullptr;
    Options.join_thread = nullptr;
    if (kiln_status St = kiln_session_create_with_options(
            S.Model->shape_variants[I], &Options, &V))
      return fail(St, "shape variant " + std::to_string(I) + ": " +
                          kiln_last_error());
    V->Pool = S.Pool;
    S.Variants[I] = V;
  }
  Out = S.Variants[I];
  return KILN_OK;
}

/// Creates variant 0's session, whose provider the model's session reports.
kiln_status createVariants(kiln_session &S, const kiln_session_options &Opts) {
  S.Options = Opts;
  S.Variants.assign(S.Model->num_shape_variants, nullptr);
  kiln_session *First = nullptr;
  if (kiln_status St = variantSession(S, 0, First))
    return St;
  S.Provider = First->Provider;
  S.ProviderNote = First->ProviderNote;
  S.UsesCuda = First->UsesCuda;
  S.HasDeviceIO = First->HasDeviceIO;
  return KILN_OK;
}

/// Runs the variant of a shape-variants model that the inputs select.
kiln_status runVariant(kiln_session &S, const kiln_tensor *Inputs,
                       int32_t NumInputs, kiln_tensor *Outputs,
                       int32_t NumOutputs, bool Device) {
  try {
    const kiln_model_info &M = *S.Model;
    int32_t Index = 0;
    kiln_status St = KILN_OK;
    // A wrong input count or a NULL array: variant 0 reports it as any
    // session does.
    if (NumInputs == M.num_inputs && (Inputs || NumInputs == 0))
      St = selectVariant(M, Inputs, NumInputs, Index);
    kiln_session *V = nullptr;
    if (St == KILN_OK)
      St = variantSession(S, Index, V);
    if (St == KILN_OK) {
      V->Profiler = S.Profiler;
      V->ProfilerUser = S.ProfilerUser;
      St = Device ? kiln_session_run_device(V, Inputs, NumInputs, Outputs,
                                            NumOutputs)
                  : kiln_session_run(V, Inputs, NumInputs, Outputs, NumOutputs);
    }
    if (St != KILN_OK)
      S.Error = kiln_last_error();
    return St;
  } catch (const std::bad_alloc &) {
    S.Error = "out of memory";
    return fail(KILN_ERROR_OUT_OF_MEMORY, S.Error);
  }
}

/// One run of the session: a model_run event around it, as ONNX Runtime
/// reports one per run.
kiln_status runProfiled(kiln_session &S) {
  if (!S.Profiler)
    return runOnce(S);
  const kiln_model_info &M = *S.Model;
  kiln_profile_event Run{
      "model_run", "kiln", M.name ? M.name : "", KILN_EVENT_RUN, nowNs(), 0, 0, nullptr};
  S.Profiler(&Run, 0, S.ProfilerUser);
  kiln_status St = runOnce(S);
  Run.duration_ns = nowNs() - Run.start_ns;
  S.Profiler(&Run, 1, S.ProfilerUser);
  return St;
}

} // namespace

extern "C" {

int32_t kiln_model_value_kind(const kiln_model_info *Model, int32_t IsOutput,
                              int32_t Index) {
  if (!Model || Index < 0 ||
      Index >= (IsOutput ? Model->num_outputs : Model->num_inputs))
    return KILN_VALUE_TENSOR;
  return kindOf(*Model, IsOutput != 0, Index);
}

void kiln_model_shape_at(const kiln_model_info *Model, int32_t IsOutput,
                         int32_t Index, int64_t *Shape) {
  if (!Model || !Shape || Index < 0 ||
      Index >= (IsOutput ? Model->num_outputs : Model->num_inputs))
    return;
  const kiln_tensor_info &Info = (IsOutput ? Model->outputs : Model->inputs)[Index];
  for (int32_t D = 0; D < Info.rank; ++D)
    Shape[D] = Info.shape[D];
}

int32_t kiln_model_dim_symbol(const kiln_model_info *Model, int32_t Input,
                              int32_t Dim) {
  if (!Model || !kiln::rt::hasRuntimeSizes(*Model) ||
      !Model->input_dim_symbols || Input < 0 || Input >= Model->num_inputs ||
      Dim < 0 || Dim >= Model->inputs[Input].rank)
    return -1;
  size_t First = 0;
  for (int32_t J = 0; J < Input; ++J)
    First += static_cast<size_t>(Model->inputs[J].rank);
  return Model->input_dim_symbols[First + Dim];
}

int32_t kiln_model_has_runtime_sizes(const kiln_model_info *Model) {
  return Model && kiln::rt::hasRuntimeSizes(*Model) ? 1 : 0;
}

kiln_status kiln_model_output_shape(const kiln_model_info *Model, const kiln_tensor *Inputs,
                                    int32_t NumInputs, int32_t Index, int64_t *Shape) {
  // A scalar output has no dims to write: Shape may be NULL.
  if (!Model || Index < 0 || Index >= Model->num_outputs ||
      (!Shape && Model->outputs[Index].rank != 0))
    return fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_model_output_shape: no model, shape "
                                             "array or output " + std::to_string(Index));
  try {
    if (hasShapeVariants(*Model)) {
      // Sized by the variant that runs these inputs.
      const kiln_model_info *Variant = nullptr;
      if (kiln_status St = kiln_model_select(Model, Inputs, NumInputs, &Variant))
        return St;
      return kiln_model_output_shape(Variant, Inputs, NumInputs, Index, Shape);
    }
    if (!kiln::rt::hasRuntimeSizes(*Model)) {
      kiln_model_shape_at(Model, 1, Index, Shape);
      return KILN_OK;
    }
    if (NumInputs != Model->num_inputs || (NumInputs && !Inputs))
      return fail(KILN_ERROR_INVALID_ARGUMENT,
                  "expected " + std::to_string(Model->num_inputs) + " inputs, got " +
                      std::to_string(NumInputs));
    kiln::rt::RunSizes Sizes;
    if (kiln_status St = Sizes.bind(*Model, Inputs, NumInputs))
      return St;
    const std::vector<int64_t> &Dims = Sizes.Outputs[Index];
    for (size_t D = 0; D < Dims.size(); ++D)
      Shape[D] = Dims[D];
    return KILN_OK;
  } catch (const std::bad_alloc &) {
    return fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory");
  }
}

kiln_status kiln_model_select(const kiln_model_info *Model,
                              const kiln_tensor *Inputs, int32_t NumInputs,
                              const kiln_model_info **Variant) {
  if (!Model || !Variant)
    return fail(KILN_ERROR_INVALID_ARGUMENT, "model info or variant is NULL");
  *Variant = nullptr;
  if (NumInputs < 0 || (NumInputs > 0 && !Inputs))
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "input count is negative or the input array is NULL");
  if (!hasShapeVariants(*Model)) {
    *Variant = Model;
    return KILN_OK;
  }
  try {
    int32_t Index = 0;
    if (kiln_status St = selectVariant(*Model, Inputs, NumInputs, Index))
      return St;
    *Variant = Model->shape_variants[Index];
    return KILN_OK;
  } catch (const std::bad_alloc &) {
    return fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory");
  }
}

kiln_status kiln_session_create(const kiln_model_info *Model,
                                kiln_session **Out) {
  return kiln_session_create_with_options(Model, nullptr, Out);
}

kiln_status kiln_session_create_with_options(const kiln_model_info *Model,
                                             const kiln_session_options *Opts,
                                             kiln_session **Out) {
  if (!Out)
    return fail(KILN_ERROR_INVALID_ARGUMENT, "output session pointer is NULL");
  *Out = nullptr;
  if (!Model)
    return fail(KILN_ERROR_INVALID_ARGUMENT, "model info is NULL");
  try {
    auto *S = new kiln_session;
    S->Model = Model;
    kiln_session_options Defaults{};
    if (Opts && Opts->num_threads < 0) {
      kiln_session_destroy(S);
      return fail(KILN_ERROR_INVALID_ARGUMENT,
                  "num_threads is " + std::to_string(Opts->num_threads) +
                      " (0 for the default, or a positive count)");
    }
    if (!(Opts && Opts->num_threads > 0)) {
      if (std::string Bad = kiln::rt::badThreadCountEnv(); !Bad.empty()) {
        kiln_session_destroy(S);
        return fail(KILN_ERROR_INVALID_ARGUMENT, Bad);
      }
    }
    S->Threads = Opts && Opts->num_threads > 0
                     ? std::min<int32_t>(Opts->num_threads, 256)
                     : kiln::rt::defaultThreadCount();
    // (Read by the shared pool only: not for a pool of the app's threads.)
    if (std::string Bad = kiln::rt::badPinThreadsEnv();
        !Bad.empty() && S->Threads > 1 && !(Opts && Opts->create_thread)) {
      kiln_session_destroy(S);
      return fail(KILN_ERROR_INVALID_ARGUMENT, Bad);
    }
    if (Opts && (!Opts->create_thread != !Opts->join_thread)) {
      kiln_session_destroy(S);
      return fail(KILN_ERROR_INVALID_ARGUMENT,
                  "create_thread and join_thread are set together or not at "
                  "all");
    }
    if (Opts && Opts->create_thread && S->Threads > 1) {
      std::string Error;
      S->Pool = kiln::rt::createPool(
          S->Threads - 1,
          {Opts->create_thread, Opts->join_thread, Opts->thread_user}, Error);
      if (!S->Pool) {
        kiln_session_destroy(S);
        return fail(KILN_ERROR_INVALID_ARGUMENT, Error);
      }
    }
    kiln_status St = checkModel(*Model, *S);
    if (St == KILN_OK && hasShapeVariants(*Model)) {
      St = createVariants(*S, Opts ? *Opts : Defaults);
      if (St != KILN_OK) {
        kiln_session_destroy(S);
        return St;
      }
      *Out = S;
      return KILN_OK;
    }
    if (St == KILN_OK)
      St = selectProvider(*Model, Opts ? *Opts : Defaults, *S);
    if (St == KILN_OK)
      St = allocateArena(*Model, S->Main);
    if (St == KILN_OK && S->HasDeviceIO)
      St = allocateArena(*Model, S->DeviceIO);
    if (St != KILN_OK) {
      kiln_session_destroy(S);
      return St;
    }
    S->InputPtrs.resize(Model->num_inputs);
    S->OutputPtrs.resize(Model->num_outputs);
    S->InputSlots.resize(Model->num_inputs);
    S->OutputSlots.resize(Model->num_outputs);
    S->OutputSeqs.resize(Model->num_outputs);
    *Out = S;
    return KILN_OK;
  } catch (const std::bad_alloc &) {
    return fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory creating session");
  }
}

void kiln_session_destroy(kiln_session *S) {
  if (!S)
    return;
  for (kiln_session *V : S->Variants)
    kiln_session_destroy(V);
  for (Variant *V : {&S->Main, &S->DeviceIO}) {
    kiln::rt::cuda::releaseDeviceMemory(V->Device); // unpins the arena first
    std::free(V->Arena);
  }
  delete S;
}

const kiln_model_info *kiln_session_model(const kiln_session *S) {
  return S ? S->Model : nullptr;
}

kiln_status kiln_session_run(kiln_session *S, const kiln_tensor *Inputs,
                             int32_t NumInputs, kiln_tensor *Outputs,
                             int32_t NumOutputs) {
  if (!S)
    return fail(KILN_ERROR_INVALID_ARGUMENT, "session is NULL");
  if (!S->Variants.empty())
    return runVariant(*S, Inputs, NumInputs, Outputs, NumOutputs, false);
  S->Active = &S->Main;
  return runSession(S, Inputs, NumInputs, Outputs, NumOutputs);
}

int32_t kiln_session_has_device_io(const kiln_session *S) {
  return S && S->HasDeviceIO;
}

kiln_status kiln_session_run_device(kiln_session *S, const kiln_tensor *Inputs,
                                    int32_t NumInputs, kiln_tensor *Outputs,
                                    int32_t NumOutputs) {
  if (!S)
    return fail(KILN_ERROR_INVALID_ARGUMENT, "session is NULL");
  if (!S->HasDeviceIO) {
    S->Error = S->UsesCuda
                   ? "device-resident I/O: model " + quoted(S->Model->name ? S->Model->name : "?") +
                         " has no device I/O variant (compile it with --providers=cuda,...)"
                   : "device-resident I/O needs a CUDA session; this one runs on the CPU" +
                         (S->ProviderNote.empty() ? std::string() : " (" + S->ProviderNote + ")");
    return fail(KILN_ERROR_PROVIDER, S->Error);
  }
  if (S->HasValueIO) {
    S->Error = "device-resident I/O: model " +
               quoted(S->Model->name ? S->Model->name : "?") +
               " has sequence, optional or dynamic-shape inputs/outputs, "
               "which live in host memory; use kiln_session_run";
    return fail(KILN_ERROR_PROVIDER, S->Error);
  }
  if (!S->Variants.empty())
    return runVariant(*S, Inputs, NumInputs, Outputs, NumOutputs, true);
  S->Active = &S->DeviceIO;
  kiln_status St = runSession(S, Inputs, NumInputs, Outputs, NumOutputs);
  S->Active = &S->Main;
  return St;
}

} // extern "C"

namespace {
kiln_status runSession(kiln_session *S, const kiln_tensor *Inputs, int32_t NumInputs,
                       kiln_tensor *Outputs, int32_t NumOutputs) {
  try {
    const kiln_model_info &M = *S->Model;
    kiln_status St = KILN_OK;
    if (S->RuntimeSizes)
      St = S->Sizes.bind(M, Inputs, NumInputs);
    if (St == KILN_OK)
      St = bind(*S, Inputs, NumInputs, false);
    if (St == KILN_OK)
      St = bind(*S, Outputs, NumOutputs, true);
    if (St == KILN_OK) {
      // Owns the sequences the partitions make until they are delivered;
      // the strings they make stay until the next run.
      S->RunStrings.clear();
      kiln::rt::SeqRunScope Values(&S->RunStrings);
      St = runProfiled(*S);
      if (St == KILN_OK && S->HasValueIO)
        St = deliverValues(*S);
    }
    if (St != KILN_OK)
      S->Error = kiln_last_error();
    return St;
  } catch (const std::bad_alloc &) {
    S->Error = "out of memory";
    return fail(KILN_ERROR_OUT_OF_MEMORY, S->Error);
  }
}
} // namespace

extern "C" {

int32_t kiln_session_num_threads(const kiln_session *S) {
  return S ? S->Threads : 0;
}

const char *kiln_session_provider(const kiln_session *S) {
  return S ? S->Provider.c_str() : "";
}

const char *kiln_session_provider_note(const kiln_session *S) {
  return S ? S->ProviderNote.c_str() : "";
}

const char *kiln_session_error(const kiln_session *S) {
  return S ? S->Error.c_str() : "session is NULL";
}

int32_t kiln_available_providers(kiln_provider_status *Out, int32_t Capacity) {
  // Known once per process: the driver is loaded (or not) once.
  static const std::vector<kiln_provider_status> All = [] {
    static std::string CudaWhy, CudaDevice;
    bool Cuda = kiln::rt::cuda::cudaAvailable(CudaWhy);
    if (Cuda && !kiln::rt::cuda::availabilityFaked())
      CudaDevice = kiln::rt::cuda::deviceName();
    return std::vector<kiln_provider_status>{
        {"cpu", 1, "", "host"},
        {"cuda", Cuda ? 1 : 0, CudaWhy.c_str(), CudaDevice.c_str()}};
  }();
  for (int32_t I = 0; Out && I < Capacity && I < static_cast<int32_t>(All.size()); ++I)
    Out[I] = All[I];
  return static_cast<int32_t>(All.size());
}

kiln_status kiln_session_set_profiler(kiln_session *S, kiln_profile_callback Cb,
                                      void *User) {
  if (!S)
    return fail(KILN_ERROR_INVALID_ARGUMENT, "session is NULL");
  S->Profiler = Cb;
  S->ProfilerUser = Cb ? User : nullptr;
  return KILN_OK;
}

} // extern "C"
