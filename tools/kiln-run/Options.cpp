#include "Options.h"

#include <cerrno>
#include <climits>
#include <cstdlib>

namespace kiln::run {

const char *usageText() {
  return R"(usage: kiln-run path/to/libNAME.so [options]
       kiln-run --list-providers

Runs a model compiled by kiln (a shared library exporting kiln_model or
kiln_model_NAME) through libkiln_rt.

options:
  --inputs-dir DIR     read inputs from DIR/input_N.pb (ONNX TensorProto,
                       or SequenceProto/OptionalProto for a sequence or
                       optional input), matched by name, else by N
  --input NAME=FILE    read input NAME from FILE (.npy, or .pb); repeatable
  --output-dir DIR     write each output to DIR/<output name>.npy (.pb for a
                       sequence or optional output)
  --check-dir DIR      compare outputs with DIR/output_N.pb; exit 1 on a
                       mismatch; also reads inputs from DIR if no
                       --inputs-dir is given
  --rtol R             relative tolerance for --check-dir (default 1e-3)
  --atol A             absolute tolerance for --check-dir (default 1e-5)
  --iterations N       time N runs and print a JSON line with the timings
  --warmup W           untimed runs before the timed ones (default 0)
  --batch N            size of every symbolic dimension of generated inputs
                       that has no --dim (default 1)
  --dim NAME=SIZE      size of symbolic dimension NAME in generated inputs
                       of a model with run-time sizes (repeatable)
  --threads N          threads for the model's parallel loops (default: the
                       machine's physical cores, or $KILN_NUM_THREADS; 1
                       runs on the calling thread alone)
  --profile FILE       write a Chrome trace (chrome://tracing, Perfetto)
  --print              print output shapes and first values
  --cpu                run a model compiled for CUDA on its CPU fallback
  --device-io          keep inputs and outputs in device memory (CUDA only;
                       on the CPU this is noted and ignored)
  --info               print what the library holds (inputs and outputs with
                       symbolic dimensions by name, partitions and their
                       providers, target CPU, producer) and the provider a
                       session picks on this machine, and why; runs nothing
  --list-providers     print the execution providers this machine can run,
                       and why not for the others (no library needed)
  --help               show this text

Without any inputs, inputs are filled with deterministic pseudo-random data:
floats in [-1, 1), integers 0 or 1 (valid indices into any axis of two or
more), booleans (sequence and optional inputs need files).
The provider the model runs on ("cuda" or "cpu", and why the CPU) is
printed on stderr and in the --iterations JSON line.
Exit status: 0 success, 1 output mismatch, 2 error.
)";
}

static bool parseDouble(const std::string &Flag, const std::string &S,
                        double &Out, std::string &Err) {
  char *End = nullptr;
  errno = 0;
  Out = std::strtod(S.c_str(), &End);
  if (S.empty() || *End || errno || Out < 0) {
    Err = "invalid value '" + S + "' for " + Flag +
          ": expected a non-negative number";
    return false;
  }
  return true;
}

static bool parseCount(const std::string &Flag, const std::string &S, int &Out,
                       std::string &Err) {
  char *End = nullptr;
  errno = 0;
  long V = std::strtol(S.c_str(), &End, 10);
  if (S.empty() || *End || errno || V < 0 || V > INT_MAX) {
    Err = "invalid value '" + S + "' for " + Flag +
          ": expected a non-negative integer";
    return false;
  }
  Out = static_cast<int>(V);
  return true;
}

bool parseOptions(int Argc, char **Argv, Options &Opts, std::string &Err) {
  for (int I = 1; I < Argc; ++I) {
    std::string Arg = Argv[I];
    if (Arg == "--help" || Arg == "-help" || Arg == "-h") {
      Opts.Help = true;
      continue;
    }
    if (Arg == "--list-providers" || Arg == "-list-providers") {
      Opts.ListProviders = true;
      continue;
    }
    if (Arg == "--info" || Arg == "-info") {
      Opts.Info = true;
      continue;
    }
    if (Arg == "--print") {
      Opts.Print = true;
      continue;
    }
    if (Arg == "--cpu" || Arg == "-cpu") {
      Opts.ForceCpu = true;
      continue;
    }
    if (Arg == "--device-io" || Arg == "-device-io") {
      Opts.DeviceIO = true;
      continue;
    }
    if (Arg.size() < 2 || Arg[0] != '-') {
      if (!Opts.Library.empty()) {
        Err = "unexpected argument '" + Arg +
              "' (library already given: " + Opts.Library + ")";
        return false;
      }
      Opts.Library = Arg;
      continue;
    }
    // Accept -opt as well as --opt, like LLVM tools.
    std::string Flag = Arg.substr(Arg[1] == '-' ? 2 : 1), Value;
    size_t Eq = Flag.find('=');
    bool HasValue = Eq != std::string::npos;
    if (HasValue) {
      Value = Flag.substr(Eq + 1);
      Flag.resize(Eq);
    }
    static const char *const Valued[] = {
        "inputs-dir", "input",  "output-dir", "check-dir", "rtol", "atol",
        "iterations", "warmup", "profile",    "batch",     "dim",  "threads"};
    bool Known = false;
    for (const char *K : Valued)
      Known |= Flag == K;
    if (!Known) {
      Err = "unknown option '" + Arg + "' (see --help)";
      return false;
    }
    if (!HasValue) {
      if (I + 1 >= Argc) {
        Err = "option '--" + Flag + "' needs a value";
        return false;
      }
      Value = Argv[++I];
    }
    std::string Name = "--" + Flag;
    if (Flag == "inputs-dir")
      Opts.InputsDir = Value;
    else if (Flag == "output-dir")
      Opts.OutputDir = Value;
    else if (Flag == "check-dir")
      Opts.CheckDir = Value;
    else if (Flag == "profile")
      Opts.ProfilePath = Value;
    else if (Flag == "rtol" && !parseDouble(Name, Value, Opts.RTol, Err))
      return false;
    else if (Flag == "atol" && !parseDouble(Name, Value, Opts.ATol, Err))
      return false;
    else if (Flag == "iterations" &&
             !parseCount(Name, Value, Opts.Iterations, Err))
      return false;
    else if (Flag == "warmup" && !parseCount(Name, Value, Opts.Warmup, Err))
      return false;
    else if (Flag == "batch" &&
             !(Opts.BatchGiven = parseCount(Name, Value, Opts.Batch, Err)))
      return false;
    else if (Flag == "threads" && !parseCount(Name, Value, Opts.Threads, Err))
      return false;
    else if (Flag == "dim") {
      size_t At = Value.find('=');
      int Size = 0;
      if (At == std::string::npos || At == 0) {
        Err = "invalid --dim '" + Value + "': expected NAME=SIZE";
        return false;
      }
      if (!parseCount(Name, Value.substr(At + 1), Size, Err))
        return false;
      Opts.Dims[Value.substr(0, At)] = Size;
    } else if (Flag == "input") {
      size_t At = Value.find('=');
      if (At == std::string::npos || At == 0 || At + 1 == Value.size()) {
        Err = "invalid --input '" + Value + "': expected NAME=FILE";
        return false;
      }
      Opts.Inputs.emplace_back(Value.substr(0, At), Value.substr(At + 1));
    }
  }
  if (!Opts.Help && !Opts.ListProviders && Opts.Library.empty()) {
    Err = "no model library given (see --help)";
    return false;
  }
  return true;
}

} // namespace kiln::run
