// softmax_forward, CUDA variant 2: one block per row, three passes.
//
// Idea: the threads of a block stride over one row: a block-wide maximum (warp
// shuffles, then across warps through shared memory), a block-wide sum of
// exp(x - max), then every thread writes its share of the probabilities and of the
// zero padding.
// Why it should beat variant 1: every load and store coalesces, and a row is spread
// over up to 1024 threads instead of one.
// Limits: the row is read three times (max, sum, output); the second and third reads
// only hit L2 while few enough rows are in flight (a 50304-wide row is 196 KiB).
// Scalar 32-bit accesses.
#include "contract/ops/softmax_forward.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

__global__ void softmax_block_per_row(float* probs, const float* logits, int V, int Vp) {
  WB_SHARED(float, scratch, [cuda::kWarpSize]);
  const float* x = logits + size_t(blockIdx.x) * Vp;
  float* p = probs + size_t(blockIdx.x) * Vp;

  float m = -INFINITY;
  for (int i = threadIdx.x; i < V; i += blockDim.x) m = fmaxf(m, x[i]);
  m = cuda::block_max(m, scratch);

  float sum = 0.0f;
  for (int i = threadIdx.x; i < V; i += blockDim.x) sum += expf(x[i] - m);
  const float inv = 1.0f / cuda::block_sum(sum, scratch);

  for (int i = threadIdx.x; i < Vp; i += blockDim.x) p[i] = i < V ? expf(x[i] - m) * inv : 0.0f;
}

void launch(const SoftmaxForwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  WB_LAUNCH(softmax_block_per_row, rows, l.block_size(), 0, cuda::stream(l), a.probs, a.logits, a.V, a.Vp);
}

}  // namespace

Variant softmax_forward_cuda_2() {
  Variant v = Variant::of(&launch);
  v.summary = "one block per row: block max, block sum, then the output pass (three reads of the row)";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
