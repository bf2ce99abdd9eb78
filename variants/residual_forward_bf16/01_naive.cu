// residual_forward_bf16, CUDA variant 1: one thread per element, the naive port.
//
// Idea: thread i widens inp1[i] and inp2[i] to fp32, adds them and rounds the sum once
// to nearest even (__float2bfloat16): exactly the reference's arithmetic.
// Why: the baseline of the bf16 ladder; already coalesced.
// Limits: one 16-bit access per element, a quarter of what a thread can move at once.
// Safe in place (out == inp1 or out == inp2): each element is read and then written by
// the same thread.
#include <cuda_bf16.h>

#include "contract/ops/residual_forward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

__global__ void residual_bf16_naive(__nv_bfloat16* out, const __nv_bfloat16* inp1, const __nv_bfloat16* inp2,
                                    int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __float2bfloat16(__bfloat162float(inp1[i]) + __bfloat162float(inp2[i]));
}

void launch(const ResidualForwardBf16Args& a, const Launch& l) {
  const int block = l.block_size();
  WB_LAUNCH(residual_bf16_naive, cuda::grid_for(a.N, block), block, 0, cuda::stream(l), cuda::as_cuda(a.out),
            cuda::as_cuda(a.inp1), cuda::as_cuda(a.inp2), a.N);
}

}  // namespace

Variant residual_forward_bf16_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "one thread per element: widen, add in fp32, round once to nearest even";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
