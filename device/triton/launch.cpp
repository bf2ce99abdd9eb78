#include "device/triton/launch.h"

#include <cuda_runtime_api.h>

#include <string>

#include "base/errors.h"
#include "device/cuda/runtime.h"

namespace wb::triton {

CUstream stream(const Launch& launch) { return reinterpret_cast<CUstream>(cuda::stream(launch)); }

int compute_capability() {
  int device = 0, major = 0, minor = 0;
  WB_CHECK(cudaGetDevice(&device));
  WB_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  WB_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return 10 * major + minor;
}

void check(CUresult result, const char* what) {
  if (result == CUDA_SUCCESS) return;
  if (result == CUDA_ERROR_NOT_FOUND) {
    const int cc = compute_capability();
    throw Unsupported(std::string(what) + ": no cubin for compute capability " + std::to_string(cc / 10) + "." +
                      std::to_string(cc % 10) +
                      " and these parameters (tools/triton/aot.py compiled the build's architectures from sm_80 on, "
                      "and skipped the combinations over the device's shared memory)");
  }
  const char* name = nullptr;
  const char* message = nullptr;
  cuGetErrorName(result, &name);
  cuGetErrorString(result, &message);
  throw BackendError(std::string(what) + ": the Triton launcher failed: CUDA driver error " +
                     std::to_string(static_cast<int>(result)) + " " + (name ? name : "?") + ": " +
                     (message ? message : "?"));
}

}  // namespace wb::triton
