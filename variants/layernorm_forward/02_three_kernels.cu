// layernorm_forward, CUDA variant 2: three kernels -- mean, rstd, normalise.
//
// Idea: split the work the textbook way. A block per row reduces the mean, a second
// kernel (again a block per row) the variance around it, and a third normalises with
// one thread per element.
// Why it should beat variant 1: every load is coalesced (threads of a block stride
// over one row) and the normalisation runs B*T*C threads instead of B*T.
// Limits: three launches, and the row is read three times from memory, the
// statistics round-trip through global memory.
#include "contract/ops/layernorm_forward.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

__global__ void row_mean(float* mean, const float* inp, int C) {
  WB_SHARED(float, scratch, [cuda::kWarpSize]);
  const float* x = inp + size_t(blockIdx.x) * C;
  float sum = 0.0f;
  for (int c = threadIdx.x; c < C; c += blockDim.x) sum += x[c];
  sum = cuda::block_sum(sum, scratch);
  if (threadIdx.x == 0) mean[blockIdx.x] = sum / C;
}

__global__ void row_rstd(float* rstd, const float* inp, const float* mean, int C) {
  WB_SHARED(float, scratch, [cuda::kWarpSize]);
  const float* x = inp + size_t(blockIdx.x) * C;
  const float m = mean[blockIdx.x];
  float var = 0.0f;
  for (int c = threadIdx.x; c < C; c += blockDim.x) {
    const float d = x[c] - m;
    var += d * d;
  }
  var = cuda::block_sum(var, scratch);
  if (threadIdx.x == 0) rstd[blockIdx.x] = rsqrtf(var / C + kLayernormEps);
}

__global__ void normalise(float* out, const float* inp, const float* mean, const float* rstd, const float* weight,
                          const float* bias, int64_t n, int C) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int64_t row = i / C;
  const int c = int(i % C);
  out[i] = (inp[i] - mean[row]) * rstd[row] * weight[c] + bias[c];
}

void launch(const LayernormForwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  const int block = l.block_size();
  const cudaStream_t s = cuda::stream(l);
  WB_LAUNCH(row_mean, rows, block, 0, s, a.mean, a.inp, a.C);
  WB_LAUNCH(row_rstd, rows, block, 0, s, a.rstd, a.inp, a.mean, a.C);
  const int64_t n = int64_t(rows) * a.C;
  WB_LAUNCH(normalise, cuda::grid_for(n, block), block, 0, s, a.out, a.inp, a.mean, a.rstd, a.weight, a.bias, n, a.C);
}

}  // namespace

Variant layernorm_forward_cuda_2() {
  Variant v = Variant::of(&launch);
  v.summary = "mean and rstd kernels (a block per row), then one thread per element normalises";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
