// layernorm_forward, CUDA variant 3: one warp per row, warp-level reductions.
//
// Idea: the 32 lanes of a warp stride over one row (coalesced), and the mean and the
// variance are reduced with register shuffles: no shared memory, no __syncthreads,
// one launch. A block of block_size threads handles block_size/32 rows.
// Why it should beat variant 2: one launch instead of three and no round trip of the
// statistics through global memory; the second and third reads of the row mostly hit
// L1/L2.
// Limits: still three passes over the row (mean, variance, output) and scalar
// 32-bit loads.
#include "kernels/cuda/device_utils.cuh"
#include "kernels/cuda/runtime.h"
#include "kernels/ops/layernorm_forward.h"

namespace wb::variants {
namespace {

__global__ void layernorm_warp_per_row(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                                       const float* bias, int rows, int C) {
  const int lane = threadIdx.x % cuda::kWarpSize;
  const int row = blockIdx.x * (blockDim.x / cuda::kWarpSize) + threadIdx.x / cuda::kWarpSize;
  if (row >= rows) return;  // the whole warp leaves together
  const float* x = inp + size_t(row) * C;

  float sum = 0.0f;
  for (int c = lane; c < C; c += cuda::kWarpSize) sum += x[c];
  const float m = cuda::warp_sum(sum) / C;

  float var = 0.0f;
  for (int c = lane; c < C; c += cuda::kWarpSize) {
    const float d = x[c] - m;
    var += d * d;
  }
  const float s = rsqrtf(cuda::warp_sum(var) / C + kLayernormEps);

  float* y = out + size_t(row) * C;
  for (int c = lane; c < C; c += cuda::kWarpSize) y[c] = (x[c] - m) * s * weight[c] + bias[c];
  if (lane == 0) {
    mean[row] = m;
    rstd[row] = s;
  }
}

void launch(const LayernormForwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  const int block = l.block_size();
  const int rows_per_block = block / cuda::kWarpSize;
  layernorm_warp_per_row<<<cuda::grid_for(rows, rows_per_block), block, 0, cuda::stream(l)>>>(
      a.out, a.mean, a.rstd, a.inp, a.weight, a.bias, rows, a.C);
  WB_CHECK_LAUNCH();
}

}  // namespace

Variant layernorm_forward_cuda_3() {
  Variant v = Variant::of(&launch);
  v.op = "layernorm_forward";
  v.backend = Backend::cuda;
  v.id = 3;
  v.name = "warp_per_row";
  v.summary = "one warp per row, mean and variance reduced with warp shuffles, one launch";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
