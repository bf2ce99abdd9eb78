// gelu_backward_bf16, CUDA variant 1: one thread per element, the naive port.
//
// Idea: thread i widens inp[i] and dout[i], computes gelu'(inp) * dout in fp32
// (variants/gelu/gelu.cuh) and rounds it once to nearest even.
// Why: the baseline of the bf16 ladder; already coalesced.
// Limits: one 16-bit access per tensor and element.
#include <cuda_bf16.h>

#include "contract/ops/gelu_backward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"
#include "variants/gelu/gelu.cuh"

namespace wb::variants {
namespace {

__global__ void gelu_backward_bf16_naive(__nv_bfloat16* dinp, const __nv_bfloat16* inp, const __nv_bfloat16* dout,
                                         int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) dinp[i] = __float2bfloat16(cuda::gelu::gelu_grad(__bfloat162float(inp[i])) * __bfloat162float(dout[i]));
}

void launch(const GeluBackwardBf16Args& a, const Launch& l) {
  const int block = l.block_size();
  WB_LAUNCH(gelu_backward_bf16_naive, cuda::grid_for(a.N, block), block, 0, cuda::stream(l), cuda::as_cuda(a.dinp),
            cuda::as_cuda(a.inp), cuda::as_cuda(a.dout), a.N);
}

}  // namespace

Variant gelu_backward_bf16_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one thread per element: widen, gelu'(x) * dout in fp32, round once";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
