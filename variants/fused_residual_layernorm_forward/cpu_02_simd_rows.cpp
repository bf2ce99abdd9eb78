// fused_residual_layernorm_forward, CPU variant 2: the residual add folded into the
// layernorm's first pass, float rows in SIMD, rows over threads.
//
// Idea: each thread takes whole rows (OpenMP, `threads` of them). The first loop over
// a row writes residual = inp1 + inp2 and sums it in the same SIMD loop; the row of
// residuals is then in L1 for the second loop (squared deviations from the mean, two
// passes so nothing cancels) and the third (out = (r - mean) * rstd * weight + bias).
// Every loop is contiguous, restrict-qualified, under `#pragma omp simd`.
// Why it should beat variant 1: the reference adds the row, then reads it back in
// double for three scalar passes; here the add and the sum share one pass and every
// pass runs four (SSE) floats per instruction.
// Accuracy: as layernorm_forward cpu/2, float sums of C/4 terms per lane, far below
// the tolerances for rows of magnitude one.
// Limits: one row per loop iteration: B*T rows must outnumber the threads.
#include "contract/ops/fused_residual_layernorm_forward.h"
#include "contract/variant.h"
#include "device/cpu/threads.h"
#include "variants/layernorm/layernorm_row.h"

namespace wb::variants {
namespace {

void fused_simd(const FusedResidualLayernormForwardArgs& a, const Launch& l) {
  cpu::layernorm_rows(a, a.normed, cpu::threads(l), [&](int64_t row) {
    const float* __restrict x1 = a.inp1 + row * a.C;
    const float* __restrict x2 = a.inp2 + row * a.C;
    float* __restrict r = a.residual + row * a.C;
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int64_t c = 0; c < a.C; ++c) {
      r[c] = x1[c] + x2[c];
      sum += r[c];
    }
    return cpu::RowSum{r, sum};
  });
}

}  // namespace

Variant fused_residual_layernorm_forward_cpu_2() {
  return cpu::threaded(
      &fused_simd,
      "rows over threads; the add and the sum in one SIMD pass, then deviations and normalisation from L1");
}

}  // namespace wb::variants
