#pragma once
// The layernorm arithmetic the float4 variants share (layernorm_forward cuda/6 and
// cuda/7, fused_residual_layernorm_forward cuda/3), and the warp-per-row bf16 ones
// (layernorm_forward_bf16 cuda/2, fused_residual_layernorm_forward_bf16 cuda/2).
#include <cuda_bf16.h>

#include "kernels/cuda/device_utils.cuh"
#include "kernels/cuda/packed.cuh"
#include "kernels/ops/layernorm_forward.h"

namespace wb::cuda::layernorm {

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

}  // namespace wb::cuda::layernorm
