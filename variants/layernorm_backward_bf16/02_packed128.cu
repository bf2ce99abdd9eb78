// layernorm_backward_bf16, CUDA variant 2: 128-bit accesses, deterministic, three
// kernels.
//
// Idea: 1. dinp: a warp per row; each lane loads its share of inp, dout and weight as
//    Packed128<__nv_bfloat16> (8 values per 128-bit load), keeps n and g = weight *
//    dout in fp32 registers, reduces the two row means with warp shuffles, and updates
//    dinp with 128-bit read-modify-writes, each value rounded once from old + delta.
// 2. dweight and dbias partials: thread (p, chunk) sums n * dout and dout over the 32
//    rows of its chunk for the 8 channels of pack p, in fp32, reading 128 bits of inp
//    and dout per row (neighbouring threads take neighbouring packs: coalesced), and
//    writes the 16 sums to the workspace.
// 3. one thread per channel adds its chunks' partials in chunk order and rounds
//    dweight and dbias once from old + total.
// Every sum has an order fixed by the shape: bitwise the same result on every run.
// Why it should beat variant 1: every access is coalesced and 128 bits wide; the column
// sums run on C/8 x B*T/32 threads instead of C; no atomics.
// Limits: C % 8 == 0 and C <= 2048 (kernel 1 keeps at most 8 packs per lane in
// registers, instantiated for 1, 2, 4 and 8); inp and dout are read twice (kernels 1
// and 2; a single fused pass is the next rung); B*T <= 32 * 65535 (chunks on
// gridDim.y). Workspace: 2 * ceil(B*T / 32) * C floats.
#include <cuda_bf16.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "contract/ops/layernorm_backward.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"
#include "variants/layernorm/layernorm.cuh"

namespace wb::variants {
namespace {

using Bf16x8 = cuda::Packed128<__nv_bfloat16>;
using Floatx4 = cuda::Packed128<float>;
constexpr int kRowsPerChunk = 32;
constexpr int64_t kMaxChunks = 65535;  // gridDim.y

template <int kPacks>  // Packed128 per lane: C / 8 <= 32 * kPacks
__global__ void dinp_bf16_warp_packed(__nv_bfloat16* dinp, const __nv_bfloat16* dout, const __nv_bfloat16* inp,
                                      const __nv_bfloat16* weight, const float* mean, const float* rstd, int rows,
                                      int C) {
  const int lane = threadIdx.x % cuda::kWarpSize;
  const int row = blockIdx.x * (blockDim.x / cuda::kWarpSize) + threadIdx.x / cuda::kWarpSize;
  if (row >= rows) return;  // the whole warp leaves together
  const int packs = C / 8;
  const size_t offset = size_t(row) * C;
  const float m = mean[row], s = rstd[row];

  float n[kPacks][8], g[kPacks][8];
  float g_sum = 0.0f, gn_sum = 0.0f;
#pragma unroll
  for (int i = 0; i < kPacks; ++i) {
    const int p = lane + i * cuda::kWarpSize;
    if (p < packs) {
      const Bf16x8 x = cuda::load128(inp + offset + 8 * p);  // read again by kernel 2: cached
      const Bf16x8 d = cuda::load128(dout + offset + 8 * p);
      const Bf16x8 w = cuda::load128(weight + 8 * p);
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        n[i][k] = (__bfloat162float(x[k]) - m) * s;
        g[i][k] = __bfloat162float(w[k]) * __bfloat162float(d[k]);
        g_sum += g[i][k];
        gn_sum += g[i][k] * n[i][k];
      }
    }
  }
  const float g_mean = cuda::warp_sum(g_sum) / C, gn_mean = cuda::warp_sum(gn_sum) / C;
#pragma unroll
  for (int i = 0; i < kPacks; ++i) {
    const int p = lane + i * cuda::kWarpSize;
    if (p < packs) {
      Bf16x8 dx = cuda::load128(dinp + offset + 8 * p);
#pragma unroll
      for (int k = 0; k < 8; ++k)
        dx[k] = __float2bfloat16(__bfloat162float(dx[k]) + (g[i][k] - g_mean - n[i][k] * gn_mean) * s);
      cuda::store128(dinp + offset + 8 * p, dx);
    }
  }
}

// partials: [chunk][C] sums of n * dout, then [chunks + chunk][C] sums of dout.
__global__ void column_partials_bf16(float* partials, const __nv_bfloat16* dout, const __nv_bfloat16* inp,
                                     const float* mean, const float* rstd, int rows, int C) {
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= C / 8) return;
  const int chunk = blockIdx.y;
  const int first = chunk * kRowsPerChunk;
  const int last = min(rows, first + kRowsPerChunk);
  float dw[8] = {}, db[8] = {};
  for (int row = first; row < last; ++row) {
    const size_t at = size_t(row) * C + 8 * p;
    const Bf16x8 x = cuda::load128(inp + at);
    const Bf16x8 d = cuda::load128(dout + at);
    const float m = mean[row], s = rstd[row];
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const float dk = __bfloat162float(d[k]);
      dw[k] += (__bfloat162float(x[k]) - m) * s * dk;
      db[k] += dk;
    }
  }
  float* w_out = partials + size_t(chunk) * C + 8 * p;
  float* b_out = partials + (size_t(gridDim.y) + chunk) * C + 8 * p;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    Floatx4 w, b;
#pragma unroll
    for (int k = 0; k < 4; ++k) w[k] = dw[4 * h + k], b[k] = db[4 * h + k];
    cuda::store128(w_out + 4 * h, w);
    cuda::store128(b_out + 4 * h, b);
  }
}

__global__ void finish_columns_bf16(__nv_bfloat16* dweight, __nv_bfloat16* dbias, const float* partials, int chunks,
                                    int C) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= C) return;
  float dw = 0.0f, db = 0.0f;
  for (int chunk = 0; chunk < chunks; ++chunk) {
    dw += partials[size_t(chunk) * C + c];
    db += partials[size_t(chunks + chunk) * C + c];
  }
  dweight[c] = __float2bfloat16(__bfloat162float(dweight[c]) + dw);
  dbias[c] = __float2bfloat16(__bfloat162float(dbias[c]) + db);
}

int64_t chunks_of(int64_t rows) { return (rows + kRowsPerChunk - 1) / kRowsPerChunk; }

template <int kPacks>
void launch_dinp(const LayernormBackwardBf16Args& a, int rows, int block, cudaStream_t s) {
  WB_LAUNCH(dinp_bf16_warp_packed<kPacks>, cuda::grid_for(rows, block / cuda::kWarpSize), block, 0, s,
            cuda::as_cuda(a.dinp), cuda::as_cuda(a.dout), cuda::as_cuda(a.inp), cuda::as_cuda(a.weight), a.mean, a.rstd,
            rows, a.C);
}

void launch(const LayernormBackwardBf16Args& a, const Launch& l) {
  cuda::require_aligned16("layernorm_backward_bf16 cuda/2",
                          {a.dinp, a.dweight, a.dbias, a.dout, a.inp, a.weight, l.workspace});
  const int rows = a.B * a.T;
  const int block = l.block_size();
  const cudaStream_t s = cuda::stream(l);
  const int64_t chunks = chunks_of(rows);
  if (l.workspace_bytes < std::size_t(2 * chunks * a.C) * sizeof(float))
    throw std::logic_error("layernorm_backward_bf16 cuda/2: workspace too small for the column partials");
  float* partials = static_cast<float*>(l.workspace);

  cuda::layernorm::with_packs_per_lane(a.C,
                                       [&](auto packs) { launch_dinp<decltype(packs)::value>(a, rows, block, s); });
  if (rows == 0) return;
  const dim3 grid(cuda::grid_for(a.C / 8, block), unsigned(chunks));
  WB_LAUNCH(column_partials_bf16, grid, block, 0, s, partials, cuda::as_cuda(a.dout), cuda::as_cuda(a.inp), a.mean,
            a.rstd, rows, a.C);
  WB_LAUNCH(finish_columns_bf16, cuda::grid_for(a.C, block), block, 0, s, cuda::as_cuda(a.dweight),
            cuda::as_cuda(a.dbias), partials, int(chunks), a.C);
}

}  // namespace

Variant layernorm_backward_bf16_cuda_2() {
  Variant v = cuda::layernorm::warp_row_bf16_variant(
      &launch, "warp per row for dinp with 128-bit accesses; column partials per 32-row chunk, summed in chunk order");
  v.launch_limit = [](const Shape& s, const ParamValues&) -> std::optional<std::string> {
    if (chunks_of(s.B * s.T) <= kMaxChunks) return std::nullopt;
    return "B*T = " + std::to_string(s.B * s.T) + " needs more than 65535 chunks of 32 rows (gridDim.y)";
  };
  v.workspace = [](const Shape& s, const ParamValues&) {
    return std::size_t(2 * chunks_of(s.B * s.T) * s.C) * sizeof(float);
  };
  return v;
}

}  // namespace wb::variants
