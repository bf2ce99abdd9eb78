// attention_forward, CUDA variant 1: the naive port of the CPU loop.
//
// Idea: one thread per (b, h, t) query row walks the keys 0..t three times, as the
// reference walks its row of scores: once for the maximum scaled score, once for the
// sum of exponentials (lse = max + log(sum)), once to accumulate the probabilities
// times the values straight into out. Scores are recomputed in every pass instead of
// being stored, so no workspace is needed.
// Why: the baseline the ladder starts from; plainly correct.
// Limits: every score is computed three times, each thread reads whole rows of k and v
// that neighbouring threads read at other times (nothing coalesces, nothing is shared),
// out is accumulated in global memory, and the causal triangle leaves the threads of a
// warp with very different amounts of work (row t does t + 1 keys).
#include <cmath>

#include "contract/ops/attention_forward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "variants/attention/head_row.cuh"
#include "variants/attention_forward/common.cuh"

namespace wb::variants {
namespace {

using attention::out_row;
using attention::qkv_row;

__device__ float scaled_score(const float* q, const float* k, int hs, float scale) {
  float dot = 0.0f;
  for (int i = 0; i < hs; ++i) dot += q[i] * k[i];
  return dot * scale;
}

// Thread index -> (b, h, t) with t fastest, which is also the layout of lse.
__global__ void attention_thread_per_row(float* out, float* lse, const float* qkv, int B, int T, int C, int NH) {
  const int64_t row = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= int64_t(B) * NH * T) return;
  const auto [b, bh, h, t, hs, C3] = cuda::attention_rows::head_row<int>(row, T, C, NH);
  const float scale = 1.0f / sqrtf(float(hs));

  const float* q = qkv + qkv_row(b, t, T, C) + h * hs;
  float max = -INFINITY;
  for (int t2 = 0; t2 <= t; ++t2) max = fmaxf(max, scaled_score(q, qkv + qkv_row(b, t2, T, C) + C + h * hs, hs, scale));
  float sum = 0.0f;
  for (int t2 = 0; t2 <= t; ++t2)
    sum += expf(scaled_score(q, qkv + qkv_row(b, t2, T, C) + C + h * hs, hs, scale) - max);
  const float l = max + logf(sum);

  float* o = out + out_row(b, t, T, C) + h * hs;
  for (int i = 0; i < hs; ++i) o[i] = 0.0f;
  for (int t2 = 0; t2 <= t; ++t2) {
    const float* kv = qkv + qkv_row(b, t2, T, C) + h * hs;
    const float p = expf(scaled_score(q, kv + C, hs, scale) - l);
    const float* v = kv + 2 * C;
    for (int i = 0; i < hs; ++i) o[i] += p * v[i];
  }
  lse[row] = l;
}

void launch(const AttentionForwardArgs& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.NH * a.T;
  const int block = l.block_size();
  WB_LAUNCH(attention_thread_per_row, cuda::grid_for(rows, block), block, 0, cuda::stream(l), a.out, a.lse, a.qkv, a.B,
            a.T, a.C, a.NH);
}

}  // namespace

Variant attention_forward_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one thread per (b, h, t) row, three passes over the keys (max, sum, p*v into out), scores recomputed";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
