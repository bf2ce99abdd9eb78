// layernorm_forward, CUDA variant 1: the naive port of the CPU loop.
//
// Idea: one thread per row of C channels walks its row three times (mean, variance,
// normalise), as the reference does, but in float.
// Why: the baseline the ladder starts from; plainly correct.
// Limits: neighbouring threads read addresses C floats apart, so no load coalesces,
// and only B*T threads exist: slow for any realistic C.
#include "contract/ops/layernorm_forward.h"
#include "variants/layernorm/layernorm_naive.cuh"

namespace wb::variants {

Variant layernorm_forward_cuda_1() {
  return cuda::layernorm_naive::variant<LayernormForwardArgs>(
      "one thread per row, three passes over the row like the CPU loop");
}

}  // namespace wb::variants
