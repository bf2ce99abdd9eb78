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
#include "kernels/cuda/runtime.h"
#include "kernels/ops/matmul_forward.h"
#include "kernels/cuda/matmul.cuh"

namespace wb::variants {
namespace {

__global__ void matmul_thread_per_output(float* out, const float* inp, const float* weight, const float* bias,
                                         int64_t rows, int C, int OC) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * OC) return;
  const int64_t r = i / OC;
  const int o = int(i % OC);
  const float* x = inp + r * C;
  const float* w = weight + int64_t(o) * C;
  float acc = bias ? bias[o] : 0.0f;
  for (int c = 0; c < C; ++c) acc += x[c] * w[c];
  out[i] = acc;
}

void launch(const MatmulForwardArgs& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T;
  const int block = l.block_size();
  WB_LAUNCH(matmul_thread_per_output, cuda::grid_for(rows * a.OC, block), block, 0, cuda::stream(l), a.out, a.inp,
            a.weight, a.bias, rows, a.C, a.OC);
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
