// layernorm_backward, CUDA variant 1: the naive port, two kernels.
//
// Idea: as the CPU loop. Kernel 1: one thread per row walks its C channels twice --
// once for the two row means (of g = weight * dout and of g * n, n the normalised
// input), once to add (g - mean(g) - n * mean(g n)) * rstd to dinp. Kernel 2: one
// thread per channel walks all B*T rows and adds sum n * dout to dweight and sum dout
// to dbias.
// Why: the baseline of the ladder. Kernel 2 coalesces (neighbouring threads, neighbouring
// channels) and, with no atomics, both kernels are deterministic.
// Limits: kernel 1 does not coalesce (threads C floats apart) and runs only B*T
// threads; kernel 2 runs only C threads, each a long sequential sum; inp and dout are
// read three times in all.
#include "contract/ops/layernorm_backward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

__global__ void dinp_thread_per_row(float* dinp, const float* dout, const float* inp, const float* weight,
                                    const float* mean, const float* rstd, int rows, int C) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const float* x = inp + int64_t(row) * C;
  const float* dy = dout + int64_t(row) * C;
  float* dx = dinp + int64_t(row) * C;
  const float m = mean[row], s = rstd[row];
  float g_sum = 0.0f, gn_sum = 0.0f;
  for (int c = 0; c < C; ++c) {
    const float g = weight[c] * dy[c];
    g_sum += g;
    gn_sum += g * (x[c] - m) * s;
  }
  const float g_mean = g_sum / C, gn_mean = gn_sum / C;
  for (int c = 0; c < C; ++c) {
    const float n = (x[c] - m) * s;
    dx[c] += (weight[c] * dy[c] - g_mean - n * gn_mean) * s;
  }
}

__global__ void params_thread_per_channel(float* dweight, float* dbias, const float* dout, const float* inp,
                                          const float* mean, const float* rstd, int rows, int C) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= C) return;
  float dw = 0.0f, db = 0.0f;
  for (int row = 0; row < rows; ++row) {
    const int64_t at = int64_t(row) * C + c;
    dw += (inp[at] - mean[row]) * rstd[row] * dout[at];
    db += dout[at];
  }
  dweight[c] += dw;
  dbias[c] += db;
}

void launch(const LayernormBackwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  const int block = l.block_size();
  const cudaStream_t s = cuda::stream(l);
  WB_LAUNCH(dinp_thread_per_row, cuda::grid_for(rows, block), block, 0, s, a.dinp, a.dout, a.inp, a.weight, a.mean,
            a.rstd, rows, a.C);
  WB_LAUNCH(params_thread_per_channel, cuda::grid_for(a.C, block), block, 0, s, a.dweight, a.dbias, a.dout, a.inp,
            a.mean, a.rstd, rows, a.C);
}

}  // namespace

Variant layernorm_backward_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one thread per row for dinp, then one thread per channel for dweight and dbias";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
