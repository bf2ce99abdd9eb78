#pragma once
// The second half of a layernorm row, shared by the SIMD rungs of layernorm_forward and
// fused_residual_layernorm_forward: once the row's mean is known, its squared
// deviations give rstd, and the row is normalised, scaled and shifted.
#include <cmath>
#include <cstdint>

#include "kernels/ops/layernorm_forward.h"

namespace wb::cpu {

// 1 / sqrt(variance + eps) of the C floats of a row in L1 with this mean: the squared
// deviations as a SIMD reduction (a second pass: no cancellation of E[x^2] - mean^2).
// Always inlined, as the functions below that use it, so that its loop compiles in the
// caller.
[[gnu::always_inline]] inline float row_rstd(const float* __restrict x, float mean, int64_t C) {
  float squares = 0.0f;
#pragma omp simd reduction(+ : squares)
  for (int64_t c = 0; c < C; ++c) {
    const float d = x[c] - mean;
    squares += d * d;
  }
  return 1.0f / std::sqrt(squares / float(C) + kLayernormEps);
}

// out[c] = (x[c] - mean) * rstd * weight[c] + bias[c] over the C elements of a row in
// L1; returns rstd. Always inlined, so that its SIMD loops compile in the caller.
[[gnu::always_inline]] inline float normalise_row(float* __restrict out, const float* __restrict x, float mean,
                                                  int64_t C, const float* __restrict weight,
                                                  const float* __restrict bias) {
  const float rstd = row_rstd(x, mean, C);
#pragma omp simd
  for (int64_t c = 0; c < C; ++c) out[c] = (x[c] - mean) * rstd * weight[c] + bias[c];
  return rstd;
}

}  // namespace wb::cpu
