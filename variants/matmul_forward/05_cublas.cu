// matmul_forward, CUDA variant 5: cuBLAS SGEMM, then a bias kernel.
//
// Idea: hand the product to the vendor library in plain fp32 and add the bias in a
// second, memory-bound kernel. cuBLAS is column-major; a row-major (rows x OC) out is
// a column-major (OC x rows) matrix, so the call computes
//   out^T (OC x rows) = weight (OC x C) @ inp^T (C x rows)
// where weight is the column-major (C x OC) array it is stored as, transposed
// (CUBLAS_OP_T, ld C), and inp is the column-major (C x rows) array, as is (ld C).
// The handle is shared by every variant: the math mode is set to CUBLAS_DEFAULT_MATH on
// every call, which keeps SGEMM off the TF32 tensor cores (this is the fp32 class).
// With a null bias the second kernel is not launched. block_size is that of the bias
// kernel (float4 per thread when OC % 4 == 0 and the pointers are 16-byte aligned).
// Why it should beat variants 1-4: cuBLAS picks a kernel tuned for the device and the
// shape (tiles, pipelining, split-K), the reference for the hand-written fp32 ladder.
// Limits: the bias costs one more read and write of out; any shape runs.
#include "kernels/cuda/libraries.h"
#include "kernels/ops/matmul_forward.h"
#include "variants/matmul_forward/common.cuh"

namespace wb::variants {
namespace {

namespace mf = matmul_forward_common;

void launch(const MatmulForwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  cublasHandle_t handle = cuda::libraries(l).cublas();
  WB_CHECK(cublasSetStream(handle, cuda::stream(l)));
  WB_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
  const float alpha = 1.0f, beta = 0.0f;
  WB_CHECK(cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, a.OC, rows, a.C, &alpha, a.weight, a.C, a.inp, a.C, &beta,
                       a.out, a.OC));
  if (a.bias) mf::add_bias(a.out, a.bias, rows, a.OC, l.block_size(), cuda::stream(l));
}

}  // namespace

Variant matmul_forward_cuda_5() {
  Variant v = Variant::of(&launch);
  v.op = "matmul_forward";
  v.backend = Backend::cuda;
  v.id = 5;
  v.name = "cublas";
  v.summary = "cuBLAS SGEMM in plain fp32 (default math mode, no TF32), then a bias kernel (block_size is its)";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
