#pragma once
// GPT-2's GELU, tanh approximation, and its derivative, in float and with no libm call,
// so that a loop over them vectorises:
//   gelu(x) = 0.5 x (1 + tanh u) = x sigmoid(2u),  u = sqrt(2/pi) (x + 0.044715 x^3)
// The sigmoid is sigmoid_pair's (device/cpu/simd_math.h), which goes through
// exp(-|2u|) <= 1: very large |x| cannot overflow it (x^3 = inf gives sigmoid 1 or 0,
// so gelu(x) = x or -0). Within about 1.5e-6 relative of the exact GELU on [-4, 4]
// (fast_exp 2e-7, sigmoid_pair 4e-7, and the rounding of u), under gelu_forward's
// tolerance of 1e-5 + 1e-5 |ref|. Also the tanhf form of the float rungs before them.
#include <cmath>
#include <cstdint>

#include "base/math_constants.h"
#include "device/cpu/bf16_lanes.h"
#include "device/cpu/simd_math.h"

namespace wb::cpu {

using math::kGeluCubic;
using math::kGeluScale;

// u(x) = sqrt(2/pi) (x + 0.044715 x^3), the tanh's argument, and its derivative
// u'(x) = sqrt(2/pi) (1 + 3 * 0.044715 x^2).
[[gnu::always_inline]] inline float gelu_u(float x) { return kGeluScale * (x + kGeluCubic * x * x * x); }
[[gnu::always_inline]] inline float gelu_dudx(float x) { return kGeluScale * (1.0f + 3.0f * kGeluCubic * (x * x)); }

// Always inlined, as gelu_grad, so that a loop over it (also one compiled for another
// target, WB_TARGET_X86_64_V3) keeps it in its own SIMD lanes.
[[gnu::always_inline]] inline float gelu(float x) { return x * sigmoid_pair(2.0f * gelu_u(x)).sigmoid; }

// The derivative in the same form: with s = sigmoid(2u) = (1 + tanh u) / 2,
// gelu'(x) = s + 2 x s (1 - s) u'.
[[gnu::always_inline]] inline float gelu_grad(float x) {
  const SigmoidPair s = sigmoid_pair(2.0f * gelu_u(x));
  return s.sigmoid * (1.0f + 2.0f * x * s.complement * gelu_dudx(x));
}

// The GELU and its derivative as the float rungs before vectorising take them
// (gelu_forward and gelu_backward cpu/2): the formula with libm's tanhf, a call per
// element that keeps their loops scalar.
//   gelu(x) = 0.5 x (1 + tanh u),  gelu'(x) = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) u'
inline float gelu_tanhf(float x) { return 0.5f * x * (1.0f + std::tanh(gelu_u(x))); }
inline float gelu_grad_tanhf(float x) {
  const float th = std::tanh(gelu_u(x));
  return 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * gelu_dudx(x);
}

// matmul_gelu_forward_bf16's epilogue on an fp32 sum: pre[i] = bf16(acc[i]) and
// out[i] = bf16(gelu(acc[i])), each rounded once from the same unrounded sum (the GELU
// of the sum, not of the rounded pre), in one SIMD pass by `threads` OpenMP threads.
inline void round_pre_and_gelu(const float* acc, bf16* pre, bf16* out, int64_t n, int threads) {
  uint16_t* pre_bits = bits_of(pre);
  uint16_t* out_bits = bits_of(out);
#pragma omp parallel for simd num_threads(threads) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    pre_bits[i] = round_bits(acc[i]);
    out_bits[i] = round_bits(gelu(acc[i]));
  }
}

}  // namespace wb::cpu
