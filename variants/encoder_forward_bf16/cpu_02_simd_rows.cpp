// encoder_forward_bf16, CPU variant 2: encoder_forward cpu/2's rows on bf16 bits.
//
// Idea: rows (b, t) over a tunable number of threads; each row one restrict-qualified
// SIMD loop that widens its wte and wpe rows by shifts, adds in fp32 (exact for two
// bf16) and rounds once to nearest even by integer arithmetic (device/cpu/
// bf16_lanes.h: to_bf16's bits without its branches): the fp32 rung's rows
// (variants/encoder_forward/simd_rows.h) on the bf16 bits.
// Why it should beat the reference port: the port's to_bf16 per element keeps its
// loop scalar; here eight bf16 pairs go through a few vector instructions, with half
// the bytes of the fp32 rung.
// Measure: OMP_NUM_THREADS=1 build/wb run encoder_forward_bf16 --variant N --backend cpu --shape B=4,T=64,C=768,V=50257
// for N = 1, 2 and encoder_forward --variant 2 (figures: results/cpu-amd-epyc-avx512bf16/README.md).
// Limits: bound by memory: a gathered wte row per position.
#include "contract/ops/encoder_forward.h"
#include "contract/variant.h"
#include "device/cpu/bf16_lanes.h"
#include "device/cpu/threads.h"
#include "variants/encoder_forward/simd_rows.h"

namespace wb::variants {
namespace {

void encoder_bf16_simd(const EncoderForwardBf16Args& a, const Launch& l) {
  cpu::encoder_rows_simd(cpu::bits_of(a.out), a.inp, cpu::bits_of(a.wte), cpu::bits_of(a.wpe), a.B, a.T, a.C,
                         cpu::threads(l));
}

}  // namespace

Variant encoder_forward_bf16_cpu_2() {
  return cpu::threaded(
      &encoder_bf16_simd,
      "rows over a tunable number of threads, each row a SIMD loop: widen by shifts, fp32 add, branch-free rounding");
}

}  // namespace wb::variants
