#pragma once
// The warp-per-query-row attention forward with an online softmax of
// attention_forward cuda/3 (fp32 storage) and attention_forward_bf16 cuda/2 (bf16
// storage), templated on the storage of qkv and out (float or __nv_bfloat16); the
// query copy in shared memory, the running max and sum, the accumulator and lse are
// fp32 in both, and the output is rounded to its storage once.
//
// A block holds consecutive query rows of one (b, h), a warp per row (the longest rows
// are started first). The warp keeps its row's running max m, running sum l of
// exp2(s - m) and an unnormalised accumulator (each lane owns channels lane, lane + 32,
// ...), and streams the keys 0..t in chunks of 32: lane j scores key k0 + j against the
// query (held widened and pre-scaled by log2(e)/sqrt(hs) in shared memory), one warp max
// and one warp sum update m and l, the accumulator is rescaled by exp2(m_old - m_new),
// and the 32 probabilities are broadcast by shuffles while every lane adds p * v for its
// channels (coalesced reads of v). lse is converted back to the natural log at the end.
// With hs a multiple of 16 bytes of storage and qkv 16-byte aligned, every head row is
// 16-byte aligned and each key row is read 16 bytes per load (score_packed).
// Requirement: hs <= kMaxHeadSize (8 channels per lane).
//
// The kernel sits in an anonymous namespace: every file that includes this header gets
// its own copy and uses it.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "base/errors.h"
#include "base/math_constants.h"
#include "contract/variant.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"

namespace wb::cuda::attention_online_rows {
namespace {

constexpr int kMaxPerLane = 8;
constexpr int kMaxHeadSize = kMaxPerLane * kWarpSize;  // 256

// The score of one key row k against the widened query q, 16 bytes of k per load. The
// fp32 rung adds the four products of a float4 in pairs, the bf16 rung adds the eight
// widened products of a Packed128 in order: each keeps its own order of additions.
__device__ inline float score_packed(const float* q, const float* k, int hs) {
  float dot = 0.0f;
  for (int d = 0; d < hs; d += 4) {
    const float4 kk = load4(k + d);
    const float4 qq = load4(q + d);
    dot += (qq.x * kk.x + qq.y * kk.y) + (qq.z * kk.z + qq.w * kk.w);
  }
  return dot;
}

__device__ inline float score_packed(const float* q, const __nv_bfloat16* k, int hs) {
  float dot = 0.0f;
  for (int d = 0; d < hs; d += 8) {
    const Packed128<__nv_bfloat16> kk = load128(k + d);
#pragma unroll
    for (int j = 0; j < 8; ++j) dot += q[d + j] * __bfloat162float(kk[j]);
  }
  return dot;
}

// kPerLane: output channels per lane, hs <= 32 * kPerLane. packed: every head row of qkv
// is 16-byte aligned (hs % (16 / sizeof(Storage)) == 0 and qkv 16-byte aligned).
template <class Storage, int kPerLane>
__global__ void online_rows(Storage* out, float* lse, const Storage* qkv, int B, int T, int C, int NH, float scale_log2,
                            bool packed) {
  WB_DYNAMIC_SHARED(float4, smem4);  // float4 for 16-byte alignment; warps * hs floats
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const int warps = blockDim.x / kWarpSize;
  const int hs = C / NH;
  const int BH = B * NH;
  const int tiles = (T + warps - 1) / warps;
  const int tile = tiles - 1 - int(blockIdx.x / BH);  // the longest rows are started first
  const int bh = int(blockIdx.x % BH);
  const int t = tile * warps + warp;
  if (t >= T) return;  // uniform per warp; no block-wide barrier follows
  const int b = bh / NH, h = bh % NH;
  // Head h of part 0 (q), 1 (k) or 2 (v) of token (b, t2): qkv is (B, T, 3C).
  auto head = [&](int t2, int part) { return qkv + (int64_t(b) * T + t2) * 3 * C + part * C + h * hs; };

  float* q = reinterpret_cast<float*>(smem4) + warp * hs;
  const Storage* q_src = head(t, 0);
  for (int d = lane; d < hs; d += kWarpSize) q[d] = widen(q_src[d]) * scale_log2;
  __syncwarp();

  float acc[kPerLane];
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) acc[i] = 0.0f;
  float m = -INFINITY, l = 0.0f;

  for (int k0 = 0; k0 <= t; k0 += kWarpSize) {
    const int key = k0 + lane;
    const bool valid = key <= t;  // key <= t < T: in bounds
    float s = -INFINITY;
    if (valid) {
      const Storage* k = head(key, 1);
      if (packed) {
        s = score_packed(q, k, hs);
      } else {
        float dot = 0.0f;
        for (int d = 0; d < hs; ++d) dot += q[d] * widen(k[d]);
        s = dot;
      }
    }
    const float m_new = fmaxf(m, warp_max(s));  // finite: key k0 <= t is valid
    const float p = valid ? exp2f(s - m_new) : 0.0f;
    const float corr = exp2f(m - m_new);  // 0 on the first chunk (m = -inf)
    l = l * corr + warp_sum(p);
    m = m_new;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) acc[i] *= corr;

    const int n = min(kWarpSize, t - k0 + 1);  // uniform across the warp
    const Storage* v = head(k0, 2);
    for (int j = 0; j < n; ++j) {
      const float pj = __shfl_sync(kFullMask, p, j);
      const Storage* vj = v + int64_t(j) * 3 * C;
#pragma unroll
      for (int i = 0; i < kPerLane; ++i) {
        const int d = lane + i * kWarpSize;
        if (d < hs) acc[i] += pj * widen(vj[d]);
      }
    }
  }

  const float inv = 1.0f / l;
  Storage* o = out + (int64_t(b) * T + t) * C + h * hs;
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    const int d = lane + i * kWarpSize;
    if (d < hs) o[d] = narrow<Storage>(acc[i] * inv);
  }
  if (lane == 0) lse[int64_t(bh) * T + t] = (m + log2f(l)) * math::kLn2;
}

template <class Storage, int kPerLane>
void launch_with(Storage* out, float* lse, const Storage* qkv, int B, int T, int C, int NH, const Launch& l) {
  const int block = l.block_size();
  const int warps = block / kWarpSize;
  const int hs = C / NH;
  const int64_t grid = int64_t(B) * NH * ((T + warps - 1) / warps);
  const std::size_t smem = std::size_t(warps) * hs * sizeof(float);
  const float scale_log2 = math::kLog2e / std::sqrt(float(hs));
  const bool packed = hs % int(16 / sizeof(Storage)) == 0 && aligned16(qkv);
  WB_LAUNCH(online_rows<Storage, kPerLane>, unsigned(grid), block, smem, stream(l), out, lse, qkv, B, T, C, NH,
            scale_log2, packed);
}

// Picks the fewest channels per lane that hold the head; `who` ("attention_forward
// cuda/3") names the variant in the Unsupported message of a head larger than kMaxHeadSize.
template <class Storage>
void launch(Storage* out, float* lse, const Storage* qkv, int B, int T, int C, int NH, const Launch& l,
            const char* who) {
  const int per_lane = (C / NH + kWarpSize - 1) / kWarpSize;
  if (per_lane <= 1) return launch_with<Storage, 1>(out, lse, qkv, B, T, C, NH, l);
  if (per_lane <= 2) return launch_with<Storage, 2>(out, lse, qkv, B, T, C, NH, l);
  if (per_lane <= 4) return launch_with<Storage, 4>(out, lse, qkv, B, T, C, NH, l);
  if (per_lane <= kMaxPerLane) return launch_with<Storage, kMaxPerLane>(out, lse, qkv, B, T, C, NH, l);
  throw Unsupported(std::string(who) + " needs C / NH <= " + std::to_string(kMaxHeadSize));
}

// A rung on this kernel (attention_forward cuda/3 and its bf16 twin): any block size,
// heads of at most kMaxHeadSize channels.
template <class Args>
Variant variant(void (*launch)(const Args&, const Launch&), std::string summary) {
  Variant v = Variant::of(launch);
  v.summary = std::move(summary);
  v.params = {block_size_param()};
  v.requirements = {{"C / NH <= " + std::to_string(kMaxHeadSize),
                     [](const Shape& s) { return s.NH > 0 && s.C / s.NH <= kMaxHeadSize; }}};
  return v;
}

}  // namespace
}  // namespace wb::cuda::attention_online_rows
