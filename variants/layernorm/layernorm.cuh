#pragma once
// The layernorm arithmetic the naive thread-per-row variants share (layernorm_forward
// cuda/1, layernorm_forward_bf16 cuda/1, fused_residual_layernorm_forward_bf16 cuda/1),
// the float4 variants (layernorm_forward cuda/6 and cuda/7,
// fused_residual_layernorm_forward cuda/3), and the warp-per-row bf16 ones
// (layernorm_forward_bf16 cuda/2, fused_residual_layernorm_forward_bf16 cuda/2).
#include <cuda_bf16.h>

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "contract/ops/layernorm_forward.h"
#include "contract/variant.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/packed.cuh"

namespace wb::cuda::layernorm {

// The rest of a naive thread-per-row layernorm once the thread has the sum of its row x
// of C elements (float or __nv_bfloat16, widened): the mean, a second pass for the
// variance around it, a third writing y = (x - mean) * rstd * weight + bias, each output
// rounded once to the storage. Returns (mean, rstd).
template <class Storage>
__device__ inline float2 normalize_row_serial(const Storage* x, float sum, int C, const Storage* weight,
                                              const Storage* bias, Storage* y) {
  const float m = sum / C;
  float var = 0.0f;
  for (int c = 0; c < C; ++c) {
    const float d = widen(x[c]) - m;
    var += d * d;
  }
  const float s = rsqrtf(var / C + kLayernormEps);
  for (int c = 0; c < C; ++c) y[c] = narrow<Storage>((widen(x[c]) - m) * s * widen(weight[c]) + widen(bias[c]));
  return make_float2(m, s);
}

// (x - mean) * rstd * weight + bias, for four channels.
__host__ __device__ inline float4 normalize4(const float4& x, float mean, float rstd, const float4& weight,
                                             const float4& bias) {
  float4 o;
  o.x = (x.x - mean) * rstd * weight.x + bias.x;
  o.y = (x.y - mean) * rstd * weight.y + bias.y;
  o.z = (x.z - mean) * rstd * weight.z + bias.z;
  o.w = (x.w - mean) * rstd * weight.w + bias.w;
  return o;
}

// A row of C = 8 * packs values held by the 32 lanes of a warp in fp32 registers:
// lane l holds packs l, l + 32, ... (kPacks slots, the ones past `packs` unused).
template <int kPacks>
using WarpRow = float[kPacks][8];

// The row's mean and rstd (1 / sqrt(biased variance + eps)): two exact passes over the
// registers, each reduced across the warp in fp32. Every lane gets both.
template <int kPacks>
__device__ inline float2 warp_row_statistics(const WarpRow<kPacks>& r, float sum, int lane, int packs, int C) {
  const float mean = warp_sum(sum) / C;
  float var = 0.0f;
#pragma unroll
  for (int i = 0; i < kPacks; ++i) {
    if (lane + i * kWarpSize < packs) {
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        const float d = r[i][k] - mean;
        var += d * d;
      }
    }
  }
  return make_float2(mean, rsqrtf(warp_sum(var) / C + kLayernormEps));
}

// Writes the normalised row to y, each output rounded once to bf16, 8 per 128-bit
// streaming store, with weight and bias read the same way.
template <int kPacks>
__device__ inline void store_normalized_bf16(const WarpRow<kPacks>& r, float2 stats, const __nv_bfloat16* weight,
                                             const __nv_bfloat16* bias, __nv_bfloat16* y, int lane, int packs) {
#pragma unroll
  for (int i = 0; i < kPacks; ++i) {
    const int p = lane + i * kWarpSize;
    if (p < packs) {
      const Packed128<__nv_bfloat16> w = load128(weight + 8 * p);
      const Packed128<__nv_bfloat16> b = load128(bias + 8 * p);
      Packed128<__nv_bfloat16> o;
#pragma unroll
      for (int k = 0; k < 8; ++k)
        o[k] = __float2bfloat16((r[i][k] - stats.x) * stats.y * __bfloat162float(w[k]) + __bfloat162float(b[k]));
      store128_stream(y + 8 * p, o);
    }
  }
}

// The rest of a warp-per-row bf16 layernorm once every lane holds its packs of the row
// in r and their sum: the statistics, the normalised row rounded into y, and lane 0's
// mean and rstd of the row.
template <int kPacks>
__device__ inline void normalize_warp_row_bf16(const WarpRow<kPacks>& r, float sum, const __nv_bfloat16* weight,
                                               const __nv_bfloat16* bias, __nv_bfloat16* y, float* mean, float* rstd,
                                               int row, int lane, int packs, int C) {
  const float2 stats = warp_row_statistics<kPacks>(r, sum, lane, packs, C);
  store_normalized_bf16<kPacks>(r, stats, weight, bias, y, lane, packs);
  if (lane == 0) {
    mean[row] = stats.x;
    rstd[row] = stats.y;
  }
}

// The widest WarpRow the bf16 rungs instantiate: 8 Packed128 per lane, C <= 2048.
constexpr int kMaxPacksPerLane = 8;
constexpr int kMaxWarpRowC = kMaxPacksPerLane * 8 * kWarpSize;

// Calls launch_with(std::integral_constant<int, kPacks>{}) with the fewest Packed128 per
// lane (1, 2, 4 or kMaxPacksPerLane) that hold a row of C bf16.
template <class F>
void with_packs_per_lane(int C, F&& launch_with) {
  const int per_lane = (C / 8 + kWarpSize - 1) / kWarpSize;
  if (per_lane <= 1) return launch_with(std::integral_constant<int, 1>{});
  if (per_lane <= 2) return launch_with(std::integral_constant<int, 2>{});
  if (per_lane <= 4) return launch_with(std::integral_constant<int, 4>{});
  return launch_with(std::integral_constant<int, kMaxPacksPerLane>{});
}

// A bf16 rung with its rows held as WarpRows (layernorm_forward_bf16 cuda/2,
// fused_residual_layernorm_forward_bf16 cuda/2, layernorm_backward_bf16 cuda/2): any
// block size; whole Packed128 per row, at most kMaxPacksPerLane of them a lane.
template <class Args>
Variant warp_row_bf16_variant(void (*launch)(const Args&, const Launch&), std::string summary) {
  Variant v = Variant::of(launch);
  v.summary = std::move(summary);
  v.params = {block_size_param()};
  v.requirements = {{"C % 8 == 0", [](const Shape& s) { return s.C % 8 == 0; }},
                    {"C <= " + std::to_string(kMaxWarpRowC), [](const Shape& s) { return s.C <= kMaxWarpRowC; }}};
  return v;
}

}  // namespace wb::cuda::layernorm
