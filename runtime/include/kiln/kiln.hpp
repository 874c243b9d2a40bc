// Header-only C++ convenience layer over kiln_rt.h. No exceptions: calls
// return a Status.
#ifndef KILN_KILN_HPP
#define KILN_KILN_HPP

#include "kiln/kiln_rt.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

class Status {
public:
  Status() = default;
  Status(kiln_status Code, std::string Message)
      : Code(Code), Message(std::move(Message)) {}
  /// Captures the calling thread's last error when Code is a failure.
  static Status fromCode(kiln_status Code) {
    return Code == KILN_OK ? Status() : Status(Code, kiln_last_error());
  }

  bool ok() const { return Code == KILN_OK; }
  explicit operator bool() const { return ok(); }
  kiln_status code() const { return Code; }
  const std::string &message() const { return Message; }

private:
  kiln_status Code = KILN_OK;
  std::string Message;
};

/// One provider libkiln_rt knows and whether this machine can run it.
struct ProviderStatus {
  std::string Name;
  bool Available = false;
  std::string Reason, Device;
};

/// The providers this machine can run and why not for the others, "cpu"
/// first (ONNX Runtime's get_available_providers, with reasons).
inline std::vector<ProviderStatus> availableProviders() {
  std::vector<kiln_provider_status> Raw(kiln_available_providers(nullptr, 0));
  Raw.resize(kiln_available_providers(Raw.data(), static_cast<int32_t>(Raw.size())));
  std::vector<ProviderStatus> Out;
  for (const kiln_provider_status &P : Raw)
    Out.push_back({P.name, P.available != 0, P.reason, P.device});
  return Out;
}

/// Owns a kiln_session. Like the C session, one Session must not be used by
/// two threads at once; give each thread its own.
class Session {
public:
  Session() = default;
  /// On failure the Session is empty (!valid()) and createStatus() says why.
  explicit Session(const kiln_model_info *Model)
      : Created(Status::fromCode(kiln_session_create(Model, &Handle))) {}
  Session(const kiln_model_info *Model, const kiln_session_options &Options)
      : Created(Status::fromCode(
            kiln_session_create_with_options(Model, &Options, &Handle))) {}
  static Status create(const kiln_model_info *Model, Session &Out) {
    Out = Session(Model);
    return Out.Created;
  }
  static Status create(const kiln_model_info *Model,
                       const kiln_session_options &Options, Session &Out) {
    Out = Session(Model, Options);
    return Out.Created;
  }

  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;
  Session(Session &&Other) noexcept
      : Handle(std::exchange(Other.Handle, nullptr)),
        Created(std::move(Other.Created)) {}
  Session &operator=(Session &&Other) noexcept {
    if (this != &Other) {
      kiln_session_destroy(Handle);
      Handle = std::exchange(Other.Handle, nullptr);
      Created = std::move(Other.Created);
    }
    return *this;
  }
  ~Session() { kiln_session_destroy(Handle); }

  bool valid() const { return Handle != nullptr; }
  const Status &createStatus() const { return Created; }
  kiln_session *get() const { return Handle; }
  const kiln_model_info &model() const { return *kiln_session_model(Handle); }
  /// "cuda" or "cpu" ("" when not created).
  std::string provider() const {
    return Handle ? kiln_session_provider(Handle) : "";
  }
  /// Why a model that wants CUDA runs on the CPU; "" otherwise.
  std::string providerNote() const {
    return Handle ? kiln_session_provider_note(Handle) : "";
  }

  Status run(const kiln_tensor *Inputs, int NumInputs, kiln_tensor *Outputs,
             int NumOutputs) {
    if (!Handle)
      return Status(KILN_ERROR_INVALID_ARGUMENT, "session was not created");
    return Status::fromCode(
        kiln_session_run(Handle, Inputs, NumInputs, Outputs, NumOutputs));
  }
  /// Whether runDevice() works: a CUDA session of a model with device I/O.
  bool hasDeviceIO() const { return Handle && kiln_session_has_device_io(Handle); }
  /// Like run(), with every tensor's data a device pointer.
  Status runDevice(const kiln_tensor *Inputs, int NumInputs, kiln_tensor *Outputs,
                   int NumOutputs) {
    if (!Handle)
      return Status(KILN_ERROR_INVALID_ARGUMENT, "session was not created");
    return Status::fromCode(
        kiln_session_run_device(Handle, Inputs, NumInputs, Outputs, NumOutputs));
  }
  Status setProfiler(kiln_profile_callback Cb, void *User) {
    if (!Handle)
      return Status(KILN_ERROR_INVALID_ARGUMENT, "session was not created");
    return Status::fromCode(kiln_session_set_profiler(Handle, Cb, User));
  }

private:
  kiln_session *Handle = nullptr;
  Status Created;
};

/// A device buffer (kiln_device_alloc), freed on destruction.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  static Status create(uint64_t Bytes, DeviceBuffer &Out) {
    DeviceBuffer B;
    Status St = Status::fromCode(kiln_device_alloc(Bytes, &B.Ptr));
    if (St)
      Out = std::move(B);
    return St;
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  DeviceBuffer(DeviceBuffer &&Other) noexcept : Ptr(std::exchange(Other.Ptr, nullptr)) {}
  DeviceBuffer &operator=(DeviceBuffer &&Other) noexcept {
    if (this != &Other) {
      kiln_device_free(Ptr);
      Ptr = std::exchange(Other.Ptr, nullptr);
    }
    return *this;
  }
  ~DeviceBuffer() { kiln_device_free(Ptr); }
  void *get() const { return Ptr; }

private:
  void *Ptr = nullptr;
};

/// Owns a kiln_sequence: a sequence or optional value for a model input or
/// output, passed as tensor().
class Sequence {
public:
  Sequence() = default;
  static Status create(int32_t DType, Sequence &Out) {
    Sequence S;
    Status St = Status::fromCode(kiln_sequence_create(DType, &S.Handle));
    if (St)
      Out = std::move(S);
    return St;
  }
  Sequence(const Sequence &) = delete;
  Sequence &operator=(const Sequence &) = delete;
  Sequence(Sequence &&Other) noexcept
      : Handle(std::exchange(Other.Handle, nullptr)) {}
  Sequence &operator=(Sequence &&Other) noexcept {
    if (this != &Other) {
      kiln_sequence_destroy(Handle);
      Handle = std::exchange(Other.Handle, nullptr);
    }
    return *this;
  }
  ~Sequence() { kiln_sequence_destroy(Handle); }

  bool valid() const { return Handle != nullptr; }
  kiln_sequence *get() const { return Handle; }
  int32_t dtype() const { return kiln_sequence_dtype(Handle); }
  int64_t length() const { return kiln_sequence_length(Handle); }
  bool isNone() const { return kiln_sequence_is_none(Handle) != 0; }
  void setNone(bool None) { kiln_sequence_set_none(Handle, None); }
  void clear() { kiln_sequence_clear(Handle); }
  Status append(const kiln_tensor &T) {
    return Status::fromCode(kiln_sequence_append(Handle, &T));
  }
  /// A read-only view of element I, valid until the sequence changes.
  Status at(int64_t I, kiln_tensor &View) const {
    return Status::fromCode(kiln_sequence_at(Handle, I, &View));
  }
  /// This value as model input/output Name (NULL: matched by position).
  kiln_tensor tensor(const char *Name = nullptr) const {
    return {Name, dtype(), 0, nullptr, Handle, 0};
  }

private:
  kiln_sequence *Handle = nullptr;
};

/// Owns a kiln_trace; attach() it to any number of sessions.
class Trace {
public:
  Trace() : Handle(kiln_trace_create()) {}
  Trace(const Trace &) = delete;
  Trace &operator=(const Trace &) = delete;
  ~Trace() { kiln_trace_destroy(Handle); }

  Status attach(Session &S) {
    return S.setProfiler(kiln_trace_callback, Handle);
  }
  Status write(const char *Path) const {
    return Status::fromCode(kiln_trace_write(Handle, Path));
  }
  kiln_trace *get() const { return Handle; }

private:
  kiln_trace *Handle;
};

} // namespace kiln

#endif // KILN_KILN_HPP
