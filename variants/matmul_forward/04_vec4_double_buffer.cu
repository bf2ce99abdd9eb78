// matmul_forward, CUDA variant 4: variant 3 with 128-bit loads, a transposed
// shared-memory layout and double buffering.
//
// Idea: the same block tile and TM x TM register tile as variant 3, with three changes.
//  1. Global loads are float4 (four consecutive channels of one row of inp or weight).
//  2. The slabs are stored transposed in shared memory, k-major: xs[k][m], ws[k][n]
//     (rows padded by 4 floats so that the transposing stores of a warp spread over
//     the banks). For one k a thread then reads its TM rows and TM columns as TM/4
//     float4 each. Its rows are groups of four: group g covers rows
//     g * 4 * side + 4 * ty + {0..3} (side = threads along a side of the block), and
//     likewise for columns, so the float4 reads of neighbouring threads are
//     contiguous and conflict-free, and the output leaves as float4 stores.
//  3. Two shared buffers: while the block multiplies out of one slab, each thread's
//     float4 loads of the next slab are already in flight into registers; they are
//     written to the other buffer after the math, and one barrier per slab suffices
//     (the buffer written in step t was last read in step t-1, before its barrier).
//     The walk and the float4 staging are variants/matmul/double_buffer.cuh's, which
//     the tensor-core rungs above reuse.
// Why it should beat variant 3: a quarter of the global and shared load instructions,
// shared reads that are vectorised and conflict-free, and global latency hidden behind
// the outer products instead of exposed at every slab.
// Parameters: as variant 3 (block_size with tile gives TM = 4 or 8; tile_k 8 or 16).
// Limits: C % 4 == 0 (16-byte aligned rows of inp and weight) and OC % 4 == 0 (float4
// stores and bias loads); the pointers must be 16-byte aligned (checked at launch).
// Partial tiles at the edges of B*T and OC, and a last partial slab of C, are
// zero-filled and masked.
#include <stdexcept>
#include <string>

#include "contract/ops/matmul_forward.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "variants/matmul/double_buffer.cuh"
#include "variants/matmul/matmul.cuh"

namespace wb::variants {
namespace {

namespace db = cuda::double_buffer;
namespace mf = cuda::matmul;

template <int kTile, int kTM>
constexpr int threads_of() {
  return (kTile / kTM) * (kTile / kTM);
}

// Two blocks per SM where the register file allows it (the 8x8 tile at 256 threads
// then gets at most 128 registers per thread).
template <int kTile, int kTM>
constexpr int min_blocks_of() {
  return threads_of<kTile, kTM>() <= 256 ? 2 : 1;
}

// kTile x kTile outputs per block, kTM x kTM per thread, slabs of kBK channels.
template <int kTile, int kTM, int kBK>
__global__ void __launch_bounds__(threads_of<kTile, kTM>(), min_blocks_of<kTile, kTM>())
    matmul_vec4_double_buffer(float* out, const float* inp, const float* weight, const float* bias, int rows, int C,
                              int OC) {
  constexpr int kSide = kTile / kTM;  // threads along a side of the block
  constexpr int kThreads = kSide * kSide;
  constexpr int kGroups = kTM / 4;       // float4 groups of rows (and of columns) per thread
  constexpr int kGroupSpan = 4 * kSide;  // rows between a thread's groups
  constexpr int kLd = kTile + 4;         // padded row of the transposed slabs
  using Staged = db::Float4Rows<kTile, kBK, kThreads>;
  static_assert(kTM % 4 == 0 && kBK % 4 == 0 && kTile % kTM == 0, "float4 groups");
  static_assert(kGroups * kGroupSpan == kTile, "a thread's groups cover the tile");

  WB_SHARED_ALIGNED(16, float, xs, [2][kBK][kLd]);  // xs[b][k][m] = inp[row0 + m][k0 + k]
  WB_SHARED_ALIGNED(16, float, ws, [2][kBK][kLd]);  // ws[b][k][n] = weight[col0 + n][k0 + k]

  const int tid = threadIdx.x;
  const int tx = tid % kSide;
  const int ty = tid / kSide;
  const int row0 = blockIdx.y * kTile;
  const int col0 = blockIdx.x * kTile;
  const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);

  Staged next;  // the next slab, on its way from global memory
  auto load_slab = [&](int slab) { next.load(inp, weight, rows, C, OC, row0, col0, slab * kBK, tid); };
  // Each float4 (four channels of one row) goes down a column of the transposed slab.
  auto store_slab = [&](int b) {
#pragma unroll
    for (int i = 0; i < Staged::kLoads; ++i) {
      if (!Staged::in_slab(tid, i)) continue;
      const int m = Staged::row(tid, i);
      const int k = Staged::channel(tid, i);
      db::spread4(&xs[b][k][m], kLd, next.x[i]);
      db::spread4(&ws[b][k][m], kLd, next.w[i]);
    }
  };

  float acc[kTM][kTM];
#pragma unroll
  for (int i = 0; i < kTM; ++i)
#pragma unroll
    for (int j = 0; j < kTM; ++j) acc[i][j] = 0.0f;

  // For one k a thread reads its kTM rows and kTM columns as kGroups float4 each.
  auto multiply = [&](int b) {
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
      float x[kTM], w[kTM];
#pragma unroll
      for (int g = 0; g < kGroups; ++g) {
        db::spread4(x + 4 * g, 1, cuda::load4(&xs[b][k][g * kGroupSpan + 4 * ty]));
        db::spread4(w + 4 * g, 1, cuda::load4(&ws[b][k][g * kGroupSpan + 4 * tx]));
      }
#pragma unroll
      for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTM; ++j) acc[i][j] += x[i] * w[j];
    }
  };
  db::walk((C + kBK - 1) / kBK, load_slab, store_slab, multiply);

  // acc[4g + q][4h + p] is out[row0 + g*span + 4ty + q][col0 + h*span + 4tx + p].
#pragma unroll
  for (int g = 0; g < kGroups; ++g) {
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int r = row0 + g * kGroupSpan + 4 * ty + q;
      if (r >= rows) continue;
#pragma unroll
      for (int h = 0; h < kGroups; ++h) {
        const int o = col0 + h * kGroupSpan + 4 * tx;  // OC % 4 == 0: all four columns valid, or none
        if (o >= OC) continue;
        const float4 bv = bias ? cuda::load4(bias + o) : zero;
        const int i = 4 * g + q;
        const int j = 4 * h;
        cuda::store4(out + int64_t(r) * OC + o,
                     make_float4(acc[i][j] + bv.x, acc[i][j + 1] + bv.y, acc[i][j + 2] + bv.z, acc[i][j + 3] + bv.w));
      }
    }
  }
}

template <int kTile, int kTM, int kBK>
void launch_with(const MatmulForwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  const dim3 grid(cuda::grid_for(a.OC, kTile), cuda::grid_for(rows, kTile));
  WB_LAUNCH(matmul_vec4_double_buffer<kTile, kTM, kBK>, grid, threads_of<kTile, kTM>(), 0, cuda::stream(l), a.out,
            a.inp, a.weight, a.bias, rows, a.C, a.OC);
}

template <int kBK>
void launch_k(const MatmulForwardArgs& a, const Launch& l, int tile, int tm) {
  if (tile == 128 && tm == 8) return launch_with<128, 8, kBK>(a, l);
  if (tile == 128 && tm == 4) return launch_with<128, 4, kBK>(a, l);
  if (tile == 64 && tm == 8) return launch_with<64, 8, kBK>(a, l);
  if (tile == 64 && tm == 4) return launch_with<64, 4, kBK>(a, l);
  throw std::logic_error("matmul_forward cuda/4: no kernel for tile " + std::to_string(tile) + " with a " +
                         std::to_string(tm) + "x" + std::to_string(tm) + " thread tile");
}

void launch(const MatmulForwardArgs& a, const Launch& l) {
  cuda::require_aligned16("matmul_forward cuda/4", {a.out, a.inp, a.weight, a.bias});
  const int tile = l.get("tile");
  const int tm = mf::thread_tile_side(tile, l.block_size());
  if (l.get("tile_k") == 16) return launch_k<16>(a, l, tile, tm);
  return launch_k<8>(a, l, tile, tm);
}

}  // namespace

Variant matmul_forward_cuda_4() {
  Variant v = Variant::of(&launch);
  v.summary = "variant 3 with float4 loads, k-major (transposed) slabs in shared memory, double-buffered slabs";
  v.params = {block_size_param({64, 256, 1024}, 256), TuningParam{"tile", {64, 128}, 128},
              TuningParam{"tile_k", {8, 16}, 8}};
  v.requirements = {{"C % 4 == 0", [](const Shape& s) { return s.C % 4 == 0; }},
                    {"OC % 4 == 0", [](const Shape& s) { return s.OC % 4 == 0; }}};
  v.launch_limit = mf::register_tile_limit;
  return v;
}

}  // namespace wb::variants
