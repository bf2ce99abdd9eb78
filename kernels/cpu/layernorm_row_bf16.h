#pragma once
// One layernorm row on bf16 storage for the CPU rungs (layernorm_forward_bf16 cpu/2,
// fused_residual_layernorm_forward_bf16 cpu/2): the row already widened to fp32 in the
// thread's buffer x (C floats, in L1), the mean and the squared deviations from it as
// fp32 SIMD reductions (two passes: no cancellation of E[x^2] - mean^2), each output
// (x - mean) * rstd * weight + bias in fp32, rounded once to nearest even. Writes the
// statistics, returns nothing.
#include <cmath>
#include <cstdint>

#include "kernels/cpu/bf16_lanes.h"
#include "kernels/ops/layernorm_forward.h"

namespace wb::cpu {

[[gnu::always_inline]] inline void layernorm_row_bf16(uint16_t* __restrict out, const float* __restrict x, int64_t C,
                                                      const uint16_t* __restrict weight,
                                                      const uint16_t* __restrict bias, float* mean_out,
                                                      float* rstd_out) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t c = 0; c < C; ++c) sum += x[c];
  const float mean = sum / float(C);
  float squares = 0.0f;
#pragma omp simd reduction(+ : squares)
  for (int64_t c = 0; c < C; ++c) {
    const float d = x[c] - mean;
    squares += d * d;
  }
  const float rstd = 1.0f / std::sqrt(squares / float(C) + kLayernormEps);
#pragma omp simd
  for (int64_t c = 0; c < C; ++c) out[c] = round_bits((x[c] - mean) * rstd * widen(weight[c]) + widen(bias[c]));
  *mean_out = mean;
  *rstd_out = rstd;
}

}  // namespace wb::cpu
