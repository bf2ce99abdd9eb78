// gelu_backward, CPU variant 2: float arithmetic, libm's tanhf, a thread count to tune.
//
// Idea: the reference's derivative in float instead of double (tanhf instead of tanh:
// variants/gelu/gelu.h's gelu_grad_tanhf), over contiguous static chunks of the N
// elements, one per thread; the number of threads is the launch parameter `threads`.
// Why it should beat variant 1: float tanhf should be cheaper than double tanh, and the
// conversions to and from double are gone. Measured (glibc 2.36, one thread): it is
// not; tanhf costs what tanh costs, about 16 ns a call. The cost is the call, not the
// precision: variant 3 removes the call.
// Limits: tanhf is a call per element, so the loop stays scalar (variant 3 removes the
// call). 1 - tanh^2 and 1 + tanh cancel where |u| is large, but their absolute error
// stays near ulp(1), far under the op's 1e-5 floor.
#include "contract/ops/gelu_backward.h"
#include "contract/variant.h"
#include "device/cpu/threads.h"
#include "variants/gelu/gelu.h"

namespace wb::variants {
namespace {

void gelu_backward_float(const GeluBackwardArgs& a, const Launch& l) {
#pragma omp parallel for num_threads(cpu::threads(l)) schedule(static)
  for (int64_t i = 0; i < a.N; ++i) a.dinp[i] = cpu::gelu_grad_tanhf(a.inp[i]) * a.dout[i];
}

}  // namespace

Variant gelu_backward_cpu_2() {
  return cpu::threaded(&gelu_backward_float,
                       "the derivative in float with libm's tanhf, static chunks over a tunable number of threads");
}

}  // namespace wb::variants
