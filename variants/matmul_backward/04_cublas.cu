// matmul_backward, CUDA variant 4: cuBLAS SGEMM, fp32 throughout.
//
// Idea: cuBLAS is column-major, and a row-major (r x c) matrix is the column-major
// (c x r) matrix of the same memory, its transpose. So the two products become
//   dinp^T    (C x rows)  = weight^T (C x OC)  @ dout^T (OC x rows)   sgemm N, N, beta 0
//   dweight^T (C x OC)   += inp^T    (C x rows) @ dout  (rows x OC)    sgemm N, T, beta 1
// beta = 0 overwrites dinp (cuBLAS then never reads it), beta = 1 lets cuBLAS
// accumulate into dweight itself. The bias gradient is the separate op
// matmul_backward_bias.
// Why it should beat variant 3: NVIDIA's tuned SGEMM kernels (double-buffered, tuned
// per architecture and shape) are the best fp32 FMA-pipe GEMM one can expect.
// Numerics: fp32 class. The cuBLAS handle is shared by every variant, so each launch
// sets its state (cuda::cublas_fp32, device/cuda/cublas.h): CUBLAS_DEFAULT_MATH (no
// TF32 down-conversion), host pointer mode (alpha and beta live on the host), atomics
// not allowed (cuBLAS then stays deterministic).
// Limits: cuBLAS uses the workspace its handle owns (the handle is shared, so this
// variant does not install one of its own); it declares none.
#include <cublas_v2.h>

#include "contract/ops/matmul_backward.h"
#include "device/cuda/cublas.h"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

void launch(const MatmulBackwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  cublasHandle_t handle = cuda::cublas_fp32(l);
  const float one = 1.0f, zero = 0.0f;
  // dinp^T (C x rows, ld C) = weight^T (C x OC, ld C) @ dout^T (OC x rows, ld OC)
  WB_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, a.C, rows, a.OC, &one, a.weight, a.C, a.dout, a.OC, &zero,
                       a.dinp, a.C));
  // dweight^T (C x OC, ld C) += inp^T (C x rows, ld C) @ dout (rows x OC): dout^T (OC x rows, ld OC) transposed
  WB_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, a.C, a.OC, rows, &one, a.inp, a.C, a.dout, a.OC, &one,
                       a.dweight, a.C));
}

}  // namespace

Variant matmul_backward_cuda_4() {
  Variant v = Variant::of(&launch);
  v.summary = "two cuBLAS SGEMM calls, beta = 0 for dinp and 1 for dweight (TF32 off)";
  return v;
}

}  // namespace wb::variants
