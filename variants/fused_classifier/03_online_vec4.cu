// fused_classifier, CUDA variant 3: variant 2 with float4 accesses.
//
// Idea: as variant 2 -- one block per row, a single read for the online
// (max, sum), the loss from the target's logit read before the block-wide merge,
// then a second read that writes the gradients in place -- but the row moves in
// float4 chunks: four 128-bit loads per thread in flight per step, at most one
// rescale of the running sum per chunk, 128-bit stores. The chunk that straddles V
// is masked (its padding columns take no part in the softmax and are written as 0);
// chunks wholly in the padding are written as zeros without being read. The first
// read uses ordinary loads so that the row stays in L2 for the second; the second
// uses streaming loads and stores (last use of the logits, gradients written once).
// Why it should beat variant 2: a quarter of the memory instructions for the same
// bytes, and wide transactions that keep the memory system busy with fewer threads;
// with the second read served by L2, DRAM sees one read and one write of the row --
// the op's minimum.
// Limits: Vp % 4 == 0 (16-byte aligned rows; V can be anything). The second read hits
// L2 only while the rows in flight, one per resident block, 196 KiB each at
// Vp = 50304, fit in it: large blocks (512, 1024) keep few rows in flight.
#include <cstdint>
#include <stdexcept>

#include "contract/ops/fused_classifier.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "variants/softmax/online_softmax.cuh"

namespace wb::variants {
namespace {

constexpr int kBatch = 4;  // float4 loads in flight per thread and step

// (p - onehot) * dloss for one column; 0 for padding columns.
__device__ inline float gradient(float x, int col, float m, float inv, int target, int V, float dloss) {
  if (col >= V) return 0.0f;
  return (expf(x - m) * inv - (col == target ? 1.0f : 0.0f)) * dloss;
}

__global__ void classifier_online_vec4(float* logits, float* losses, const int32_t* targets, float dloss, int V,
                                       int Vp) {
  WB_SHARED(float, scratch, [2 * cuda::kWarpSize]);
  const int row = blockIdx.x;
  float* x = logits + size_t(row) * Vp;
  const int target = targets[row];
  // Read before the merge below, whose __syncthreads orders it before any overwrite.
  const float target_logit = threadIdx.x == 0 ? x[target] : 0.0f;
  const int stride = blockDim.x;
  const int real_vecs = (V + 3) / 4;  // chunks holding at least one of the first V columns
  const int all_vecs = Vp / 4;

  const cuda::softmax::MaxSum acc =
      cuda::softmax::block_merge(cuda::softmax::strided_max_sum4<kBatch>(x, V, threadIdx.x, stride), scratch);
  const float m = acc.max;
  const float inv = 1.0f / acc.sum;
  if (threadIdx.x == 0) losses[row] = m + logf(acc.sum) - target_logit;

  for (int base = threadIdx.x; base < all_vecs; base += kBatch * stride) {
    float4 q[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const int v = base + u * stride;
      q[u] = v < real_vecs ? cuda::load4_stream(x + 4 * v) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const int v = base + u * stride;
      if (v < all_vecs) {
        const int col = 4 * v;
        float4 g;
        g.x = gradient(q[u].x, col + 0, m, inv, target, V, dloss);
        g.y = gradient(q[u].y, col + 1, m, inv, target, V, dloss);
        g.z = gradient(q[u].z, col + 2, m, inv, target, V, dloss);
        g.w = gradient(q[u].w, col + 3, m, inv, target, V, dloss);
        cuda::store4_stream(x + col, g);
      }
    }
  }
}

void launch(const FusedClassifierArgs& a, const Launch& l) {
  cuda::require_aligned16("fused_classifier cuda/3", {a.logits});
  const int rows = a.B * a.T;
  WB_LAUNCH(classifier_online_vec4, rows, l.block_size(), 0, cuda::stream(l), a.logits, a.losses, a.targets, a.dloss,
            a.V, a.Vp);
}

}  // namespace

Variant fused_classifier_cuda_3() {
  Variant v = Variant::of(&launch);
  v.summary = "variant 2 with float4 loads and streaming stores; masks the chunk straddling V, zeros the padding";
  v.params = {block_size_param()};
  v.requirements = {{"Vp % 4 == 0", [](const Shape& s) { return s.Vp % 4 == 0; }}};
  return v;
}

}  // namespace wb::variants
