// gelu_forward, CUDA variant 1: one thread per element, the naive port.
//
// Idea: thread i reads inp[i] and writes gelu(inp[i]) (tanh approximation, tanhf).
// Why: the baseline the ladder starts from. Already coalesced, since neighbouring
// threads touch neighbouring floats.
// Limits: one 32-bit load and store instruction per element and 64-bit index
// arithmetic per element.
#include "contract/ops/gelu_forward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "variants/gelu/gelu.cuh"

namespace wb::variants {
namespace {

__global__ void gelu_naive(float* out, const float* inp, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = cuda::gelu::gelu(inp[i]);
}

void launch(const GeluForwardArgs& a, const Launch& l) {
  const int block = l.block_size();
  WB_LAUNCH(gelu_naive, cuda::grid_for(a.N, block), block, 0, cuda::stream(l), a.out, a.inp, a.N);
}

}  // namespace

Variant gelu_forward_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one thread per element, tanhf";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
