#pragma once
// The second pass of the deterministic two-pass norms (global_norm cuda/2,
// global_norm_bf16 cuda/2). Apart from reduction.cuh so that only the files that
// launch it compile it.
#include <cuda_runtime.h>

#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"

namespace wb::cuda {

namespace {

// The second pass of a deterministic two-pass norm: one block sums the `count` partial
// sums of squares (thread t takes t, t + blockDim.x, ... in that order, then a block
// reduction) and writes the square root of the total to out[0].
__global__ void finish_norm(float* out, const float* partials, int count) {
  WB_SHARED(float, scratch, [kWarpSize]);
  float sum = 0.0f;
  for (int i = threadIdx.x; i < count; i += blockDim.x) sum += partials[i];
  sum = block_sum(sum, scratch);
  if (threadIdx.x == 0) out[0] = sqrtf(sum);
}

}  // namespace

}  // namespace wb::cuda
