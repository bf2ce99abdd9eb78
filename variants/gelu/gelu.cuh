#pragma once
// The GELU of the gelu variants (fp32 and bf16 storage alike), tanh approximation, in
// float, and its derivative:
//   u = s (x + k x^3),  s = sqrt(2/pi),  k = 0.044715
//   gelu(x) = x/2 (1 + tanh u)
//   gelu'(x) = (1 + tanh u)/2 + x/2 (1 - tanh^2 u) s (1 + 3 k x^2)
// tanhf, not the tanh.approx instruction: the fp32 tolerance (1e-5) is tighter than
// the hardware approximation's error (about 1e-3 relative).
#include <cuda_runtime.h>

#include "base/math_constants.h"

namespace wb::cuda::gelu {

using math::kGeluCubic;
using math::kGeluScale;

__device__ inline float gelu(float x) {
  const float u = kGeluScale * (x + kGeluCubic * x * x * x);
  return 0.5f * x * (1.0f + tanhf(u));
}

__device__ inline float gelu_grad(float x) {
  const float x2 = x * x;
  const float th = tanhf(kGeluScale * (x + kGeluCubic * x2 * x));
  const float dudx = kGeluScale * (1.0f + 3.0f * kGeluCubic * x2);
  return 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * dudx;
}

}  // namespace wb::cuda::gelu
