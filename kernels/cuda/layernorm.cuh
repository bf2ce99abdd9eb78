#pragma once
// The layernorm arithmetic the float4 variants share (layernorm_forward cuda/6 and
// cuda/7, fused_residual_layernorm_forward cuda/3).
#include "kernels/cuda/device_utils.cuh"

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

}  // namespace wb::cuda::layernorm
