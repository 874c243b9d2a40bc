// The CUDA driver API, loaded lazily with dlopen so that libkiln_rt links
// no libcuda and works on machines without a GPU. Types and constants are
// declared here (ABI-compatible with cuda.h, checked by a unit test when
// cuda.h is present) so that building needs no CUDA toolkit either.
//
// The driver path is "libcuda.so.1", or $KILN_CUDA_DRIVER when set (tests
// point it at the toolkit's stub library). Loading happens once per
// process, on first use, thread-safely.
#ifndef KILN_RUNTIME_CUDADRIVER_H
#define KILN_RUNTIME_CUDADRIVER_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln::rt::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUmemoryPool = struct CUmemPoolHandle_st *;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_STUB_LIBRARY = 34;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr int CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2;
constexpr unsigned CU_MEMORYTYPE_HOST = 1;
constexpr unsigned CU_MEMORYTYPE_DEVICE = 2;
constexpr unsigned CU_MEMORYTYPE_UNIFIED = 4;
constexpr unsigned CU_MEM_ATTACH_GLOBAL = 1;
constexpr unsigned CU_STREAM_NON_BLOCKING = 1;
constexpr unsigned CU_EVENT_DISABLE_TIMING = 2;
constexpr unsigned CU_MEMHOSTALLOC_PORTABLE = 1;
constexpr unsigned CU_MEMHOSTREGISTER_PORTABLE = 1;
constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
constexpr int CU_JIT_OPTIMIZATION_LEVEL = 7;
constexpr int CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4;

/// Function pointers into the driver. Required entries are non-null once
/// the table is loaded; optional ones (marked) may be null on old drivers.
struct DriverApi {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice); // _v2
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxGetCurrent)(CUcontext *);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *,
                                 void **);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, unsigned, CUstream,
                             void **, void **);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamDestroy)(CUstream); // _v2
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventDestroy)(CUevent); // _v2
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent); // _v2 or plain
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);             // _v2
  CUresult (*cuMemFree)(CUdeviceptr);                        // _v2
  CUresult (*cuMemAllocManaged)(CUdeviceptr *, size_t, unsigned);
  CUresult (*cuMemAllocAsync)(CUdeviceptr *, size_t, CUstream); // optional
  CUresult (*cuMemFreeAsync)(CUdeviceptr, CUstream);            // optional
  CUresult (*cuDeviceGetDefaultMemPool)(CUmemoryPool *, CUdevice); // optional
  CUresult (*cuMemPoolSetAttribute)(CUmemoryPool, int, void *);   // optional
  CUresult (*cuMemcpy)(CUdeviceptr, CUdeviceptr, size_t);
  CUresult (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemsetD32)(CUdeviceptr, unsigned, size_t); // _v2
  CUresult (*cuMemsetD16)(CUdeviceptr, unsigned short, size_t); // _v2
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
  CUresult (*cuMemsetD16Async)(CUdeviceptr, unsigned short, size_t, CUstream);
  CUresult (*cuMemHostAlloc)(void **, size_t, unsigned);
  CUresult (*cuMemFreeHost)(void *);
  CUresult (*cuMemHostRegister)(void *, size_t, unsigned); // _v2
  CUresult (*cuMemHostUnregister)(void *);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuPointerGetAttribute)(void *, int, CUdeviceptr);
};

/// The loaded driver with device 0's primary context retained, or null when
/// CUDA cannot be used; Why then says why: "no CUDA driver: <dlerror>",
/// "cuInit failed: <driver message> (<code>)", "no CUDA device". The
/// answer is computed once per process and cached.
const DriverApi *driver(std::string *Why = nullptr);

/// driver() != null, and Why says why not.
bool cudaAvailable(std::string &Why);

/// Device 0's primary context (null without CUDA).
CUcontext primaryContext();
/// "NVIDIA H200" or "".
const std::string &deviceName();

/// Makes the primary context current on the calling thread if it is not
/// yet (cheap when it is). False (with an error recorded) without CUDA.
bool makeContextCurrent();

/// The driver table with the primary context current on this thread, or
/// null with an error recorded for Fn (the mgpu shims' and generated code's
/// entry points).
const DriverApi *ready(const char *Fn);

/// Records a failed driver call for Fn; returns true when R is a failure.
bool failed(CUresult R, const char *Fn, const char *Call);

/// "CUDA_ERROR_INVALID_VALUE: invalid argument (1)" via the driver when
/// loaded, else just the code.
std::string errorString(CUresult Code);

/// The thread-local record of CUDA failures: shims record every failure
/// here instead of aborting; sessions clear it before running partitions
/// and turn a recorded failure into KILN_ERROR_PROVIDER. Only the first
/// failure since the last clear is kept (later ones are usually
/// consequences of it); the count covers all.
void recordError(const std::string &Message);
void clearErrors();
bool hasError();
const std::string &firstError();
uint64_t errorCount();

/// Where the driver is loaded from: $KILN_CUDA_DRIVER or "libcuda.so.1".
std::string driverPath();

/// GPU modules the mgpu shims keep loaded (defined in MgpuShims.cpp, which
/// Session.cpp thereby pulls into static links).
size_t cachedModuleCount();

/// Tests only: 1 pretends CUDA is available (the table stays unloaded, so
/// every shim fails cleanly), 0 pretends it is not, -1 restores detection.
void setAvailabilityForTesting(int Mode);
/// True while setAvailabilityForTesting(1) is in force.
bool availabilityFaked();

} // namespace kiln::rt::cuda

#endif // KILN_RUNTIME_CUDADRIVER_H
