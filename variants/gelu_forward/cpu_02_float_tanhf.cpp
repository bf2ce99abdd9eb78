// gelu_forward, CPU variant 2: float arithmetic, libm's tanhf, a thread count to tune.
//
// Idea: the reference's formula in float instead of double (tanhf instead of tanh:
// variants/gelu/gelu.h's gelu_tanhf), over contiguous static chunks of the N elements,
// one per thread; the number of threads is the launch parameter `threads`.
// Why it should beat variant 1: float tanhf should be cheaper than double tanh, and the
// conversions to and from double are gone. Measured (glibc 2.36, one thread): it is
// not; tanhf costs what tanh costs, about 16 ns a call, and this rung is as fast as the
// reference. The cost is the call, not the precision: variant 3 removes the call.
// Limits: tanhf is a call per element, so the loop stays scalar (variant 3 removes the
// call). Accuracy: 1 + tanh(u) cancels for very negative x, but the absolute error
// stays below 0.5 |x| ulp(1), under the op's 1e-5 floor for the inputs of a GELU.
#include "contract/ops/gelu_forward.h"
#include "contract/variant.h"
#include "device/cpu/threads.h"
#include "variants/gelu/gelu.h"

namespace wb::variants {
namespace {

void gelu_float(const GeluForwardArgs& a, const Launch& l) {
#pragma omp parallel for num_threads(cpu::threads(l)) schedule(static)
  for (int64_t i = 0; i < a.N; ++i) a.out[i] = cpu::gelu_tanhf(a.inp[i]);
}

}  // namespace

Variant gelu_forward_cpu_2() {
  return cpu::threaded(&gelu_float,
                       "the formula in float with libm's tanhf, static chunks over a tunable number of threads");
}

}  // namespace wb::variants
