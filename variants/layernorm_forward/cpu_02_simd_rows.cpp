// layernorm_forward, CPU variant 2: float rows in SIMD, rows over threads.
//
// Idea: each thread takes whole rows (OpenMP, `threads` of them); a row of C floats
// (3 KB at GPT-2's width) is read from memory once and then stays in L1 for the three
// loops over it: the sum (a SIMD reduction), the sum of squared deviations from the
// mean (a second SIMD reduction: two passes, so no cancellation of E[x^2] - mean^2),
// and the normalisation, out = (x - mean) * rstd * weight + bias. Every loop is
// contiguous and restrict-qualified under `#pragma omp simd`.
// Why it should beat variant 1: the reference accumulates in double, one scalar
// element at a time; here four (SSE) floats go through each instruction.
// Accuracy: the sums run in float lanes of up to C/4 terms each. For values of
// magnitude one that is an error far below the tolerances (mean 1e-6, rstd 1e-5
// relative); a row whose mean is large against its spread would lose digits in the
// second pass's float deviations before the reference's double ones.
// Limits: one row per loop iteration: B*T rows must outnumber the threads.
#include "contract/ops/layernorm_forward.h"
#include "contract/variant.h"
#include "device/cpu/threads.h"
#include "variants/layernorm/layernorm_row.h"

namespace wb::variants {
namespace {

void layernorm_simd(const LayernormForwardArgs& a, const Launch& l) {
  cpu::layernorm_rows(a, a.out, cpu::threads(l), [&](int64_t row) {
    const float* __restrict x = a.inp + row * a.C;
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int64_t c = 0; c < a.C; ++c) sum += x[c];
    return cpu::RowSum{x, sum};
  });
}

}  // namespace

Variant layernorm_forward_cpu_2() {
  return cpu::threaded(&layernorm_simd,
                       "rows over threads; sum, squared deviations, normalisation as SIMD loops over the row in L1");
}

}  // namespace wb::variants
