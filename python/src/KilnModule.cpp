//===- KilnModule.cpp - the kiln._kiln extension module -------------------===//
//
// A thin layer over libkiln_rt's C API for the Python package (python/kiln):
// a model library, a session pool that runs it on numpy buffers without the
// GIL, profiling and device-resident runs. Names, dtypes and conversions are
// the Python side's job; this side only moves pointers and shapes.
//
//===----------------------------------------------------------------------===//
#include "kiln/kiln.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

namespace nb = nanobind;

namespace {

/// A failed kiln call: its status and message become kiln._kiln.Error.
struct KilnFailure {
  kiln_status Code;
  std::string Message;
};

[[noreturn]] void fail(kiln_status Code, std::string Message) {
  throw KilnFailure{Code, std::move(Message)};
}

void check(kiln_status Code, const char *Message) {
  if (Code != KILN_OK)
    fail(Code, Message && *Message ? Message : kiln_status_string(Code));
}

/// Model libraries leave the runtime's entry points (kilnParallelFor, ...)
/// undefined. Python loads extensions with RTLD_LOCAL, so libkiln_rt.so,
/// which this module links, is made global before the first model loads.
void exportRuntime() {
  static std::once_flag Once;
  std::call_once(Once, [] {
    Dl_info Info;
    if (dladdr(reinterpret_cast<void *>(&kiln_session_create), &Info) &&
        Info.dli_fname)
      dlopen(Info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
  });
}

/// A compiled model library (lib*.so), open for the object's lifetime.
class Library {
public:
  explicit Library(const std::string &Path) : Path(Path) {
    exportRuntime();
    // Without a '/', dlopen would search the library path.
    std::string Open = Path.find('/') == std::string::npos ? "./" + Path : Path;
    Handle = dlopen(Open.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!Handle)
      fail(KILN_ERROR_INVALID_ARGUMENT,
           "cannot load " + Path + ": " + std::string(dlerror()));
    auto Entry = reinterpret_cast<kiln_model_entry_fn>(
        dlsym(Handle, KILN_MODEL_ENTRY_SYMBOL));
    Model = Entry ? Entry() : nullptr;
    if (!Model) {
      dlclose(Handle);
      fail(KILN_ERROR_INVALID_ARGUMENT,
           Path + " is not a kiln model library (no " KILN_MODEL_ENTRY_SYMBOL
                  " symbol)");
    }
    if (Model->abi_version != KILN_ABI_VERSION) {
      dlclose(Handle);
      fail(KILN_ERROR_ABI_MISMATCH,
           Path + " was compiled for kiln model ABI " +
               std::to_string(Model->abi_version) + ", this runtime has " +
               std::to_string(KILN_ABI_VERSION) + ": recompile it");
    }
  }
  Library(const Library &) = delete;
  Library &operator=(const Library &) = delete;
  // Never dlclose()d: sessions the interpreter collects out of order at
  // exit may still reference model code, and a loaded library costs
  // nothing to keep.

  const kiln_model_info &model() const { return *Model; }

  /// (name, dtype, shape, kind) per input or output; a symbolic dimension
  /// is its symbol's name where the model knows it, else None.
  nb::list values(bool IsOutput) const {
    nb::list L;
    int32_t N = IsOutput ? Model->num_outputs : Model->num_inputs;
    for (int32_t I = 0; I < N; ++I) {
      const kiln_tensor_info &T = (IsOutput ? Model->outputs : Model->inputs)[I];
      nb::list Shape;
      if (T.rank >= 0) {
        std::vector<int64_t> Dims(T.rank);
        kiln_model_shape_at(Model, IsOutput, I, Dims.data());
        for (int32_t D = 0; D < T.rank; ++D)
          Shape.append(Dims[D] >= 0 ? nb::object(nb::int_(Dims[D]))
                                    : symbolName(IsOutput, I, D));
      }
      L.append(nb::make_tuple(T.name, T.dtype,
                              T.rank >= 0 ? nb::object(Shape) : nb::none(),
                              kiln_model_value_kind(Model, IsOutput, I)));
    }
    return L;
  }

  std::string Path;

private:
  nb::object symbolName(bool IsOutput, int32_t I, int32_t D) const {
    const kiln_model_info *M = Model;
    // A shape-variant model's generic variant (the last) names symbols.
    if (M->num_shape_variants > 0 &&
        kiln_model_has_runtime_sizes(M->shape_variants[M->num_shape_variants - 1]))
      M = M->shape_variants[M->num_shape_variants - 1];
    if (!IsOutput) {
      int32_t S = kiln_model_dim_symbol(M, I, D);
      if (S >= 0 && S < M->num_symbols)
        return nb::str(M->symbol_names[S]);
      return nb::none();
    }
    // An output dimension whose size program is one symbol.
    if (!kiln_model_has_runtime_sizes(M))
      return nb::none();
    int64_t Pos = 0;
    for (int32_t O = 0; O < M->num_outputs; ++O)
      for (int32_t K = 0; K < M->outputs[O].rank; ++K) {
        if (kiln_model_value_kind(M, 1, O) != KILN_VALUE_TENSOR)
          break; // only tensor outputs have size programs
        if (M->outputs[O].shape[K] >= 0)
          continue;
        int64_t Start = Pos;
        while (Pos < M->num_output_sizes && M->output_sizes[Pos] != KILN_SIZE_END)
          Pos += 2;
        Pos += 2;
        if (O == I && K == D) {
          if (Pos - Start == 4 && M->output_sizes[Start] == KILN_SIZE_SYMBOL)
            return nb::str(M->symbol_names[M->output_sizes[Start + 1]]);
          return nb::none();
        }
      }
    return nb::none();
  }

  void *Handle = nullptr;
  const kiln_model_info *Model = nullptr;
};

/// numpy buffers of the dtypes numpy has; others travel as raw bytes of
/// the same element size (the Python side views them).
nb::dlpack::dtype numpyType(int32_t DType) {
  using C = nb::dlpack::dtype_code;
  auto T = [](C Code, int Bits) {
    return nb::dlpack::dtype{static_cast<uint8_t>(Code), static_cast<uint8_t>(Bits), 1};
  };
  switch (DType) {
  case KILN_DTYPE_FLOAT: return T(C::Float, 32);
  case KILN_DTYPE_DOUBLE: return T(C::Float, 64);
  case KILN_DTYPE_FLOAT16: return T(C::Float, 16);
  case KILN_DTYPE_INT8: return T(C::Int, 8);
  case KILN_DTYPE_INT16: return T(C::Int, 16);
  case KILN_DTYPE_INT32: return T(C::Int, 32);
  case KILN_DTYPE_INT64: return T(C::Int, 64);
  case KILN_DTYPE_UINT16: return T(C::UInt, 16);
  case KILN_DTYPE_UINT32: return T(C::UInt, 32);
  case KILN_DTYPE_UINT64: return T(C::UInt, 64);
  case KILN_DTYPE_BOOL: return T(C::Bool, 8);
  case KILN_DTYPE_BFLOAT16: return T(C::UInt, 16);
  default: return T(C::UInt, 8);
  }
}

/// An owned host buffer that becomes a numpy array's memory.
nb::object toNumpy(int32_t DType, const std::vector<int64_t> &Shape,
                   std::unique_ptr<char[]> Data) {
  std::vector<size_t> Dims(Shape.begin(), Shape.end());
  char *Raw = Data.release();
  nb::capsule Owner(Raw, [](void *P) noexcept { delete[] static_cast<char *>(P); });
  return nb::cast(nb::ndarray<nb::numpy>(Raw, Dims.size(), Dims.data(), Owner,
                                         nullptr, numpyType(DType)));
}

uint64_t elements(const std::vector<int64_t> &Shape) {
  uint64_t N = 1;
  for (int64_t D : Shape)
    N *= static_cast<uint64_t>(D);
  return N;
}

/// A caller's input as the runtime reads it: data, shape and the strings or
/// sequence behind it.
struct HostInput {
  kiln_tensor View{};
  std::vector<int64_t> Shape;
  std::vector<const char *> Strings;
  kiln::Sequence Seq;
};

/// Reads a (buffer, dtype, shape) triple: buffer is a C-contiguous numpy
/// array, or a list of bytes for strings.
void readTensor(nb::handle Spec, std::vector<int64_t> &Shape,
                std::vector<const char *> &Strings, kiln_tensor &T) {
  nb::tuple Tup = nb::borrow<nb::tuple>(Spec);
  T.dtype = nb::cast<int32_t>(Tup[1]);
  Shape = nb::cast<std::vector<int64_t>>(Tup[2]);
  T.rank = static_cast<int32_t>(Shape.size());
  T.shape = Shape.data();
  if (T.dtype == KILN_DTYPE_STRING) {
    nb::list Items = nb::borrow<nb::list>(Tup[0]);
    Strings.clear();
    for (nb::handle B : Items)
      Strings.push_back(PyBytes_AsString(B.ptr()));
    T.data = Strings.data();
    T.size_bytes = Strings.size() * sizeof(const char *);
    return;
  }
  // No conversion here: a converted temporary would not outlive the run.
  auto A = nb::cast<nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>>(Tup[0],
                                                                        false);
  T.data = const_cast<void *>(A.data());
  T.size_bytes = A.nbytes();
}

/// A sequence element or dynamic output copied out of the runtime.
nb::object tensorObject(const kiln_tensor &T) {
  std::vector<int64_t> Shape(T.shape, T.shape + T.rank);
  if (T.dtype == KILN_DTYPE_STRING) {
    nb::list Items;
    auto Ptrs = static_cast<const char *const *>(T.data);
    for (uint64_t I = 0, N = elements(Shape); I < N; ++I)
      Items.append(nb::bytes(Ptrs[I] ? Ptrs[I] : ""));
    return nb::make_tuple(nb::cast(Shape), Items);
  }
  std::unique_ptr<char[]> Data(new char[T.size_bytes ? T.size_bytes : 1]);
  std::memcpy(Data.get(), T.data, T.size_bytes);
  return toNumpy(T.dtype, Shape, std::move(Data));
}

/// Sessions of one model with the same options. kiln sessions are single
/// threaded, so each Python thread that runs at once takes its own from
/// the pool (made on demand, kept for reuse); they share the process's
/// thread pool.
class Runner {
public:
  Runner(Library &Lib, int32_t NumThreads, bool ForceCpu) : Lib(&Lib) {
    Options.num_threads = NumThreads;
    Options.force_cpu = ForceCpu;
    release(acquire());
  }

  std::string provider() const { return Provider; }
  std::string providerNote() const { return ProviderNote; }
  int32_t numThreads() const { return NumThreads; }
  bool hasDeviceIO() const { return DeviceIO; }

  void enableProfiling() {
    std::lock_guard<std::mutex> Lock(Mutex);
    if (!Trace)
      Trace = std::make_unique<kiln::Trace>();
    for (auto &S : Idle)
      attach(*S);
    Profiling = true;
  }

  /// Writes the trace collected so far to Path and stops profiling. A run
  /// in flight still records into the trace, so it is kept (retired) until
  /// the pool goes; its session is detached when it comes back.
  void endProfiling(const std::string &Path) {
    std::lock_guard<std::mutex> Lock(Mutex);
    if (!Trace)
      fail(KILN_ERROR_INVALID_ARGUMENT, "profiling is not enabled");
    kiln::Status St = Trace->write(Path.c_str());
    for (auto &S : Idle)
      detach(*S);
    Profiling = false;
    Retired.push_back(std::move(Trace));
    if (!St)
      fail(St.code(), St.message());
  }

  /// inputs: per model input, a (buffer, dtype, shape) triple for a tensor,
  /// a list of triples for a sequence, None for a none optional. Returns
  /// one object per model output: an array, a (shape, list of bytes) pair
  /// for strings, a list for a sequence, None for a none optional.
  /// Preset: per output, None or an array the Python side made for a
  /// static output (cheaper than wrapping a buffer from here), written in
  /// place and returned.
  nb::list run(nb::list Inputs, nb::list Preset) {
    const kiln_model_info &M = Lib->model();
    std::vector<HostInput> In(nb::len(Inputs));
    std::vector<kiln_tensor> InViews(In.size());
    for (size_t I = 0; I < In.size(); ++I) {
      nb::handle Spec = Inputs[I];
      int32_t Kind = kiln_model_value_kind(&M, false, static_cast<int32_t>(I));
      if (Kind == KILN_VALUE_TENSOR) {
        readTensor(Spec, In[I].Shape, In[I].Strings, In[I].View);
      } else {
        check(kiln::Sequence::create(M.inputs[I].dtype, In[I].Seq).code(),
              kiln_last_error());
        if (Spec.is_none()) {
          In[I].Seq.setNone(true);
        } else {
          for (nb::handle E : nb::borrow<nb::list>(Spec)) {
            std::vector<int64_t> Shape;
            std::vector<const char *> Strings;
            kiln_tensor T{};
            readTensor(E, Shape, Strings, T);
            kiln::Status St = In[I].Seq.append(T);
            if (!St)
              fail(St.code(), "input '" + std::string(M.inputs[I].name) +
                                  "': " + St.message());
          }
        }
        In[I].View = In[I].Seq.tensor();
      }
      In[I].View.name = M.inputs[I].name;
      InViews[I] = In[I].View;
    }

    // Outputs: tensors sized for these inputs, the rest as sequences.
    int32_t NumOut = M.num_outputs;
    std::vector<std::vector<int64_t>> Shapes(NumOut);
    std::vector<std::unique_ptr<char[]>> Buffers(NumOut);
    std::vector<kiln::Sequence> Seqs(NumOut);
    std::vector<kiln_tensor> OutViews(NumOut);
    for (int32_t I = 0; I < NumOut; ++I) {
      const kiln_tensor_info &Info = M.outputs[I];
      if (kiln_model_value_kind(&M, true, I) != KILN_VALUE_TENSOR) {
        check(kiln::Sequence::create(Info.dtype, Seqs[I]).code(), kiln_last_error());
        OutViews[I] = Seqs[I].tensor(Info.name);
        continue;
      }
      nb::handle Given = Preset[I];
      if (!Given.is_none()) {
        auto A =
            nb::cast<nb::ndarray<nb::c_contig, nb::device::cpu>>(Given, false);
        Shapes[I].assign(Info.shape, Info.shape + Info.rank);
        OutViews[I] = {Info.name,        Info.dtype, Info.rank,
                       Shapes[I].data(), A.data(),   A.nbytes()};
        continue;
      }
      Shapes[I].resize(Info.rank);
      check(kiln_model_output_shape(&M, InViews.data(),
                                    static_cast<int32_t>(InViews.size()), I,
                                    Shapes[I].data()),
            kiln_last_error());
      size_t Elem = Info.dtype == KILN_DTYPE_STRING ? sizeof(const char *)
                                                    : kiln_dtype_size(Info.dtype);
      // A dimension below 0 means an input of the wrong rank: the run
      // reports it, so nothing is allocated for it.
      bool Known = std::all_of(Shapes[I].begin(), Shapes[I].end(),
                               [](int64_t D) { return D >= 0; });
      uint64_t Bytes = Known ? elements(Shapes[I]) * Elem : 0;
      Buffers[I].reset(new char[Bytes ? Bytes : 1]);
      OutViews[I] = {Info.name, Info.dtype, Info.rank, Shapes[I].data(),
                     Buffers[I].get(), Bytes};
    }

    // Strings the run makes belong to its session until its next run: the
    // session stays leased until they are copied out.
    Lease L(*this);
    kiln::Status St;
    {
      nb::gil_scoped_release NoGil;
      St = L.S->run(InViews.data(), static_cast<int>(InViews.size()),
                    OutViews.data(), NumOut);
    }
    if (!St)
      fail(St.code(), St.message());

    nb::list Out;
    for (int32_t I = 0; I < NumOut; ++I) {
      int32_t Kind = kiln_model_value_kind(&M, true, I);
      if (Kind == KILN_VALUE_TENSOR) {
        if (!Preset[I].is_none())
          Out.append(Preset[I]);
        else if (M.outputs[I].dtype == KILN_DTYPE_STRING)
          Out.append(tensorObject(OutViews[I]));
        else
          Out.append(toNumpy(M.outputs[I].dtype, Shapes[I], std::move(Buffers[I])));
        continue;
      }
      if (Seqs[I].isNone()) {
        Out.append(nb::none());
        continue;
      }
      nb::list Elems;
      for (int64_t E = 0; E < Seqs[I].length(); ++E) {
        kiln_tensor View{};
        check(Seqs[I].at(E, View).code(), kiln_last_error());
        Elems.append(tensorObject(View));
      }
      // A dynamic-shape tensor and an optional tensor are the one element.
      bool One = Kind == KILN_VALUE_DYNAMIC || Kind == KILN_VALUE_OPTIONAL;
      Out.append(One && nb::len(Elems) == 1 ? Elems[0] : nb::object(Elems));
    }
    return Out;
  }

  /// A run over caller-owned buffers given as (address, dtype, shape,
  /// bytes) per input and output: device pointers (kiln_session_run_device)
  /// or host ones, which outputs are written into in place.
  void runBound(nb::list Inputs, nb::list Outputs, bool Device) {
    const kiln_model_info &M = Lib->model();
    auto Read = [](nb::list L, const kiln_tensor_info *Infos,
                   std::vector<std::vector<int64_t>> &Shapes) {
      std::vector<kiln_tensor> Views(nb::len(L));
      Shapes.resize(Views.size());
      for (size_t I = 0; I < Views.size(); ++I) {
        nb::tuple T = nb::borrow<nb::tuple>(L[I]);
        Shapes[I] = nb::cast<std::vector<int64_t>>(T[2]);
        Views[I] = {Infos[I].name, nb::cast<int32_t>(T[1]),
                    static_cast<int32_t>(Shapes[I].size()), Shapes[I].data(),
                    reinterpret_cast<void *>(nb::cast<uintptr_t>(T[0])),
                    nb::cast<uint64_t>(T[3])};
      }
      return Views;
    };
    checkPlainTensors();
    std::vector<std::vector<int64_t>> InShapes, OutShapes;
    std::vector<kiln_tensor> In = Read(Inputs, M.inputs, InShapes),
                             Out = Read(Outputs, M.outputs, OutShapes);
    Lease L(*this);
    kiln::Status St;
    {
      nb::gil_scoped_release NoGil;
      St = Device ? L.S->runDevice(In.data(), static_cast<int>(In.size()),
                                   Out.data(), static_cast<int>(Out.size()))
                  : L.S->run(In.data(), static_cast<int>(In.size()), Out.data(),
                             static_cast<int>(Out.size()));
    }
    if (!St)
      fail(St.code(), St.message());
  }

  /// Output shapes for inputs given as in runBound (static shapes for a
  /// model without run-time sizes).
  nb::list outputShapes(nb::list Inputs) {
    const kiln_model_info &M = Lib->model();
    checkPlainTensors();
    std::vector<std::vector<int64_t>> Shapes(nb::len(Inputs));
    std::vector<kiln_tensor> In(Shapes.size());
    for (size_t I = 0; I < In.size(); ++I) {
      nb::tuple T = nb::borrow<nb::tuple>(Inputs[I]);
      Shapes[I] = nb::cast<std::vector<int64_t>>(T[2]);
      In[I] = {M.inputs[I].name, nb::cast<int32_t>(T[1]),
               static_cast<int32_t>(Shapes[I].size()), Shapes[I].data(), nullptr, 0};
    }
    nb::list L;
    for (int32_t I = 0; I < M.num_outputs; ++I) {
      std::vector<int64_t> Shape(std::max(M.outputs[I].rank, 0));
      check(kiln_model_output_shape(&M, In.data(), static_cast<int32_t>(In.size()), I,
                                    Shape.data()),
            kiln_last_error());
      L.append(nb::cast(Shape));
    }
    return L;
  }

private:
  /// A session taken from the pool for one run, given back on every path.
  struct Lease {
    explicit Lease(Runner &R) : R(R), S(R.acquire()) {}
    ~Lease() { R.release(S); }
    Lease(const Lease &) = delete;
    Lease &operator=(const Lease &) = delete;
    Runner &R;
    kiln::Session *S;
  };

  /// Bound buffers are raw memory: sequences, optionals, dynamic-shape
  /// values and strings (runtime-owned objects or pointers) cannot be bound.
  void checkPlainTensors() const {
    const kiln_model_info &M = Lib->model();
    for (int IsOut = 0; IsOut < 2; ++IsOut) {
      int32_t N = IsOut ? M.num_outputs : M.num_inputs;
      for (int32_t I = 0; I < N; ++I) {
        const kiln_tensor_info &T = (IsOut ? M.outputs : M.inputs)[I];
        if (kiln_model_value_kind(&M, IsOut, I) != KILN_VALUE_TENSOR ||
            T.dtype == KILN_DTYPE_STRING)
          fail(KILN_ERROR_INVALID_ARGUMENT,
               std::string(IsOut ? "output '" : "input '") + T.name +
                   "' is not a numeric tensor: IOBinding binds numeric tensors "
                   "only "
                   "(use run())");
      }
    }
  }

  kiln::Session *acquire() {
    {
      std::lock_guard<std::mutex> Lock(Mutex);
      if (!Idle.empty()) {
        kiln::Session *S = Idle.back().release();
        Idle.pop_back();
        return S;
      }
    }
    auto S = std::make_unique<kiln::Session>();
    kiln::Status St = kiln::Session::create(&Lib->model(), Options, *S);
    if (!St)
      fail(St.code(), St.message());
    std::lock_guard<std::mutex> Lock(Mutex);
    if (Provider.empty()) {
      Provider = S->provider();
      ProviderNote = S->providerNote();
      NumThreads = kiln_session_num_threads(S->get());
      DeviceIO = S->hasDeviceIO();
    }
    if (Profiling)
      attach(*S);
    return S.release();
  }

  void release(kiln::Session *S) {
    std::lock_guard<std::mutex> Lock(Mutex);
    if (!Profiling && !Attached.empty())
      detach(*S);
    Idle.emplace_back(S);
  }

  void attach(kiln::Session &S) {
    Trace->attach(S);
    Attached.insert(&S);
  }
  void detach(kiln::Session &S) {
    if (Attached.erase(&S))
      S.setProfiler(nullptr, nullptr);
  }

  Library *Lib; // kept alive by the Python object (keep_alive)
  kiln_session_options Options{};
  std::mutex Mutex;
  // Declared before the sessions, which point at them, to outlive them.
  std::unique_ptr<kiln::Trace> Trace;
  std::vector<std::unique_ptr<kiln::Trace>> Retired;
  std::unordered_set<kiln::Session *> Attached;
  std::vector<std::unique_ptr<kiln::Session>> Idle;
  bool Profiling = false;
  std::string Provider, ProviderNote;
  int32_t NumThreads = 0;
  bool DeviceIO = false;
};

} // namespace

NB_MODULE(_kiln, m) {
  m.doc() = "libkiln_rt for Python: use the kiln package, not this module";
  // Leaked on purpose: a static nb::object would be released after the
  // interpreter has finalized.
  static PyObject *Error =
      PyErr_NewException("kiln._kiln.Error", nullptr, nullptr);
  m.attr("Error") = nb::borrow(Error);
  nb::register_exception_translator([](const std::exception_ptr &P, void *) {
    try {
      std::rethrow_exception(P);
    } catch (const KilnFailure &F) {
      nb::object E = nb::borrow(Error)(static_cast<int>(F.Code), F.Message);
      PyErr_SetObject(Error, E.ptr());
    }
  });

  m.def("version", [] { return std::string(KILN_VERSION); });
  m.def("providers", [] {
    nb::list L;
    for (const kiln::ProviderStatus &P : kiln::availableProviders())
      L.append(nb::make_tuple(P.Name, P.Available, P.Reason, P.Device));
    return L;
  });
  m.def("device_alloc", [](uint64_t Bytes) {
    void *P = nullptr;
    check(kiln_device_alloc(Bytes, &P), kiln_last_error());
    return reinterpret_cast<uintptr_t>(P);
  });
  m.def("device_free", [](uintptr_t P) {
    check(kiln_device_free(reinterpret_cast<void *>(P)), kiln_last_error());
  });
  m.def("device_copy", [](uintptr_t Dst, uintptr_t Src, uint64_t Bytes) {
    nb::gil_scoped_release NoGil;
    kiln_status St = kiln_device_copy(reinterpret_cast<void *>(Dst),
                                      reinterpret_cast<const void *>(Src), Bytes);
    nb::gil_scoped_acquire Gil;
    check(St, kiln_last_error());
  });

  nb::class_<Library>(m, "Library")
      .def("__init__",
           [](Library *L, const std::string &Path) { new (L) Library(Path); })
      .def_ro("path", &Library::Path)
      .def_prop_ro("name", [](const Library &L) { return std::string(L.model().name); })
      .def_prop_ro("producer",
                   [](const Library &L) { return std::string(L.model().producer); })
      .def_prop_ro("target_cpu",
                   [](const Library &L) {
                     return std::string(L.model().target_cpu ? L.model().target_cpu : "");
                   })
      .def_prop_ro("inputs", [](const Library &L) { return L.values(false); })
      .def_prop_ro("outputs", [](const Library &L) { return L.values(true); });

  nb::class_<Runner>(m, "Session")
      .def(
          "__init__",
          [](Runner *R, Library &L, int32_t NumThreads, bool ForceCpu) {
            new (R) Runner(L, NumThreads, ForceCpu);
          },
          nb::arg("library"), nb::arg("num_threads"), nb::arg("force_cpu"),
          nb::keep_alive<1, 2>())
      .def_prop_ro("provider", &Runner::provider)
      .def_prop_ro("provider_note", &Runner::providerNote)
      .def_prop_ro("num_threads", &Runner::numThreads)
      .def_prop_ro("has_device_io", &Runner::hasDeviceIO)
      .def("run", &Runner::run)
      .def("run_bound", &Runner::runBound)
      .def("output_shapes", &Runner::outputShapes)
      .def("enable_profiling", &Runner::enableProfiling)
      .def("end_profiling", &Runner::endProfiling);
}
