// fused_classifier_bf16, CUDA variant 1: the naive port, one block per row, online
// softmax.
//
// Idea: fused_classifier cuda/2 on bf16 logits: the block's threads stride over the
// row, widening each logit and building the online (max, sum of exp) in fp32
// (variants/softmax/online_softmax.cuh), merged across the block; thread 0 writes the fp32
// loss from the target's logit (read before the merge, whose barrier orders it before
// any overwrite); then a second pass writes each dlogit, rounded once to bf16, over its
// logit, and zeros over the padding.
// Why: the baseline of the bf16 ladder, already in the one-read-one-write shape.
// Limits: 16-bit accesses; the second read hits L2 only while the rows in flight fit.
#include <cuda_bf16.h>

#include <cstdint>

#include "contract/ops/fused_classifier.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"
#include "variants/softmax/online_softmax.cuh"

namespace wb::variants {
namespace {

constexpr int kBatch = 4;  // loads in flight per thread and step

__global__ void classifier_bf16_online_block(__nv_bfloat16* logits, float* losses, const int32_t* targets,
                                             float dloss, int V, int Vp) {
  WB_SHARED(float, scratch, [2 * cuda::kWarpSize]);
  const int row = blockIdx.x;
  __nv_bfloat16* x = logits + size_t(row) * Vp;
  const int target = targets[row];
  // Read before the merge below, whose __syncthreads orders it before any overwrite.
  const float target_logit = threadIdx.x == 0 ? __bfloat162float(x[target]) : 0.0f;
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
      q[u] = i < V ? __bfloat162float(x[i]) : 0.0f;
    }
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const int i = base + u * stride;
      if (i < V) {
        x[i] = __float2bfloat16((expf(q[u] - m) * inv - (i == target ? 1.0f : 0.0f)) * dloss);
      } else if (i < Vp) {
        x[i] = __float2bfloat16(0.0f);
      }
    }
  }
}

void launch(const FusedClassifierBf16Args& a, const Launch& l) {
  const int rows = a.B * a.T;
  WB_LAUNCH(classifier_bf16_online_block, rows, l.block_size(), 0, cuda::stream(l), cuda::as_cuda(a.logits), a.losses,
            a.targets, a.dloss, a.V, a.Vp);
}

}  // namespace

Variant fused_classifier_bf16_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "block per row: online fp32 max and sum over the widened row, fp32 loss, dlogits rounded once in place";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
