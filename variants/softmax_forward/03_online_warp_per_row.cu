// softmax_forward, CUDA variant 3: online softmax, one warp per row.
//
// Idea: the 32 lanes of a warp stride over one row. Each lane keeps a running
// (max, sum of exp(x - max)) over its values -- a new maximum rescales the sum once --
// so the maximum and the sum come out of a single read of the row; the 32 partial
// pairs are merged with warp shuffles. A second read writes the probabilities and the
// zero padding. Loads are issued four at a time so that several are in flight.
// Why it should beat variant 2: one read of the row fewer (two instead of three), and
// no shared memory or __syncthreads at all; a block holds block_size/32 rows.
// Limits: scalar 32-bit accesses; for long rows (V = 50257) a single warp streams a
// 196 KiB row, and with every row in flight at once the second read no longer finds
// the row in L2 -- the shape this variant suits is many short rows.
#include "contract/ops/softmax_forward.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "variants/softmax/online_softmax.cuh"

namespace wb::variants {
namespace {

constexpr int kBatch = 4;  // loads in flight per lane and step

__global__ void softmax_online_warp(float* probs, const float* logits, int rows, int V, int Vp) {
  const int lane = threadIdx.x % cuda::kWarpSize;
  const int row = blockIdx.x * (blockDim.x / cuda::kWarpSize) + threadIdx.x / cuda::kWarpSize;
  if (row >= rows) return;  // the whole warp leaves together: the shuffles below see 32 lanes
  const float* x = logits + size_t(row) * Vp;
  float* p = probs + size_t(row) * Vp;

  const cuda::softmax::MaxSum acc = cuda::softmax::warp_merge(cuda::softmax::strided_max_sum<kBatch>(x, V, lane, cuda::kWarpSize));
  const float inv = 1.0f / acc.sum;

  for (int base = lane; base < Vp; base += kBatch * cuda::kWarpSize) {
    float q[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const int i = base + u * cuda::kWarpSize;
      q[u] = i < V ? x[i] : 0.0f;
    }
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const int i = base + u * cuda::kWarpSize;
      if (i < Vp) p[i] = i < V ? expf(q[u] - acc.max) * inv : 0.0f;
    }
  }
}

void launch(const SoftmaxForwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  const int block = l.block_size();
  const int rows_per_block = block / cuda::kWarpSize;
  WB_LAUNCH(softmax_online_warp, cuda::grid_for(rows, rows_per_block), block, 0, cuda::stream(l), a.probs, a.logits,
            rows, a.V, a.Vp);
}

}  // namespace

Variant softmax_forward_cuda_3() {
  Variant v = Variant::of(&launch);
  v.summary = "online softmax (running max and sum in one read), one warp per row, shuffle merge";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
