// matmul_forward_bf16, CUDA variant 1: the naive port, one thread per output.
//
// Idea: one thread per output element out[r, o] walks row r of inp and row o of weight
// together over the C channels, widening each bf16 and accumulating the products
// (exact in fp32: 8-bit by 8-bit significands) in fp32 from the bias, then rounds the
// sum once to nearest even.
// Why: the baseline of the bf16 ladder; plainly correct for every shape.
// Limits: as matmul_forward cuda/1: no load coalesces (neighbouring threads read
// weight rows C values apart), nothing is reused on chip but what the caches catch,
// 2*C 16-bit loads per output.
#include "contract/ops/matmul_forward.h"
#include "variants/matmul/matmul_naive.cuh"

namespace wb::variants {

Variant matmul_forward_bf16_cuda_1() {
  return cuda::matmul_naive::variant<MatmulForwardBf16Args>(
      "one thread per output: a dot product of widened bf16 rows in fp32, rounded once");
}

}  // namespace wb::variants
