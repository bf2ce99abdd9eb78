// layernorm_forward, CUDA variant 7: a row per tile of 8, 16 or 32 threads, written
// with cooperative groups.
//
// Idea: variant 6 gives every row a whole warp. A narrow row -- the TinyShakespeare
// model's C = 128 is 32 float4, one per lane -- leaves each lane one load and the
// warp a five-step shuffle tree per reduction. Here the tile width is a launch
// parameter: cooperative groups cut the block into tiles of `tile` threads
// (tiled_partition<N>), each tile takes a row, keeps it in registers as float4 (read
// once, as in variant 6) and reduces within itself (cg::reduce): log2(tile) shuffle
// steps, C / (4 tile) float4 per thread, 32 / tile rows per warp. The tile is one
// template argument where hand-written shuffles would need a mask and a width per
// tile.
// Why it should beat variant 6 on narrow rows: more independent loads per thread and
// fewer shuffle steps per row; at tile = 32 it is variant 6.
// Limits: C % 4 == 0 and C <= 64 * tile (at most 16 float4 per thread: 512 channels
// for tiles of 8, 1024 for 16, 2048 for 32).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include <optional>
#include <string>

#include "contract/ops/layernorm_forward.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "variants/layernorm/layernorm.cuh"
#include "variants/layernorm/layernorm_registers.cuh"

namespace wb::variants {
namespace {

namespace cg = cooperative_groups;
namespace lr = cuda::layernorm_registers;

constexpr int kMaxVecsPerThread = 16;

// kVecs float4 registers per thread: C / 4 <= kTile * kVecs.
template <unsigned kTile, int kVecs>
__global__ void layernorm_cg_tiles(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                                   const float* bias, int rows, int C) {
  const cg::thread_block block = cg::this_thread_block();
  const cg::thread_block_tile<kTile> tile = cg::tiled_partition<kTile>(block);
  const int row = int(blockIdx.x * tile.meta_group_size() + tile.meta_group_rank());
  if (row >= rows) return;  // the whole tile leaves together
  const int lane = int(tile.thread_rank());
  const int vecs = C / 4;
  float4 r[kVecs];
  const auto tile_sum = [&](float v) { return cg::reduce(tile, v, cg::plus<float>()); };
  const float m = tile_sum(lr::load_row<int(kTile)>(r, inp + size_t(row) * C, vecs, lane)) / C;
  const float s = rsqrtf(tile_sum(lr::squared_deviations<int(kTile)>(r, m, vecs, lane)) / C + kLayernormEps);
  lr::store_normalised<int(kTile), false>(out + size_t(row) * C, r, m, s, weight, bias, vecs, lane);
  if (lane == 0) {
    mean[row] = m;
    rstd[row] = s;
  }
}

template <unsigned kTile, int kVecs>
void launch_with(const LayernormForwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  const int block = l.block_size();
  const int rows_per_block = block / int(kTile);
  WB_LAUNCH(layernorm_cg_tiles<kTile, kVecs>, cuda::grid_for(rows, rows_per_block), block, 0, cuda::stream(l), a.out,
            a.mean, a.rstd, a.inp, a.weight, a.bias, rows, a.C);
}

template <unsigned kTile>
void launch_tile(const LayernormForwardArgs& a, const Launch& l) {
  if (!lr::with_vecs_per_thread<int(kTile), 1, 2, 4, 8, kMaxVecsPerThread>(
          a.C, [&](auto vecs) { launch_with<kTile, decltype(vecs)::value>(a, l); }))
    throw Unsupported("layernorm_forward cuda/7: a tile of " + std::to_string(kTile) + " holds rows of up to " +
                      std::to_string(4 * kMaxVecsPerThread * kTile) + " channels");
}

void launch(const LayernormForwardArgs& a, const Launch& l) {
  cuda::require_aligned16("layernorm_forward cuda/7", {a.out, a.inp, a.weight, a.bias});
  switch (l.params.get("tile")) {
    case 8:
      return launch_tile<8>(a, l);
    case 16:
      return launch_tile<16>(a, l);
    default:
      return launch_tile<32>(a, l);
  }
}

}  // namespace

Variant layernorm_forward_cuda_7() {
  Variant v = Variant::of(&launch);
  v.summary = "a row per tile of 8, 16 or 32 threads (cooperative groups), in registers as float4, cg::reduce";
  v.params = {block_size_param(), {"tile", {8, 16, 32}, 32}};
  v.requirements = {{"C % 4 == 0", [](const Shape& s) { return s.C % 4 == 0; }},
                    {"C <= 2048", [](const Shape& s) { return s.C <= 64 * 32; }}};
  v.launch_limit = [](const Shape& s, const ParamValues& p) -> std::optional<std::string> {
    const int tile = p.get("tile");
    if (s.C > 4 * kMaxVecsPerThread * tile)
      return "a tile of " + std::to_string(tile) + " holds rows of up to " +
             std::to_string(4 * kMaxVecsPerThread * tile) + " channels in registers";
    return std::nullopt;
  };
  return v;
}

}  // namespace wb::variants
