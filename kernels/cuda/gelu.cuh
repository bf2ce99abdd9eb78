#pragma once
// The GELU of the gelu_forward variants, tanh approximation, in float:
//   gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
// tanhf, not the tanh.approx instruction: the fp32 tolerance (1e-5) is tighter than
// the hardware approximation's error.
#include <cuda_runtime.h>

namespace wb::cuda::gelu {

constexpr float kScale = 0.7978845608028654f;  // sqrt(2/pi)
constexpr float kCubic = 0.044715f;

__device__ inline float gelu(float x) {
  const float u = kScale * (x + kCubic * x * x * x);
  return 0.5f * x * (1.0f + tanhf(u));
}

}  // namespace wb::cuda::gelu
