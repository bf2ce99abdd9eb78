// layernorm_forward_bf16, CUDA variant 1: the naive port, one thread per row.
//
// Idea: one thread per row of C channels walks its row three times (mean, variance
// around it, normalise), widening each bf16 to fp32, accumulating in fp32, and rounds
// each output once to nearest even; mean and rstd stay fp32.
// Why: the baseline of the bf16 ladder; plainly correct.
// Limits: neighbouring threads read addresses C values apart, so no load coalesces, and
// only B*T threads exist: slow for any realistic C.
#include "contract/ops/layernorm_forward.h"
#include "variants/layernorm/layernorm_naive.cuh"

namespace wb::variants {

Variant layernorm_forward_bf16_cuda_1() {
  return cuda::layernorm_naive::variant<LayernormForwardBf16Args>(
      "one thread per row, three passes in fp32 like the CPU loop, each output rounded once");
}

}  // namespace wb::variants
