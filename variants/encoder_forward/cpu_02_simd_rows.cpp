// encoder_forward, CPU variant 2: rows over a tunable number of threads, SIMD adds.
//
// Idea: threads (`threads` of them) take contiguous runs of the B*T output rows; each
// row is the SIMD sum of the token's row of wte and the position's row of wpe, three
// restrict-qualified contiguous streams under `#pragma omp simd`.
// Why it should beat variant 1: the reference's inner loop carries no promise that out
// does not overlap wte or wpe, so the compiler checks for overlap at run time before
// each row; restrict removes the check. Measured: on one thread the two are equally
// fast (GCC vectorises the reference behind its check, and the check is cheap); what
// this rung adds is the thread count, which the sweep can lower where B*T rows are
// too few to pay for waking threads (or where the cores are shared).
// Limits: pure data movement (a gather of B*T rows of wte): bound by memory.
#include "contract/ops/encoder_forward.h"
#include "contract/variant.h"
#include "device/cpu/threads.h"

namespace wb::variants {
namespace {

void encoder_simd(const EncoderForwardArgs& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T, C = a.C;
#pragma omp parallel for num_threads(cpu::threads(l)) schedule(static)
  for (int64_t bt = 0; bt < rows; ++bt) {
    const float* __restrict wte = a.wte + int64_t(a.inp[bt]) * C;
    const float* __restrict wpe = a.wpe + (bt % a.T) * C;
    float* __restrict out = a.out + bt * C;
#pragma omp simd
    for (int64_t c = 0; c < C; ++c) out[c] = wte[c] + wpe[c];
  }
}

}  // namespace

Variant encoder_forward_cpu_2() {
  return cpu::threaded(
      &encoder_simd,
      "rows over a tunable number of threads, each row a restrict-qualified SIMD add of its wte and wpe rows");
}

}  // namespace wb::variants
