#pragma once
// Online softmax pieces shared by the softmax_forward and fused_classifier variants:
// the running (max, sum of exp(x - max)) of a set of values, updated one value or
// one float4 at a time, merged across the lanes of a warp and the warps of a block,
// and the strided loops over a row that build one thread's share of it (scalar and
// float4). The empty set is (-inf, 0); merging handles it, so lanes or threads that
// saw no value (rows shorter than the block) take part in the reductions.
#include <cuda_runtime.h>

#include "device/cuda/device_utils.cuh"
#include "device/cuda/packed.cuh"

namespace wb::cuda::softmax {

struct MaxSum {
  float max;
  float sum;  // sum of exp(x - max) over the values seen
};

__device__ inline MaxSum empty_max_sum() { return {-INFINITY, 0.0f}; }

// Adds one value. A new maximum rescales the sum once; -inf values add nothing.
__device__ inline void add(MaxSum& a, float x) {
  if (x > a.max) {
    a.sum = a.sum * expf(a.max - x) + 1.0f;  // expf(-inf) = 0 when the set was empty
    a.max = x;
  } else if (a.max != -INFINITY) {
    a.sum += expf(x - a.max);
  }
}

// Adds four values with at most one rescale: the chunk's maximum first, then the four
// exponentials. Columns to leave out are passed as -inf.
__device__ inline void add4(MaxSum& a, float4 v) {
  const float m = fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w));
  if (m > a.max) {
    a.sum *= expf(a.max - m);
    a.max = m;
  }
  if (a.max == -INFINITY) return;  // nothing seen yet, nothing in this chunk
  a.sum += (expf(v.x - a.max) + expf(v.y - a.max)) + (expf(v.z - a.max) + expf(v.w - a.max));
}

// The (max, sum) of the union of two sets. Symmetric to the last bit (no FMA
// contraction of the two products), so every lane of a butterfly ends with the same
// result.
__device__ inline MaxSum merge(MaxSum a, MaxSum b) {
  const float m = fmaxf(a.max, b.max);
  if (m == -INFINITY) return empty_max_sum();  // both empty
  return {m, __fadd_rn(__fmul_rn(a.sum, expf(a.max - m)), __fmul_rn(b.sum, expf(b.max - m)))};
}

// Over the 32 lanes of a warp (all must take part); every lane gets the result.
__device__ inline MaxSum warp_merge(MaxSum a) {
#pragma unroll
  for (int offset = cuda::kWarpSize / 2; offset > 0; offset /= 2) {
    const MaxSum b{__shfl_xor_sync(cuda::kFullMask, a.max, offset), __shfl_xor_sync(cuda::kFullMask, a.sum, offset)};
    a = merge(a, b);
  }
  return a;
}

// Over all threads of a block (blockDim.x a multiple of 32, at most 1024; every thread
// must call it); every thread gets the result. `scratch` is shared memory for 64
// floats; the function synchronises before returning, so scratch can be reused.
__device__ inline MaxSum block_merge(MaxSum a, float* scratch) {
  const int lane = threadIdx.x % cuda::kWarpSize;
  const int warp = threadIdx.x / cuda::kWarpSize;
  const int warps = blockDim.x / cuda::kWarpSize;
  a = warp_merge(a);
  if (lane == 0) {
    scratch[warp] = a.max;
    scratch[cuda::kWarpSize + warp] = a.sum;
  }
  __syncthreads();
  a = lane < warps ? MaxSum{scratch[lane], scratch[cuda::kWarpSize + lane]} : empty_max_sum();
  a = warp_merge(a);
  __syncthreads();
  return a;
}

// Sets the components of v whose column (first_col + k) is >= V to `fill`.
__device__ inline float4 mask_from(float4 v, int first_col, int V, float fill) {
  if (first_col + 0 >= V) v.x = fill;
  if (first_col + 1 >= V) v.y = fill;
  if (first_col + 2 >= V) v.z = fill;
  if (first_col + 3 >= V) v.w = fill;
  return v;
}

// One thread's share of a row's (max, sum): the values x[first], x[first + stride],
// ... below V (a warp's lanes with stride 32, or a block's threads with stride
// blockDim.x), of a row stored as T (float, or __nv_bfloat16 widened to fp32). kBatch
// loads are issued before any of them is used, so that several are in flight; loads
// past V read nothing and count as -inf.
template <int kBatch, class T>
__device__ __forceinline__ MaxSum strided_max_sum(const T* x, int V, int first, int stride) {
  MaxSum acc = empty_max_sum();
  for (int base = first; base < V; base += kBatch * stride) {
    float q[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const int i = base + u * stride;
      q[u] = i < V ? widen(x[i]) : -INFINITY;
    }
#pragma unroll
    for (int u = 0; u < kBatch; ++u) add(acc, q[u]);
  }
  return acc;
}

// The same over float4 chunks of a 16-byte aligned row: chunk v holds columns
// 4v..4v+3, and the thread takes chunks first, first + stride, ... among the
// ceil(V / 4) that hold one of the first V columns. kBatch 128-bit loads (ordinary
// ones: the row stays in L2 for a second read) are in flight per step; the chunk that
// straddles V is masked (its columns >= V count as -inf), chunks past it are not read.
template <int kBatch>
__device__ __forceinline__ MaxSum strided_max_sum4(const float* x, int V, int first, int stride) {
  const int real_vecs = (V + 3) / 4;
  const float4 neg_inf = make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
  MaxSum acc = empty_max_sum();
  for (int base = first; base < real_vecs; base += kBatch * stride) {
    float4 q[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const int v = base + u * stride;
      q[u] = v < real_vecs ? cuda::load4(x + 4 * v) : neg_inf;
    }
#pragma unroll
    for (int u = 0; u < kBatch; ++u) add4(acc, mask_from(q[u], 4 * (base + u * stride), V, -INFINITY));
  }
  return acc;
}

}  // namespace wb::cuda::softmax
