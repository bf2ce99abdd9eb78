#pragma once
// The warp-per-row layernorm kernel of layernorm_forward cuda/3, also the second
// kernel of fused_residual_layernorm_forward cuda/1 (which normalises the residual it
// has just written).
//
// The 32 lanes of a warp stride over one row of C channels (coalesced) in three
// passes: the mean, the variance around it, then out = (x - mean) * rstd * weight +
// bias; both sums are reduced with warp shuffles. Lane 0 writes mean and rstd.
// Launch: blockDim.x a multiple of 32, blockDim.x / 32 rows per block,
// grid = ceil(rows / (blockDim.x / 32)).
// The kernel sits in an anonymous namespace: every file that includes this header
// gets its own copy and uses it.
#include <cstddef>

#include "contract/ops/layernorm_forward.h"
#include "device/cuda/device_utils.cuh"

namespace wb::cuda::layernorm {
namespace {

__global__ void warp_per_row(float* out, float* mean, float* rstd, const float* inp, const float* weight,
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

}  // namespace
}  // namespace wb::cuda::layernorm
