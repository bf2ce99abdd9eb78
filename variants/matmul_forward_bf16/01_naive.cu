// matmul_forward_bf16, CUDA variant 1: the naive port, one thread per output.
//
// Idea: one thread per output element out[r, o] walks row r of inp and row o of weight
// together over the C channels, widening each bf16 and accumulating the products
// (exact in fp32: 8-bit by 8-bit significands) in fp32 from the bias, then rounds the
// sum once to nearest even.
// Why: the baseline of the bf16 ladder; plainly correct for every shape.
// Limits: as matmul_forward cuda/1: no load coalesces (neighbouring threads read
// weight rows C values apart), nothing is reused on chip but what the caches catch,
// 2*C 16-bit loads per output.
#include <cuda_bf16.h>

#include "kernels/cuda/dialect.cuh"
#include "kernels/cuda/matmul.cuh"
#include "kernels/cuda/packed.cuh"
#include "kernels/cuda/runtime.h"
#include "kernels/ops/matmul_forward.h"

namespace wb::variants {
namespace {

__global__ void matmul_bf16_thread_per_output(__nv_bfloat16* out, const __nv_bfloat16* inp,
                                              const __nv_bfloat16* weight, const __nv_bfloat16* bias, int64_t rows,
                                              int C, int OC) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * OC) return;
  const int64_t r = i / OC;
  const int o = int(i % OC);
  const __nv_bfloat16* x = inp + r * C;
  const __nv_bfloat16* w = weight + int64_t(o) * C;
  float acc = bias ? __bfloat162float(bias[o]) : 0.0f;
  for (int c = 0; c < C; ++c) acc += __bfloat162float(x[c]) * __bfloat162float(w[c]);
  out[i] = __float2bfloat16(acc);
}

void launch(const MatmulForwardBf16Args& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T;
  const int block = l.block_size();
  WB_LAUNCH(matmul_bf16_thread_per_output, cuda::grid_for(rows * a.OC, block), block, 0, cuda::stream(l),
            cuda::as_cuda(a.out), cuda::as_cuda(a.inp), cuda::as_cuda(a.weight), cuda::as_cuda(a.bias), rows, a.C,
            a.OC);
}

}  // namespace

Variant matmul_forward_bf16_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one thread per output: a dot product of widened bf16 rows in fp32, rounded once";
  v.params = {block_size_param()};
  v.launch_limit = cuda::matmul::thread_per_output_limit;
  return v;
}

}  // namespace wb::variants
