// layernorm_forward_bf16, CUDA variant 2: a warp per row, the row in registers, 128-bit
// accesses.
//
// Idea: the 32 lanes of a warp share a row; each lane loads its share once as
// Packed128<__nv_bfloat16> (8 values, one 128-bit load each), widens it into fp32
// registers, and the mean and the variance around it are two exact passes over those
// registers reduced with warp shuffles (in fp32). The outputs leave as 8 rounded bf16
// per 128-bit store, with weight and bias read the same way.
// Why it should beat variant 1: every element is read and written once, coalesced, an
// eighth of the memory instructions of scalar bf16 accesses; the statistics never
// touch memory twice. This is the shape of llm.c's bf16 layernorm.
// Limits: C % 8 == 0 (rows 16-byte aligned) and C <= 2048 (at most 8 Packed128 per
// lane; instantiated for 1, 2, 4 and 8). More registers than variant 1.
#include <cuda_bf16.h>

#include <string>

#include "contract/ops/layernorm_forward.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"
#include "variants/layernorm/layernorm.cuh"

namespace wb::variants {
namespace {

using Bf16x8 = cuda::Packed128<__nv_bfloat16>;

template <int kPacks>  // Packed128 per lane: C / 8 <= 32 * kPacks
__global__ void layernorm_bf16_warp_packed(__nv_bfloat16* out, float* mean, float* rstd, const __nv_bfloat16* inp,
                                           const __nv_bfloat16* weight, const __nv_bfloat16* bias, int rows, int C) {
  const int lane = threadIdx.x % cuda::kWarpSize;
  const int row = blockIdx.x * (blockDim.x / cuda::kWarpSize) + threadIdx.x / cuda::kWarpSize;
  if (row >= rows) return;  // the whole warp leaves together
  const int packs = C / 8;
  const __nv_bfloat16* x = inp + size_t(row) * C;

  cuda::layernorm::WarpRow<kPacks> r;
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < kPacks; ++i) {
    const int p = lane + i * cuda::kWarpSize;
    if (p < packs) {
      const Bf16x8 v = cuda::load128_stream(x + 8 * p);
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        r[i][k] = __bfloat162float(v[k]);
        sum += r[i][k];
      }
    }
  }
  cuda::layernorm::normalize_warp_row_bf16<kPacks>(r, sum, weight, bias, out + size_t(row) * C, mean, rstd, row, lane,
                                                   packs, C);
}

void launch(const LayernormForwardBf16Args& a, const Launch& l) {
  cuda::require_aligned16("layernorm_forward_bf16 cuda/2", {a.out, a.inp, a.weight, a.bias});
  const int rows = a.B * a.T;
  const int block = l.block_size();
  cuda::layernorm::with_packs_per_lane(a.C, [&](auto packs) {
    WB_LAUNCH(layernorm_bf16_warp_packed<decltype(packs)::value>, cuda::grid_for(rows, block / cuda::kWarpSize), block,
              0, cuda::stream(l), cuda::as_cuda(a.out), a.mean, a.rstd, cuda::as_cuda(a.inp), cuda::as_cuda(a.weight),
              cuda::as_cuda(a.bias), rows, a.C);
  });
}

}  // namespace

Variant layernorm_forward_bf16_cuda_2() {
  return cuda::layernorm::warp_row_bf16_variant(
      &launch, "warp per row, the row read once into fp32 registers with 128-bit loads (8 bf16), 128-bit stores");
}

}  // namespace wb::variants
