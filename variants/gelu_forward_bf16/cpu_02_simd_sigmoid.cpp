// gelu_forward_bf16, CPU variant 2: gelu_forward cpu/3's SIMD loop on bf16 bits.
//
// Idea: widen each bf16 by a shift of its bits, take the GELU in fp32 as
// x * sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3), through the inline polynomial exp
// of device/cpu/simd_math.h (variants/gelu/gelu.h), and round once to nearest even with
// integer arithmetic (device/cpu/bf16_lanes.h). One `omp parallel for simd` loop, the
// fp32 rung's (device/cpu/elementwise.h): threads take contiguous chunks, each chunk
// runs in vector lanes. No restrict: out[i] depends on inp[i] alone, so an in-place
// call is safe.
// Why it should beat the reference port: the port calls tanh and the branching to_bf16
// per element, a scalar loop; here no call and no branch is left in the loop.
// Accuracy: the fp32 GELU is within about 1.5e-6 relative of the exact one (see
// gelu_forward cpu/3), far inside the op's 1e-5 + 1e-5 |ref| beside the half ulp of the
// one rounding; only values within that distance of a rounding tie can round the other
// way.
// Measure: OMP_NUM_THREADS=1 build/wb run gelu_forward_bf16 --variant N --backend cpu --shape B=4,T=64,C=768
// for N = 1, 2 and gelu_forward --variant 2 (fp32, tanhf) (figures:
// results/cpu-amd-epyc-avx512bf16/README.md).
// Limits: about fifteen vector operations per four elements in the baseline SSE build:
// bound by arithmetic on few cores, not by the halved bytes.
#include "contract/ops/gelu_forward.h"
#include "contract/variant.h"
#include "device/cpu/bf16_lanes.h"
#include "device/cpu/elementwise.h"
#include "device/cpu/threads.h"
#include "variants/gelu/gelu.h"

namespace wb::variants {
namespace {

void gelu_bf16_simd(const GeluForwardBf16Args& a, const Launch& l) {
  cpu::elementwise_simd(
      cpu::bits_of(a.out), a.N, cpu::threads(l), [](float x) { return cpu::gelu(x); }, cpu::bits_of(a.inp));
}

}  // namespace

Variant gelu_forward_bf16_cpu_2() {
  return cpu::threaded(
      &gelu_bf16_simd,
      "widen by shifts, x * sigmoid(2u) through an inline polynomial exp, branch-free rounding; SIMD loop, OpenMP "
      "chunks");
}

}  // namespace wb::variants
