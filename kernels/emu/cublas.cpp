#include "kernels/emu/cublas.h"

#include <cblas.h>

#include <string>

namespace wb {
inline namespace emu_build {

struct cublasContext {
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
  cublasPointerMode_t pointers = CUBLAS_POINTER_MODE_HOST;
};

namespace {

// Elements a column-major rows x cols matrix with leading dimension ld spans.
long long span(int rows, int cols, int ld) { return rows == 0 || cols == 0 ? 0 : (long long)(cols - 1) * ld + rows; }

bool inside(const float* p, long long elements) {
  return elements == 0 || ::wb::emu::in_device_memory(p, std::size_t(elements) * sizeof(float));
}

cublasStatus_t fault(const std::string& what) {
  ::wb::emu::fault(::wb::emu::kIllegalAddress, "memcheck: " + what);
  return CUBLAS_STATUS_EXECUTION_FAILED;
}

CBLAS_TRANSPOSE trans(cublasOperation_t op) { return op == CUBLAS_OP_N ? CblasNoTrans : CblasTrans; }

cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                    const float* alpha, const float* A, int lda, long long sa, const float* B, int ldb, long long sb,
                    const float* beta, float* C, int ldc, long long sc, int batch, const char* name) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (::wb::emu::planning()) return CUBLAS_STATUS_SUCCESS;  // no kernel of ours to list
  if (::wb::emu::sticky_error()) return CUBLAS_STATUS_EXECUTION_FAILED;
  if (m < 0 || n < 0 || k < 0 || batch < 0 || lda < (ta == CUBLAS_OP_N ? m : k) || ldb < (tb == CUBLAS_OP_N ? k : n) ||
      ldc < m || lda < 1 || ldb < 1 || ldc < 1)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (h->pointers == CUBLAS_POINTER_MODE_DEVICE && (!inside(alpha, 1) || !inside(beta, 1)))
    return fault(std::string(name) + ": alpha or beta is not in device memory (pointer mode device)");
  const long long a_span = ta == CUBLAS_OP_N ? span(m, k, lda) : span(k, m, lda);
  const long long b_span = tb == CUBLAS_OP_N ? span(k, n, ldb) : span(n, k, ldb);
  const long long c_span = span(m, n, ldc);
  for (int i = 0; i < batch; ++i) {
    if (!inside(A + i * sa, a_span))
      return fault(std::string(name) + ": matrix A of batch " + std::to_string(i) + " reaches outside device memory");
    if (!inside(B + i * sb, b_span))
      return fault(std::string(name) + ": matrix B of batch " + std::to_string(i) + " reaches outside device memory");
    if (!inside(C + i * sc, c_span))
      return fault(std::string(name) + ": matrix C of batch " + std::to_string(i) + " reaches outside device memory");
  }
  for (int i = 0; i < batch; ++i)
    cblas_sgemm(CblasColMajor, trans(ta), trans(tb), m, n, k, *alpha, A + i * sa, lda, B + i * sb, ldb, *beta,
                C + i * sc, ldc);
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

cublasStatus_t cublasCreate(cublasHandle_t* handle) {
  *handle = new cublasContext;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle) {
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t) {
  return handle ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->math = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetPointerMode(cublasHandle_t handle, cublasPointerMode_t mode) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->pointers = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t) {
  return handle ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

const char* cublasGetStatusName(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS:
      return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

const char* cublasGetStatusString(cublasStatus_t status) {
  static thread_local std::string text;
  text =
      status == CUBLAS_STATUS_EXECUTION_FAILED
          ? "the GPU program failed to execute (emulator: " + ::wb::emu::error_string(::wb::emu::kIllegalAddress) + ")"
      : status == CUBLAS_STATUS_INVALID_VALUE ? "an unsupported value or parameter was passed to the function"
      : status == CUBLAS_STATUS_SUCCESS       ? "success"
                                              : "cuBLAS error";
  return text.c_str();
}

cublasStatus_t cublasSgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                           int k, const float* alpha, const float* A, int lda, const float* B, int ldb,
                           const float* beta, float* C, int ldc) {
  return gemm(handle, transa, transb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1, "cublasSgemm");
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const float* alpha, const float* A, int lda,
                                         long long stride_a, const float* B, int ldb, long long stride_b,
                                         const float* beta, float* C, int ldc, long long stride_c, int batch) {
  return gemm(handle, transa, transb, m, n, k, alpha, A, lda, stride_a, B, ldb, stride_b, beta, C, ldc, stride_c, batch,
              "cublasSgemmStridedBatched");
}

}  // namespace emu_build
}  // namespace wb
