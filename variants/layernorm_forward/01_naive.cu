// layernorm_forward, CUDA variant 1: the naive port of the CPU loop.
//
// Idea: one thread per row of C channels walks its row three times (mean, variance,
// normalise), as the reference does, but in float.
// Why: the baseline the ladder starts from; plainly correct.
// Limits: neighbouring threads read addresses C floats apart, so no load coalesces,
// and only B*T threads exist: slow for any realistic C.
#include "kernels/cuda/dialect.cuh"
#include "kernels/cuda/layernorm.cuh"
#include "kernels/cuda/runtime.h"
#include "kernels/ops/layernorm_forward.h"

namespace wb::variants {
namespace {

__global__ void layernorm_thread_per_row(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                                         const float* bias, int rows, int C) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const float* x = inp + size_t(row) * C;
  float sum = 0.0f;
  for (int c = 0; c < C; ++c) sum += x[c];
  const float2 stats = cuda::layernorm::normalize_row_serial(x, sum, C, weight, bias, out + size_t(row) * C);
  mean[row] = stats.x;
  rstd[row] = stats.y;
}

void launch(const LayernormForwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  const int block = l.block_size();
  WB_LAUNCH(layernorm_thread_per_row, cuda::grid_for(rows, block), block, 0, cuda::stream(l), a.out, a.mean, a.rstd,
            a.inp, a.weight, a.bias, rows, a.C);
}

}  // namespace

Variant layernorm_forward_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one thread per row, three passes over the row like the CPU loop";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
