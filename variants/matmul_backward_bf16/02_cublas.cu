// matmul_backward_bf16, CUDA variant 2: two cuBLAS GemmEx calls on bf16 with fp32
// compute, dweight accumulated through beta.
//
// Idea: matmul_backward cuda/4's two products, each a cublasGemmEx with bf16 A, B and C
// and CUBLAS_COMPUTE_32F: the products and sums in fp32 on the tensor cores and each
// output rounded once to bf16 in the epilogue. cuBLAS is column-major, and a row-major
// (r x c) matrix is the column-major (c x r) matrix of the same memory, so
//   dinp^T    (C x rows)  = weight^T (C x OC)   @ dout^T (OC x rows)   N, N, beta 0
//   dweight^T (C x OC)   += inp^T    (C x rows) @ dout   (rows x OC)   N, T, beta 1
// beta = 0 overwrites dinp (cuBLAS never reads it). beta = 1 makes cuBLAS read the bf16
// dweight, widen it and add it to the fp32 sum in the epilogue before the one rounding:
// exactly the contract (a GEMM into a scratch bf16 matrix and an add kernel after it
// would round twice; into an fp32 scratch, it would cost a workspace and a pass).
// Why it should beat variant 1: cuBLAS picks a tensor-core kernel tuned for the device
// and the shape, with the operands reused through shared memory and registers; the
// accumulation costs one read of dweight inside the GEMM, not a pass of its own.
// Numerics: the handle is shared by every variant, so each launch sets its state: the
// default math mode, host pointer mode (alpha and beta on the host), atomics not
// allowed (cuBLAS's results are then bitwise the same run to run).
// Limits: any shape; cuBLAS uses its handle's workspace (none declared here). In the
// emulator, GemmEx is widened to an fp32 SGEMM and rounded once (kernels/emu/cublas.h):
// the same result up to the order of the sums.
#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/cuda/dialect.cuh"
#include "kernels/cuda/libraries.h"
#include "kernels/cuda/runtime.h"
#include "kernels/ops/matmul_backward.h"

namespace wb::variants {
namespace {

void launch(const MatmulBackwardBf16Args& a, const Launch& l) {
  const int rows = a.B * a.T;
  cublasHandle_t handle = cuda::libraries(l).cublas();
  WB_CHECK(cublasSetStream(handle, cuda::stream(l)));
  WB_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
  WB_CHECK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
  WB_CHECK(cublasSetAtomicsMode(handle, CUBLAS_ATOMICS_NOT_ALLOWED));
  const float one = 1.0f, zero = 0.0f;
  // dinp^T (C x rows, ld C) = weight^T (C x OC, ld C) @ dout^T (OC x rows, ld OC)
  WB_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, a.C, rows, a.OC, &one, a.weight, CUDA_R_16BF, a.C, a.dout,
                        CUDA_R_16BF, a.OC, &zero, a.dinp, CUDA_R_16BF, a.C, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  // dweight^T (C x OC, ld C) += inp^T (C x rows, ld C) @ dout (rows x OC): dout^T (OC x rows, ld OC) transposed
  WB_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_T, a.C, a.OC, rows, &one, a.inp, CUDA_R_16BF, a.C, a.dout,
                        CUDA_R_16BF, a.OC, &one, a.dweight, CUDA_R_16BF, a.C, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace

Variant matmul_backward_bf16_cuda_2() {
  Variant v = Variant::of(&launch);
  v.summary = "two cuBLAS GemmEx calls, bf16 in and out, fp32 compute; beta = 0 for dinp, 1 for dweight (one rounding)";
  return v;
}

}  // namespace wb::variants
