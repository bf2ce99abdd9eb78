// matmul_forward, CUDA variant 2: square shared-memory tiles, one output per thread.
//
// Idea: a block of T x T threads owns a T x T tile of out (T rows of B*T, T columns of
// OC). It walks C in steps of T: every thread loads one element of the T x T slab of
// inp and one of the T x T slab of weight into shared memory (consecutive threads,
// consecutive channels: coalesced), the block synchronises, and each thread adds T
// products from shared memory to its one accumulator. block_size picks T: 64 -> 8x8,
// 256 -> 16x16, 1024 -> 32x32.
// Why it should beat variant 1: every element loaded from global memory now serves T
// outputs instead of one, and the loads coalesce; the weight slab is padded by one
// column so that threads reading different weight rows hit different banks.
// Limits: two shared-memory loads per multiply-add, and one output per thread leaves
// most of the time in shared-memory traffic and barriers; partial tiles at the edges
// of B*T, OC and C are zero-filled and masked, so any shape runs.
#include <optional>
#include <stdexcept>
#include <string>

#include "contract/ops/matmul_forward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "variants/matmul/matmul.cuh"

namespace wb::variants {
namespace {

namespace mf = cuda::matmul;

// Block of kTile * kTile threads (1-D); grid x over column tiles, y over row tiles.
template <int kTile>
__global__ void __launch_bounds__((kTile * kTile))
    matmul_shared_tiles(float* out, const float* inp, const float* weight, const float* bias, int rows, int C, int OC) {
  WB_SHARED(float, xs, [kTile][kTile + 1]);  // xs[m][k] = inp[row0 + m][k0 + k]
  WB_SHARED(float, ws, [kTile][kTile + 1]);  // ws[n][k] = weight[col0 + n][k0 + k]
  const int tx = threadIdx.x % kTile;        // channel when loading, column when computing
  const int ty = threadIdx.x / kTile;        // row of the slabs when loading, output row when computing
  const int row0 = blockIdx.y * kTile;
  const int col0 = blockIdx.x * kTile;
  const int load_row = row0 + ty;  // row of inp this thread loads
  const int load_col = col0 + ty;  // row of weight this thread loads

  float acc = 0.0f;
  for (int k0 = 0; k0 < C; k0 += kTile) {
    const int k = k0 + tx;
    xs[ty][tx] = load_row < rows && k < C ? inp[int64_t(load_row) * C + k] : 0.0f;
    ws[ty][tx] = load_col < OC && k < C ? weight[int64_t(load_col) * C + k] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTile; ++kk) acc += xs[ty][kk] * ws[tx][kk];
    __syncthreads();
  }
  const int r = row0 + ty;
  const int o = col0 + tx;
  if (r < rows && o < OC) out[int64_t(r) * OC + o] = acc + (bias ? bias[o] : 0.0f);
}

template <int kTile>
void launch_with(const MatmulForwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  const dim3 grid(cuda::grid_for(a.OC, kTile), cuda::grid_for(rows, kTile));
  WB_LAUNCH(matmul_shared_tiles<kTile>, grid, kTile * kTile, 0, cuda::stream(l), a.out, a.inp, a.weight, a.bias, rows,
            a.C, a.OC);
}

void launch(const MatmulForwardArgs& a, const Launch& l) {
  switch (l.block_size()) {
    case 64:
      return launch_with<8>(a, l);
    case 256:
      return launch_with<16>(a, l);
    case 1024:
      return launch_with<32>(a, l);
  }
  throw std::logic_error("matmul_forward cuda/2: block_size must be 64, 256 or 1024");
}

}  // namespace

Variant matmul_forward_cuda_2() {
  Variant v = Variant::of(&launch);
  v.summary = "square T x T output tile per block (block_size = T*T), inp and weight slabs staged in shared memory";
  v.params = {block_size_param({64, 256, 1024}, 256)};
  v.launch_limit = [](const Shape& s, const ParamValues& p) {
    return mf::row_tile_limit(s, mf::threads_per_side(p.get("block_size")));
  };
  return v;
}

}  // namespace wb::variants
