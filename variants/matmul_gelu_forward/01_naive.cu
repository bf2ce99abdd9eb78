// matmul_gelu_forward, CUDA variant 1: the naive port of the CPU loop.
//
// Idea: one thread per output element, as matmul_forward cuda/1: it walks row r of
// inp and row o of weight together over the C channels, starting from the bias, then
// writes the sum to pre and its GELU (gelu_forward's tanhf formula,
// kernels/cuda/gelu.cuh) to out.
// Why: the baseline of the ladder; plainly correct for every shape, and the GELU
// costs no extra pass: the sum is still in a register.
// Limits: those of matmul_forward cuda/1: neighbouring threads read weight rows C
// floats apart, nothing coalesces, every output costs 2*C loads.
#include "kernels/cuda/dialect.cuh"
#include "kernels/cuda/gelu.cuh"
#include "kernels/cuda/matmul.cuh"
#include "kernels/cuda/matmul_naive.cuh"
#include "kernels/cuda/runtime.h"
#include "kernels/ops/matmul_gelu_forward.h"

namespace wb::variants {
namespace {

void launch(const MatmulGeluForwardArgs& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T;
  const int block = l.block_size();
  WB_LAUNCH(cuda::matmul_naive::thread_per_output<float, true>, cuda::grid_for(rows * a.OC, block), block, 0,
            cuda::stream(l), a.out, a.pre, a.inp, a.weight, a.bias, rows, a.C, a.OC);
}

}  // namespace

Variant matmul_gelu_forward_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one thread per output: the dot product of an inp row and a weight row, plus bias, then its GELU";
  v.params = {block_size_param()};
  v.launch_limit = cuda::matmul::thread_per_output_limit;
  return v;
}

}  // namespace wb::variants
