#pragma once
// Device helpers shared by the CUDA variants: warp and block reductions and 128-bit
// vector loads and stores.
#include <cuda_runtime.h>

namespace wb::cuda {

constexpr int kWarpSize = 32;
constexpr unsigned kFullMask = 0xffffffffu;

// Sum / max over the 32 lanes of a warp; every lane gets the result.
__device__ inline float warp_sum(float v) {
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(kFullMask, v, offset);
  return v;
}

__device__ inline float warp_max(float v) {
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(kFullMask, v, offset));
  return v;
}

// Sum over all threads of a block (blockDim.x a multiple of 32, at most 1024); every
// thread gets the result. `scratch` is shared memory for 32 floats; the function
// synchronises before returning so scratch can be reused at once.
__device__ inline float block_sum(float v, float* scratch) {
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const int warps = blockDim.x / kWarpSize;
  v = warp_sum(v);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : 0.0f;
  v = warp_sum(v);
  __syncthreads();
  return v;
}

__device__ inline float block_max(float v, float* scratch) {
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const int warps = blockDim.x / kWarpSize;
  v = warp_max(v);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : -INFINITY;
  v = warp_max(v);
  __syncthreads();
  return v;
}

// 128-bit loads and stores of four floats; the address must be 16-byte aligned (the
// emulator checks it: a misaligned one faults, as on a GPU).
__device__ inline float4 load4(const float* p) {
#if WB_EMU
  ::wb::emu::check_aligned(p, 16);
#endif
  return *reinterpret_cast<const float4*>(p);
}
__device__ inline void store4(float* p, float4 v) {
#if WB_EMU
  ::wb::emu::check_aligned(p, 16);
#endif
  *reinterpret_cast<float4*>(p) = v;
}
// Streaming variants (evict-first): for data read or written once.
__device__ inline float4 load4_stream(const float* p) { return __ldcs(reinterpret_cast<const float4*>(p)); }
__device__ inline void store4_stream(float* p, float4 v) { __stcs(reinterpret_cast<float4*>(p), v); }

}  // namespace wb::cuda
