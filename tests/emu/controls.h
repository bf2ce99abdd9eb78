#pragma once
// Negative controls for the emulator: small CUDA kernels, each with one planted bug
// (and a correct twin where it helps), compiled for the emulator. Shared by the
// GoogleTest suite (test_emu_checks.cpp, plain build) and the sanitized control
// programs (sanitized_controls.cpp, built with ThreadSanitizer and AddressSanitizer).
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "emu/shim.h"  // first: this file is CUDA source compiled for the emulator

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

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

// The same two races with a __syncthreads before the write in each block: a barrier
// orders the threads of its own block only, so the plain add is still a race across
// blocks (and the atomic one still is not). The barrier once hid it from both builds'
// racechecks (their synchronisation leaked from block to block).
__global__ void global_write_race_after_barrier(float* out) {
  __syncthreads();
  if (threadIdx.x == 0) *out += 1.0f;
}

__global__ void global_atomic_add_after_barrier(float* out) {
  __syncthreads();
  if (threadIdx.x == 0) atomicAdd(out, 1.0f);
}

// Plain against atomic across blocks: block `plain_block` stores the word plainly
// (zeroing it) where the other blocks add to it atomically: a race in either order.
__global__ void plain_store_where_others_add(float* out, int plain_block) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == unsigned(plain_block))
    *out = 0.0f;
  else
    atomicAdd(out, 1.0f);
}

// The last-block pattern: every thread adds 1 to sums[block % 2] atomically; after the
// barrier thread 0 makes a __threadfence (when `fence`) and draws a ticket; the block
// that draws the last one writes the total plainly into both sums and resets the
// ticket plainly. Without the fence the plain writes race with the other blocks' adds.
__global__ void last_block_combines(float* sums, unsigned* ticket, int fence) {
  atomicAdd(&sums[blockIdx.x % 2], 1.0f);
  __syncthreads();
  if (threadIdx.x != 0) return;
  if (fence) __threadfence();
  if (atomicAdd(ticket, 1u) != gridDim.x - 1) return;
  const float total = sums[0] + sums[1];
  sums[0] = total;
  sums[1] = total;
  *ticket = 0;
}

// Block 0 sets the word that the other blocks add to (an exchange: atomics only, no
// race), assuming it starts first: an add made before it is lost. And each block's
// place in the order the blocks started (a ticket), to see the order.
__global__ void first_block_sets(unsigned* out, unsigned* started, unsigned* place) {
  if (threadIdx.x != 0) return;
  place[blockIdx.x] = atomicAdd(started, 1u);
  if (blockIdx.x == 0)
    atomicExch(out, 100u);
  else
    atomicAdd(out, 1u);
}

// Blocks writing the same word in launches of their own: ordered by the launches'
// ends, no race.
__global__ void global_write_by_block(float* out, int block) {
  if (blockIdx.x == unsigned(block) && threadIdx.x == 0) *out += 1.0f;
}

// The halves of a warp shuffle under the full mask at two different calls: each half
// waits for the other at its own call, forever (a deadlock).
__global__ void whole_warp_shuffles_apart(float* out) {
  float v = float(threadIdx.x);
  if (threadIdx.x % 32 < 16)
    v = __shfl_xor_sync(0xffffffffu, v, 16);
  else
    v = __shfl_xor_sync(0xffffffffu, v, 16) + 1.0f;
  out[threadIdx.x] = v;
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

// ---------------------------------------------------------------------------------
// Correct CUDA that an emulator with too simple a model of the hardware fails

// Each half of the warp sums its 16 values with its own mask, at one call site.
__global__ void half_warp_sums(float* out, const float* in) {
  const unsigned mask = threadIdx.x % 32 < 16 ? 0x0000ffffu : 0xffff0000u;
  float v = in[threadIdx.x];
  for (int offset = 8; offset > 0; offset /= 2) v += __shfl_xor_sync(mask, v, offset);
  out[threadIdx.x] = v;
}

// Each half of the warp shuffles under its own mask at one call, then the whole warp
// under the full mask at the next. The half kLagging (0: lanes 0-15, 1: lanes 16-31)
// first syncs by itself, so that the other half reaches the full-mask shuffle while it
// still has its own to do: under independent thread scheduling (sm_70+) the lanes
// waiting there do not stop it. out[i] = in[i] + in[i ^ 1] + in[i ^ 16] + in[i ^ 17].
template <int kLagging>
__global__ void halves_then_whole_warp(float* out, const float* in) {
  const bool upper = threadIdx.x % 32 >= 16;
  const unsigned half = upper ? 0xffff0000u : 0x0000ffffu;
  float v = in[threadIdx.x];
  if (int(upper) == kLagging) __syncwarp(half);
  v += __shfl_xor_sync(half, v, 1);
  v += __shfl_xor_sync(0xffffffffu, v, 16);
  out[threadIdx.x] = v;
}

// Appends the positive inputs to out, one atomic per warp: the lanes in the branch
// find each other with __activemask, elect the lowest as leader, and it reserves room
// for all of them.
__global__ void append_positive(float* out, int* count, const float* in) {
  const float x = in[blockIdx.x * blockDim.x + threadIdx.x];
  if (x > 0.0f) {
    const unsigned active = __activemask();
    const int lane = int(threadIdx.x % 32);
    const int leader = __ffs(active) - 1;
    int base = 0;
    if (lane == leader) base = atomicAdd(count, __popc(active));
    base = __shfl_sync(active, base, leader);
    out[base + __popc(active & ((1u << lane) - 1))] = x;
  }
}

// Warp 0 waits for a flag in shared memory that warp 1 sets (legal since Volta: the
// warps of a block make progress independently), polling it with a volatile read or
// with an atomic.
__global__ void flag_handoff(float* out, bool atomics) {
  WB_SHARED(int, flag, [1]);
  WB_SHARED(float, value, [1]);
  if (threadIdx.x == 0) flag[0] = 0;
  __syncthreads();
  if (threadIdx.x == 32) {
    value[0] = 42.0f;
    __threadfence_block();
    if (atomics)
      atomicExch(&flag[0], 1);
    else
      *static_cast<volatile int*>(&flag[0]) = 1;
  }
  if (threadIdx.x == 0) {
    if (atomics)
      while (atomicAdd(&flag[0], 0) == 0) {
      }
    else
      while (*static_cast<volatile int*>(&flag[0]) == 0) {
      }
    __threadfence_block();
    out[0] = value[0];
  }
}

// Each tile of N threads sums its inputs and finds their largest with cooperative
// groups; the tile's first thread writes both.
template <unsigned N>
__global__ void tile_reductions(float* out, const float* in) {
  namespace cg = cooperative_groups;
  const cg::thread_block block = cg::this_thread_block();
  const cg::thread_block_tile<N> tile = cg::tiled_partition<N>(block);
  const float v = in[block.thread_rank()];
  const float sum = cg::reduce(tile, v, cg::plus<float>());
  const float largest = cg::reduce(tile, v, cg::greater<float>());
  tile.sync();
  if (tile.thread_rank() == 0) {
    out[2 * tile.meta_group_rank()] = sum;
    out[2 * tile.meta_group_rank() + 1] = largest;
  }
}

// __match_any_sync groups the lanes by lane % 3; __match_all_sync over a value every
// lane shares, and over one they do not.
__global__ void match_lanes(unsigned* out) {
  const unsigned lane = threadIdx.x % 32;
  out[threadIdx.x] = __match_any_sync(0xffffffffu, int(lane % 3));
  int all_same = 0, all_lanes = 0;
  out[32 + threadIdx.x] = __match_all_sync(0xffffffffu, 7LL, &all_same);
  out[64 + threadIdx.x] = __match_all_sync(0xffffffffu, lane, &all_lanes);
  out[96 + threadIdx.x] = unsigned(all_same) + 2u * unsigned(all_lanes);
}

// ---------------------------------------------------------------------------------
// Bugs a GPU exposes

// Reads one float past the end of its input.
__global__ void global_overread(float* out, const float* in, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i + 1];
}

// Peeks at the float after its own, past the end of the input for the last thread, and
// uses it only in a test that a NaN fails: the output is right (a GPU runs it too), the
// read past the end is not.
__global__ void peeks_past_end(float* out, const float* in, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float next = in[i + 1];
  out[i] = in[i] + (next > 1e30f ? 1.0f : 0.0f);
}

// Writes `offset` floats past the end of its n-float output (past the canary: into the
// guard region after it).
__global__ void far_write(float* out, int n, int offset) {
  if (threadIdx.x == 0) out[n + offset] = 1.0f;
}

// Every thread adds one to a shared counter without an atomic: a read-modify-write
// race that loses updates when threads interleave between the read and the write.
__global__ void shared_count(float* out) {
  WB_SHARED(int, count, [1]);
  if (threadIdx.x == 0) count[0] = 0;
  __syncthreads();
  count[0] += 1;
  __syncthreads();
  if (threadIdx.x == 0) out[0] = float(count[0]);
}

// Block 0 waits for a flag that the grid's last block sets: blocks depending on each
// other's progress, which a GPU does not promise (it may run them one at a time).
__global__ void wait_for_last_block(float* out, int* flag) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == gridDim.x - 1) atomicExch(flag, 1);
  if (blockIdx.x == 0) {
    while (atomicAdd(flag, 0) == 0) {
    }
    out[0] = 1.0f;
  }
}

// Threads past n leave before the barrier that the others wait at: a __syncthreads in
// conditional code whose condition is not uniform across the block.
__global__ void exit_before_barrier(float* out, const float* in, int n) {
  WB_SHARED(float, s, [kThreads]);
  const int i = int(threadIdx.x);
  if (i >= n) return;
  s[i] = in[i];
  __syncthreads();
  out[i] = s[(i + 1) % n];
}

}  // namespace wb::emu_controls
