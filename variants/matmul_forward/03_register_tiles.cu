// matmul_forward, CUDA variant 3: 2D register blocking.
//
// Idea: a block owns a tile x tile tile of out and each thread a TM x TM sub-tile of
// it, kept in registers. The block walks C in steps of tile_k: it stages a
// tile x tile_k slab of inp and one of weight in shared memory (laid out as in global
// memory, k contiguous, padded by one), and for every k each thread reads TM values of
// the inp slab and TM of the weight slab into registers and does the TM x TM outer
// product. A thread's rows and columns are strided by the number of threads along a
// side (row ty + i*side, column tx + j*side), so that the threads of a warp read
// different banks and store neighbouring columns.
// Why it should beat variant 2: each value read from shared memory now feeds TM
// multiply-adds instead of one (2*TM shared loads for TM*TM FMAs: 8x fewer at TM=8),
// and the block tile is larger, so every global load serves more outputs.
// Parameters: block_size (64, 256, 1024 threads, a square of 8, 16, 32) with tile
// (64 or 128) gives TM = tile / sqrt(block_size); TM = 4 and 8 are instantiated, the
// other combinations are skipped. tile_k (8 or 16) is the depth of a slab.
// Limits: scalar global loads (tile_k floats in a row: short coalesced runs) and a
// single buffer: the loads of the next slab wait behind the math of this one; the
// strided smem reads of the k-contiguous layout are scalar. Any shape runs: partial
// tiles at the edges of B*T, OC and C are zero-filled and masked.
#include <stdexcept>
#include <string>

#include "kernels/cuda/dialect.cuh"
#include "kernels/cuda/runtime.h"
#include "kernels/ops/matmul_forward.h"
#include "variants/matmul_forward/common.cuh"

namespace wb::variants {
namespace {

namespace mf = matmul_forward_common;

// kTile x kTile outputs per block, kTM x kTM per thread, slabs of kBK channels.
template <int kTile, int kTM, int kBK>
__global__ void __launch_bounds__((kTile / kTM) * (kTile / kTM))
    matmul_register_tiles(float* out, const float* inp, const float* weight, const float* bias, int rows, int C,
                          int OC) {
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
      if (o < OC) out[int64_t(r) * OC + o] = acc[i][j] + (bias ? bias[o] : 0.0f);
    }
  }
}

template <int kTile, int kTM, int kBK>
void launch_with(const MatmulForwardArgs& a, const Launch& l) {
  constexpr int kThreads = (kTile / kTM) * (kTile / kTM);
  const int rows = a.B * a.T;
  const dim3 grid(cuda::grid_for(a.OC, kTile), cuda::grid_for(rows, kTile));
  WB_LAUNCH(matmul_register_tiles<kTile, kTM, kBK>, grid, kThreads, 0, cuda::stream(l), a.out, a.inp, a.weight, a.bias,
            rows, a.C, a.OC);
}

template <int kBK>
void launch_k(const MatmulForwardArgs& a, const Launch& l, int tile, int tm) {
  if (tile == 128 && tm == 8) return launch_with<128, 8, kBK>(a, l);
  if (tile == 128 && tm == 4) return launch_with<128, 4, kBK>(a, l);
  if (tile == 64 && tm == 8) return launch_with<64, 8, kBK>(a, l);
  if (tile == 64 && tm == 4) return launch_with<64, 4, kBK>(a, l);
  throw std::logic_error("matmul_forward cuda/3: no kernel for tile " + std::to_string(tile) + " with a " +
                         std::to_string(tm) + "x" + std::to_string(tm) + " thread tile");
}

void launch(const MatmulForwardArgs& a, const Launch& l) {
  const int tile = l.get("tile");
  const int tm = mf::thread_tile_side(tile, l.block_size());
  if (l.get("tile_k") == 16) return launch_k<16>(a, l, tile, tm);
  return launch_k<8>(a, l, tile, tm);
}

}  // namespace

Variant matmul_forward_cuda_3() {
  Variant v = Variant::of(&launch);
  v.op = "matmul_forward";
  v.backend = Backend::cuda;
  v.id = 3;
  v.name = "register_tiles";
  v.summary = "tile x tile outputs per block, a TM x TM register tile per thread (outer products from shared memory)";
  v.params = {block_size_param({64, 256, 1024}, 256), TuningParam{"tile", {64, 128}, 128},
              TuningParam{"tile_k", {8, 16}, 8}};
  v.launch_limit = mf::register_tile_limit;
  return v;
}

}  // namespace wb::variants
