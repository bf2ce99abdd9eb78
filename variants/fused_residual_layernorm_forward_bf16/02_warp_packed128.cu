// fused_residual_layernorm_forward_bf16, CUDA variant 2: a warp per row, the row in
// registers, 128-bit accesses.
//
// Idea: the 32 lanes of a warp share a row; each lane loads its share of inp1 and inp2
// once as Packed128<__nv_bfloat16> (8 values per 128-bit load), rounds each fp32 sum to
// bf16, stores those 8 with one 128-bit store as the residual, and keeps the same
// rounded values, widened, in fp32 registers: the statistics (two exact passes over the
// registers, reduced with warp shuffles in fp32) are those of the stored residual
// without reading it back. The normalised outputs leave as 8 rounded bf16 per 128-bit
// store, with weight and bias read the same way.
// Why it should beat variant 1: every element is read and written once, coalesced, an
// eighth of the memory instructions of scalar bf16 accesses; and against the residual
// add and the layernorm as two kernels, the residual is never read back. This is the
// shape of llm.c's fused bf16 residual + layernorm.
// Limits: C % 8 == 0 (rows 16-byte aligned) and C <= 2048 (at most 8 Packed128 per
// lane; instantiated for 1, 2, 4 and 8). More registers than variant 1.
#include <cuda_bf16.h>

#include <string>

#include "contract/ops/fused_residual_layernorm_forward.h"
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
__global__ void fused_residual_layernorm_bf16_warp_packed(__nv_bfloat16* residual, __nv_bfloat16* normed, float* mean,
                                                          float* rstd, const __nv_bfloat16* inp1,
                                                          const __nv_bfloat16* inp2, const __nv_bfloat16* weight,
                                                          const __nv_bfloat16* bias, int rows, int C) {
  const int lane = threadIdx.x % cuda::kWarpSize;
  const int row = blockIdx.x * (blockDim.x / cuda::kWarpSize) + threadIdx.x / cuda::kWarpSize;
  if (row >= rows) return;  // the whole warp leaves together
  const int packs = C / 8;
  const size_t offset = size_t(row) * C;

  cuda::layernorm::WarpRow<kPacks> r;  // the stored residual, widened
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < kPacks; ++i) {
    const int p = lane + i * cuda::kWarpSize;
    if (p < packs) {
      const Bf16x8 a = cuda::load128_stream(inp1 + offset + 8 * p);
      const Bf16x8 b = cuda::load128_stream(inp2 + offset + 8 * p);
      Bf16x8 x;
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        x[k] = __float2bfloat16(__bfloat162float(a[k]) + __bfloat162float(b[k]));
        r[i][k] = __bfloat162float(x[k]);
        sum += r[i][k];
      }
      cuda::store128(residual + offset + 8 * p, x);  // read again by the backward pass: cached
    }
  }
  cuda::layernorm::normalize_warp_row_bf16<kPacks>(r, sum, weight, bias, normed + offset, mean, rstd, row, lane, packs,
                                                   C);
}

void launch(const FusedResidualLayernormForwardBf16Args& a, const Launch& l) {
  cuda::require_aligned16("fused_residual_layernorm_forward_bf16 cuda/2",
                          {a.residual, a.normed, a.inp1, a.inp2, a.weight, a.bias});
  const int rows = a.B * a.T;
  const int block = l.block_size();
  cuda::layernorm::with_packs_per_lane(a.C, [&](auto packs) {
    WB_LAUNCH(fused_residual_layernorm_bf16_warp_packed<decltype(packs)::value>,
              cuda::grid_for(rows, block / cuda::kWarpSize), block, 0, cuda::stream(l), cuda::as_cuda(a.residual),
              cuda::as_cuda(a.normed), a.mean, a.rstd, cuda::as_cuda(a.inp1), cuda::as_cuda(a.inp2),
              cuda::as_cuda(a.weight), cuda::as_cuda(a.bias), rows, a.C);
  });
}

}  // namespace

Variant fused_residual_layernorm_forward_bf16_cuda_2() {
  return cuda::layernorm::warp_row_bf16_variant(
      &launch, "warp per row: residual rounded and stored from 128-bit loads, its row kept in fp32 registers");
}

}  // namespace wb::variants
