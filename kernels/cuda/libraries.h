#pragma once
// Vendor-library handles bound to a stream, created on first use, and the WB_CHECK
// overloads for their status codes.
#include <cublasLt.h>
#include <cublas_v2.h>
#if WB_HAVE_CUDNN
#include <cudnn.h>
#endif

#include "kernels/cuda/runtime.h"
#include "kernels/exec_context.h"

namespace wb::cuda {

void check(cublasStatus_t status, const char* call, const char* file, int line);
#if WB_HAVE_CUDNN
void check(cudnnStatus_t status, const char* call, const char* file, int line);
#endif

}  // namespace wb::cuda

namespace wb {

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
