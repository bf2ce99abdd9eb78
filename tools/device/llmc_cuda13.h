// tools/device/llmc_cuda13.h: forced include (nvcc -include) for building llm.c's bf16
// trainer with CUDA 13 (tools/device/anchors.sh). CUDA 13's cudaMemAdvise takes a
// cudaMemLocation where CUDA 12's took a device number (cudaCpuDeviceId for the host);
// llm.c passes the number. This overload keeps the old form; llm.c's source is untouched.
#pragma once
#include <cuda_runtime.h>
#if defined(CUDART_VERSION) && CUDART_VERSION >= 13000
static inline cudaError_t cudaMemAdvise(const void* ptr, size_t count, cudaMemoryAdvise advice, int device) {
  cudaMemLocation where;
  where.type = device == cudaCpuDeviceId ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
  where.id = device == cudaCpuDeviceId ? 0 : device;
  return cudaMemAdvise(ptr, count, advice, where);
}
#endif
