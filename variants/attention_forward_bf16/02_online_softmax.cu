// attention_forward_bf16, CUDA variant 2: a warp per query row, online softmax.
//
// Idea: attention_forward cuda/3 on bf16 storage. A block holds consecutive query rows
// of one (b, h), a warp per row; the warp keeps the row's running max m and sum l of
// exp2(s - m) and an unnormalised fp32 accumulator (lane owns channels lane, lane + 32,
// ...), and streams the keys 0..t in chunks of 32: lane j scores key k0 + j against the
// query (held widened and pre-scaled by log2(e)/sqrt(hs) in shared memory, in fp32),
// one warp max and one warp sum update m and l, the accumulator is rescaled, and the 32
// probabilities are broadcast by shuffles while every lane adds p * v for its channels
// (coalesced reads of v). The output is rounded once to bf16; lse stays fp32 (natural
// log). With hs % 8 == 0 and qkv 16-byte aligned, each key row is read as Packed128.
// Why it should beat variant 1: each score is computed once, no score above the diagonal
// is computed, one pass over k and v per row with coalesced reads of v, and half the
// bytes of the fp32 variant.
// Limits: k and v are re-read from cache by every query row (no reuse through shared
// memory), 32 different key rows per load instruction when scoring, head size at most
// 256 (8 channels per lane).
#include <cuda_bf16.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "kernels/cuda/device_utils.cuh"
#include "kernels/cuda/dialect.cuh"
#include "kernels/cuda/packed.cuh"
#include "kernels/cuda/runtime.h"
#include "kernels/ops/attention_forward.h"

namespace wb::variants {
namespace {

using Bf16x8 = cuda::Packed128<__nv_bfloat16>;
constexpr int kMaxPerLane = 8;
constexpr int kMaxHeadSize = kMaxPerLane * cuda::kWarpSize;  // 256
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// kPerLane: output channels per lane, hs <= 32 * kPerLane. packed: hs % 8 == 0 and qkv
// 16-byte aligned, so every head row of k is 16-byte aligned.
template <int kPerLane>
__global__ void attention_bf16_online_rows(__nv_bfloat16* out, float* lse, const __nv_bfloat16* qkv, int B, int T,
                                           int C, int NH, float scale_log2, bool packed) {
  WB_DYNAMIC_SHARED(float4, smem4);  // warps * hs floats
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
  auto head = [&](int t2, int part) { return qkv + (int64_t(b) * T + t2) * 3 * C + part * C + h * hs; };

  float* q = reinterpret_cast<float*>(smem4) + warp * hs;
  const __nv_bfloat16* q_src = head(t, 0);
  for (int d = lane; d < hs; d += cuda::kWarpSize) q[d] = __bfloat162float(q_src[d]) * scale_log2;
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
      const __nv_bfloat16* k = head(key, 1);
      float dot = 0.0f;
      if (packed) {
        for (int d = 0; d < hs; d += 8) {
          const Bf16x8 kk = cuda::load128(k + d);
#pragma unroll
          for (int j = 0; j < 8; ++j) dot += q[d + j] * __bfloat162float(kk[j]);
        }
      } else {
        for (int d = 0; d < hs; ++d) dot += q[d] * __bfloat162float(k[d]);
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
    const __nv_bfloat16* v = head(k0, 2);
    for (int j = 0; j < n; ++j) {
      const float pj = __shfl_sync(cuda::kFullMask, p, j);
      const __nv_bfloat16* vj = v + int64_t(j) * 3 * C;
#pragma unroll
      for (int i = 0; i < kPerLane; ++i) {
        const int d = lane + i * cuda::kWarpSize;
        if (d < hs) acc[i] += pj * __bfloat162float(vj[d]);
      }
    }
  }

  const float inv = 1.0f / l;
  __nv_bfloat16* o = out + (int64_t(b) * T + t) * C + h * hs;
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    const int d = lane + i * cuda::kWarpSize;
    if (d < hs) o[d] = __float2bfloat16(acc[i] * inv);
  }
  if (lane == 0) lse[int64_t(bh) * T + t] = (m + log2f(l)) * kLn2;
}

template <int kPerLane>
void launch_with(const AttentionForwardBf16Args& a, const Launch& l) {
  const int block = l.block_size();
  const int warps = block / cuda::kWarpSize;
  const int hs = a.C / a.NH;
  const int64_t grid = int64_t(a.B) * a.NH * ((a.T + warps - 1) / warps);
  const std::size_t smem = std::size_t(warps) * hs * sizeof(float);
  const float scale_log2 = kLog2e / std::sqrt(float(hs));
  WB_LAUNCH(attention_bf16_online_rows<kPerLane>, unsigned(grid), block, smem, cuda::stream(l), cuda::as_cuda(a.out),
            a.lse, cuda::as_cuda(a.qkv), a.B, a.T, a.C, a.NH, scale_log2, hs % 8 == 0 && cuda::aligned16(a.qkv));
}

void launch(const AttentionForwardBf16Args& a, const Launch& l) {
  const int per_lane = (a.C / a.NH + cuda::kWarpSize - 1) / cuda::kWarpSize;
  if (per_lane <= 1) return launch_with<1>(a, l);
  if (per_lane <= 2) return launch_with<2>(a, l);
  if (per_lane <= 4) return launch_with<4>(a, l);
  if (per_lane <= kMaxPerLane) return launch_with<kMaxPerLane>(a, l);
  throw Unsupported("attention_forward_bf16 cuda/2 needs C / NH <= " + std::to_string(kMaxHeadSize));
}

}  // namespace

Variant attention_forward_bf16_cuda_2() {
  Variant v = Variant::of(&launch);
  v.summary = "warp per query row, keys streamed in chunks of 32, online max/sum in log2 units, fp32 accumulator";
  v.params = {block_size_param()};
  v.requirements = {{"C / NH <= " + std::to_string(kMaxHeadSize),
                     [](const Shape& s) { return s.NH > 0 && s.C / s.NH <= kMaxHeadSize; }}};
  return v;
}

}  // namespace wb::variants
