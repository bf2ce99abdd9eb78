// matmul_forward, CUDA variant 1: the naive port of the CPU loop.
//
// Idea: one thread per output element out[r, o]; it walks row r of inp and row o of
// weight together over the C channels, as the reference does, but in float, starting
// from the bias (or zero when there is none).
// Why: the baseline the ladder starts from; plainly correct for every shape.
// Limits: neighbouring threads take neighbouring columns o, so each reads its own
// weight row, C floats away from the next one: no load coalesces and nothing is
// reused on chip beyond what the caches catch. Every output costs 2*C loads.
#include "contract/ops/matmul_forward.h"
#include "variants/matmul/matmul_naive.cuh"

namespace wb::variants {

Variant matmul_forward_cuda_1() {
  return cuda::matmul_naive::variant<MatmulForwardArgs>(
      "one thread per output, a dot product of an inp row and a weight row like the CPU loop");
}

}  // namespace wb::variants
