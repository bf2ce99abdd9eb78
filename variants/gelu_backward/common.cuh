#pragma once
// gelu_backward: the derivative of the tanh-approximated GELU, shared by the variants.
//   u = s (x + k x^3),  gelu(x) = x/2 (1 + tanh u)
//   gelu'(x) = (1 + tanh u)/2 + x/2 (1 - tanh^2 u) s (1 + 3 k x^2)
// tanhf (not the tanh.approx instruction): its ~1e-3 relative error would break the
// fp32 tolerance.
#include <cuda_runtime.h>

namespace wb::variants::gelu_backward_detail {

constexpr float kScale = 0.7978845608028654f;  // sqrt(2 / pi)
constexpr float kCubic = 0.044715f;

__device__ inline float gelu_grad(float x) {
  const float x2 = x * x;
  const float th = tanhf(kScale * (x + kCubic * x2 * x));
  const float dudx = kScale * (1.0f + 3.0f * kCubic * x2);
  return 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * dudx;
}

}  // namespace wb::variants::gelu_backward_detail
