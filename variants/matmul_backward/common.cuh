#pragma once
// matmul_backward: the bias-gradient pass that CUDA variants 2-5 share.
//
//   dbias[o] += sum over the B*T rows of dout[:, o]
//
// Two passes, deterministic (no atomics, a fixed summation order):
//   1. bias_column_partials: the grid is (column tiles of 32) x (row slices). A block
//      of 32 x kBiasRowLanes threads owns 32 consecutive columns and one slice of rows;
//      each warp reads whole 128-byte row segments (coalesced), every thread sums its
//      rows in order, the row lanes are added in order through shared memory, and the
//      block writes one partial sum per column into the workspace.
//   2. bias_add_partials: one thread per column adds the slices' partials in slice
//      order and adds the total to dbias (accumulated, never overwritten).
// Why two passes: one block per column tile alone leaves most SMs idle (OC / 32 = 96
// blocks at OC = 3072); slicing the rows gives thousands of blocks while the second
// pass reads only slices * OC floats.
// Workspace: bias_workspace_bytes(rows, OC) = slices * OC floats at its start.
// Everything here sits in an anonymous namespace: every file that includes this
// header uses all of it.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/cuda/runtime.h"

namespace wb::variants {
namespace {

constexpr int kBiasColumns = 32;        // columns per block: one warp's width
constexpr int kBiasRowLanes = 8;        // warps per block; each walks its own rows
constexpr int kBiasRowsPerSlice = 256;  // rows a block covers when the rows allow it
constexpr int kBiasMaxSlices = 64;      // at most this many partials per column
constexpr int kBiasFinishBlock = 256;

// Row slices for `rows` rows: about kBiasRowsPerSlice rows each, at most kBiasMaxSlices.
inline int bias_slices(int64_t rows) {
  const int64_t s = (rows + kBiasRowsPerSlice - 1) / kBiasRowsPerSlice;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(s, kBiasMaxSlices)));
}

// Workspace bytes of the bias pass; 256-byte multiples so that what follows it in a
// variant's workspace stays aligned.
inline std::size_t bias_workspace_bytes(int64_t rows, int64_t OC) {
  const std::size_t bytes = std::size_t(bias_slices(rows)) * std::size_t(OC) * sizeof(float);
  return (bytes + 255) / 256 * 256;
}

// grid (ceil(OC / 32), slices), block (32, kBiasRowLanes).
// partial[slice * OC + col] = sum of dout[r, col] over the slice's rows.
__global__ void bias_column_partials(float* partial, const float* dout, int rows, int OC, int rows_per_slice) {
  __shared__ float sums[kBiasRowLanes][kBiasColumns];
  const int col = blockIdx.x * kBiasColumns + threadIdx.x;
  const int r_begin = blockIdx.y * rows_per_slice;
  const int r_end = min(rows, r_begin + rows_per_slice);
  float acc = 0.0f;
  if (col < OC) {
#pragma unroll 4
    for (int r = r_begin + threadIdx.y; r < r_end; r += kBiasRowLanes) acc += dout[std::size_t(r) * OC + col];
  }
  sums[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();  // every thread of the block reaches it: no early return above
  if (threadIdx.y == 0 && col < OC) {
    float s = 0.0f;
#pragma unroll
    for (int lane = 0; lane < kBiasRowLanes; ++lane) s += sums[lane][threadIdx.x];
    partial[std::size_t(blockIdx.y) * OC + col] = s;
  }
}

// One thread per column: dbias[col] += partial[0, col] + partial[1, col] + ... in order.
__global__ void bias_add_partials(float* dbias, const float* partial, int OC, int slices) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= OC) return;
  float s = 0.0f;
  for (int i = 0; i < slices; ++i) s += partial[std::size_t(i) * OC + col];
  dbias[col] += s;
}

// dbias (OC) += column sums of dout (rows, OC); `workspace` holds at least
// bias_workspace_bytes(rows, OC) bytes.
inline void launch_bias_grad(float* dbias, const float* dout, int rows, int OC, float* workspace, cudaStream_t stream) {
  const int slices = bias_slices(rows);
  const int rows_per_slice = (rows + slices - 1) / slices;
  const dim3 grid(cuda::grid_for(OC, kBiasColumns), slices);
  const dim3 block(kBiasColumns, kBiasRowLanes);
  bias_column_partials<<<grid, block, 0, stream>>>(workspace, dout, rows, OC, rows_per_slice);
  WB_CHECK_LAUNCH();
  bias_add_partials<<<cuda::grid_for(OC, kBiasFinishBlock), kBiasFinishBlock, 0, stream>>>(dbias, workspace, OC,
                                                                                           slices);
  WB_CHECK_LAUNCH();
}

}  // namespace
}  // namespace wb::variants
