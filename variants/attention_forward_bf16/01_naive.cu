// attention_forward_bf16, CUDA variant 1: the naive port, one thread per query row.
//
// Idea: attention_forward cuda/1 on bf16 storage: one thread per (b, h, t) walks the
// keys 0..t three times -- the maximum scaled score, the sum of exponentials (lse =
// max + log(sum)), then the probabilities times the values -- widening every bf16 of
// q, k and v, with the output row accumulated in fp32 registers (in chunks of 8
// channels) and each output rounded once; lse stays fp32.
// Why: the baseline of the bf16 ladder; plainly correct.
// Limits: every score is computed three times per chunk of 8 channels, nothing
// coalesces or is shared, and the causal triangle leaves the threads of a warp with very
// different amounts of work.
#include <cuda_bf16.h>

#include <cmath>
#include <cstdint>

#include "contract/ops/attention_forward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

constexpr int kChunk = 8;  // output channels accumulated in registers at a time

__device__ float scaled_score_bf16(const __nv_bfloat16* q, const __nv_bfloat16* k, int hs, float scale) {
  float dot = 0.0f;
  for (int i = 0; i < hs; ++i) dot += __bfloat162float(q[i]) * __bfloat162float(k[i]);
  return dot * scale;
}

// Thread index -> (b, h, t) with t fastest, which is also the layout of lse.
__global__ void attention_bf16_thread_per_row(__nv_bfloat16* out, float* lse, const __nv_bfloat16* qkv, int B, int T,
                                              int C, int NH) {
  const int64_t rows = int64_t(B) * NH * T;
  const int64_t row = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const int t = int(row % T);
  const int bh = int(row / T);
  const int h = bh % NH;
  const int b = bh / NH;
  const int hs = C / NH;
  const float scale = 1.0f / sqrtf(float(hs));
  auto head = [&](int t2, int part) { return qkv + (int64_t(b) * T + t2) * 3 * C + part * C + h * hs; };

  const __nv_bfloat16* q = head(t, 0);
  float max = -INFINITY;
  for (int t2 = 0; t2 <= t; ++t2) max = fmaxf(max, scaled_score_bf16(q, head(t2, 1), hs, scale));
  float sum = 0.0f;
  for (int t2 = 0; t2 <= t; ++t2) sum += expf(scaled_score_bf16(q, head(t2, 1), hs, scale) - max);
  const float l = max + logf(sum);

  __nv_bfloat16* o = out + (int64_t(b) * T + t) * C + h * hs;
  for (int d0 = 0; d0 < hs; d0 += kChunk) {
    float acc[kChunk] = {};
    for (int t2 = 0; t2 <= t; ++t2) {
      const float p = expf(scaled_score_bf16(q, head(t2, 1), hs, scale) - l);
      const __nv_bfloat16* v = head(t2, 2);
      for (int i = 0; i < kChunk && d0 + i < hs; ++i) acc[i] += p * __bfloat162float(v[d0 + i]);
    }
    for (int i = 0; i < kChunk && d0 + i < hs; ++i) o[d0 + i] = __float2bfloat16(acc[i]);
  }
  lse[row] = l;
}

void launch(const AttentionForwardBf16Args& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.NH * a.T;
  const int block = l.block_size();
  WB_LAUNCH(attention_bf16_thread_per_row, cuda::grid_for(rows, block), block, 0, cuda::stream(l),
            cuda::as_cuda(a.out), a.lse, cuda::as_cuda(a.qkv), a.B, a.T, a.C, a.NH);
}

}  // namespace

Variant attention_forward_bf16_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one thread per (b, h, t) row: max, sum, then p*v in fp32 registers 8 channels at a time, rounded once";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
