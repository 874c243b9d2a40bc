// CudaDriver.h declares the driver's types and constants itself (so that
// libkiln_rt builds without the CUDA toolkit); where cuda.h exists, check
// that they agree with it. Compile-time only.
#include "../../runtime/lib/CudaDriver.h"

#include <cuda.h>

namespace k = kiln::rt::cuda;

static_assert(sizeof(k::CUdeviceptr) == sizeof(CUdeviceptr), "CUdeviceptr");
static_assert(sizeof(k::CUresult) == sizeof(CUresult), "CUresult");
static_assert(sizeof(k::CUdevice) == sizeof(CUdevice), "CUdevice");
static_assert(k::CUDA_ERROR_STUB_LIBRARY == CUDA_ERROR_STUB_LIBRARY, "");
static_assert(k::CUDA_ERROR_NO_DEVICE == CUDA_ERROR_NO_DEVICE, "");
static_assert(k::CU_POINTER_ATTRIBUTE_MEMORY_TYPE ==
                  CU_POINTER_ATTRIBUTE_MEMORY_TYPE, "");
static_assert(k::CU_MEMORYTYPE_HOST == CU_MEMORYTYPE_HOST, "");
static_assert(k::CU_MEMORYTYPE_DEVICE == CU_MEMORYTYPE_DEVICE, "");
static_assert(k::CU_MEMORYTYPE_UNIFIED == CU_MEMORYTYPE_UNIFIED, "");
static_assert(k::CU_MEM_ATTACH_GLOBAL == CU_MEM_ATTACH_GLOBAL, "");
static_assert(k::CU_STREAM_NON_BLOCKING == CU_STREAM_NON_BLOCKING, "");
static_assert(k::CU_EVENT_DISABLE_TIMING == CU_EVENT_DISABLE_TIMING, "");
// (CU_MEMHOSTALLOC_PORTABLE and CU_MEMHOSTREGISTER_PORTABLE are macros in
// cuda.h, so they cannot be named here; both are 1 there.)
static_assert(k::CU_JIT_ERROR_LOG_BUFFER == CU_JIT_ERROR_LOG_BUFFER, "");
static_assert(k::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES ==
                  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, "");
static_assert(k::CU_JIT_OPTIMIZATION_LEVEL == CU_JIT_OPTIMIZATION_LEVEL, "");
static_assert(k::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD ==
                  CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, "");
