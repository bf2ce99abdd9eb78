#pragma once
// A Triton rung on the cuda backend: what the C++ variant tools/triton/cxx.py writes for
// it needs around the launcher tools/triton/aot.py generated (docs/triton.md): the
// runtime's stream as the driver's, the device's compute capability to pick a cubin, the
// tensors as CUdeviceptr, and the launcher's CUresult turned into wb's errors.
#include <cuda.h>

#include <cstdint>

#include "contract/variant.h"

namespace wb::triton {

// The stream the harness gave the launch (a cudaStream_t is a CUstream).
CUstream stream(const Launch& launch);
// The current device's compute capability as 10 * major + minor (90 for an H200).
int compute_capability();

template <class T>
CUdeviceptr device_pointer(T* p) {
  return static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(p));
}

// CUDA_SUCCESS passes; CUDA_ERROR_NOT_FOUND (no cubin for this device and these
// parameters) is a skip with the reason (Unsupported); any other code is the driver's
// error (BackendError), naming `what`.
void check(CUresult result, const char* what);

}  // namespace wb::triton
