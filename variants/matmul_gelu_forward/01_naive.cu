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
#include "kernels/cuda/runtime.h"
#include "kernels/ops/matmul_gelu_forward.h"
#include "kernels/cuda/gelu.cuh"
#include "kernels/cuda/matmul.cuh"

namespace wb::variants {
namespace {

__global__ void matmul_gelu_thread_per_output(float* out, float* pre, const float* inp, const float* weight,
                                              const float* bias, int64_t rows, int C, int OC) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * OC) return;
  const int64_t r = i / OC;
  const int o = int(i % OC);
  const float* x = inp + r * C;
  const float* w = weight + int64_t(o) * C;
  float acc = bias ? bias[o] : 0.0f;
  for (int c = 0; c < C; ++c) acc += x[c] * w[c];
  pre[i] = acc;
  out[i] = cuda::gelu::gelu(acc);
}

void launch(const MatmulGeluForwardArgs& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T;
  const int block = l.block_size();
  WB_LAUNCH(matmul_gelu_thread_per_output, cuda::grid_for(rows * a.OC, block), block, 0, cuda::stream(l), a.out,
            a.pre, a.inp, a.weight, a.bias, rows, a.C, a.OC);
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
