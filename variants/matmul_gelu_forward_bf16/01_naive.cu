// matmul_gelu_forward_bf16, CUDA variant 1: the naive port, one thread per output.
//
// Idea: one thread per output element walks row r of inp and row o of weight together
// over the C channels, widening each bf16 and accumulating in fp32 from the bias; it
// writes pre = bf16(sum) and out = bf16(gelu(sum)) -- the GELU of the unrounded sum,
// each output rounded once.
// Why: the baseline of the bf16 ladder; plainly correct for every shape.
// Limits: as matmul_forward_bf16 cuda/1: no load coalesces, nothing reused on chip but
// what the caches catch, 2*C 16-bit loads per output.
#include "contract/ops/matmul_gelu_forward.h"
#include "variants/matmul/matmul_naive.cuh"

namespace wb::variants {

Variant matmul_gelu_forward_bf16_cuda_1() {
  return cuda::matmul_naive::variant<MatmulGeluForwardBf16Args>(
      "one thread per output: an fp32 dot product of widened rows; pre and gelu of the unrounded sum, rounded once");
}

}  // namespace wb::variants
