// layernorm_forward_bf16, CPU variant 2: layernorm_forward cpu/2's rows in SIMD, on
// bf16 storage.
//
// Idea: each thread takes whole rows (OpenMP, `threads` of them) and widens a row's C
// bf16 values by shifts into its own fp32 buffer (3 KB at GPT-2's width, in L1); then
// the three SIMD loops of the fp32 rung over it (sum, squared deviations, normalisation:
// variants/layernorm/layernorm_row_bf16.h), each output rounded once to nearest even by integer
// arithmetic. mean and rstd stay fp32.
// Why it should beat the reference port: the port accumulates in double one scalar
// element at a time and rounds through the branching to_bf16; here every loop runs in
// fp32 vector lanes.
// Accuracy: fp32 sums of up to C/4 terms per lane: far below the tolerances for values
// of magnitude one (see layernorm_forward cpu/2). One row is one thread's, in a fixed
// order: the result does not depend on the thread count.
// Measure: OMP_NUM_THREADS=1 build/wb run layernorm_forward_bf16 --variant N --backend cpu --shape B=4,T=64,C=768
// for N = 1, 2 and layernorm_forward --variant 2 (figures:
// results/cpu-amd-epyc-avx512bf16/README.md); the widening pass and the roundings cost it
// against the fp32 rung.
// Limits: one row per loop iteration: B*T rows must outnumber the threads.
#include "contract/ops/layernorm_forward.h"
#include "contract/variant.h"
#include "device/cpu/threads.h"
#include "variants/layernorm/layernorm_row_bf16.h"

namespace wb::variants {
namespace {

void layernorm_bf16_simd(const LayernormForwardBf16Args& a, const Launch& l) {
  cpu::layernorm_rows_bf16(a, a.out, cpu::threads(l), [&](int64_t row, float* __restrict x) {
    const uint16_t* __restrict in = cpu::bits_of(a.inp) + row * a.C;
#pragma omp simd
    for (int64_t c = 0; c < a.C; ++c) x[c] = cpu::widen(in[c]);
  });
}

}  // namespace

Variant layernorm_forward_bf16_cpu_2() {
  return cpu::threaded(
      &layernorm_bf16_simd,
      "rows over threads; each row widened into an fp32 buffer in L1, fp32 SIMD sums and normalisation, one rounding");
}

}  // namespace wb::variants
