#pragma once
// Negative controls for the emulator: small CUDA kernels, each with one planted bug
// (and a correct twin where it helps), compiled for the emulator. Shared by the
// GoogleTest suite (test_emu_checks.cpp, plain build) and the sanitized control
// programs (sanitized_controls.cpp, built with ThreadSanitizer and AddressSanitizer).
#include "kernels/cuda/device_utils.cuh"
#include "kernels/cuda/dialect.cuh"
#include "kernels/emu/shim.h"  // first: this file is CUDA source compiled for the emulator

namespace wb::emu_controls {

constexpr int kThreads = 64;

// Sums in[0..63] through shared memory; `barrier` false leaves out the __syncthreads
// between the writes and thread 0's reads.
__global__ void block_sum(float* out, const float* in, bool barrier) {
  WB_SHARED(float, partial, [kThreads]);
  partial[threadIdx.x] = in[threadIdx.x];
  if (barrier) __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0.0f;
    for (int i = 0; i < kThreads; ++i) s += partial[i];
    *out = s;
  }
}

// out[i] = i for i < n, and (off by one) for i == n too.
__global__ void off_by_one(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) out[i] = float(i);
}

// Copies four floats per thread with 128-bit accesses, from wherever `in` points: off a
// 16-byte boundary, a misaligned-address fault on a GPU.
__global__ void copy4(float* out, const float* in) {
  const int i = 4 * threadIdx.x;
  ::wb::cuda::store4(out + i, ::wb::cuda::load4(in + i));
}

// Reads the shared word of the next thread, which nobody wrote for the last thread.
__global__ void uninitialised_shared(float* out) {
  WB_SHARED(float, s, [kThreads + 1]);
  s[threadIdx.x] = float(threadIdx.x);
  __syncthreads();
  out[threadIdx.x] = s[threadIdx.x + 1];
}

// The upper half of the warp leaves, the lower half shuffles with a full mask.
__global__ void shuffle_with_exited_lanes(float* out) {
  float v = float(threadIdx.x);
  if (threadIdx.x >= 16) return;
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  out[threadIdx.x] = v;
}

// Two halves of the block wait at two different barriers.
__global__ void divergent_barrier(float* out) {
  if (threadIdx.x < 16) {
    __syncthreads();
  } else {
    __syncthreads();
  }
  out[threadIdx.x] = 1.0f;
}

// Every thread writes its index to the same shared word with no barrier in between.
__global__ void shared_write_race(float* out) {
  WB_SHARED(float, word, [1]);
  word[0] = float(threadIdx.x);
  __syncthreads();
  if (threadIdx.x == 0) *out = word[0];
}

// Writes one float past its shared array.
__global__ void shared_overflow(float* out) {
  WB_SHARED(float, s, [kThreads]);
  s[threadIdx.x + 1] = 1.0f;
  __syncthreads();
  out[threadIdx.x] = s[threadIdx.x];
}

// Reads one float past its shared array (only AddressSanitizer sees a read).
__global__ void shared_overread(float* out) {
  WB_SHARED(float, s, [kThreads]);
  s[threadIdx.x] = 1.0f;
  __syncthreads();
  out[threadIdx.x] = s[threadIdx.x + 1];
}

__global__ void traps(float* out) {
  if (threadIdx.x == 3) __trap();
  out[threadIdx.x] = 0.0f;
}

__global__ void big_static_shared(float* out) {
  WB_SHARED(float, a, [8 * 1024]);
  WB_SHARED(float, b, [8 * 1024]);  // 64 KiB in all
  a[threadIdx.x] = 1.0f;
  b[threadIdx.x] = 2.0f;
  __syncthreads();
  out[threadIdx.x] = a[threadIdx.x] + b[threadIdx.x];
}

__global__ void dynamic_shared_copy(float* out, const float* in, int n) {
  WB_DYNAMIC_SHARED(float, s);
  for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = in[i];
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = s[n - 1 - i];
}

// Two blocks add to the same global word without atomics (a race across blocks).
__global__ void global_write_race(float* out) {
  if (threadIdx.x == 0) *out += 1.0f;
}

__global__ void global_atomic_add(float* out) {
  if (threadIdx.x == 0) atomicAdd(out, 1.0f);
}

// Lanes 0-15 shuffle with a full mask while lanes 16-31 wait at a barrier: a deadlock.
__global__ void shuffle_against_barrier(float* out) {
  float v = float(threadIdx.x);
  if (threadIdx.x < 16) {
    v = __shfl_xor_sync(0xffffffffu, v, 16);
  } else {
    __syncthreads();
  }
  out[threadIdx.x] = v;
}

}  // namespace wb::emu_controls

namespace wb::emu_controls {

// Reads one float past the end of its input.
__global__ void global_overread(float* out, const float* in, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i + 1];
}

}  // namespace wb::emu_controls
