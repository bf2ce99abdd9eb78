// matmul_backward, CUDA variant 4: cuBLAS SGEMM, fp32 throughout.
//
// Idea: cuBLAS is column-major, and a row-major (r x c) matrix is the column-major
// (c x r) matrix of the same memory, its transpose. So the two products become
//   dinp^T    (C x rows) += weight^T (C x OC)  @ dout^T (OC x rows)   sgemm N, N
//   dweight^T (C x OC)   += inp^T    (C x rows) @ dout  (rows x OC)    sgemm N, T
// with beta = 1, so that cuBLAS accumulates into the gradients itself. The bias
// gradient is the shared two-pass column reduction (common.cuh).
// Why it should beat variant 3: NVIDIA's tuned SGEMM kernels (double-buffered, tuned
// per architecture and shape) are the best fp32 FMA-pipe GEMM one can expect.
// Numerics: fp32 class. The cuBLAS handle is shared by every variant, so each launch
// sets its state explicitly: CUBLAS_DEFAULT_MATH (no TF32 down-conversion), host
// pointer mode (alpha and beta live on the host), atomics not allowed (cuBLAS then
// stays deterministic).
// Limits: cuBLAS uses the workspace its handle owns (the handle is shared, so this
// variant does not install one of its own); the workspace declared here is the bias
// pass's.
#include <cublas_v2.h>

#include "kernels/cuda/libraries.h"
#include "kernels/cuda/runtime.h"
#include "kernels/ops/matmul_backward.h"
#include "variants/matmul_backward/common.cuh"

namespace wb::variants {
namespace {

void launch(const MatmulBackwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  cublasHandle_t handle = cuda::libraries(l).cublas();
  WB_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
  WB_CHECK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
  WB_CHECK(cublasSetAtomicsMode(handle, CUBLAS_ATOMICS_NOT_ALLOWED));
  const float one = 1.0f;
  // dinp^T (C x rows, ld C) += weight^T (C x OC, ld C) @ dout^T (OC x rows, ld OC)
  WB_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, a.C, rows, a.OC, &one, a.weight, a.C, a.dout, a.OC, &one,
                       a.dinp, a.C));
  // dweight^T (C x OC, ld C) += inp^T (C x rows, ld C) @ dout (rows x OC): dout^T (OC x rows, ld OC) transposed
  WB_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, a.C, a.OC, rows, &one, a.inp, a.C, a.dout, a.OC, &one,
                       a.dweight, a.C));
  if (a.dbias) launch_bias_grad(a.dbias, a.dout, rows, a.OC, static_cast<float*>(l.workspace), cuda::stream(l));
}

}  // namespace

Variant matmul_backward_cuda_4() {
  Variant v = Variant::of(&launch);
  v.op = "matmul_backward";
  v.backend = Backend::cuda;
  v.id = 4;
  v.name = "cublas";
  v.summary = "two cuBLAS SGEMM calls with beta = 1 (TF32 off), shared two-pass bias kernel";
  v.workspace = [](const Shape& s, const ParamValues&) { return bias_workspace_bytes(s.B * s.T, s.OC); };
  return v;
}

}  // namespace wb::variants
