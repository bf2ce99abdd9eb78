// matmul_forward, CUDA variant 1: the naive port of the CPU loop.
//
// Idea: one thread per output element out[r, o]; it walks row r of inp and row o of
// weight together over the C channels, as the reference does, but in float, starting
// from the bias (or zero when there is none).
// Why: the baseline the ladder starts from; plainly correct for every shape.
// Limits: neighbouring threads take neighbouring columns o, so each reads its own
// weight row, C floats away from the next one: no load coalesces and nothing is
// reused on chip beyond what the caches catch. Every output costs 2*C loads.
#include "kernels/cuda/dialect.cuh"
#include "kernels/cuda/matmul.cuh"
#include "kernels/cuda/matmul_naive.cuh"
#include "kernels/cuda/runtime.h"
#include "kernels/ops/matmul_forward.h"

namespace wb::variants {
namespace {

void launch(const MatmulForwardArgs& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T;
  const int block = l.block_size();
  WB_LAUNCH(cuda::matmul_naive::thread_per_output<float, false>, cuda::grid_for(rows * a.OC, block), block, 0,
            cuda::stream(l), a.out, static_cast<float*>(nullptr), a.inp, a.weight, a.bias, rows, a.C, a.OC);
}

}  // namespace

Variant matmul_forward_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one thread per output, a dot product of an inp row and a weight row like the CPU loop";
  v.params = {block_size_param()};
  v.launch_limit = cuda::matmul::thread_per_output_limit;
  return v;
}

}  // namespace wb::variants
