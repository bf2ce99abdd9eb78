#pragma once
// The 2D register-tiled matmul kernel of matmul_forward cuda/3 (whose header comment
// explains it), with the store of each finished output left to the caller: Store is a
// functor `store(r, o, acc)` called once per output (row r < rows, column o < OC)
// with the dot product of inp row r and weight row o. matmul_forward cuda/3 stores
// acc + bias; matmul_gelu_forward cuda/2 stores it to pre and its GELU to out, so the
// fused op costs no pass of its own.
//
// rows x C inp, OC x C weight, both row-major; kTile x kTile outputs per block,
// kTM x kTM per thread, slabs of kBK channels.
#include <stdexcept>
#include <string>
#include <utility>

#include "contract/variant.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "variants/matmul/matmul.cuh"

namespace wb::cuda::register_tiles {

template <int kTile, int kTM, int kBK, class Store>
__global__ void __launch_bounds__((kTile / kTM) * (kTile / kTM))
    matmul_register_tiles(Store store, const float* inp, const float* weight, int rows, int C, int OC) {
  constexpr int kSide = kTile / kTM;  // threads along a side of the block
  constexpr int kThreads = kSide * kSide;
  constexpr int kLoads = kTile * kBK / kThreads;  // elements of each slab a thread loads
  static_assert(kTile % kTM == 0 && (kTile * kBK) % kThreads == 0, "slabs must split evenly over the threads");

  WB_SHARED(float, xs, [kTile][kBK + 1]);  // xs[m][k] = inp[row0 + m][k0 + k]
  WB_SHARED(float, ws, [kTile][kBK + 1]);  // ws[n][k] = weight[col0 + n][k0 + k]

  const int tid = threadIdx.x;
  const int tx = tid % kSide;
  const int ty = tid / kSide;
  const int row0 = blockIdx.y * kTile;
  const int col0 = blockIdx.x * kTile;

  float acc[kTM][kTM];
#pragma unroll
  for (int i = 0; i < kTM; ++i)
#pragma unroll
    for (int j = 0; j < kTM; ++j) acc[i][j] = 0.0f;

  for (int k0 = 0; k0 < C; k0 += kBK) {
#pragma unroll
    for (int i = 0; i < kLoads; ++i) {
      const int e = tid + i * kThreads;  // element of the slab: row e / kBK, channel e % kBK
      const int m = e / kBK;
      const int k = e % kBK;
      const int c = k0 + k;
      const int r = row0 + m;
      const int o = col0 + m;
      xs[m][k] = r < rows && c < C ? inp[int64_t(r) * C + c] : 0.0f;
      ws[m][k] = o < OC && c < C ? weight[int64_t(o) * C + c] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
      float x[kTM], w[kTM];
#pragma unroll
      for (int i = 0; i < kTM; ++i) x[i] = xs[ty + i * kSide][k];
#pragma unroll
      for (int j = 0; j < kTM; ++j) w[j] = ws[tx + j * kSide][k];
#pragma unroll
      for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTM; ++j) acc[i][j] += x[i] * w[j];
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < kTM; ++i) {
    const int r = row0 + ty + i * kSide;
    if (r >= rows) continue;
#pragma unroll
    for (int j = 0; j < kTM; ++j) {
      const int o = col0 + tx + j * kSide;
      if (o < OC) store(r, o, acc[i][j]);
    }
  }
}

template <int kTile, int kTM, int kBK, class Store>
void launch_with(const Store& store, const float* inp, const float* weight, int rows, int C, int OC, const Launch& l) {
  constexpr int kThreads = (kTile / kTM) * (kTile / kTM);
  const dim3 grid(cuda::grid_for(OC, kTile), cuda::grid_for(rows, kTile));
  WB_LAUNCH(matmul_register_tiles<kTile, kTM, kBK, Store>, grid, kThreads, 0, cuda::stream(l), store, inp, weight,
            rows, C, OC);
}

template <int kBK, class Store>
void launch_k(const Store& store, const float* inp, const float* weight, int rows, int C, int OC, const Launch& l,
              int tile, int tm) {
  if (tile == 128 && tm == 8) return launch_with<128, 8, kBK>(store, inp, weight, rows, C, OC, l);
  if (tile == 128 && tm == 4) return launch_with<128, 4, kBK>(store, inp, weight, rows, C, OC, l);
  if (tile == 64 && tm == 8) return launch_with<64, 8, kBK>(store, inp, weight, rows, C, OC, l);
  if (tile == 64 && tm == 4) return launch_with<64, 4, kBK>(store, inp, weight, rows, C, OC, l);
  throw std::logic_error("register-tiled matmul: no kernel for tile " + std::to_string(tile) + " with a " +
                         std::to_string(tm) + "x" + std::to_string(tm) + " thread tile");
}

// The launch parameters are those of matmul_forward cuda/3: block_size, tile, tile_k
// (register_tile_limit in matmul.cuh has already refused the combinations not built).
template <class Store>
void launch(const Store& store, const float* inp, const float* weight, int rows, int C, int OC, const Launch& l) {
  const int tile = l.get("tile");
  const int tm = matmul::thread_tile_side(tile, l.block_size());
  if (l.get("tile_k") == 16) return launch_k<16>(store, inp, weight, rows, C, OC, l, tile, tm);
  return launch_k<8>(store, inp, weight, rows, C, OC, l, tile, tm);
}

// A rung on this kernel (matmul_forward cuda/3, matmul_gelu_forward cuda/2): the
// parameters block_size, tile and tile_k with their legal values and defaults, and the
// launch limit of the thread tiles built.
template <class Args>
Variant variant(void (*launch)(const Args&, const Launch&), std::string summary) {
  Variant v = Variant::of(launch);
  v.summary = std::move(summary);
  v.params = {block_size_param({64, 256, 1024}, 256), TuningParam{"tile", {64, 128}, 128},
              TuningParam{"tile_k", {8, 16}, 8}};
  v.launch_limit = matmul::register_tile_limit;
  return v;
}

}  // namespace wb::cuda::register_tiles
