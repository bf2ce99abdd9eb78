// matmul_gelu_forward, CUDA variant 1: the naive port of the CPU loop.
//
// Idea: one thread per output element, as matmul_forward cuda/1: it walks row r of
// inp and row o of weight together over the C channels, starting from the bias, then
// writes the sum to pre and its GELU (gelu_forward's tanhf formula,
// variants/gelu/gelu.cuh) to out.
// Why: the baseline of the ladder; plainly correct for every shape, and the GELU
// costs no extra pass: the sum is still in a register.
// Limits: those of matmul_forward cuda/1: neighbouring threads read weight rows C
// floats apart, nothing coalesces, every output costs 2*C loads.
#include "contract/ops/matmul_gelu_forward.h"
#include "variants/matmul/matmul_naive.cuh"

namespace wb::variants {

Variant matmul_gelu_forward_cuda_1() {
  return cuda::matmul_naive::variant<MatmulGeluForwardArgs>(
      "one thread per output: the dot product of an inp row and a weight row, plus bias, then its GELU");
}

}  // namespace wb::variants
