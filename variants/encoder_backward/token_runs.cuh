#pragma once
// encoder_backward's deterministic scatter-add (cuda/2 and encoder_backward_bf16
// cuda/2): the B*T positions grouped into runs of one token, in position order, then
// every run summed in a fixed order. Steps:
//   1. histogram: count the positions of every bucket, bucket = token & (H - 1), H a
//      power of two >= B*T (integer atomics: the counts are exact whatever the order);
//   2. exclusive scan of the H counts (one block): where each bucket starts;
//   3. scatter (token, position) pairs into their buckets -- in an arbitrary order;
//   4. rank: every position counts, inside its bucket, the pairs that sort before it
//      by (token, position). That gives it a unique slot, so the sorted order no longer
//      depends on step 3: all positions of one token end up contiguous, in increasing
//      position order; the first of each run records the run's length;
//   5. accumulate_runs: one block per run start and 32 channels sums dout over the run
//      (slice s of the block takes run entries s, s + S, ..., then slice sums are added
//      in slice order) and adds the total to dwte[token];
//   6. accumulate_positions: dwpe[t, c] += sum over b of dout[b, t, c].
// Steps 1-4 are sort_positions_by_token; 5 and 6 take float or bf16 storage.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"

namespace wb::cuda::token_runs {

constexpr int kScanThreads = 1024;
constexpr int kScanTile = 4 * kScanThreads;  // counts per scan step: one int4 per thread
constexpr int kAuxBlock = 256;               // threads per block of steps 1, 3, 4

// H: the bucket count, a power of two >= B*T and a multiple of the scan tile.
inline int64_t bucket_count(int64_t positions) {
  int64_t h = kScanTile;
  while (h < positions) h *= 2;
  return h;
}

// The workspace, carved in this order: counts and starts 16-byte aligned (int4 in the
// scan; H % 4096 == 0), pairs 8-byte aligned.
struct Layout {
  int* counts;   // [H] counts, then the write cursor of every bucket, then its end
  int* starts;   // [H] first slot of every bucket
  int2* pairs;   // [B*T] (token, position), bucketed but unordered inside a bucket
  int* sorted;   // [B*T] positions ordered by (token, position)
  int* run_len;  // [B*T] length of the run of one token starting at a slot, else 0
  int64_t h;
};

inline std::size_t workspace_for(int64_t positions) {
  return std::size_t(bucket_count(positions)) * 2 * sizeof(int) +
         std::size_t(positions) * (sizeof(int2) + 2 * sizeof(int));
}

inline Layout layout(void* workspace, int64_t positions) {
  Layout l;
  l.h = bucket_count(positions);
  char* p = static_cast<char*>(workspace);
  l.counts = reinterpret_cast<int*>(p);
  l.starts = l.counts + l.h;
  l.pairs = reinterpret_cast<int2*>(l.starts + l.h);
  l.sorted = reinterpret_cast<int*>(l.pairs + positions);
  l.run_len = l.sorted + positions;
  return l;
}

namespace {

__global__ void histogram(int* counts, const int32_t* inp, int positions, int mask) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < positions) atomicAdd(counts + (inp[i] & mask), 1);
}

// Exclusive prefix sum of counts[0, n) into starts, and a copy into counts (the
// cursors of step 3). One block of kScanThreads threads; n % kScanTile == 0.
__global__ void __launch_bounds__(kScanThreads) exclusive_scan(int* counts, int* starts, int n) {
  WB_SHARED(int, warp_offsets, [kWarpSize]);
  WB_SHARED(int, tile_total, );
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  int carry = 0;  // sum of all earlier tiles, the same in every thread
  for (int base = 0; base < n; base += kScanTile) {
    const int at = base + 4 * threadIdx.x;
    const int4 c = *reinterpret_cast<const int4*>(counts + at);
    const int in0 = c.x, in1 = in0 + c.y, in2 = in1 + c.z, mine = in2 + c.w;  // inclusive, in-thread
    int inclusive = mine;  // inclusive scan over the lanes of the warp
#pragma unroll
    for (int offset = 1; offset < kWarpSize; offset *= 2) {
      const int up = __shfl_up_sync(kFullMask, inclusive, offset);
      if (lane >= offset) inclusive += up;
    }
    if (lane == kWarpSize - 1) warp_offsets[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {  // kScanThreads / 32 == 32 warps: one value per lane
      const int total = warp_offsets[lane];
      int scanned = total;
#pragma unroll
      for (int offset = 1; offset < kWarpSize; offset *= 2) {
        const int up = __shfl_up_sync(kFullMask, scanned, offset);
        if (lane >= offset) scanned += up;
      }
      warp_offsets[lane] = scanned - total;  // exclusive
      if (lane == kWarpSize - 1) tile_total = scanned;
    }
    __syncthreads();
    const int before = carry + warp_offsets[warp] + inclusive - mine;
    const int4 s = make_int4(before, before + in0, before + in1, before + in2);
    *reinterpret_cast<int4*>(starts + at) = s;
    *reinterpret_cast<int4*>(counts + at) = s;
    carry += tile_total;
    __syncthreads();  // warp_offsets and tile_total are rewritten by the next tile
  }
}

__global__ void scatter(int2* pairs, int* cursors, const int32_t* inp, int positions, int mask) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= positions) return;
  const int token = inp[i];
  pairs[atomicAdd(cursors + (token & mask), 1)] = make_int2(token, i);
}

__global__ void rank_in_bucket(int* sorted, int* run_len, const int2* pairs, const int* starts, const int* ends,
                               const int32_t* inp, int positions, int mask) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= positions) return;
  const int token = inp[i];
  const int bucket = token & mask;
  const int first = starts[bucket], end = ends[bucket];
  int smaller_token = 0, same_token = 0, same_before = 0;
  for (int j = first; j < end; ++j) {
    const int2 o = pairs[j];
    smaller_token += o.x < token;
    same_token += o.x == token;
    same_before += o.x == token && o.y < i;
  }
  const int slot = first + smaller_token + same_before;
  sorted[slot] = i;
  run_len[slot] = same_before == 0 ? same_token : 0;
}

// Block (run start, 32 channels); blockDim.x = 32 * slices, slices <= 32. T is the
// storage of dwte and dout (float or __nv_bfloat16): the sums are fp32, and each
// element of dwte is updated once, from old + total (one rounding in bf16).
template <class T>
__global__ void accumulate_runs(T* dwte, const T* dout, const int* sorted, const int* run_len, const int32_t* inp,
                                int C) {
  WB_SHARED(float, partial, [kWarpSize][kWarpSize]);  // [slice][lane]
  const int start = blockIdx.x;
  const int len = run_len[start];
  if (len == 0) return;  // the whole block: not the start of a run
  const int lane = threadIdx.x % kWarpSize;
  const int slice = threadIdx.x / kWarpSize;
  const int slices = blockDim.x / kWarpSize;
  const int c = blockIdx.y * kWarpSize + lane;
  float sum = 0.0f;
  if (c < C)
    for (int j = slice; j < len; j += slices) sum += widen(dout[int64_t(sorted[start + j]) * C + c]);
  partial[slice][lane] = sum;
  __syncthreads();
  if (slice == 0 && c < C) {
    float total = 0.0f;
    for (int s = 0; s < slices; ++s) total += partial[s][lane];
    T& d = dwte[int64_t(inp[sorted[start]]) * C + c];
    d = narrow<T>(widen(d) + total);
  }
}

// dwpe[t, c] = old + sum over b of dout[b, t, c], b in increasing order, one thread
// per (t, c); one rounding in bf16.
template <class E>
__global__ void accumulate_positions(E* dwpe, const E* dout, int B, int T, int C) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;  // t * C + c
  const int64_t plane = int64_t(T) * C;
  if (i >= plane) return;
  float sum = 0.0f;
  for (int b = 0; b < B; ++b) sum += widen(dout[b * plane + i]);
  dwpe[i] = narrow<E>(widen(dwpe[i]) + sum);
}

}  // namespace

// Steps 1-4 on the stream: w.sorted holds the positions ordered by (token, position),
// w.run_len the length of the run starting at each slot (0 inside a run).
inline void sort_positions_by_token(const Layout& w, const int32_t* inp, int positions, cudaStream_t s) {
  const int mask = int(w.h - 1);
  const unsigned aux_grid = grid_for(positions, kAuxBlock);
  WB_CHECK(cudaMemsetAsync(w.counts, 0, std::size_t(w.h) * sizeof(int), s));
  WB_LAUNCH(histogram, aux_grid, kAuxBlock, 0, s, w.counts, inp, positions, mask);
  WB_LAUNCH(exclusive_scan, 1, kScanThreads, 0, s, w.counts, w.starts, int(w.h));
  WB_LAUNCH(scatter, aux_grid, kAuxBlock, 0, s, w.pairs, w.counts, inp, positions, mask);
  WB_LAUNCH(rank_in_bucket, aux_grid, kAuxBlock, 0, s, w.sorted, w.run_len, w.pairs, w.starts, w.counts, inp,
            positions, mask);
}

}  // namespace wb::cuda::token_runs
