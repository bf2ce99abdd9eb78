// fused_residual_layernorm_forward, CUDA variant 3: fused, float4, the row in
// registers, statistics in one pass over them.
//
// Idea: one warp per row. Each lane loads its share of inp1 and inp2 with 128-bit
// streaming loads (all loads of the row issued before the first is used), adds them
// in registers and stores the residual with 128-bit streaming stores. Mean and
// variance then come from those registers in a single pass: the sum and the sum of
// squares of (x - K), where K is the row's first value (broadcast from lane 0), are
// reduced together with warp shuffles (two independent reductions whose latencies
// overlap); mean = K + E[x-K], var = E[(x-K)^2] - E[x-K]^2, clamped at 0. The shift
// by K keeps that difference from cancelling when |mean| is large against the
// spread of the row (the weakness of the unshifted E[x^2] - mean^2). The normalised
// row leaves as 128-bit streaming stores.
// Why it should beat variant 2: DRAM sees exactly the op's minimum traffic (inp1 and
// inp2 read once, residual and normed written once, weight and bias from cache),
// with a quarter of the memory instructions; no pass re-reads the residual, and the
// statistics cost one round of shuffles instead of two dependent ones.
// Limits: C % 4 == 0 (16-byte aligned rows) and C <= 2048 (at most 16 float4 per
// lane; instantiated for 1, 2, 3, 4, 6, 8, 12 and 16, so C = 768 uses exactly 6).
// More registers per thread than variant 2, so fewer resident warps for large C.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "contract/ops/fused_residual_layernorm_forward.h"
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
__global__ void fused_residual_layernorm_vec4(float* residual, float* normed, float* mean, float* rstd,
                                              const float* inp1, const float* inp2, const float* weight,
                                              const float* bias, int rows, int C) {
  const int lane = threadIdx.x % cuda::kWarpSize;
  const int row = blockIdx.x * (blockDim.x / cuda::kWarpSize) + threadIdx.x / cuda::kWarpSize;
  if (row >= rows) return;  // the whole warp leaves together: the shuffles below see 32 lanes
  const int vecs = C / 4;
  const size_t offset = size_t(row) * C;

  // Every load of the row first, into two register arrays (no add or store in between,
  // so all 2 * kVecs 128-bit loads are in flight together), then the adds, then the
  // residual stores. Lanes past the row's end hold zeros.
  float4 r[kVecs], b[kVecs];
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    const int v = lane + i * cuda::kWarpSize;
    r[i] = v < vecs ? cuda::load4_stream(inp1 + offset + 4 * v) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    const int v = lane + i * cuda::kWarpSize;
    b[i] = v < vecs ? cuda::load4_stream(inp2 + offset + 4 * v) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    r[i].x += b[i].x;
    r[i].y += b[i].y;
    r[i].z += b[i].z;
    r[i].w += b[i].w;
  }
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    const int v = lane + i * cuda::kWarpSize;
    if (v < vecs) cuda::store4_stream(residual + offset + 4 * v, r[i]);
  }

  // Shifted single-pass statistics. Lane 0 always holds the row's first float4
  // (C >= 4), so K is a real value of the row.
  const float k = __shfl_sync(cuda::kFullMask, r[0].x, 0);
  float sum = 0.0f, sum_sq = 0.0f;
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    if (lane + i * cuda::kWarpSize < vecs) {
      const float dx = r[i].x - k, dy = r[i].y - k, dz = r[i].z - k, dw = r[i].w - k;
      sum += (dx + dy) + (dz + dw);
      sum_sq += (dx * dx + dy * dy) + (dz * dz + dw * dw);
    }
  }
  sum = cuda::warp_sum(sum);
  sum_sq = cuda::warp_sum(sum_sq);
  const float shifted_mean = sum / C;
  const float m = k + shifted_mean;
  const float var = fmaxf(sum_sq / C - shifted_mean * shifted_mean, 0.0f);
  const float s = rsqrtf(var + kLayernormEps);

  lr::store_normalised<cuda::kWarpSize, true>(normed + offset, r, m, s, weight, bias, vecs, lane);
  if (lane == 0) {
    mean[row] = m;
    rstd[row] = s;
  }
}

void launch(const FusedResidualLayernormForwardArgs& a, const Launch& l) {
  cuda::require_aligned16("fused_residual_layernorm_forward cuda/3",
                          {a.residual, a.normed, a.inp1, a.inp2, a.weight, a.bias});
  const int rows = a.B * a.T, block = l.block_size();
  if (!lr::with_vecs_per_thread<cuda::kWarpSize, 1, 2, 3, 4, 6, 8, 12, lr::kMaxVecsPerLane>(a.C, [&](auto vecs) {
        WB_LAUNCH(fused_residual_layernorm_vec4<decltype(vecs)::value>, cuda::grid_for(rows, block / cuda::kWarpSize),
                  block, 0, cuda::stream(l), a.residual, a.normed, a.mean, a.rstd, a.inp1, a.inp2, a.weight, a.bias,
                  rows, a.C);
      }))
    throw Unsupported("fused_residual_layernorm_forward cuda/3 needs C <= " + std::to_string(lr::kMaxWarpRowC));
}

}  // namespace

Variant fused_residual_layernorm_forward_cuda_3() {
  return lr::warp_row_variant(
      &launch, "fused, warp per row, float4 row in registers, shifted one-pass statistics, streaming stores");
}

}  // namespace wb::variants
