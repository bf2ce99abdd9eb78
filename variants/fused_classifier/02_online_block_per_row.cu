// fused_classifier, CUDA variant 2: one block per row, online softmax, one kernel.
//
// Idea: the threads of a block stride over one row. A single read of the first V
// logits keeps a running (max, sum of exp(x - max)) per thread -- a new maximum
// rescales the sum once -- and the pairs are merged across the block (shuffles, then
// one warp over the per-warp pairs). Thread 0 has read the target's logit before that
// merge, so it can write the loss, max + log(sum) - logits[target], although other
// threads overwrite the row right after the merge. The second read turns each logit
// into its gradient, (exp(x - max) / sum - [i == target]) * dloss, in place, and
// writes 0 over the padding V..Vp. Loads are issued four at a time.
// Why it should beat variant 1: one launch instead of three, two reads of the row
// instead of three (the second one from L2 when few rows are in flight), and the
// statistics never leave the chip.
// Limits: scalar 32-bit accesses; the second read hits L2 only while
// (rows in flight) x Vp x 4 bytes fits in it (see fused_classifier cuda/3).
#include "contract/ops/fused_classifier.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "variants/softmax/online_softmax.cuh"

namespace wb::variants {
namespace {

constexpr int kBatch = 4;  // loads in flight per thread and step

__global__ void classifier_online_block(float* logits, float* losses, const int32_t* targets, float dloss, int V,
                                        int Vp) {
  WB_SHARED(float, scratch, [2 * cuda::kWarpSize]);
  const int row = blockIdx.x;
  float* x = logits + size_t(row) * Vp;
  const int target = targets[row];
  // Read before the merge below, whose __syncthreads orders it before any overwrite.
  const float target_logit = threadIdx.x == 0 ? x[target] : 0.0f;
  const int stride = blockDim.x;

  const cuda::softmax::MaxSum acc =
      cuda::softmax::block_merge(cuda::softmax::strided_max_sum<kBatch>(x, V, threadIdx.x, stride), scratch);
  const float m = acc.max;
  const float inv = 1.0f / acc.sum;
  if (threadIdx.x == 0) losses[row] = m + logf(acc.sum) - target_logit;

  for (int base = threadIdx.x; base < Vp; base += kBatch * stride) {
    float q[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const int i = base + u * stride;
      q[u] = i < V ? x[i] : 0.0f;
    }
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const int i = base + u * stride;
      if (i < V) {
        x[i] = (expf(q[u] - m) * inv - (i == target ? 1.0f : 0.0f)) * dloss;
      } else if (i < Vp) {
        x[i] = 0.0f;
      }
    }
  }
}

void launch(const FusedClassifierArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  WB_LAUNCH(classifier_online_block, rows, l.block_size(), 0, cuda::stream(l), a.logits, a.losses, a.targets, a.dloss,
            a.V, a.Vp);
}

}  // namespace

Variant fused_classifier_cuda_2() {
  Variant v = Variant::of(&launch);
  v.summary = "one kernel, block per row: online max and sum in one read, loss, then dlogits in place";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
