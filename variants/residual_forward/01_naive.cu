// residual_forward, CUDA variant 1: one thread per element, the naive port.
//
// Idea: thread i writes out[i] = inp1[i] + inp2[i].
// Why: the baseline the ladder starts from; already coalesced.
// Limits: one 32-bit access per float. Safe in place (out == inp1 or out == inp2, as
// the trainer uses it to accumulate gradients): each element is read and then
// written by the same thread, and no pointer is declared __restrict__.
#include "contract/ops/residual_forward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

__global__ void residual_naive(float* out, const float* inp1, const float* inp2, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = inp1[i] + inp2[i];
}

void launch(const ResidualForwardArgs& a, const Launch& l) {
  const int block = l.block_size();
  WB_LAUNCH(residual_naive, cuda::grid_for(a.N, block), block, 0, cuda::stream(l), a.out, a.inp1, a.inp2, a.N);
}

}  // namespace

Variant residual_forward_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one thread per element";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
