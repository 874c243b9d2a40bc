// The GPU runtime entry points that MLIR 19's gpu-to-llvm lowering calls
// (the names and C signatures of mlir/lib/ExecutionEngine/
// CudaRuntimeWrappers.cpp), implemented on the lazily loaded driver of
// CudaDriver.h. A compiled model object with CUDA partitions references
// these symbols undefined; libkiln_rt and kiln-run export them.
//
// None of them aborts: without a driver, or when a driver call fails, they
// record the failure (cuda::recordError, thread-local), return null or do
// nothing, and the session turns the record into KILN_ERROR_PROVIDER.
//
// Differences from MLIR's wrappers, all invisible to generated code:
//  - Modules are cached: MLIR 19 loads the module before every launch and
//    unloads it right after; here the first load JIT-compiles and later
//    loads of the same image are a lookup, mgpuModuleUnload keeps it.
//  - Streams and events are pooled instead of created per call.
//  - mgpuMemAlloc/mgpuMemFree are stream-ordered (cuMemAllocAsync on the
//    device's default pool) when the driver has them.
#include "CudaDriver.h"
#include "DeviceMemory.h"

#include <dlfcn.h>
#include <link.h>

#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

using namespace kiln::rt::cuda;

namespace {

CUdeviceptr dptr(const void *P) {
  return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(P));
}

// Module cache -------------------------------------------------------------

/// Counts unloads of shared objects (glibc's dlpi_subs): while it is
/// unchanged, an image pointer still denotes the same bytes.
unsigned long long libraryUnloads() {
  unsigned long long Subs = 0;
  dl_iterate_phdr(
      [](dl_phdr_info *Info, size_t Size, void *Out) -> int {
        if (Size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof(Info->dlpi_subs))
          *static_cast<unsigned long long *>(Out) = Info->dlpi_subs;
        return 1; // the counters are global; the first object suffices
      },
      &Subs);
  return Subs;
}

struct CachedModule {
  CUmodule Module = nullptr;
  std::string Image; // a copy, to revalidate after a library was unloaded
  unsigned long long Unloads = 0;
};

std::mutex ModuleMutex;
std::unordered_map<const void *, CachedModule> ModulesByImage;
// Kernel names for profiling; the strings stay for the process's life.
// A kernel's name and the op type of the node that launches it: kiln names
// kernels `<node>__op_<OpType>` (providers/cuda/NameKernels.cpp).
struct KernelName {
  std::string Name, OpType;
};
std::unordered_map<CUfunction, KernelName> KernelNames;

const char *kernelOpType(CUfunction F) {
  std::lock_guard<std::mutex> Lock(ModuleMutex);
  auto It = KernelNames.find(F);
  return It == KernelNames.end() || It->second.OpType.empty() ? "kernel"
                                                               : It->second.OpType.c_str();
}

const char *kernelName(CUfunction F) {
  std::lock_guard<std::mutex> Lock(ModuleMutex);
  auto It = KernelNames.find(F);
  return It == KernelNames.end() ? "kernel" : It->second.Name.c_str();
}
std::unordered_set<CUmodule> CachedModules;

/// Looks Image up; on a miss calls Load and caches what it returns.
template <typename LoadFn>
CUmodule cachedLoad(const void *Data, size_t Size, LoadFn Load) {
  std::lock_guard<std::mutex> Lock(ModuleMutex);
  unsigned long long Unloads = libraryUnloads();
  auto It = ModulesByImage.find(Data);
  if (It != ModulesByImage.end()) {
    CachedModule &C = It->second;
    if (C.Unloads == Unloads)
      return C.Module;
    if (C.Image.size() == Size && std::memcmp(C.Image.data(), Data, Size) == 0) {
      C.Unloads = Unloads;
      return C.Module;
    }
    // Another image now lives at this address; the old module stays loaded
    // (a function of it may still be in use) but leaves the cache.
    CachedModules.erase(C.Module);
    ModulesByImage.erase(It);
  }
  CUmodule M = Load();
  if (!M)
    return nullptr;
  CachedModule C;
  C.Module = M;
  C.Image.assign(static_cast<const char *>(Data), Size);
  C.Unloads = Unloads;
  ModulesByImage.emplace(Data, std::move(C));
  CachedModules.insert(M);
  return M;
}

// Stream and event pools ---------------------------------------------------

constexpr size_t MaxPooled = 64;
std::mutex PoolMutex;
std::vector<CUstream> FreeStreams;
std::vector<CUevent> FreeEvents;

std::mutex ManagedMutex;
std::unordered_set<void *> ManagedAllocations;

bool narrow(intptr_t V, unsigned &Out) {
  if (V < 0 || static_cast<uintmax_t>(V) > 0xffffffffu)
    return false;
  Out = static_cast<unsigned>(V);
  return true;
}

/// StridedMemRefType<char, N> as MLIR lays it out: base, aligned, offset,
/// sizes[N], strides[N].
struct MemRefDescriptor {
  char *Allocated;
  char *Aligned;
  int64_t Offset;
  int64_t SizesAndStrides[1];
};

bool memRefRange(int64_t Rank, const void *Descriptor, int64_t ElemSize,
                 void *&Ptr, uint64_t &Bytes) {
  if (!Descriptor || Rank < 0 || ElemSize <= 0)
    return false;
  auto *D = static_cast<const MemRefDescriptor *>(Descriptor);
  const int64_t *Sizes = D->SizesAndStrides, *Strides = Sizes + Rank;
  int64_t Extent = 1; // elements from the first to one past the last
  for (int64_t I = 0; I < Rank; ++I) {
    if (Sizes[I] == 0) {
      Extent = 0;
      break;
    }
    Extent += (Sizes[I] - 1) * (Strides[I] < 0 ? -Strides[I] : Strides[I]);
  }
  Ptr = D->Aligned + D->Offset * ElemSize;
  Bytes = static_cast<uint64_t>(Extent) * static_cast<uint64_t>(ElemSize);
  return true;
}

} // namespace

// Keeps this object in static links: Session.cpp references it.
namespace kiln::rt::cuda {
size_t cachedModuleCount() {
  std::lock_guard<std::mutex> Lock(ModuleMutex);
  return ModulesByImage.size();
}
} // namespace kiln::rt::cuda

#define KILN_MGPU_EXPORT extern "C" __attribute__((visibility("default")))

KILN_MGPU_EXPORT CUmodule mgpuModuleLoad(void *Data, size_t GpuBlobSize) {
  const DriverApi *D = ready("mgpuModuleLoad");
  if (!D)
    return nullptr;
  if (!Data) {
    recordError("mgpuModuleLoad: no GPU binary");
    return nullptr;
  }
  return cachedLoad(Data, GpuBlobSize, [&]() -> CUmodule {
    CUmodule M = nullptr;
    if (failed(D->cuModuleLoadData(&M, Data), "mgpuModuleLoad",
               "cuModuleLoadData"))
      return nullptr;
    return M;
  });
}

KILN_MGPU_EXPORT CUmodule mgpuModuleLoadJIT(void *Data, int OptLevel) {
  const DriverApi *D = ready("mgpuModuleLoadJIT");
  if (!D)
    return nullptr;
  if (!Data) {
    recordError("mgpuModuleLoadJIT: no PTX");
    return nullptr;
  }
  size_t Size = std::strlen(static_cast<const char *>(Data)) + 1;
  return cachedLoad(Data, Size, [&]() -> CUmodule {
    char Log[4096] = {0};
    int Options[] = {CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_ERROR_LOG_BUFFER,
                     CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *Values[] = {reinterpret_cast<void *>(static_cast<intptr_t>(OptLevel)),
                      Log,
                      reinterpret_cast<void *>(sizeof(Log) - 1)};
    CUmodule M = nullptr;
    CUresult R = D->cuModuleLoadDataEx(&M, Data, 3, Options, Values);
    if (R != CUDA_SUCCESS) {
      std::string Msg = "mgpuModuleLoadJIT: cuModuleLoadDataEx failed: " +
                        errorString(R);
      if (Log[0])
        Msg += std::string("; JIT log: ") + Log;
      recordError(Msg);
      return nullptr;
    }
    return M;
  });
}

KILN_MGPU_EXPORT void mgpuModuleUnload(CUmodule Module) {
  if (!Module)
    return; // the load failed and was recorded then
  {
    std::lock_guard<std::mutex> Lock(ModuleMutex);
    if (CachedModules.count(Module))
      return; // kept for the next launch
  }
  if (const DriverApi *D = ready("mgpuModuleUnload"))
    failed(D->cuModuleUnload(Module), "mgpuModuleUnload", "cuModuleUnload");
}

KILN_MGPU_EXPORT CUfunction mgpuModuleGetFunction(CUmodule Module,
                                                  const char *Name) {
  const DriverApi *D = ready("mgpuModuleGetFunction");
  if (!D)
    return nullptr;
  if (!Module || !Name) {
    recordError(std::string("mgpuModuleGetFunction: no module for kernel ") +
                (Name ? Name : "?"));
    return nullptr;
  }
  CUfunction F = nullptr;
  CUresult R = D->cuModuleGetFunction(&F, Module, Name);
  if (R != CUDA_SUCCESS) {
    recordError(std::string("mgpuModuleGetFunction: kernel ") + Name + ": " +
                errorString(R));
    return nullptr;
  }
  std::lock_guard<std::mutex> Lock(ModuleMutex);
  std::string Full = Name;
  size_t Op = Full.rfind("__op_");
  KernelNames.emplace(F, Op == std::string::npos
                             ? KernelName{Full, ""}
                             : KernelName{Full.substr(0, Op), Full.substr(Op + 5)});
  return F;
}

KILN_MGPU_EXPORT void mgpuLaunchKernel(CUfunction Function, intptr_t GridX,
                                       intptr_t GridY, intptr_t GridZ,
                                       intptr_t BlockX, intptr_t BlockY,
                                       intptr_t BlockZ, int32_t Smem,
                                       CUstream Stream, void **Params,
                                       void **Extra, size_t /*ParamsCount*/) {
  const DriverApi *D = ready("mgpuLaunchKernel");
  if (!D)
    return;
  if (!Function) {
    recordError("mgpuLaunchKernel: no kernel (its module failed to load)");
    return;
  }
  unsigned G[3], B[3];
  if (!narrow(GridX, G[0]) || !narrow(GridY, G[1]) || !narrow(GridZ, G[2]) ||
      !narrow(BlockX, B[0]) || !narrow(BlockY, B[1]) || !narrow(BlockZ, B[2]) ||
      Smem < 0) {
    recordError("mgpuLaunchKernel: launch dimensions out of range");
    return;
  }
  // A grid computed from a run-time size of zero: nothing to do (CUDA
  // would refuse the launch).
  if (!G[0] || !G[1] || !G[2])
    return;
  // Grids sized at run time can pass the device's limit on y and z.
  if (G[1] > 65535 || G[2] > 65535) {
    recordError(
        "mgpuLaunchKernel: kernel " + std::string(kernelName(Function)) +
        " needs a grid of " + std::to_string(G[0]) + "x" +
        std::to_string(G[1]) + "x" + std::to_string(G[2]) +
        " blocks, beyond CUDA's 65535 along y and z (sizes this large are "
        "not supported on the device yet)");
    return;
  }
  void *Timed = beginTimedWork(Stream);
  failed(D->cuLaunchKernel(Function, G[0], G[1], G[2], B[0], B[1], B[2],
                           static_cast<unsigned>(Smem), Stream, Params, Extra),
         "mgpuLaunchKernel", "cuLaunchKernel");
  if (Timed)
    endTimedWork(Timed, Stream, kernelName(Function), KILN_EVENT_KERNEL, 0,
                 kernelOpType(Function));
}

KILN_MGPU_EXPORT void
mgpuLaunchClusterKernel(CUfunction, intptr_t, intptr_t, intptr_t, intptr_t,
                        intptr_t, intptr_t, intptr_t, intptr_t, intptr_t,
                        int32_t, CUstream, void **, void **) {
  recordError("mgpuLaunchClusterKernel: cluster launches are not supported "
              "by libkiln_rt");
}

KILN_MGPU_EXPORT CUstream mgpuStreamCreate() {
  const DriverApi *D = ready("mgpuStreamCreate");
  if (!D)
    return nullptr;
  // Within a session's run, all work goes to the session's one stream.
  if (CUstream S = sessionStream())
    return S;
  {
    std::lock_guard<std::mutex> Lock(PoolMutex);
    if (!FreeStreams.empty()) {
      CUstream S = FreeStreams.back();
      FreeStreams.pop_back();
      return S;
    }
  }
  CUstream S = nullptr;
  if (failed(D->cuStreamCreate(&S, CU_STREAM_NON_BLOCKING), "mgpuStreamCreate",
             "cuStreamCreate"))
    return nullptr;
  return S;
}

KILN_MGPU_EXPORT void mgpuStreamDestroy(CUstream Stream) {
  if (!Stream || Stream == sessionStream())
    return;
  const DriverApi *D = ready("mgpuStreamDestroy");
  if (!D)
    return;
  {
    // Reusing a stream with work still queued only orders that work first.
    std::lock_guard<std::mutex> Lock(PoolMutex);
    if (FreeStreams.size() < MaxPooled) {
      FreeStreams.push_back(Stream);
      return;
    }
  }
  failed(D->cuStreamDestroy(Stream), "mgpuStreamDestroy", "cuStreamDestroy");
}

KILN_MGPU_EXPORT void mgpuStreamSynchronize(CUstream Stream) {
  if (const DriverApi *D = ready("mgpuStreamSynchronize"))
    failed(D->cuStreamSynchronize(Stream), "mgpuStreamSynchronize",
           "cuStreamSynchronize");
}

KILN_MGPU_EXPORT void mgpuStreamWaitEvent(CUstream Stream, CUevent Event) {
  const DriverApi *D = ready("mgpuStreamWaitEvent");
  if (!D)
    return;
  if (!Event) {
    recordError("mgpuStreamWaitEvent: no event");
    return;
  }
  failed(D->cuStreamWaitEvent(Stream, Event, 0), "mgpuStreamWaitEvent",
         "cuStreamWaitEvent");
}

KILN_MGPU_EXPORT CUevent mgpuEventCreate() {
  const DriverApi *D = ready("mgpuEventCreate");
  if (!D)
    return nullptr;
  {
    std::lock_guard<std::mutex> Lock(PoolMutex);
    if (!FreeEvents.empty()) {
      CUevent E = FreeEvents.back();
      FreeEvents.pop_back();
      return E;
    }
  }
  CUevent E = nullptr;
  if (failed(D->cuEventCreate(&E, CU_EVENT_DISABLE_TIMING), "mgpuEventCreate",
             "cuEventCreate"))
    return nullptr;
  return E;
}

KILN_MGPU_EXPORT void mgpuEventDestroy(CUevent Event) {
  if (!Event)
    return;
  const DriverApi *D = ready("mgpuEventDestroy");
  if (!D)
    return;
  {
    // Waits already enqueued captured the event's state; rerecording it is
    // safe.
    std::lock_guard<std::mutex> Lock(PoolMutex);
    if (FreeEvents.size() < MaxPooled) {
      FreeEvents.push_back(Event);
      return;
    }
  }
  failed(D->cuEventDestroy(Event), "mgpuEventDestroy", "cuEventDestroy");
}

KILN_MGPU_EXPORT void mgpuEventSynchronize(CUevent Event) {
  const DriverApi *D = ready("mgpuEventSynchronize");
  if (!D)
    return;
  if (!Event) {
    recordError("mgpuEventSynchronize: no event");
    return;
  }
  failed(D->cuEventSynchronize(Event), "mgpuEventSynchronize",
         "cuEventSynchronize");
}

KILN_MGPU_EXPORT void mgpuEventRecord(CUevent Event, CUstream Stream) {
  const DriverApi *D = ready("mgpuEventRecord");
  if (!D)
    return;
  if (!Event) {
    recordError("mgpuEventRecord: no event");
    return;
  }
  failed(D->cuEventRecord(Event, Stream), "mgpuEventRecord", "cuEventRecord");
}

KILN_MGPU_EXPORT void *mgpuMemAlloc(uint64_t SizeBytes, CUstream Stream,
                                    bool IsHostShared) {
  const DriverApi *D = ready("mgpuMemAlloc");
  if (!D || SizeBytes == 0)
    return nullptr;
  CUdeviceptr P = 0;
  if (IsHostShared) {
    if (failed(D->cuMemAllocManaged(&P, SizeBytes, CU_MEM_ATTACH_GLOBAL),
               "mgpuMemAlloc", "cuMemAllocManaged"))
      return nullptr;
    void *Ptr = reinterpret_cast<void *>(static_cast<uintptr_t>(P));
    std::lock_guard<std::mutex> Lock(ManagedMutex);
    ManagedAllocations.insert(Ptr);
    return Ptr;
  }
  CUresult R = D->cuMemAllocAsync ? D->cuMemAllocAsync(&P, SizeBytes, Stream)
                                  : D->cuMemAlloc(&P, SizeBytes);
  if (R != CUDA_SUCCESS) {
    recordError("mgpuMemAlloc: cannot allocate " + std::to_string(SizeBytes) +
                " bytes of device memory: " + errorString(R));
    return nullptr;
  }
  return reinterpret_cast<void *>(static_cast<uintptr_t>(P));
}

KILN_MGPU_EXPORT void mgpuMemFree(void *Ptr, CUstream Stream) {
  if (!Ptr)
    return;
  const DriverApi *D = ready("mgpuMemFree");
  if (!D)
    return;
  bool Managed;
  {
    std::lock_guard<std::mutex> Lock(ManagedMutex);
    Managed = ManagedAllocations.erase(Ptr) != 0;
  }
  if (Managed || !D->cuMemFreeAsync) {
    // Like MLIR's wrapper: a synchronous free, after the stream's work.
    if (Stream && failed(D->cuStreamSynchronize(Stream), "mgpuMemFree",
                         "cuStreamSynchronize"))
      return;
    failed(D->cuMemFree(dptr(Ptr)), "mgpuMemFree", "cuMemFree");
    return;
  }
  failed(D->cuMemFreeAsync(dptr(Ptr), Stream), "mgpuMemFree",
         "cuMemFreeAsync");
}

KILN_MGPU_EXPORT void mgpuMemcpy(void *Dst, void *Src, size_t SizeBytes,
                                 CUstream Stream) {
  const DriverApi *D = ready("mgpuMemcpy");
  if (!D || SizeBytes == 0)
    return;
  if (!Dst || !Src) {
    recordError("mgpuMemcpy: null pointer");
    return;
  }
  // Unified addressing: the driver tells host from device by the address.
  void *Timed = beginTimedWork(Stream);
  failed(D->cuMemcpyAsync(dptr(Dst), dptr(Src), SizeBytes, Stream),
         "mgpuMemcpy", "cuMemcpyAsync");
  if (Timed) {
    auto OnDevice = [&](void *P) {
      unsigned Type = 0;
      return D->cuPointerGetAttribute(&Type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dptr(P)) ==
                 CUDA_SUCCESS &&
             Type == CU_MEMORYTYPE_DEVICE;
    };
    bool ToDevice = OnDevice(Dst), FromDevice = OnDevice(Src);
    // Op types as ONNX Runtime names its copy nodes.
    endTimedWork(Timed, Stream,
                 ToDevice ? (FromDevice ? "copy_device_to_device" : "copy_host_to_device")
                          : (FromDevice ? "copy_device_to_host" : "copy_host_to_host"),
                 KILN_EVENT_TRANSFER, SizeBytes,
                 ToDevice == FromDevice ? "Memcpy" : ToDevice ? "MemcpyFromHost" : "MemcpyToHost");
  }
}

KILN_MGPU_EXPORT void mgpuMemset32(void *Dst, unsigned int Value, size_t Count,
                                   CUstream Stream) {
  const DriverApi *D = ready("mgpuMemset32");
  if (!D || Count == 0)
    return;
  failed(D->cuMemsetD32Async(dptr(Dst), Value, Count, Stream), "mgpuMemset32",
         "cuMemsetD32Async");
}

KILN_MGPU_EXPORT void mgpuMemset16(void *Dst, unsigned short Value,
                                   size_t Count, CUstream Stream) {
  const DriverApi *D = ready("mgpuMemset16");
  if (!D || Count == 0)
    return;
  failed(D->cuMemsetD16Async(dptr(Dst), Value, Count, Stream), "mgpuMemset16",
         "cuMemsetD16Async");
}

KILN_MGPU_EXPORT void mgpuMemHostRegister(void *Ptr, uint64_t SizeBytes) {
  const DriverApi *D = ready("mgpuMemHostRegister");
  if (!D || !Ptr || SizeBytes == 0)
    return;
  failed(D->cuMemHostRegister(Ptr, SizeBytes, 0), "mgpuMemHostRegister",
         "cuMemHostRegister");
}

KILN_MGPU_EXPORT void mgpuMemHostUnregister(void *Ptr) {
  const DriverApi *D = ready("mgpuMemHostUnregister");
  if (!D || !Ptr)
    return;
  failed(D->cuMemHostUnregister(Ptr), "mgpuMemHostUnregister",
         "cuMemHostUnregister");
}

KILN_MGPU_EXPORT void mgpuMemHostRegisterMemRef(int64_t Rank, void *Descriptor,
                                                int64_t ElementSizeBytes) {
  void *Ptr = nullptr;
  uint64_t Bytes = 0;
  if (!memRefRange(Rank, Descriptor, ElementSizeBytes, Ptr, Bytes)) {
    recordError("mgpuMemHostRegisterMemRef: invalid memref");
    return;
  }
  mgpuMemHostRegister(Ptr, Bytes);
}

KILN_MGPU_EXPORT void mgpuMemHostUnregisterMemRef(int64_t Rank,
                                                  void *Descriptor,
                                                  int64_t ElementSizeBytes) {
  void *Ptr = nullptr;
  uint64_t Bytes = 0;
  if (!memRefRange(Rank, Descriptor, ElementSizeBytes, Ptr, Bytes)) {
    recordError("mgpuMemHostUnregisterMemRef: invalid memref");
    return;
  }
  mgpuMemHostUnregister(Ptr);
}

KILN_MGPU_EXPORT void mgpuSetDefaultDevice(int32_t Device) {
  if (Device != 0)
    recordError("mgpuSetDefaultDevice: only CUDA device 0 is supported, "
                "asked for " +
                std::to_string(Device));
}
