// residual_forward, CPU variant 2: one `omp parallel for simd` loop, a tunable number
// of threads.
//
// Idea: contiguous static chunks of the N elements, one per thread (`threads` of
// them), each chunk a SIMD loop (device/cpu/elementwise.h). There is no restrict: the
// trainer calls this op in place (out == inp1 or inp2) to accumulate gradients, and
// out[i] depends on the inputs at i alone, which is what `omp simd` needs to hold.
// Why it should beat variant 1: the reference's loop carries no promise about
// overlap, so the compiler versions it on a run-time check, and its thread count
// cannot be lowered where N is too small to pay for waking threads. Measured: on one
// thread the two are equally fast (the check is cheap); what this rung adds is the
// thread count.
// Limits: 12 bytes moved per flop: bound by memory (by cache for small N).
#include "contract/ops/residual_forward.h"
#include "contract/variant.h"
#include "device/cpu/elementwise.h"
#include "device/cpu/threads.h"

namespace wb::variants {
namespace {

void residual_simd(const ResidualForwardArgs& a, const Launch& l) {
  cpu::elementwise_simd(
      a.out, a.N, cpu::threads(l), [](float x1, float x2) { return x1 + x2; }, a.inp1, a.inp2);
}

}  // namespace

Variant residual_forward_cpu_2() {
  return cpu::threaded(&residual_simd,
                       "one parallel SIMD loop over static chunks, a tunable number of threads; safe in place");
}

}  // namespace wb::variants
