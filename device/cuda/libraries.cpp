#include "device/cuda/libraries.h"

#include <stdexcept>

namespace wb::cuda {

void check(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw_error("cuBLAS", static_cast<int>(status), cublasGetStatusName(status), cublasGetStatusString(status), call,
                file, line);
}

#if WB_HAVE_CUDNN && !WB_EMU
void check(cudnnStatus_t status, const char* call, const char* file, int line) {
  if (status != CUDNN_STATUS_SUCCESS)
    throw_error("cuDNN", static_cast<int>(status), "cudnnStatus_t", cudnnGetErrorString(status), call, file, line);
}
#endif

#if WB_EMU

EmuLibraries::~EmuLibraries() {
  if (cublas_) cublasDestroy(cublas_);
}

cublasHandle_t EmuLibraries::cublas() {
  if (!cublas_) WB_CHECK(cublasCreate(&cublas_));
  return cublas_;
}

EmuLibraries& libraries(const Launch&) {
  static thread_local EmuLibraries handles;
  return handles;
}

#else

CudaLibraries& libraries(const Launch& launch) {
  if (!launch.ctx || !launch.ctx->libraries) throw std::logic_error("this launch has no CUDA library handles");
  return *launch.ctx->libraries;
}

#endif

}  // namespace wb::cuda

#if !WB_EMU

namespace wb {

CudaLibraries::CudaLibraries(cudaStream_t stream) : stream_(stream) {}

CudaLibraries::~CudaLibraries() {
  // Destructors must not throw: errors on teardown are ignored.
  if (cublas_) cublasDestroy(cublas_);
  if (cublas_workspace_) cudaFree(cublas_workspace_);
  if (cublaslt_) cublasLtDestroy(cublaslt_);
#if WB_HAVE_CUDNN
  if (cudnn_) cudnnDestroy(cudnn_);
#endif
}

cublasHandle_t CudaLibraries::cublas() {
  if (!cublas_) {
    WB_CHECK(cublasCreate(&cublas_));
    WB_CHECK(cublasSetStream(cublas_, stream_));  // resets the workspace: set it after
    int device = 0, major = 0;
    WB_CHECK(cudaGetDevice(&device));
    WB_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    cublas_workspace_bytes_ = major >= 9 ? std::size_t(32) << 20 : std::size_t(4) << 20;
    WB_CHECK(cudaMalloc(&cublas_workspace_, cublas_workspace_bytes_));
    WB_CHECK(cublasSetWorkspace(cublas_, cublas_workspace_, cublas_workspace_bytes_));
  }
  return cublas_;
}

cublasLtHandle_t CudaLibraries::cublaslt() {
  if (!cublaslt_) WB_CHECK(cublasLtCreate(&cublaslt_));
  return cublaslt_;
}

#if WB_HAVE_CUDNN
cudnnHandle_t CudaLibraries::cudnn() {
  if (!cudnn_) {
    WB_CHECK(cudnnCreate(&cudnn_));
    WB_CHECK(cudnnSetStream(cudnn_, stream_));
  }
  return cudnn_;
}
#endif

}  // namespace wb

#endif
