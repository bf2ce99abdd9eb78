// gelu_backward, CPU variant 2: float arithmetic, libm's tanhf, a thread count to tune.
//
// Idea: the reference's derivative in float instead of double (tanhf instead of tanh),
// over contiguous static chunks of the N elements, one per thread; the number of
// threads is the launch parameter `threads`.
// Why it should beat variant 1: float tanhf should be cheaper than double tanh, and the
// conversions to and from double are gone. Measured (glibc 2.36, one thread): it is
// not; tanhf costs what tanh costs, about 16 ns a call. The cost is the call, not the
// precision: variant 3 removes the call.
// Limits: tanhf is a call per element, so the loop stays scalar (variant 3 removes the
// call). 1 - tanh^2 and 1 + tanh cancel where |u| is large, but their absolute error
// stays near ulp(1), far under the op's 1e-5 floor.
#include <cmath>

#include "base/math_constants.h"
#include "contract/ops/gelu_backward.h"
#include "contract/variant.h"
#include "device/cpu/threads.h"

namespace wb::variants {
namespace {

using math::kGeluCubic;
using math::kGeluScale;

void gelu_backward_float(const GeluBackwardArgs& a, const Launch& l) {
#pragma omp parallel for num_threads(cpu::threads(l)) schedule(static)
  for (int64_t i = 0; i < a.N; ++i) {
    const float x = a.inp[i];
    const float x2 = x * x;
    const float th = std::tanh(kGeluScale * (x + kGeluCubic * x2 * x));
    const float dudx = kGeluScale * (1.0f + 3.0f * kGeluCubic * x2);
    const float grad = 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * dudx;
    a.dinp[i] = grad * a.dout[i];
  }
}

}  // namespace

Variant gelu_backward_cpu_2() {
  return cpu::threaded(&gelu_backward_float,
                       "the derivative in float with libm's tanhf, static chunks over a tunable number of threads");
}

}  // namespace wb::variants
