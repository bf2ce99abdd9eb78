// matmul_gelu_forward_bf16, CUDA variant 1: the naive port, one thread per output.
//
// Idea: one thread per output element walks row r of inp and row o of weight together
// over the C channels, widening each bf16 and accumulating in fp32 from the bias; it
// writes pre = bf16(sum) and out = bf16(gelu(sum)) -- the GELU of the unrounded sum,
// each output rounded once.
// Why: the baseline of the bf16 ladder; plainly correct for every shape.
// Limits: as matmul_forward_bf16 cuda/1: no load coalesces, nothing reused on chip but
// what the caches catch, 2*C 16-bit loads per output.
#include <cuda_bf16.h>

#include "kernels/cuda/dialect.cuh"
#include "kernels/cuda/gelu.cuh"
#include "kernels/cuda/matmul.cuh"
#include "kernels/cuda/packed.cuh"
#include "kernels/cuda/runtime.h"
#include "kernels/ops/matmul_gelu_forward.h"

namespace wb::variants {
namespace {

__global__ void matmul_gelu_bf16_thread_per_output(__nv_bfloat16* out, __nv_bfloat16* pre, const __nv_bfloat16* inp,
                                                   const __nv_bfloat16* weight, const __nv_bfloat16* bias,
                                                   int64_t rows, int C, int OC) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * OC) return;
  const int64_t r = i / OC;
  const int o = int(i % OC);
  const __nv_bfloat16* x = inp + r * C;
  const __nv_bfloat16* w = weight + int64_t(o) * C;
  float acc = bias ? __bfloat162float(bias[o]) : 0.0f;
  for (int c = 0; c < C; ++c) acc += __bfloat162float(x[c]) * __bfloat162float(w[c]);
  pre[i] = __float2bfloat16(acc);
  out[i] = __float2bfloat16(cuda::gelu::gelu(acc));
}

void launch(const MatmulGeluForwardBf16Args& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T;
  const int block = l.block_size();
  WB_LAUNCH(matmul_gelu_bf16_thread_per_output, cuda::grid_for(rows * a.OC, block), block, 0, cuda::stream(l),
            cuda::as_cuda(a.out), cuda::as_cuda(a.pre), cuda::as_cuda(a.inp), cuda::as_cuda(a.weight),
            cuda::as_cuda(a.bias), rows, a.C, a.OC);
}

}  // namespace

Variant matmul_gelu_forward_bf16_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one thread per output: an fp32 dot product of widened rows; pre and gelu of the unrounded sum, rounded once";
  v.params = {block_size_param()};
  v.launch_limit = cuda::matmul::thread_per_output_limit;
  return v;
}

}  // namespace wb::variants
