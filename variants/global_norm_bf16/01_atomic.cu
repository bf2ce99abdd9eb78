// global_norm_bf16, CUDA variant 1: the naive port, block sums added atomically.
//
// Idea: global_norm cuda/1 on bf16 gradients: a capped grid of threads strides over
// them, each thread widening and summing the squares it meets in fp32; a block
// reduction gives one partial per block, which thread 0 adds to out[0] with a float
// atomicAdd; out[0] is zeroed on the stream first and a one-thread kernel takes the
// square root in place.
// Why: the baseline of the bf16 ladder: one pass, no workspace.
// Limits: float atomics land in an order that changes from run to run (not
// deterministic); 16-bit loads, three operations on the stream.
#include <cuda_bf16.h>

#include "contract/ops/global_norm.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/reduction.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

__global__ void sum_squares_bf16_atomic(float* out, const __nv_bfloat16* grads, int64_t n) {
  WB_SHARED(float, scratch, [cuda::kWarpSize]);
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  float sum = 0.0f;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float g = __bfloat162float(grads[i]);
    sum += g * g;
  }
  sum = cuda::block_sum(sum, scratch);
  if (threadIdx.x == 0) atomicAdd(out, sum);
}

__global__ void square_root_in_place(float* out) { out[0] = sqrtf(out[0]); }

void launch(const GlobalNormBf16Args& a, const Launch& l) {
  const cudaStream_t s = cuda::stream(l);
  const int block = l.block_size();
  WB_CHECK(cudaMemsetAsync(a.out, 0, sizeof(float), s));
  WB_LAUNCH(sum_squares_bf16_atomic, cuda::reduction_blocks(a.N, block), block, 0, s, a.out, cuda::as_cuda(a.grads),
            a.N);
  WB_LAUNCH(square_root_in_place, 1, 1, 0, s, a.out);
}

}  // namespace

Variant global_norm_bf16_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "grid-stride fp32 sums of widened squares, block reduction, one float atomicAdd per block, then sqrt";
  v.params = {block_size_param()};
  v.deterministic = [](const ParamValues&) { return false; };  // float atomicAdd: the order of the adds varies
  return v;
}

}  // namespace wb::variants
