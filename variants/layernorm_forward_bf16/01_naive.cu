// layernorm_forward_bf16, CUDA variant 1: the naive port, one thread per row.
//
// Idea: one thread per row of C channels walks its row three times (mean, variance
// around it, normalise), widening each bf16 to fp32, accumulating in fp32, and rounds
// each output once to nearest even; mean and rstd stay fp32.
// Why: the baseline of the bf16 ladder; plainly correct.
// Limits: neighbouring threads read addresses C values apart, so no load coalesces, and
// only B*T threads exist: slow for any realistic C.
#include <cuda_bf16.h>

#include "kernels/cuda/dialect.cuh"
#include "kernels/cuda/layernorm.cuh"
#include "kernels/cuda/packed.cuh"
#include "kernels/cuda/runtime.h"
#include "kernels/ops/layernorm_forward.h"

namespace wb::variants {
namespace {

__global__ void layernorm_bf16_thread_per_row(__nv_bfloat16* out, float* mean, float* rstd, const __nv_bfloat16* inp,
                                              const __nv_bfloat16* weight, const __nv_bfloat16* bias, int rows, int C) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const __nv_bfloat16* x = inp + size_t(row) * C;
  float sum = 0.0f;
  for (int c = 0; c < C; ++c) sum += __bfloat162float(x[c]);
  const float2 stats = cuda::layernorm::normalize_row_serial(x, sum, C, weight, bias, out + size_t(row) * C);
  mean[row] = stats.x;
  rstd[row] = stats.y;
}

void launch(const LayernormForwardBf16Args& a, const Launch& l) {
  const int rows = a.B * a.T;
  const int block = l.block_size();
  WB_LAUNCH(layernorm_bf16_thread_per_row, cuda::grid_for(rows, block), block, 0, cuda::stream(l), cuda::as_cuda(a.out),
            a.mean, a.rstd, cuda::as_cuda(a.inp), cuda::as_cuda(a.weight), cuda::as_cuda(a.bias), rows, a.C);
}

}  // namespace

Variant layernorm_forward_bf16_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one thread per row, three passes in fp32 like the CPU loop, each output rounded once";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
