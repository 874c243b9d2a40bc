#include "CudaDriver.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <mutex>

namespace kiln::rt::cuda {

namespace {

struct State {
  DriverApi Api{};
  bool Loaded = false; // every required symbol resolved
  bool Usable = false; // initialized, device 0 and its context retained
  std::string Why;
  CUcontext Context = nullptr;
  std::string DeviceName;
};

// -1: detect, 0: pretend absent, 1: pretend present (tests only).
std::atomic<int> FakeAvailability{-1};

template <typename Fn>
bool resolve(void *Handle, Fn &Slot, const char *Name, std::string &Missing) {
  Slot = reinterpret_cast<Fn>(dlsym(Handle, Name));
  if (!Slot)
    Missing += (Missing.empty() ? "" : ", ") + std::string(Name);
  return Slot != nullptr;
}

template <typename Fn> void resolveOptional(void *Handle, Fn &Slot,
                                            const char *Name) {
  Slot = reinterpret_cast<Fn>(dlsym(Handle, Name));
}

std::string describe(const DriverApi &Api, CUresult Code) {
  const char *Name = nullptr, *Text = nullptr;
  if (Api.cuGetErrorName && Api.cuGetErrorName(Code, &Name) != CUDA_SUCCESS)
    Name = nullptr;
  if (Api.cuGetErrorString &&
      Api.cuGetErrorString(Code, &Text) != CUDA_SUCCESS)
    Text = nullptr;
  // The stub library answers nothing; name the codes worth knowing.
  if (!Name && Code == CUDA_ERROR_STUB_LIBRARY)
    Name = "CUDA_ERROR_STUB_LIBRARY";
  if (!Text && Code == CUDA_ERROR_STUB_LIBRARY)
    Text = "the CUDA driver is a stub library, not a real driver";
  if (!Name && Code == CUDA_ERROR_NO_DEVICE)
    Name = "CUDA_ERROR_NO_DEVICE";
  std::string S;
  if (Name)
    S = Name;
  if (Text)
    S += (S.empty() ? "" : ": ") + std::string(Text);
  if (S.empty())
    S = "CUDA error";
  return S + " (" + std::to_string(Code) + ")";
}

State load() {
  State S;
  std::string Path = driverPath();
  dlerror();
  void *Handle = dlopen(Path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!Handle) {
    const char *Msg = dlerror();
    S.Why = "no CUDA driver: " + std::string(Msg ? Msg : Path.c_str());
    return S;
  }
  // Never dlclosed: modules and contexts live until the process ends.
  DriverApi &A = S.Api;
  std::string Missing;
  resolve(Handle, A.cuInit, "cuInit", Missing);
  resolve(Handle, A.cuDriverGetVersion, "cuDriverGetVersion", Missing);
  resolve(Handle, A.cuDeviceGet, "cuDeviceGet", Missing);
  resolve(Handle, A.cuDeviceGetCount, "cuDeviceGetCount", Missing);
  resolve(Handle, A.cuDeviceGetName, "cuDeviceGetName", Missing);
  resolve(Handle, A.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain",
          Missing);
  resolve(Handle, A.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2",
          Missing);
  resolve(Handle, A.cuCtxSetCurrent, "cuCtxSetCurrent", Missing);
  resolve(Handle, A.cuCtxGetCurrent, "cuCtxGetCurrent", Missing);
  resolve(Handle, A.cuCtxSynchronize, "cuCtxSynchronize", Missing);
  resolve(Handle, A.cuModuleLoadData, "cuModuleLoadData", Missing);
  resolve(Handle, A.cuModuleLoadDataEx, "cuModuleLoadDataEx", Missing);
  resolve(Handle, A.cuModuleUnload, "cuModuleUnload", Missing);
  resolve(Handle, A.cuModuleGetFunction, "cuModuleGetFunction", Missing);
  resolve(Handle, A.cuLaunchKernel, "cuLaunchKernel", Missing);
  resolve(Handle, A.cuStreamCreate, "cuStreamCreate", Missing);
  resolve(Handle, A.cuStreamDestroy, "cuStreamDestroy_v2", Missing);
  resolve(Handle, A.cuStreamSynchronize, "cuStreamSynchronize", Missing);
  resolve(Handle, A.cuStreamWaitEvent, "cuStreamWaitEvent", Missing);
  resolve(Handle, A.cuEventCreate, "cuEventCreate", Missing);
  resolve(Handle, A.cuEventDestroy, "cuEventDestroy_v2", Missing);
  resolve(Handle, A.cuEventRecord, "cuEventRecord", Missing);
  resolve(Handle, A.cuEventSynchronize, "cuEventSynchronize", Missing);
  resolveOptional(Handle, A.cuEventElapsedTime, "cuEventElapsedTime_v2");
  if (!A.cuEventElapsedTime)
    resolve(Handle, A.cuEventElapsedTime, "cuEventElapsedTime", Missing);
  resolve(Handle, A.cuMemAlloc, "cuMemAlloc_v2", Missing);
  resolve(Handle, A.cuMemFree, "cuMemFree_v2", Missing);
  resolve(Handle, A.cuMemAllocManaged, "cuMemAllocManaged", Missing);
  resolveOptional(Handle, A.cuMemAllocAsync, "cuMemAllocAsync");
  resolveOptional(Handle, A.cuMemFreeAsync, "cuMemFreeAsync");
  resolveOptional(Handle, A.cuDeviceGetDefaultMemPool,
                  "cuDeviceGetDefaultMemPool");
  resolveOptional(Handle, A.cuMemPoolSetAttribute, "cuMemPoolSetAttribute");
  resolve(Handle, A.cuMemcpy, "cuMemcpy", Missing);
  resolve(Handle, A.cuMemcpyAsync, "cuMemcpyAsync", Missing);
  resolve(Handle, A.cuMemsetD32, "cuMemsetD32_v2", Missing);
  resolve(Handle, A.cuMemsetD16, "cuMemsetD16_v2", Missing);
  resolve(Handle, A.cuMemsetD32Async, "cuMemsetD32Async", Missing);
  resolve(Handle, A.cuMemsetD16Async, "cuMemsetD16Async", Missing);
  resolve(Handle, A.cuMemHostAlloc, "cuMemHostAlloc", Missing);
  resolve(Handle, A.cuMemFreeHost, "cuMemFreeHost", Missing);
  resolve(Handle, A.cuMemHostRegister, "cuMemHostRegister_v2", Missing);
  resolve(Handle, A.cuMemHostUnregister, "cuMemHostUnregister", Missing);
  resolve(Handle, A.cuGetErrorString, "cuGetErrorString", Missing);
  resolve(Handle, A.cuGetErrorName, "cuGetErrorName", Missing);
  resolve(Handle, A.cuPointerGetAttribute, "cuPointerGetAttribute", Missing);
  if (!Missing.empty()) {
    S.Why = "CUDA driver " + Path + " is too old or not a driver: missing " +
            Missing;
    return S;
  }
  S.Loaded = true;

  if (CUresult R = A.cuInit(0)) {
    S.Why = "cuInit failed: " + describe(A, R);
    return S;
  }
  int Count = 0;
  if (CUresult R = A.cuDeviceGetCount(&Count)) {
    S.Why = "cuDeviceGetCount failed: " + describe(A, R);
    return S;
  }
  if (Count <= 0) {
    S.Why = "no CUDA device";
    return S;
  }
  CUdevice Dev = 0;
  if (CUresult R = A.cuDeviceGet(&Dev, 0)) {
    S.Why = "cuDeviceGet(0) failed: " + describe(A, R);
    return S;
  }
  char Name[256] = {0};
  if (A.cuDeviceGetName(Name, sizeof(Name) - 1, Dev) == CUDA_SUCCESS)
    S.DeviceName = Name;
  if (CUresult R = A.cuDevicePrimaryCtxRetain(&S.Context, Dev)) {
    S.Why = "cannot retain the primary context of CUDA device 0: " +
            describe(A, R);
    return S;
  }
  // Stream-ordered allocations come from the device's default pool; keep
  // freed memory in it instead of returning it at every synchronization.
  if (A.cuMemAllocAsync && A.cuMemFreeAsync && A.cuDeviceGetDefaultMemPool &&
      A.cuMemPoolSetAttribute) {
    CUmemoryPool Pool = nullptr;
    unsigned long long Keep = ~0ull;
    if (A.cuDeviceGetDefaultMemPool(&Pool, Dev) != CUDA_SUCCESS ||
        A.cuMemPoolSetAttribute(Pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                &Keep) != CUDA_SUCCESS) {
      A.cuMemAllocAsync = nullptr;
      A.cuMemFreeAsync = nullptr;
    }
  } else {
    A.cuMemAllocAsync = nullptr;
    A.cuMemFreeAsync = nullptr;
  }
  S.Usable = true;
  return S;
}

State &state() {
  static State S = load(); // thread-safe, once
  return S;
}

struct ErrorRecord {
  std::string First;
  uint64_t Count = 0;
};
thread_local ErrorRecord Errors;

} // namespace

std::string driverPath() {
  const char *Env = std::getenv("KILN_CUDA_DRIVER");
  return Env && *Env ? Env : "libcuda.so.1";
}

const DriverApi *driver(std::string *Why) {
  if (FakeAvailability.load() == 0) {
    if (Why)
      *Why = "CUDA disabled for testing";
    return nullptr;
  }
  State &S = state();
  if (!S.Usable) {
    if (Why)
      *Why = S.Why;
    return nullptr;
  }
  return &S.Api;
}

bool cudaAvailable(std::string &Why) {
  int Fake = FakeAvailability.load();
  if (Fake == 1) {
    Why.clear();
    return true;
  }
  bool Ok = driver(&Why) != nullptr;
  if (Ok)
    Why.clear();
  return Ok;
}

bool availabilityFaked() { return FakeAvailability.load() == 1; }

void setAvailabilityForTesting(int Mode) { FakeAvailability.store(Mode); }

CUcontext primaryContext() { return driver() ? state().Context : nullptr; }

const std::string &deviceName() { return state().DeviceName; }

bool makeContextCurrent() {
  std::string Why;
  const DriverApi *D = driver(&Why);
  if (!D) {
    recordError("CUDA is unavailable: " + Why);
    return false;
  }
  CUcontext Ctx = state().Context, Cur = nullptr;
  if (D->cuCtxGetCurrent(&Cur) == CUDA_SUCCESS && Cur == Ctx)
    return true;
  if (CUresult R = D->cuCtxSetCurrent(Ctx)) {
    recordError("cuCtxSetCurrent failed: " + errorString(R));
    return false;
  }
  return true;
}

const DriverApi *ready(const char *Fn) {
  std::string Why;
  const DriverApi *D = driver(&Why);
  if (!D) {
    recordError(std::string(Fn) + ": CUDA is unavailable: " + Why);
    return nullptr;
  }
  if (!makeContextCurrent())
    return nullptr;
  return D;
}

bool failed(CUresult R, const char *Fn, const char *Call) {
  if (R == CUDA_SUCCESS)
    return false;
  recordError(std::string(Fn) + ": " + Call + " failed: " + errorString(R));
  return true;
}

std::string errorString(CUresult Code) {
  State &S = state();
  return describe(S.Loaded ? S.Api : DriverApi{}, Code);
}

void recordError(const std::string &Message) {
  if (Errors.Count++ == 0)
    Errors.First = Message;
}

void clearErrors() {
  Errors.Count = 0;
  Errors.First.clear();
}

bool hasError() { return Errors.Count != 0; }

const std::string &firstError() { return Errors.First; }

uint64_t errorCount() { return Errors.Count; }

} // namespace kiln::rt::cuda
