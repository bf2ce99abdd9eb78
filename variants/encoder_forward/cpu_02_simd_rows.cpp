// encoder_forward, CPU variant 2: rows over a tunable number of threads, SIMD adds.
//
// Idea: threads (`threads` of them) take contiguous runs of the B*T output rows; each
// row is the SIMD sum of the token's row of wte and the position's row of wpe, three
// restrict-qualified contiguous streams under `#pragma omp simd`
// (variants/encoder_forward/simd_rows.h, the bf16 twin's rows too).
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
#include "variants/encoder_forward/simd_rows.h"

namespace wb::variants {
namespace {

void encoder_simd(const EncoderForwardArgs& a, const Launch& l) {
  cpu::encoder_rows_simd(a.out, a.inp, a.wte, a.wpe, a.B, a.T, a.C, cpu::threads(l));
}

}  // namespace

Variant encoder_forward_cpu_2() {
  return cpu::threaded(
      &encoder_simd,
      "rows over a tunable number of threads, each row a restrict-qualified SIMD add of its wte and wpe rows");
}

}  // namespace wb::variants
