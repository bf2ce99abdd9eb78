// gelu_forward_bf16, CUDA variant 1: one thread per element, the naive port.
//
// Idea: thread i widens inp[i], takes the GELU in fp32 (tanhf, variants/gelu/gelu.cuh)
// and rounds it once to nearest even.
// Why: the baseline of the bf16 ladder; already coalesced.
// Limits: one 16-bit load and store per element.
#include <cuda_bf16.h>

#include "contract/ops/gelu_forward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"
#include "variants/gelu/gelu.cuh"

namespace wb::variants {
namespace {

__global__ void gelu_bf16_naive(__nv_bfloat16* out, const __nv_bfloat16* inp, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __float2bfloat16(cuda::gelu::gelu(__bfloat162float(inp[i])));
}

void launch(const GeluForwardBf16Args& a, const Launch& l) {
  const int block = l.block_size();
  WB_LAUNCH(gelu_bf16_naive, cuda::grid_for(a.N, block), block, 0, cuda::stream(l), cuda::as_cuda(a.out),
            cuda::as_cuda(a.inp), a.N);
}

}  // namespace

Variant gelu_forward_bf16_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one thread per element: widen, GELU in fp32 (tanhf), round once";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
