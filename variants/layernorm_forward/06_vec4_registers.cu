// layernorm_forward, CUDA variant 6: the row in registers, 128-bit loads and stores.
//
// Idea: one warp per row; each lane loads its share of the row once, as float4
// (128-bit) loads, into registers. Mean and variance are then computed exactly in two
// passes over those registers, and the output leaves as float4 stores.
// Why it should beat variants 3 and 4: every element is read from memory once and
// written once -- the least traffic the op allows -- with a quarter of the load and
// store instructions, and the two-pass statistics stay as robust as variant 3's.
// Limits: C % 4 == 0 (each row 16-byte aligned) and C <= 2048 (at most 16 float4 per
// lane; the kernel is instantiated for 1, 2, 4, 8 and 16). More registers per thread
// than variant 3, so fewer resident warps for large C.
#include <stdexcept>
#include <string>

#include "contract/ops/layernorm_forward.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "variants/layernorm/layernorm.cuh"
#include "variants/layernorm/layernorm_registers.cuh"

namespace wb::variants {
namespace {

namespace lr = cuda::layernorm_registers;

template <int kVecs>  // float4 registers per lane; C/4 <= 32 * kVecs
__global__ void layernorm_vec4_registers(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                                         const float* bias, int rows, int C) {
  const int lane = threadIdx.x % cuda::kWarpSize;
  const int row = blockIdx.x * (blockDim.x / cuda::kWarpSize) + threadIdx.x / cuda::kWarpSize;
  if (row >= rows) return;
  const int vecs = C / 4;
  float4 r[kVecs];
  const float m = cuda::warp_sum(lr::load_row<cuda::kWarpSize>(r, inp + size_t(row) * C, vecs, lane)) / C;
  const float s = rsqrtf(cuda::warp_sum(lr::squared_deviations<cuda::kWarpSize>(r, m, vecs, lane)) / C + kLayernormEps);
  lr::store_normalised<cuda::kWarpSize, false>(out + size_t(row) * C, r, m, s, weight, bias, vecs, lane);
  if (lane == 0) {
    mean[row] = m;
    rstd[row] = s;
  }
}

void launch(const LayernormForwardArgs& a, const Launch& l) {
  cuda::require_aligned16("layernorm_forward cuda/6", {a.out, a.inp, a.weight, a.bias});
  const int rows = a.B * a.T, block = l.block_size();
  if (!lr::with_vecs_per_thread<cuda::kWarpSize, 1, 2, 4, 8, lr::kMaxVecsPerLane>(a.C, [&](auto vecs) {
        WB_LAUNCH(layernorm_vec4_registers<decltype(vecs)::value>, cuda::grid_for(rows, block / cuda::kWarpSize), block,
                  0, cuda::stream(l), a.out, a.mean, a.rstd, a.inp, a.weight, a.bias, rows, a.C);
      }))
    throw Unsupported("layernorm_forward cuda/6 needs C <= " + std::to_string(lr::kMaxWarpRowC));
}

}  // namespace

Variant layernorm_forward_cuda_6() {
  return lr::warp_row_variant(&launch,
                              "warp per row, the row read once into registers with float4 loads, float4 stores");
}

}  // namespace wb::variants
