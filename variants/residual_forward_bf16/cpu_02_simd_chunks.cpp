// residual_forward_bf16, CPU variant 2: the fp32 rung's parallel SIMD loop on bf16 bits.
//
// Idea: residual_forward cpu/2's loop (contiguous static chunks, one per thread, each a
// SIMD loop) with the conversions done in the lanes: each bf16 widened by a shift of its
// bits, the sum in fp32, rounded once to nearest even by integer arithmetic
// (device/cpu/bf16_lanes.h; the same bits as to_bf16). No restrict: the trainer calls
// the op in place, and out[i] depends on the inputs at i alone.
// Why it should beat the reference port: the port's to_bf16 branches per element and
// keeps its loop scalar; here eight bf16 pairs (SSE) go through a handful of integer
// and float instructions, with half the bytes of the fp32 rung.
// Measure: OMP_NUM_THREADS=1 build/wb run residual_forward_bf16 --variant N --backend cpu --shape B=4,T=64,C=768
// for N = 1, 2 and residual_forward --variant 2 (figures:
// results/cpu-amd-epyc-avx512bf16/README.md).
// Limits: 6 bytes per flop: bound by memory (by cache for small N); the baseline
// x86-64 build uses 128-bit SSE lanes.
#include "contract/ops/residual_forward.h"
#include "contract/variant.h"
#include "device/cpu/bf16_lanes.h"
#include "device/cpu/elementwise.h"
#include "device/cpu/threads.h"

namespace wb::variants {
namespace {

void residual_bf16_simd(const ResidualForwardBf16Args& a, const Launch& l) {
  cpu::elementwise_simd(
      cpu::bits_of(a.out), a.N, cpu::threads(l), [](float x1, float x2) { return x1 + x2; }, cpu::bits_of(a.inp1),
      cpu::bits_of(a.inp2));
}

}  // namespace

Variant residual_forward_bf16_cpu_2() {
  return cpu::threaded(
      &residual_bf16_simd,
      "one parallel SIMD loop: widen by shifts, fp32 sum, branch-free rounding; tunable threads; safe in place");
}

}  // namespace wb::variants
