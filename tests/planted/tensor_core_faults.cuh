#pragma once
// A small, correct mma.sync matmul_forward_bf16 and its planted copies (test only: the
// tensor-core instructions' negative controls, tests/planted/planted_faults.cu for
// `wb check --backend emu`, tests/emu/sanitized_controls.cpp for the ThreadSanitizer
// pass). CUDA source, compiled by nvcc (sm_80+) and for the emulator.
//
// out (rows, OC) = inp (rows, C) @ weight (OC, C)^T + bias, in bf16 with fp32 sums.
// A block of two warps computes a 16 x 16 tile of out, warp w the 16 x 8 half at
// columns 8w..8w+7, with one mma.sync m16n8k16 per 16 channels. Its A (16 rows of inp)
// and B (16 rows of weight) slices, 16 channels each, are staged in shared memory by
// cp.async (16 bytes a thread: warp 0 copies A, warp 1 B) in a two-stage pipeline, and
// read with ldmatrix: A as x4 (matrices: rows 0-7 and 8-15 of channels 0-7, then of
// channels 8-15: a[0..3] of the PTX layout), B as x2 (weight rows n, channels 0-7 and
// 8-15: b[0..1], B[k][n] being weight[n][k]). Each warp reads the stage the other warp
// copied half of, so the block's __syncthreads matter. C % 8 == 0 (16-byte copies of
// whole 8-channel chunks); rows and columns past the edges and channels past C are
// zero-filled copies (src_bytes 0).
//
// The planted bugs (kBug):
//   swapped_a_fragment   A loaded with ldmatrix .trans: each lane holds A's element
//                        with its row and column swapped (a wrong product);
//   reads_before_wait    the compute reads a stage before the cp_async_wait that lands
//                        it (waits after): poison, NaNs in every output;
//   row_one_off          lane i gives the address of A's row i % 8 + 1 instead of i % 8
//                        (row 16 of a stage: the next stage's, or past the tile);
//   missing_barrier      no __syncthreads between the wait and the compute: a warp may
//                        read rows of the other warp's copies before they land (the
//                        ThreadSanitizer pass reports the race);
//   refill_before_barrier  no __syncthreads at the end of a step: the next step's
//                        refill of a stage is issued before the barrier that ends the
//                        other warp's reads of it (a write-after-read race between
//                        warps, which only a warp running ahead of the other shows);
//   no_odd_column_guard  the epilogue guards each pair of columns (2t, 2t + 1) by its
//                        first column only: with an odd OC the last pair's second
//                        value lands one past the row (past the buffer, on the last row).
#include <cuda_bf16.h>

#include <cstdint>

#include "device/cuda/dialect.cuh"
#include "device/cuda/tensor_core_ptx.cuh"

namespace wb::planted_tc {

enum class Bug {
  none,
  swapped_a_fragment,
  reads_before_wait,
  row_one_off,
  missing_barrier,
  refill_before_barrier,
  no_odd_column_guard
};

constexpr int kTileRows = 16, kTileCols = 16, kTileK = 16, kThreads = 64;

template <Bug kBug>
__global__ void mma_matmul_bf16(__nv_bfloat16* out, const __nv_bfloat16* inp, const __nv_bfloat16* weight,
                                const __nv_bfloat16* bias, int rows, int C, int OC) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  namespace tc = cuda::tc;
  // [stage][row][channel]: rows of 32 bytes, so each 8-channel half-row is a 16-byte,
  // 16-byte aligned ldmatrix row.
  WB_SHARED_ALIGNED(16, __nv_bfloat16, a_tile, [2][kTileRows][kTileK]);
  WB_SHARED_ALIGNED(16, __nv_bfloat16, b_tile, [2][kTileCols][kTileK]);
  const int thread = threadIdx.x, warp = thread / 32, lane = thread % 32;
  const int row0 = blockIdx.y * kTileRows, col0 = blockIdx.x * kTileCols;
  const int steps = (C + kTileK - 1) / kTileK;

  // This thread's copy of step `s` into its stage: warp 0 row lane / 2 of A, warp 1 of
  // B, channels 8 (lane % 2) onwards.
  auto issue = [&](int s) {
    const int r = lane / 2, k = s * kTileK + 8 * (lane % 2);
    const int stage = s % 2;
    const int global_row = warp == 0 ? row0 + r : col0 + r;
    const int limit = warp == 0 ? rows : OC;
    const __nv_bfloat16* base = warp == 0 ? inp : weight;
    const bool inside = global_row < limit && k < C;
    const __nv_bfloat16* src = inside ? base + int64_t(global_row) * C + k : base;
    __nv_bfloat16* dst = warp == 0 ? &a_tile[stage][r][8 * (lane % 2)] : &b_tile[stage][r][8 * (lane % 2)];
    tc::cp_async_cg<16>(dst, src, inside ? 16 : 0);
  };

  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  issue(0);
  tc::cp_async_commit();
  for (int s = 0; s < steps; ++s) {
    if (s + 1 < steps) issue(s + 1);  // refill the other stage, read two steps ago
    tc::cp_async_commit();            // (an empty group on the last step)
    if (kBug != Bug::reads_before_wait) tc::cp_async_wait<1>();  // step s's group has landed
    if (kBug != Bug::missing_barrier) __syncthreads();           // ... every thread's
    const int stage = s % 2;
    // ldmatrix rows: lane i gives row i % 8 of matrix i / 8.
    const int m = lane / 8, i = lane % 8;
    const int a_row = (m % 2) * 8 + i + (kBug == Bug::row_one_off ? 1 : 0);
    const __nv_bfloat16* a_addr = &a_tile[stage][0][0] + a_row * kTileK + 8 * (m / 2);
    const __nv_bfloat16* b_addr = &b_tile[stage][8 * warp + i][8 * (m % 2)];
    uint32_t a[4], b[2];
    if (kBug == Bug::swapped_a_fragment)
      tc::ldmatrix_x4_trans(a, a_addr);
    else
      tc::ldmatrix_x4(a, a_addr);
    tc::ldmatrix_x2(b, b_addr);
    tc::mma_m16n8k16_bf16(acc, a, b, acc);
    if (kBug == Bug::reads_before_wait) tc::cp_async_wait<1>();
    // Every warp is done with this stage before the next step refills it.
    if (kBug != Bug::refill_before_barrier) __syncthreads();
  }

  // D: rows g and g + 8, columns 2t and 2t + 1 of this warp's 16 x 8.
  const int g = lane / 4, t = lane % 4;
  for (int e = 0; e < 4; ++e) {
    const int r = row0 + g + 8 * (e / 2), o = col0 + 8 * warp + 2 * t + e % 2;
    const int guarded = kBug == Bug::no_odd_column_guard ? o - e % 2 : o;
    if (r < rows && guarded < OC)
      out[int64_t(r) * OC + o] = __float2bfloat16(acc[e] + (bias ? __bfloat162float(bias[o]) : 0.0f));
  }
#endif
}

inline dim3 mma_matmul_grid(int rows, int OC) {
  return dim3(unsigned((OC + kTileCols - 1) / kTileCols), unsigned((rows + kTileRows - 1) / kTileRows));
}

}  // namespace wb::planted_tc
