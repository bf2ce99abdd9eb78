#pragma once
// The cuBLAS the variants call, for the emulator: SGEMM and its strided-batched form
// run by OpenBLAS with the same (column-major) transposes, leading dimensions, alpha
// and beta, so that the composed library variants run under emulation. Every matrix
// is checked to lie inside device memory first (memcheck). The math mode is recorded
// and ignored: products are plain fp32. cublasGemmEx with bf16 (or fp32) matrices and
// fp32 compute: A and B widened to fp32 (exact), an fp32 SGEMM with alpha and beta (C
// widened when beta != 0). An fp32 C gets that sum, as cuBLAS's up to the order of the
// sums. A bf16 C gets the freedom cuBLAS takes with it, every time: cuBLAS may split k
// and add the partial sums in C's own type (cuBLASLt's in-place reduction), and on an
// H200 its bf16 outputs were off by up to 1.3 ulp of the one-rounding result, with
// beta 0 and with beta 1 (results/nvidia-h200/check/matmul_{forward,backward}_bf16.json).
// So the first half of k (with beta C) is rounded to bf16, the second half added to it
// and the total rounded again, to nearest even: a variant that needs each output
// rounded once gives cuBLAS an fp32 C and rounds it itself. Other types or compute
// types are CUBLAS_STATUS_NOT_SUPPORTED.
#include <cstdint>

#include "emu/shim.h"

namespace wb {
inline namespace emu_build {

struct cublasContext;
using cublasHandle_t = cublasContext*;

enum cublasStatus_t : int {
  CUBLAS_STATUS_SUCCESS = 0,
  CUBLAS_STATUS_NOT_INITIALIZED = 1,
  CUBLAS_STATUS_INVALID_VALUE = 7,
  CUBLAS_STATUS_EXECUTION_FAILED = 13,
  CUBLAS_STATUS_NOT_SUPPORTED = 15,
};
enum cublasOperation_t : int { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1, CUBLAS_OP_C = 2 };
enum cublasMath_t : int {
  CUBLAS_DEFAULT_MATH = 0,
  CUBLAS_TENSOR_OP_MATH = 1,
  CUBLAS_PEDANTIC_MATH = 2,
  CUBLAS_TF32_TENSOR_OP_MATH = 3,
};
enum cudaDataType_t : int { CUDA_R_32F = 0, CUDA_R_16F = 2, CUDA_R_16BF = 14 };
enum cublasComputeType_t : int {
  CUBLAS_COMPUTE_16F = 64,
  CUBLAS_COMPUTE_32F = 68,
  CUBLAS_COMPUTE_32F_FAST_16F = 74,
  CUBLAS_COMPUTE_32F_FAST_16BF = 75,
  CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
};
enum cublasGemmAlgo_t : int { CUBLAS_GEMM_DEFAULT = -1, CUBLAS_GEMM_DEFAULT_TENSOR_OP = 99 };
enum cublasPointerMode_t : int { CUBLAS_POINTER_MODE_HOST = 0, CUBLAS_POINTER_MODE_DEVICE = 1 };
enum cublasAtomicsMode_t : int { CUBLAS_ATOMICS_NOT_ALLOWED = 0, CUBLAS_ATOMICS_ALLOWED = 1 };

cublasStatus_t cublasCreate(cublasHandle_t* handle);
cublasStatus_t cublasDestroy(cublasHandle_t handle);
cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream);
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode);
cublasStatus_t cublasSetPointerMode(cublasHandle_t handle, cublasPointerMode_t mode);
cublasStatus_t cublasSetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t mode);
const char* cublasGetStatusName(cublasStatus_t status);
const char* cublasGetStatusString(cublasStatus_t status);

// C (m x n, ldc) = alpha op(A) (m x k) op(B) (k x n) + beta C, column-major.
cublasStatus_t cublasSgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                           int k, const float* alpha, const float* A, int lda, const float* B, int ldb,
                           const float* beta, float* C, int ldc);
cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const float* alpha, const float* A, int lda,
                                         long long stride_a, const float* B, int ldb, long long stride_b,
                                         const float* beta, float* C, int ldc, long long stride_c, int batch);

// C = alpha op(A) op(B) + beta C with typed matrices (alpha and beta fp32 for
// CUBLAS_COMPUTE_32F).
cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                            int k, const void* alpha, const void* A, cudaDataType_t Atype, int lda, const void* B,
                            cudaDataType_t Btype, int ldb, const void* beta, void* C, cudaDataType_t Ctype, int ldc,
                            cublasComputeType_t computeType, cublasGemmAlgo_t algo);

}  // namespace emu_build
}  // namespace wb
