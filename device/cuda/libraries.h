#pragma once
// Vendor-library handles bound to a stream, created on first use, and the WB_CHECK
// overloads for their status codes. Under the emulator (WB_EMU) only cuBLAS exists,
// emulated through OpenBLAS (emu/cublas.h); variants that need cuBLASLt or
// cuDNN are not emulated.
#if WB_EMU
#include "emu/cublas.h"
#else
#include <cublasLt.h>
#include <cublas_v2.h>
#if WB_HAVE_CUDNN
#include <cudnn.h>
#endif
#endif

#include "contract/exec_context.h"
#include "device/cuda/runtime.h"

namespace wb::cuda {

void check(cublasStatus_t status, const char* call, const char* file, int line);
#if WB_HAVE_CUDNN && !WB_EMU
void check(cudnnStatus_t status, const char* call, const char* file, int line);
#endif

}  // namespace wb::cuda

#if WB_EMU

namespace wb::cuda {

// The emulator's library handles: one cuBLAS handle per host thread.
class EmuLibraries {
 public:
  EmuLibraries() = default;
  ~EmuLibraries();
  EmuLibraries(const EmuLibraries&) = delete;
  EmuLibraries& operator=(const EmuLibraries&) = delete;
  cublasHandle_t cublas();

 private:
  cublasHandle_t cublas_ = nullptr;
};

EmuLibraries& libraries(const Launch& launch);

}  // namespace wb::cuda

#else

namespace wb {

// One context's handles, each bound to its stream when created. cuBLAS gets a fixed
// workspace of its own (32 MiB on Hopper, 4 MiB before: NVIDIA's sizes for its largest
// kernels) instead of its default pool, so that a captured CUDA graph never has cuBLAS
// allocate inside the capture, and a replay reads a workspace whose address cannot
// change. Nothing may call cublasSetStream on the handle afterwards: it resets the
// workspace to the pool (the handle is on the launches' stream already).
class CudaLibraries {
 public:
  explicit CudaLibraries(cudaStream_t stream);
  ~CudaLibraries();
  CudaLibraries(const CudaLibraries&) = delete;
  CudaLibraries& operator=(const CudaLibraries&) = delete;

  cudaStream_t stream() const { return stream_; }
  cublasHandle_t cublas();
  cublasLtHandle_t cublaslt();
#if WB_HAVE_CUDNN
  cudnnHandle_t cudnn();
#endif

 private:
  cudaStream_t stream_;
  cublasHandle_t cublas_ = nullptr;
  void* cublas_workspace_ = nullptr;
  std::size_t cublas_workspace_bytes_ = 0;
  cublasLtHandle_t cublaslt_ = nullptr;
#if WB_HAVE_CUDNN
  cudnnHandle_t cudnn_ = nullptr;
#endif
};

namespace cuda {
// The handles of a launch's context; throws std::logic_error when it has none.
CudaLibraries& libraries(const Launch& launch);
}  // namespace cuda

}  // namespace wb

#endif
