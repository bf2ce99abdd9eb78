#pragma once
// The register-staged double buffer that matmul_forward cuda/4 introduces (its header
// comment, change 3) and the rungs above it reuse (matmul_forward cuda/7 on TF32 tensor
// cores, matmul_forward_bf16 cuda/4 and cuda/5 on bf16 ones): the walk over the slabs of
// C, and the fp32 rungs' float4 staging of a slab of inp and weight rows. What a rung
// stores into shared memory, and how it multiplies a slab, stay in its own file.
#include <cuda_runtime.h>

#include <cstdint>

#include "device/cuda/device_utils.cuh"

namespace wb::cuda::double_buffer {

// Walks `slabs` slabs of C through two shared buffers: slab t is multiplied out of
// buffer t % 2 (multiply(b)) while slab t + 1 is on its way from global memory in
// registers: load(t + 1) issues its loads before the math, so that their latency hides
// behind it, and store(b) writes them into the other buffer after it. One barrier per
// slab suffices: the buffer written in step t was last read in step t - 1, before its
// barrier. Every thread of the block calls it with the same slabs.
template <class Load, class Store, class Multiply>
__device__ inline void walk(int slabs, Load&& load, Store&& store, Multiply&& multiply) {
  load(0);
  store(0);
  __syncthreads();
  for (int t = 0; t < slabs; ++t) {
    const int b = t & 1;
    const bool more = t + 1 < slabs;  // the same for every thread of the block
    if (more) load(t + 1);
    multiply(b);
    if (more) store(b ^ 1);
    __syncthreads();
  }
}

// One slab of kBK channels of kTile rows of inp and of weight, on its way through
// registers as float4: float4 f of the slab is row f / (kBK / 4), channels
// 4 (f % (kBK / 4)) .. + 3, and thread tid holds f = tid + i * kThreads in x[i] (inp)
// and w[i] (weight). With C % 4 == 0 a float4 is entirely inside the matrix or entirely
// past it; those past it, and those past the slab's last float4 (kEven false), are zero.
template <int kTile, int kBK, int kThreads>
struct Float4Rows {
  static constexpr int kVecsPerRow = kBK / 4;
  static constexpr int kVecs = kTile * kVecsPerRow;  // float4 per slab
  static constexpr int kLoads = (kVecs + kThreads - 1) / kThreads;
  static constexpr bool kEven = kVecs % kThreads == 0;
  static_assert(kBK % 4 == 0, "whole float4 per row");
  float4 x[kLoads], w[kLoads];

  // Whether float4 i of thread tid lies in the slab, its row there and its first channel.
  __device__ static bool in_slab(int tid, int i) { return kEven || tid + i * kThreads < kVecs; }
  __device__ static int row(int tid, int i) { return (tid + i * kThreads) / kVecsPerRow; }
  __device__ static int channel(int tid, int i) { return 4 * ((tid + i * kThreads) % kVecsPerRow); }

  // The slab at channel k0 of the block whose tile starts at inp row row0 and weight
  // row col0 (inp rows x C, weight OC x C, both row-major).
  __device__ void load(const float* inp, const float* weight, int rows, int C, int OC, int row0, int col0, int k0,
                       int tid) {
    const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
    for (int i = 0; i < kLoads; ++i) {
      const int m = row(tid, i);
      const int c = k0 + channel(tid, i);
      const bool in = in_slab(tid, i) && c < C;
      x[i] = in && row0 + m < rows ? load4(inp + int64_t(row0 + m) * C + c) : zero;
      w[i] = in && col0 + m < OC ? load4(weight + int64_t(col0 + m) * C + c) : zero;
    }
  }
};

// v's four components at p, p + stride, p + 2 stride and p + 3 stride: four consecutive
// registers of a thread's array (stride 1), or a float4 of a row stored down a column
// of a transposed slab.
__device__ inline void spread4(float* p, int stride, float4 v) {
  p[0] = v.x;
  p[stride] = v.y;
  p[2 * stride] = v.z;
  p[3 * stride] = v.w;
}

}  // namespace wb::cuda::double_buffer
