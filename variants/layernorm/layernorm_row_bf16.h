#pragma once
// One layernorm row on bf16 storage for the CPU rungs (layernorm_forward_bf16 cpu/2,
// fused_residual_layernorm_forward_bf16 cpu/2): the row already widened to fp32 in the
// thread's buffer x (C floats, in L1), the mean and the squared deviations from it as
// fp32 SIMD reductions (two passes: no cancellation of E[x^2] - mean^2), each output
// (x - mean) * rstd * weight + bias in fp32, rounded once to nearest even. Writes the
// statistics, returns nothing. layernorm_rows_bf16 runs it over the rows of a tensor.
#include <cmath>
#include <cstdint>
#include <vector>

#include "contract/ops/layernorm_forward.h"
#include "device/cpu/bf16_lanes.h"
#include "variants/layernorm/layernorm_row.h"

namespace wb::cpu {

[[gnu::always_inline]] inline void layernorm_row_bf16(uint16_t* __restrict out, const float* __restrict x, int64_t C,
                                                      const uint16_t* __restrict weight,
                                                      const uint16_t* __restrict bias, float* mean_out,
                                                      float* rstd_out) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t c = 0; c < C; ++c) sum += x[c];
  const float mean = sum / float(C);
  const float rstd = row_rstd(x, mean, C);
#pragma omp simd
  for (int64_t c = 0; c < C; ++c) out[c] = round_bits((x[c] - mean) * rstd * widen(weight[c]) + widen(bias[c]));
  *mean_out = mean;
  *rstd_out = rstd;
}

// The rungs' loop around it, over the rows of a layernorm op's arguments a (B, T, C,
// weight, bias, mean, rstd): rows over `threads` OpenMP threads, each thread with its own
// fp32 row buffer x of C floats (in L1); fill(row, x) writes the row's input, widened,
// into x, and layernorm_row_bf16 normalises it into row `row` of out (B*T x C), with the
// row's statistics in a.mean[row] and a.rstd[row].
template <class Args, class Fill>
void layernorm_rows_bf16(const Args& a, bf16* out, int threads, Fill fill) {
  const int64_t rows = int64_t(a.B) * a.T, C = a.C;
  const uint16_t* w = bits_of(a.weight);
  const uint16_t* b = bits_of(a.bias);
#pragma omp parallel num_threads(threads)
  {
    std::vector<float> buffer(C);
    float* __restrict x = buffer.data();
#pragma omp for schedule(static)
    for (int64_t row = 0; row < rows; ++row) {
      fill(row, x);
      layernorm_row_bf16(bits_of(out) + row * C, x, C, w, b, a.mean + row, a.rstd + row);
    }
  }
}

}  // namespace wb::cpu
