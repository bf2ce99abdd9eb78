// matmul_forward_bf16, CUDA variant 2: cuBLAS GemmEx on bf16 with fp32 compute, the
// bias through beta.
//
// Idea: a small kernel copies the bias into every row of out (bf16 to bf16: exact),
// then cublasGemmEx computes out = inp @ weight^T + 1 * out with bf16 A, B and C and
// CUBLAS_COMPUTE_32F: the products and sums in fp32 on the tensor cores, the bias
// added in fp32 in the epilogue, and each output rounded once to bf16 -- the one
// rounding the contract allows (a GEMM rounding to bf16 and then a bias kernel adding
// to it would round twice). With a null bias, beta = 0 and no copy. The row-major
// product maps onto column-major cuBLAS as in kernels/cuda/matmul.cuh: out^T (OC x
// rows) = weight (C x OC, transposed) times inp^T (C x rows).
// Why it should beat variant 1: cuBLAS picks a tensor-core kernel tuned for the device
// and the shape; the bias costs one write of out, not a read-modify-write pass after.
// Limits: any shape; the bias copy is a separate launch (cuBLASLt's bias epilogue
// saves it). In the emulator, GemmEx is widened to an fp32 SGEMM and rounded once
// (kernels/emu/cublas.h): the same result up to the order of the sums.
#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/cuda/dialect.cuh"
#include "kernels/cuda/libraries.h"
#include "kernels/cuda/packed.cuh"
#include "kernels/cuda/runtime.h"
#include "kernels/ops/matmul_forward.h"

namespace wb::variants {
namespace {

// out[r, o] = bias[o], one thread per element.
__global__ void broadcast_bias_bf16(__nv_bfloat16* out, const __nv_bfloat16* bias, int64_t n, int OC) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = bias[i % OC];
}

void launch(const MatmulForwardBf16Args& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T;
  const cudaStream_t stream = cuda::stream(l);
  if (a.bias) {
    const int block = l.block_size();
    WB_LAUNCH(broadcast_bias_bf16, cuda::grid_for(rows * a.OC, block), block, 0, stream, cuda::as_cuda(a.out),
              cuda::as_cuda(a.bias), rows * a.OC, a.OC);
  }
  cublasHandle_t handle = cuda::libraries(l).cublas();
  WB_CHECK(cublasSetStream(handle, stream));
  WB_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
  const float alpha = 1.0f, beta = a.bias ? 1.0f : 0.0f;
  WB_CHECK(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, a.OC, int(rows), a.C, &alpha, a.weight, CUDA_R_16BF, a.C,
                        a.inp, CUDA_R_16BF, a.C, &beta, a.out, CUDA_R_16BF, a.OC, CUBLAS_COMPUTE_32F,
                        CUBLAS_GEMM_DEFAULT));
}

}  // namespace

Variant matmul_forward_bf16_cuda_2() {
  Variant v = Variant::of(&launch);
  v.summary = "cuBLAS GemmEx, bf16 in and out, fp32 compute; the bias copied into out first and added via beta = 1";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
