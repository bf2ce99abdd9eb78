// gelu_backward, CUDA variant 1: the naive port, one thread per element.
//
// Idea: thread i computes dinp[i] = gelu'(inp[i]) * dout[i] in float, as the CPU loop
// does in double.
// Why: the baseline of the ladder. Neighbouring threads touch neighbouring floats, so
// every access already coalesces; this is close to what an elementwise op can do.
// Limits: one 32-bit load per tensor and thread: four times the load and store
// instructions of a 128-bit access, and one element of work per thread.
#include "contract/ops/gelu_backward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "variants/gelu/gelu.cuh"

namespace wb::variants {
namespace {

using cuda::gelu::gelu_grad;

__global__ void gelu_backward_naive(float* dinp, const float* inp, const float* dout, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) dinp[i] = gelu_grad(inp[i]) * dout[i];
}

void launch(const GeluBackwardArgs& a, const Launch& l) {
  const int block = l.block_size();
  WB_LAUNCH(gelu_backward_naive, cuda::grid_for(a.N, block), block, 0, cuda::stream(l), a.dinp, a.inp, a.dout, a.N);
}

}  // namespace

Variant gelu_backward_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one thread per element, gelu'(x) * dout in float";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
