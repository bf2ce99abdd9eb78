#pragma once
// The WMMA warp tile of the two WMMA rungs, matmul_forward cuda/7 (TF32, m16n16k8 on
// fp32 storage) and matmul_forward_bf16 cuda/4 (bf16, m16n16k16): each warp owns a
// kWM x kWN piece of the block tile as 16x16 fp32 accumulator fragments, multiplies
// k-contiguous slabs in shared memory into them (inp rows as row-major A, weight rows,
// B's columns, as col-major B: ld = the padded slab row) and hands its sums out through
// shared memory, since a fragment's element order is unspecified. What is the rung's
// own: the slabs' element type and layout in shared memory, their rounding on the way
// in, and what becomes of each sum.
#include <cuda_bf16.h>
#include <mma.h>  // under the emulator, emu/include/mma.h

#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "contract/shape.h"
#include "contract/variant.h"
#include "variants/matmul/matmul.cuh"

namespace wb::cuda::wmma_tiles {

namespace wmma = nvcuda::wmma;

// A kTile x kTile block tile over kWarpsM x kWarpsN warps, this thread's warp's piece
// of it; T: the fragments' element type, wmma::precision::tf32 (k 8) or __nv_bfloat16
// (k 16). Constructed zero.
template <int kTile, int kWarpsM, int kWarpsN, class T>
struct WarpTile {
  static constexpr int kWM = kTile / kWarpsM;                           // rows of a warp's tile
  static constexpr int kWN = kTile / kWarpsN;                           // columns of a warp's tile
  static constexpr int kK = std::is_same_v<T, __nv_bfloat16> ? 16 : 8;  // channels per mma_sync
  static constexpr int kFM = kWM / 16;                                  // accumulator fragments down the tile
  static constexpr int kFN = kWN / 16;                                  // and across
  static_assert(kWM % 16 == 0 && kWN % 16 == 0, "whole fragments per warp");
  const int warp = threadIdx.x / 32;
  const int r0 = warp / kWarpsN * kWM;  // the warp's first row within the block tile
  const int o0 = warp % kWarpsN * kWN;  // and its first column
  wmma::fragment<wmma::accumulator, 16, 16, kK, float> acc[kFM][kFN];

  __device__ WarpTile() {
#pragma unroll
    for (int i = 0; i < kFM; ++i)
#pragma unroll
      for (int j = 0; j < kFN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
  }

  // acc += the warp's rows of the block's inp slab (xs) times its rows of the weight
  // slab (ws): kBK channels, slab rows kLd elements apart.
  template <int kBK, int kLd, class E>
  __device__ void multiply_slab(const E* xs, const E* ws) {
    xs += r0 * kLd;  // the warp's first row of each
    ws += o0 * kLd;
#pragma unroll
    for (int kk = 0; kk < kBK; kk += kK) {
      wmma::fragment<wmma::matrix_a, 16, 16, kK, T, wmma::row_major> af[kFM];
      wmma::fragment<wmma::matrix_b, 16, 16, kK, T, wmma::col_major> bf[kFN];
#pragma unroll
      for (int i = 0; i < kFM; ++i) wmma::load_matrix_sync(af[i], xs + i * 16 * kLd + kk, kLd);
#pragma unroll
      for (int j = 0; j < kFN; ++j) wmma::load_matrix_sync(bf[j], ws + j * 16 * kLd + kk, kLd);
#pragma unroll
      for (int i = 0; i < kFM; ++i)
#pragma unroll
        for (int j = 0; j < kFN; ++j) wmma::mma_sync(acc[i][j], af[i], bf[j], acc[i][j]);
    }
  }

  // The epilogue, once every warp is past the slabs: one fragment at a time through
  // the warp's own 16x16 fp32 part of `scratch` (kWarpsM * kWarpsN * 256 floats of
  // shared memory), then put(r, o, sum) for each of its outputs, at row r and column o of
  // out for a block tile at (row0, col0); put masks the edges. lane: threadIdx.x % 32.
  template <class Put>
  __device__ void store(float* scratch, int lane, int row0, int col0, Put&& put) {
    float* const mine = scratch + warp * 256;
#pragma unroll
    for (int i = 0; i < kFM; ++i) {
#pragma unroll
      for (int j = 0; j < kFN; ++j) {
        wmma::store_matrix_sync(mine, acc[i][j], 16, wmma::mem_row_major);
        __syncwarp();
#pragma unroll
        for (int q = 0; q < 8; ++q) {
          const int e = lane + 32 * q;
          put(row0 + r0 + i * 16 + e / 16, col0 + o0 + j * 16 + e % 16, mine[e]);
        }
        __syncwarp();
      }
    }
  }
};

// Calls f(kTile, kWarpsM, kWarpsN), as integral constants, for the launch parameters
// tile (64 or 128) and block_size (128: 2 x 2 warps; 256: 2 x 4): the one place that
// turns them into an instantiation.
template <class F>
void with_warps(int tile, int block_size, const char* what, F&& f) {
  using I2 = std::integral_constant<int, 2>;
  using I4 = std::integral_constant<int, 4>;
  using I64 = std::integral_constant<int, 64>;
  using I128 = std::integral_constant<int, 128>;
  if (tile == 128 && block_size == 256) return f(I128{}, I2{}, I4{});
  if (tile == 128 && block_size == 128) return f(I128{}, I2{}, I2{});
  if (tile == 64 && block_size == 256) return f(I64{}, I2{}, I4{});
  if (tile == 64 && block_size == 128) return f(I64{}, I2{}, I2{});
  throw std::logic_error(std::string(what) + ": no kernel for tile " + std::to_string(tile) + " and block_size " +
                         std::to_string(block_size));
}

// A rung on these warp tiles running `launch`: compute capability 8.0, the launch
// parameters block_size (128 or 256) and tile (64 or 128), row tiles that fit in
// gridDim.y, and the rung's requirement on C (whole float4 or 16-byte chunks per row).
template <class Args>
Variant variant(void (*launch)(const Args&, const Launch&), Requirement channels, std::string summary) {
  Variant v = Variant::of(launch);
  v.summary = std::move(summary);
  v.min_compute_capability = 80;
  v.params = {block_size_param({128, 256}, 256), TuningParam{"tile", {64, 128}, 128}};
  v.requirements = {std::move(channels)};
  v.launch_limit = [](const Shape& s, const ParamValues& p) { return matmul::row_tile_limit(s, p.get("tile")); };
  return v;
}

}  // namespace wb::cuda::wmma_tiles
