#pragma once
// The second half of a layernorm row, shared by the SIMD rungs of layernorm_forward and
// fused_residual_layernorm_forward: once the row's mean is known, its squared
// deviations give rstd, and the row is normalised, scaled and shifted. layernorm_rows is
// those rungs' loop around it; they differ only in the pass that makes the row and its sum.
#include <cmath>
#include <cstdint>

#include "contract/ops/layernorm_forward.h"

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

// What a rung's first pass over a row gives layernorm_rows: the row to normalise (C
// floats, in L1 after that pass) and the sum of its elements.
struct RowSum {
  const float* x;
  float sum;
};

// The rows of a layernorm op's arguments a (B, T, C, weight, bias, mean, rstd) over
// `threads` OpenMP threads: first(row) returns the row and its sum (the fused rung writes
// the residual on the way), normalise_row writes row `row` of out (B*T x C), and the
// row's statistics go to a.mean[row] and a.rstd[row].
template <class Args, class First>
void layernorm_rows(const Args& a, float* out, int threads, First first) {
  const int64_t rows = int64_t(a.B) * a.T, C = a.C;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t row = 0; row < rows; ++row) {
    const RowSum r = first(row);
    const float mean = r.sum / float(C);
    a.mean[row] = mean;
    a.rstd[row] = normalise_row(out + row * C, r.x, mean, C, a.weight, a.bias);
  }
}

}  // namespace wb::cpu
