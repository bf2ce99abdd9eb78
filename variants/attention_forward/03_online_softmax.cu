// attention_forward, CUDA variant 3: scale, causal mask and online softmax fused.
//
// Idea: one kernel, a warp per query row, a block per group of consecutive rows of one
// (b, h). The warp keeps its row's running max m, running sum l of exp(s - m) and an
// unnormalised output accumulator (each lane owns channels lane, lane+32, ...), and
// streams the keys 0..t in chunks of 32: lane j scores key k0+j against the query (held
// scaled in shared memory), one warp max and one warp sum update m and l, the
// accumulator is rescaled by exp(m_old - m_new), and the 32 probabilities are broadcast
// by shuffles while every lane adds p * v for its channels (coalesced reads of v).
// Scores are kept in log2 units (q pre-multiplied by log2(e)/sqrt(hs)) so that every
// exponential is one exp2f; lse is converted back to the natural log at the end.
// Why it should beat variant 2: no T x T workspace and no traffic for it, no score
// above the diagonal is ever computed, and one launch instead of five. Warps of a
// block read the same keys and values at about the same time, so k and v mostly come
// from L1/L2.
// Limits: k and v are re-read from cache by every query row (no reuse through shared
// memory or registers: that is variant 4); scoring reads 32 different key rows per load
// instruction (uncoalesced, hs/4 float4 loads per lane and chunk); 2 warp reductions and
// up to 32 shuffles per chunk. Head size at most 256 (8 channels per lane).
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/cuda/device_utils.cuh"
#include "kernels/cuda/dialect.cuh"
#include "kernels/cuda/runtime.h"
#include "kernels/ops/attention_forward.h"
#include "variants/attention_forward/common.cuh"

namespace wb::variants {
namespace {

using attention::out_row;
using attention::qkv_row;

constexpr int kMaxPerLane = 8;
constexpr int kMaxHeadSize = kMaxPerLane * cuda::kWarpSize;  // 256

// kPerLane: output channels per lane, hs <= 32 * kPerLane. vec: hs % 4 == 0 and qkv 16-byte aligned, so every
// head row of q, k and v is 16-byte aligned and float4 loads apply.
template <int kPerLane>
__global__ void attention_online_rows(float* out, float* lse, const float* qkv, int B, int T, int C, int NH,
                                      float scale_log2, bool vec) {
  WB_DYNAMIC_SHARED(float4, smem4);  // float4 for 16-byte alignment; warps * hs floats
  const int lane = threadIdx.x % cuda::kWarpSize;
  const int warp = threadIdx.x / cuda::kWarpSize;
  const int warps = blockDim.x / cuda::kWarpSize;
  const int hs = C / NH;
  const int BH = B * NH;
  const int tiles = (T + warps - 1) / warps;
  const int tile = tiles - 1 - int(blockIdx.x / BH);  // the longest rows are started first
  const int bh = int(blockIdx.x % BH);
  const int t = tile * warps + warp;
  if (t >= T) return;  // uniform per warp; no block-wide barrier follows
  const int b = bh / NH, h = bh % NH;

  float* q = reinterpret_cast<float*>(smem4) + warp * hs;
  const float* q_src = qkv + qkv_row(b, t, T, C) + h * hs;
  for (int d = lane; d < hs; d += cuda::kWarpSize) q[d] = q_src[d] * scale_log2;
  __syncwarp();

  float acc[kPerLane];
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) acc[i] = 0.0f;
  float m = -INFINITY, l = 0.0f;

  for (int k0 = 0; k0 <= t; k0 += cuda::kWarpSize) {
    const int key = k0 + lane;
    const bool valid = key <= t;  // key <= t < T: in bounds
    float s = -INFINITY;
    if (valid) {
      const float* k = qkv + qkv_row(b, key, T, C) + C + h * hs;
      float dot = 0.0f;
      if (vec) {
        for (int d = 0; d < hs; d += 4) {
          const float4 kk = cuda::load4(k + d);
          const float4 qq = cuda::load4(q + d);
          dot += (qq.x * kk.x + qq.y * kk.y) + (qq.z * kk.z + qq.w * kk.w);
        }
      } else {
        for (int d = 0; d < hs; ++d) dot += q[d] * k[d];
      }
      s = dot;
    }
    const float m_new = fmaxf(m, cuda::warp_max(s));  // finite: key k0 <= t is valid
    const float p = valid ? exp2f(s - m_new) : 0.0f;
    const float corr = exp2f(m - m_new);  // 0 on the first chunk (m = -inf)
    l = l * corr + cuda::warp_sum(p);
    m = m_new;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) acc[i] *= corr;

    const int n = min(cuda::kWarpSize, t - k0 + 1);  // uniform across the warp
    const float* v = qkv + qkv_row(b, k0, T, C) + 2 * C + h * hs;
    for (int j = 0; j < n; ++j) {
      const float pj = __shfl_sync(cuda::kFullMask, p, j);
      const float* vj = v + int64_t(j) * 3 * C;
#pragma unroll
      for (int i = 0; i < kPerLane; ++i) {
        const int d = lane + i * cuda::kWarpSize;
        if (d < hs) acc[i] += pj * vj[d];
      }
    }
  }

  const float inv = 1.0f / l;
  float* o = out + out_row(b, t, T, C) + h * hs;
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    const int d = lane + i * cuda::kWarpSize;
    if (d < hs) o[d] = acc[i] * inv;
  }
  if (lane == 0) lse[int64_t(bh) * T + t] = (m + log2f(l)) * attention::kLn2;
}

template <int kPerLane>
void launch_with(const AttentionForwardArgs& a, const Launch& l) {
  const int block = l.block_size();
  const int warps = block / cuda::kWarpSize;
  const int hs = attention::head_size(a);
  const int64_t grid = int64_t(a.B) * a.NH * ((a.T + warps - 1) / warps);
  const std::size_t smem = std::size_t(warps) * hs * sizeof(float);
  const float scale_log2 = attention::kLog2e / std::sqrt(float(hs));
  WB_LAUNCH(attention_online_rows<kPerLane>, unsigned(grid), block, smem, cuda::stream(l), a.out, a.lse, a.qkv, a.B,
            a.T, a.C, a.NH, scale_log2, hs % 4 == 0 && cuda::aligned16(a.qkv));
}

void launch(const AttentionForwardArgs& a, const Launch& l) {
  const int per_lane = (attention::head_size(a) + cuda::kWarpSize - 1) / cuda::kWarpSize;
  if (per_lane <= 1) return launch_with<1>(a, l);
  if (per_lane <= 2) return launch_with<2>(a, l);
  if (per_lane <= 4) return launch_with<4>(a, l);
  if (per_lane <= kMaxPerLane) return launch_with<kMaxPerLane>(a, l);
  throw Unsupported("attention_forward cuda/3 needs C / NH <= " + std::to_string(kMaxHeadSize));
}

}  // namespace

Variant attention_forward_cuda_3() {
  Variant v = Variant::of(&launch);
  v.summary = "warp per query row, keys streamed in chunks of 32, online max/sum in log2 units, one fused kernel";
  v.params = {block_size_param()};
  v.requirements = {{"C / NH <= " + std::to_string(kMaxHeadSize),
                     [](const Shape& s) { return s.NH > 0 && s.C / s.NH <= kMaxHeadSize; }}};
  return v;
}

}  // namespace wb::variants
