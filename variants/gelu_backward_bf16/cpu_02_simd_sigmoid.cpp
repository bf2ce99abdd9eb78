// gelu_backward_bf16, CPU variant 2: gelu_backward cpu/3's SIMD loop on bf16 bits.
//
// Idea: widen inp and dout by shifts of their bits; the derivative in fp32 through
// sigmoid(2u) and its complement from the inline polynomial exp (device/cpu/
// simd_math.h): gelu'(x) = s (1 + 2 x (1 - s) du/dx) with s = sigmoid(2u); the product
// with dout rounded once to nearest even by integer arithmetic (device/cpu/
// bf16_lanes.h). One `omp parallel for simd` loop over static chunks, the fp32 rung's
// (device/cpu/elementwise.h). No restrict: dinp[i] depends on inp[i] and dout[i]
// alone, so an in-place call is safe.
// Why it should beat the reference port: the port's tanh call and branching to_bf16 keep
// its loop scalar; here the whole element runs in vector lanes.
// Accuracy: as gelu_backward cpu/3 (a few 1e-7 relative from the polynomial exp), far
// inside the op's 1e-5 + 1e-5 |ref| beside the half ulp of the one rounding.
// Measure: OMP_NUM_THREADS=1 build/wb run gelu_backward_bf16 --variant N --backend cpu --shape B=4,T=64,C=768
// for N = 1, 2 and gelu_backward --variant 2 (fp32, tanhf) (figures:
// results/cpu-amd-epyc-avx512bf16/README.md).
// Limits: bound by arithmetic in the baseline SSE build on few cores.
#include "contract/ops/gelu_backward.h"
#include "contract/variant.h"
#include "device/cpu/bf16_lanes.h"
#include "device/cpu/elementwise.h"
#include "device/cpu/threads.h"
#include "variants/gelu/gelu.h"

namespace wb::variants {
namespace {

void gelu_backward_bf16_simd(const GeluBackwardBf16Args& a, const Launch& l) {
  cpu::elementwise_simd(
      cpu::bits_of(a.dinp), a.N, cpu::threads(l), [](float x, float dout) { return cpu::gelu_grad(x) * dout; },
      cpu::bits_of(a.inp), cpu::bits_of(a.dout));
}

}  // namespace

Variant gelu_backward_bf16_cpu_2() {
  return cpu::threaded(
      &gelu_backward_bf16_simd,
      "widen by shifts, the derivative through an inline polynomial sigmoid, branch-free rounding; SIMD loop, OpenMP "
      "chunks");
}

}  // namespace wb::variants
