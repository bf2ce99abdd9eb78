// global_norm, CUDA variant 1: block sums added atomically.
//
// Idea: a capped grid of threads strides over the gradients, each thread summing the
// squares it meets; a block reduction (warp shuffles, then shared memory) gives one
// partial per block, which thread 0 adds to out[0] with a float atomicAdd. out[0] is
// zeroed on the stream first (it is an output: it holds garbage before the launch),
// and a one-thread kernel finally takes the square root in place.
// Why: the plainest parallel reduction: one pass over the data, no workspace.
// Limits: float atomics land in an order that changes from run to run, so the last
// bits of the result do too (not deterministic). Three operations on the stream
// (memset, reduce, sqrt). 32-bit loads.
#include "contract/ops/global_norm.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/reduction.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

__global__ void sum_squares_atomic(float* out, const float* grads, int64_t n) {
  WB_SHARED(float, scratch, [cuda::kWarpSize]);
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  float sum = 0.0f;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) sum += grads[i] * grads[i];
  sum = cuda::block_sum(sum, scratch);
  if (threadIdx.x == 0) atomicAdd(out, sum);
}

__global__ void square_root_in_place(float* out) { out[0] = sqrtf(out[0]); }

void launch(const GlobalNormArgs& a, const Launch& l) {
  const cudaStream_t s = cuda::stream(l);
  const int block = l.block_size();
  WB_CHECK(cudaMemsetAsync(a.out, 0, sizeof(float), s));
  WB_LAUNCH(sum_squares_atomic, cuda::reduction_blocks(a.N, block), block, 0, s, a.out, a.grads, a.N);
  WB_LAUNCH(square_root_in_place, 1, 1, 0, s, a.out);
}

}  // namespace

Variant global_norm_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary = "grid-stride sums of squares, block reduction, one float atomicAdd per block, then sqrt";
  v.params = {block_size_param()};
  v.deterministic = [](const ParamValues&) { return false; };  // float atomicAdd: the order of the adds varies
  return v;
}

}  // namespace wb::variants
