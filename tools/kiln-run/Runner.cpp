#include "Runner.h"
#include "Info.h"

#include "ModelLibrary.h"
#include "Values.h"
#include "tensorio/Compare.h"
#include "tensorio/FileName.h"
#include "tensorio/Npy.h"
#include "tensorio/SequenceProto.h"
#include "tensorio/TensorProto.h"

#include "kiln/kiln.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

namespace fs = std::filesystem;
using namespace kiln::tensorio;

namespace kiln::run {

namespace {

/// An error that ends the run with ExitError.
struct Failure {
  std::string Message;
};

std::string quoteName(const std::string &S) { return "\"" + S + "\""; }

int findByName(const kiln_tensor_info *Infos, int32_t N,
               const std::string &Name) {
  for (int32_t I = 0; I < N; ++I)
    if (Name == Infos[I].name)
      return I;
  return -1;
}

std::string nameList(const kiln_tensor_info *Infos, int32_t N) {
  std::string S;
  for (int32_t I = 0; I < N; ++I)
    S += (I ? ", " : "") + quoteName(Infos[I].name);
  return S;
}

/// A buffer for model input/output `Index` of a model with static shapes.
HostTensor tensorFor(const kiln_model_info &M, bool IsOutput, int32_t Index) {
  const kiln_tensor_info &Info = (IsOutput ? M.outputs : M.inputs)[Index];
  HostTensor T;
  T.Name = Info.name;
  T.DType = Info.dtype;
  T.Shape.resize(Info.rank);
  kiln_model_shape_at(&M, IsOutput, Index, T.Shape.data());
  T.allocate();
  return T;
}

/// Reads DIR/<Prefix>_N.pb for N = 0, 1, ... until one is missing. File N
/// holds the message of model input/output N's kind; failing that, or when
/// it names a value of another kind, that of the value it names.
std::vector<HostValue> readNumbered(const std::string &Dir,
                                    const std::string &Prefix,
                                    const kiln_model_info &M, bool IsOutput) {
  const kiln_tensor_info *Infos = IsOutput ? M.outputs : M.inputs;
  int32_t Count = IsOutput ? M.num_outputs : M.num_inputs;
  auto KindOf = [&](int32_t I) {
    return kiln_model_value_kind(&M, IsOutput, I);
  };
  std::vector<HostValue> Values;
  for (int N = 0;; ++N) {
    fs::path P = fs::path(Dir) / (Prefix + "_" + std::to_string(N) + ".pb");
    std::error_code EC;
    if (!fs::exists(P, EC))
      return Values;
    HostValue V;
    std::string Err;
    int32_t Kind = KindOf(N);
    bool Read = readValueFile(P.string(), Kind, V, Err);
    int Named = Read ? findByName(Infos, Count, V.name()) : -1;
    bool Retry = !Read || (Named >= 0 && KindOf(Named) != Kind);
    for (int32_t I = 0; Retry && I < Count; ++I) {
      HostValue Other;
      std::string Ignored;
      if (KindOf(I) != Kind &&
          readValueFile(P.string(), KindOf(I), Other, Ignored) &&
          Other.name() == Infos[I].name) {
        V = std::move(Other);
        Read = true;
        Retry = false;
      }
    }
    if (!Read)
      throw Failure{Err};
    Values.push_back(std::move(V));
  }
}

/// Places numbered values by name when they have one, else by position.
std::vector<std::optional<HostValue>>
matchNumbered(std::vector<HostValue> Files, const kiln_model_info &M,
              bool IsOutput, const std::string &Dir, const char *Prefix) {
  const kiln_tensor_info *Infos = IsOutput ? M.outputs : M.inputs;
  int32_t N = IsOutput ? M.num_outputs : M.num_inputs;
  std::vector<std::optional<HostValue>> Slots(N);
  for (size_t F = 0; F < Files.size(); ++F) {
    const std::string &Name = Files[F].name();
    int Index = Name.empty() ? -1 : findByName(Infos, N, Name);
    if (Index < 0 && !Name.empty())
      std::fprintf(stderr,
                   "kiln-run: warning: %s/%s_%zu.pb holds \"%s\", which the "
                   "model does not have; matching it by position\n",
                   Dir.c_str(), Prefix, F, Name.c_str());
    if (Index < 0)
      Index = static_cast<int>(F);
    if (Index >= N)
      throw Failure{Dir + "/" + Prefix + "_" + std::to_string(F) +
                    ".pb has no matching model tensor (model has " +
                    std::to_string(N) + ")"};
    if (Slots[Index])
      throw Failure{Dir + ": two files hold " + quoteName(Infos[Index].name)};
    int32_t Kind = kiln_model_value_kind(&M, IsOutput, Index);
    if (Files[F].Kind != Kind)
      throw Failure{Dir + "/" + Prefix + "_" + std::to_string(F) +
                    ".pb holds " + aValueKind(Files[F].Kind) + ", but " +
                    Prefix + " " + quoteName(Infos[Index].name) + " is " +
                    aValueKind(Kind)};
    Files[F].setName(Infos[Index].name);
    Slots[Index] = std::move(Files[F]);
  }
  return Slots;
}

/// Deterministic data so that benchmark runs are reproducible: floats in
/// [-1, 1), integers in [0, 10) (safe as indices), bools 0/1.
void fillPseudoRandom(HostTensor &T, uint64_t Seed) {
  uint64_t State = 0x9E3779B97F4A7C15ull ^ (Seed * 0xBF58476D1CE4E5B9ull);
  auto Next = [&State] {
    State ^= State << 13;
    State ^= State >> 7;
    State ^= State << 17;
    return State;
  };
  size_t Size = kiln_dtype_size(T.DType);
  for (int64_t I = 0, E = T.numElements(); I < E; ++I) {
    uint64_t R = Next();
    uint8_t *P = T.Bytes.data() + I * Size;
    float F = static_cast<float>(R >> 40) / static_cast<float>(1 << 24) * 2 - 1;
    switch (T.DType) {
    case KILN_DTYPE_FLOAT:
      std::memcpy(P, &F, 4);
      break;
    case KILN_DTYPE_DOUBLE: {
      double D = F;
      std::memcpy(P, &D, 8);
      break;
    }
    case KILN_DTYPE_FLOAT16: {
      uint16_t H = floatToHalf(F);
      std::memcpy(P, &H, 2);
      break;
    }
    case KILN_DTYPE_BFLOAT16: {
      uint32_t Bits;
      std::memcpy(&Bits, &F, 4);
      uint16_t H = static_cast<uint16_t>(Bits >> 16);
      std::memcpy(P, &H, 2);
      break;
    }
    case KILN_DTYPE_BOOL:
      *P = R & 1;
      break;
    default: { // integers, little-endian
      // 0 or 1: a valid index into any axis of 2 or more (token types,
      // embeddings, Gather), a mask value, a small count.
      uint64_t V = R & 1;
      std::memcpy(P, &V, Size < 8 ? Size : 8);
      break;
    }
    }
  }
}

/// What the message for a sequence/optional value of Kind is called.
const char *protoName(int32_t Kind) {
  return Kind == KILN_VALUE_SEQUENCE ? "an ONNX SequenceProto"
                                     : "an ONNX OptionalProto";
}

/// Reads --input NAME=FILE for a sequence or optional input: a .pb file, or
/// for an optional tensor that has a value also the tensor as .npy.
HostValue readValueInput(const std::string &Name, const std::string &File,
                         int32_t Kind, bool IsPb) {
  HostValue V;
  V.Kind = Kind;
  std::string Err;
  if (IsPb) {
    if (!readValueProto(File, Kind, V.Seq, Err))
      throw Failure{Err};
    return V;
  }
  if (Kind != KILN_VALUE_OPTIONAL)
    throw Failure{"--input " + quoteName(Name) + ": " + aValueKind(Kind) +
                  " input needs a .pb file holding " + protoName(Kind)};
  HostTensor T;
  if (!readNpy(File, T, Err))
    throw Failure{Err};
  V.Seq.DType = T.DType;
  V.Seq.Elements.push_back(std::move(T));
  return V;
}

std::vector<HostValue> gatherInputs(const Options &Opts,
                                    const kiln_model_info &M) {
  std::vector<std::optional<HostValue>> Slots(M.num_inputs);
  bool Explicit = !Opts.InputsDir.empty();
  std::string Dir = Explicit ? Opts.InputsDir : Opts.CheckDir;
  if (!Dir.empty()) {
    std::error_code EC;
    if (!fs::is_directory(Dir, EC))
      throw Failure{"inputs directory " + quoteName(Dir) + " does not exist"};
    std::vector<HostValue> Files = readNumbered(Dir, "input", M, false);
    if (Files.empty() && Explicit)
      throw Failure{"no input_0.pb in " + quoteName(Dir)};
    Slots = matchNumbered(std::move(Files), M, false, Dir, "input");
  }
  for (const auto &[Name, File] : Opts.Inputs) {
    int Index = findByName(M.inputs, M.num_inputs, Name);
    if (Index < 0)
      throw Failure{"--input " + quoteName(Name) +
                    ": the model has no such input (inputs: " +
                    nameList(M.inputs, M.num_inputs) + ")"};
    bool IsPb =
        File.size() >= 3 && File.compare(File.size() - 3, 3, ".pb") == 0;
    int32_t Kind = kiln_model_value_kind(&M, false, Index);
    HostValue V;
    if (Kind != KILN_VALUE_TENSOR) {
      V = readValueInput(Name, File, Kind, IsPb);
    } else {
      std::string Err;
      if (!(IsPb ? readTensorProto(File, V.Tensor, Err)
                 : readNpy(File, V.Tensor, Err)))
        throw Failure{Err};
    }
    V.setName(Name);
    Slots[Index] = std::move(V);
  }

  bool Any = std::any_of(Slots.begin(), Slots.end(),
                         [](const auto &S) { return S.has_value(); });
  std::vector<HostValue> Inputs;
  for (int32_t I = 0; I < M.num_inputs; ++I) {
    if (Slots[I]) {
      Inputs.push_back(std::move(*Slots[I]));
      continue;
    }
    int32_t Kind = kiln_model_value_kind(&M, false, I);
    if (Kind != KILN_VALUE_TENSOR)
      throw Failure{
          (Any ? "missing input " : "input ") + quoteName(M.inputs[I].name) +
          " is " + aValueKind(Kind) + " of " +
          kiln_dtype_name(M.inputs[I].dtype) +
          ": sequence and optional inputs need data files (give --input " +
          M.inputs[I].name + "=FILE.pb, --inputs-dir DIR or --check-dir DIR)"};
    if (Any)
      throw Failure{"missing input " + quoteName(M.inputs[I].name) +
                    " (give --input " + M.inputs[I].name +
                    "=FILE.npy or --inputs-dir DIR)"};
    // A model with shape variants has symbolic dims: random data takes the
    // first compiled variant's shapes, or with --batch or --dim the sizes
    // they give to the variant of run-time sizes (listed last) where there
    // is one.
    const kiln_model_info *Shapes = &M;
    if (M.abi_version >= 7 && (M.flags & KILN_MODEL_SHAPE_VARIANTS)) {
      Shapes = M.shape_variants[0];
      const kiln_model_info *Last = M.shape_variants[M.num_shape_variants - 1];
      if ((Opts.BatchGiven || !Opts.Dims.empty()) &&
          kiln_model_has_runtime_sizes(Last))
        Shapes = Last;
    }
    Inputs.emplace_back();
    if (kiln_model_has_runtime_sizes(Shapes)) {
      // Symbolic dims take their --dim size, else --batch.
      HostTensor &T = Inputs.back().Tensor;
      T.Name = Shapes->inputs[I].name;
      T.DType = Shapes->inputs[I].dtype;
      for (int32_t D = 0; D < Shapes->inputs[I].rank; ++D) {
        int64_t Dim = Shapes->inputs[I].shape[D];
        int32_t Sym = kiln_model_dim_symbol(Shapes, I, D);
        if (Sym >= 0) {
          auto It = Opts.Dims.find(Shapes->symbol_names[Sym]);
          Dim = It != Opts.Dims.end() ? It->second : Opts.Batch;
        }
        T.Shape.push_back(Dim);
      }
      T.allocate();
    } else {
      Inputs.back().Tensor = tensorFor(*Shapes, false, I);
    }
    fillPseudoRandom(Inputs.back().Tensor, static_cast<uint64_t>(I) + 1);
  }
  if (!Any && M.num_inputs > 0)
    std::fprintf(stderr, "kiln-run: note: no inputs given; using "
                         "deterministic pseudo-random data\n");
  return Inputs;
}

std::string jsonString(const std::string &S) {
  std::string Out = "\"";
  for (unsigned char C : S) {
    if (C == '"' || C == '\\') {
      Out += '\\';
      Out += static_cast<char>(C);
    } else if (C < 0x20) {
      char Buf[8];
      std::snprintf(Buf, sizeof(Buf), "\\u%04x", C);
      Out += Buf;
    } else {
      Out += static_cast<char>(C);
    }
  }
  return Out + "\"";
}

void printTimings(const kiln_model_info &M, const std::string &Provider,
                  int Threads, std::vector<double> Ms) {
  std::sort(Ms.begin(), Ms.end());
  size_t N = Ms.size();
  double Median = N % 2 ? Ms[N / 2] : (Ms[N / 2 - 1] + Ms[N / 2]) / 2;
  double Sum = 0;
  for (double V : Ms)
    Sum += V;
  std::printf("{\"model\":%s,\"provider\":%s,\"threads\":%d,\"iterations\":%zu,"
              "\"median_ms\":%.6f,\"min_ms\":%.6f,\"mean_ms\":%.6f}\n",
              jsonString(M.name ? M.name : "").c_str(),
              jsonString(Provider).c_str(), Threads, N, Median, Ms[0],
              Sum / static_cast<double>(N));
}

/// Returns true when every output matches its reference.
bool checkOutputs(const Options &Opts, const kiln_model_info &M,
                  const std::vector<HostValue> &Outputs) {
  std::error_code EC;
  if (!fs::is_directory(Opts.CheckDir, EC))
    throw Failure{"check directory " + quoteName(Opts.CheckDir) +
                  " does not exist"};
  std::vector<HostValue> Files = readNumbered(Opts.CheckDir, "output", M, true);
  if (Files.empty())
    throw Failure{"no output_0.pb in " + quoteName(Opts.CheckDir)};
  auto Expected =
      matchNumbered(std::move(Files), M, true, Opts.CheckDir, "output");
  bool AllOk = true;
  for (int32_t I = 0; I < M.num_outputs; ++I) {
    std::string Line = "output " + quoteName(M.outputs[I].name) + ": ";
    if (!Expected[I]) {
      Line += "MISSING no reference in " + Opts.CheckDir;
      AllOk = false;
    } else if (Outputs[I].holdsTensor()) {
      CompareResult R = compareTensors(Outputs[I].Tensor, Expected[I]->Tensor,
                                       Opts.RTol, Opts.ATol);
      Line += R.summary();
      AllOk &= R.Ok;
    } else {
      SequenceCompareResult R = compareSequences(
          Outputs[I].Seq, Expected[I]->Seq, Opts.RTol, Opts.ATol);
      Line += R.summary(M.outputs[I].name);
      AllOk &= R.Ok;
    }
    std::printf("%s\n", Line.c_str());
  }
  return AllOk;
}

int run(const Options &Opts) {
  ModelLibrary Lib;
  std::string Err;
  if (!Lib.load(Opts.Library, Err))
    throw Failure{Err};
  const kiln_model_info &M = *Lib.model();

  kiln_session_options SessionOpts{};
  SessionOpts.force_cpu = Opts.ForceCpu;
  SessionOpts.num_threads = Opts.Threads;
  kiln::Session S(&M, SessionOpts);
  if (!S.valid())
    throw Failure{S.createStatus().message()};
  std::string Provider = S.provider(), Note = S.providerNote();
  if (Note.empty())
    std::fprintf(stderr, "kiln-run: running on %s\n", Provider.c_str());
  else
    std::fprintf(stderr, "kiln-run: running on %s (%s)\n", Provider.c_str(),
                 Note.c_str());
  bool ValueIO = hasValueIO(M);
  bool DeviceIO = Opts.DeviceIO && S.hasDeviceIO() && !ValueIO;
  if (Opts.DeviceIO && Provider != "cuda")
    std::fprintf(stderr, "kiln-run: note: --device-io needs CUDA; the model "
                         "runs on the CPU, so inputs and outputs stay in "
                         "host memory\n");
  else if (Opts.DeviceIO && ValueIO)
    std::fprintf(stderr, "kiln-run: note: --device-io: the model has sequence, "
                         "optional or dynamic-shape inputs/outputs, which stay "
                         "in host memory; using host buffers\n");
  else if (Opts.DeviceIO && !DeviceIO)
    std::fprintf(stderr, "kiln-run: note: --device-io: the model has no device "
                         "I/O variant (built before kiln ABI 5); using host "
                         "buffers\n");
  else if (DeviceIO)
    std::fprintf(stderr, "kiln-run: inputs and outputs in device memory "
                         "(copied once, outside the timed runs)\n");

  std::vector<HostValue> Inputs = gatherInputs(Opts, M);
  // Sequence and optional values, and dynamic-shape outputs, travel as
  // kiln_sequence objects.
  std::vector<kiln::Sequence> InSeqs(Inputs.size()), OutSeqs(M.num_outputs);
  auto NewSequence = [](int32_t DType, kiln::Sequence &Seq) {
    kiln::Status St = kiln::Sequence::create(DType, Seq);
    if (!St)
      throw Failure{St.message()};
  };
  std::vector<kiln_tensor> InViews, OutViews;
  for (size_t I = 0; I < Inputs.size(); ++I) {
    HostValue &V = Inputs[I];
    if (V.isTensor()) {
      InViews.push_back(V.Tensor.view());
      continue;
    }
    NewSequence(M.inputs[I].dtype, InSeqs[I]);
    std::string Err;
    if (!toKilnSequence(V.Seq, InSeqs[I].get(), Err))
      throw Failure{"input " + quoteName(V.name()) + ": " + Err};
    InViews.push_back(InSeqs[I].tensor(V.name().c_str()));
  }
  // Outputs are sized for the compiled variant the input shapes select
  // (the model itself unless it has shape variants).
  const kiln_model_info *Selected = &M;
  if (kiln_model_select(&M, InViews.data(),
                        static_cast<int32_t>(InViews.size()),
                        &Selected) != KILN_OK)
    throw Failure{kiln_last_error()};
  if (Selected != &M) {
    int32_t K = 0;
    while (K < M.num_shape_variants && M.shape_variants[K] != Selected)
      ++K;
    std::string Shapes;
    for (size_t I = 0; I < Inputs.size(); ++I)
      if (Inputs[I].isTensor())
        Shapes += (Shapes.empty() ? "" : ", ") + Inputs[I].name() + " " +
                  formatShape(Inputs[I].Tensor.Shape);
    // The last variant may be the generic code for sizes not listed.
    int32_t Listed = listedVariants(M);
    if (K >= Listed)
      std::fprintf(stderr,
                   "kiln-run: run-time sizes (none of the %d compiled shape variants; input "
                   "shapes: %s)\n",
                   Listed, Shapes.c_str());
    else
      std::fprintf(stderr,
                   "kiln-run: shape variant %d (of %d compiled; input shapes: "
                   "%s)\n",
                   K, Listed, Shapes.c_str());
  }
  std::vector<HostValue> Outputs(M.num_outputs);
  for (int32_t I = 0; I < M.num_outputs; ++I) {
    HostValue &V = Outputs[I];
    V.Kind = kiln_model_value_kind(&M, true, I);
    if (V.isTensor()) {
      // Sized for these inputs: by the selected variant, or by the shape
      // function of a model with run-time sizes.
      const kiln_tensor_info &Info = M.outputs[I];
      V.Tensor.Name = Info.name;
      V.Tensor.DType = Info.dtype;
      V.Tensor.Shape.resize(Info.rank);
      if (kiln_model_output_shape(&M, InViews.data(),
                                  static_cast<int32_t>(InViews.size()), I,
                                  V.Tensor.Shape.data()) != KILN_OK)
        throw Failure{kiln_last_error()};
      V.Tensor.allocate();
    } else {
      V.setName(M.outputs[I].name);
      NewSequence(M.outputs[I].dtype, OutSeqs[I]);
    }
  }
  for (int32_t I = 0; I < M.num_outputs; ++I)
    OutViews.push_back(Outputs[I].isTensor()
                           ? Outputs[I].Tensor.view()
                           : OutSeqs[I].tensor(M.outputs[I].name));

  std::unique_ptr<kiln::Trace> Trace;
  if (!Opts.ProfilePath.empty()) {
    Trace = std::make_unique<kiln::Trace>();
    if (!Trace->get())
      throw Failure{"cannot create a trace"};
    Trace->attach(S);
  }

  // --device-io: the same views over device buffers, inputs uploaded once.
  std::vector<kiln::DeviceBuffer> DeviceBuffers;
  std::vector<kiln_tensor> DevIn = InViews, DevOut = OutViews;
  if (DeviceIO) {
    auto Bind = [&](kiln_tensor &T, bool Upload) {
      kiln::DeviceBuffer B;
      kiln::Status St = kiln::DeviceBuffer::create(T.size_bytes, B);
      if (St && Upload)
        St = kiln::Status::fromCode(kiln_device_copy(B.get(), T.data, T.size_bytes));
      if (!St)
        throw Failure{St.message()};
      T.data = B.get();
      DeviceBuffers.push_back(std::move(B));
    };
    for (kiln_tensor &T : DevIn)
      Bind(T, true);
    for (kiln_tensor &T : DevOut)
      Bind(T, false);
  }
  auto RunOnce = [&] {
    kiln::Status St =
        DeviceIO ? S.runDevice(DevIn.data(), static_cast<int>(DevIn.size()), DevOut.data(),
                               static_cast<int>(DevOut.size()))
                 : S.run(InViews.data(), static_cast<int>(InViews.size()), OutViews.data(),
                         static_cast<int>(OutViews.size()));
    if (!St)
      throw Failure{St.message()};
  };
  for (int I = 0; I < Opts.Warmup; ++I)
    RunOnce();
  if (Opts.Iterations > 0) {
    std::vector<double> Ms;
    for (int I = 0; I < Opts.Iterations; ++I) {
      auto Start = std::chrono::steady_clock::now();
      RunOnce();
      std::chrono::duration<double, std::milli> D =
          std::chrono::steady_clock::now() - Start;
      Ms.push_back(D.count());
    }
    printTimings(M, Provider, kiln_session_num_threads(S.get()), std::move(Ms));
  } else if (Opts.Warmup == 0) {
    RunOnce();
  }

  for (size_t I = 0; DeviceIO && I < DevOut.size(); ++I)
    if (kiln_device_copy(OutViews[I].data, DevOut[I].data, OutViews[I].size_bytes) != KILN_OK)
      throw Failure{kiln_last_error()};
  for (int32_t I = 0; I < M.num_outputs; ++I) {
    HostValue &V = Outputs[I];
    if (V.isTensor())
      continue;
    fromKilnSequence(OutSeqs[I].get(), V.Seq);
    if (V.Kind != KILN_VALUE_DYNAMIC)
      continue;
    // The run left exactly one element: the tensor.
    if (V.Seq.None || V.Seq.Elements.size() != 1)
      throw Failure{"output " + quoteName(M.outputs[I].name) +
                    ": the run made no tensor"};
    V.Tensor = std::move(V.Seq.Elements[0]);
    V.Tensor.Name = M.outputs[I].name;
    V.Seq.Elements.clear();
  }
  if (Trace) {
    kiln::Status St = Trace->write(Opts.ProfilePath.c_str());
    if (!St)
      throw Failure{St.message()};
  }
  if (Opts.Print)
    for (int32_t I = 0; I < M.num_outputs; ++I) {
      const HostValue &V = Outputs[I];
      std::string Label = "output " + quoteName(V.name());
      if (V.holdsTensor())
        printTensorLine(Label, V.Tensor);
      else
        printSequence(Label, V, M.outputs[I].dtype);
    }
  if (!Opts.OutputDir.empty()) {
    std::error_code EC;
    fs::create_directories(Opts.OutputDir, EC);
    if (EC)
      throw Failure{"cannot create " + quoteName(Opts.OutputDir) + ": " +
                    EC.message()};
    for (const HostValue &V : Outputs) {
      // Sequences and optionals have no .npy form: ONNX .pb messages.
      fs::path P =
          fs::path(Opts.OutputDir) /
          (sanitizeFileName(V.name()) + (V.holdsTensor() ? ".npy" : ".pb"));
      if (!(V.holdsTensor() ? writeNpy(P.string(), V.Tensor, Err)
                         : writeValueProto(P.string(), V.Kind, V.Seq, Err)))
        throw Failure{Err};
    }
  }
  if (!Opts.CheckDir.empty() && !checkOutputs(Opts, M, Outputs))
    return ExitMismatch;
  return ExitOk;
}

} // namespace

int runModel(const Options &Opts) {
  try {
    return run(Opts);
  } catch (const Failure &F) {
    std::fprintf(stderr, "kiln-run: error: %s\n", F.Message.c_str());
  } catch (const std::exception &E) {
    std::fprintf(stderr, "kiln-run: error: %s\n", E.what());
  }
  return ExitError;
}

} // namespace kiln::run
