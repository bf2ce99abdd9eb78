// layernorm_forward, CUDA variant 5: one block per row.
//
// Idea: all threads of a block stride over one row; mean and variance are block
// reductions (warp shuffles, then one warp over the per-warp sums in shared memory).
// Why it should beat variant 3: when rows are long or few, a warp per row leaves the
// memory system idle; a block per row keeps more loads in flight per row. For C =
// 768 it mainly shows what the extra synchronisation costs -- the sweep decides.
// Limits: two __syncthreads-bound reductions per row; with C = 768 a large block
// leaves most threads with one or two elements; three passes over the row (the
// second and third hit L1).
#include "contract/ops/layernorm_forward.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

__global__ void layernorm_block_per_row(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                                        const float* bias, int C) {
  WB_SHARED(float, scratch, [cuda::kWarpSize]);
  const int row = blockIdx.x;
  const float* x = inp + size_t(row) * C;

  float sum = 0.0f;
  for (int c = threadIdx.x; c < C; c += blockDim.x) sum += x[c];
  const float m = cuda::block_sum(sum, scratch) / C;

  float var = 0.0f;
  for (int c = threadIdx.x; c < C; c += blockDim.x) {
    const float d = x[c] - m;
    var += d * d;
  }
  const float s = rsqrtf(cuda::block_sum(var, scratch) / C + kLayernormEps);

  float* y = out + size_t(row) * C;
  for (int c = threadIdx.x; c < C; c += blockDim.x) y[c] = (x[c] - m) * s * weight[c] + bias[c];
  if (threadIdx.x == 0) {
    mean[row] = m;
    rstd[row] = s;
  }
}

void launch(const LayernormForwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  WB_LAUNCH(layernorm_block_per_row, rows, l.block_size(), 0, cuda::stream(l), a.out, a.mean, a.rstd, a.inp, a.weight,
            a.bias, a.C);
}

}  // namespace

Variant layernorm_forward_cuda_5() {
  Variant v = Variant::of(&launch);
  v.summary = "one block per row, block-level reductions through shared memory";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
