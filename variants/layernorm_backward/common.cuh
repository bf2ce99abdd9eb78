#pragma once
// layernorm_backward: the float4 row kernel shared by variants 3 (deterministic,
// per-block partials in the workspace) and 4 (the same, finished with atomics).
//
// Kernel shape. Block b of G has W = blockDim.x / 32 warps; warp w handles the rows
// (k * G + b) * W + w for k = 0 .. rows_per_warp - 1 (G * W * rows_per_warp >= rows).
// For each row a lane loads its float4 of inp and dout (vector v = lane + 32 i,
// i < kVecs; C / 4 <= 32 kVecs) into registers, the two row means are warp-shuffle
// sums, dinp is updated with float4 read-modify-writes, and the row's n * dout and
// dout are added to the lane's per-channel registers (dweight, dbias). When its rows
// are done the block combines its warps' registers in shared memory in warp order
// (warp 0 stores, warps 1 .. W-1 add, one __syncthreads between them), and writes the
// block's sums: to the workspace (variant 3) or with atomicAdd to dweight / dbias
// (variant 4). Every addition but those atomics happens in an order fixed by the shape
// and the launch parameters.
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "contract/ops/layernorm_backward.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants::layernorm_backward_detail {

constexpr int kMaxVecsPerLane = 8;
constexpr int kMaxC = 4 * cuda::kWarpSize * kMaxVecsPerLane;  // 1024

__device__ inline void add4(float4& a, const float4& b) {
  a.x += b.x;
  a.y += b.y;
  a.z += b.z;
  a.w += b.w;
}

// Blocks of the row kernel: every warp gets at most rows_per_warp rows.
inline int64_t row_blocks(int64_t rows, int block_size, int rows_per_warp) {
  const int64_t per_block = int64_t(block_size / cuda::kWarpSize) * rows_per_warp;
  return (rows + per_block - 1) / per_block;
}

// kAtomic false: block b writes its sums to partials[b * C ...] (dweight) and
// partials[(G + b) * C ...] (dbias). kAtomic true: it adds them to dweight / dbias.
// kMaxThreads >= blockDim.x bounds the registers the compiler may use (65536 per SM):
// about 16 per float4 slot, e.g. ~157 for kVecs = 8, which 512 or 1024 threads could
// not launch with.
template <int kVecs, bool kAtomic, int kMaxThreads>
__global__ void __launch_bounds__(kMaxThreads)
    rows_vec4(float* dinp, float* dweight, float* dbias, float* partials, const float* dout, const float* inp,
              const float* weight, const float* mean, const float* rstd, int rows, int C, int rows_per_warp) {
  WB_SHARED(float4, block_dw, [kVecs * cuda::kWarpSize]);
  WB_SHARED(float4, block_db, [kVecs * cuda::kWarpSize]);
  const int lane = threadIdx.x % cuda::kWarpSize;
  const int warp = threadIdx.x / cuda::kWarpSize;
  const int warps = blockDim.x / cuda::kWarpSize;
  const int vecs = C / 4;

  float4 dw[kVecs], db[kVecs];
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    dw[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    db[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }

  for (int k = 0; k < rows_per_warp; ++k) {
    const int64_t row = (int64_t(k) * gridDim.x + blockIdx.x) * warps + warp;
    if (row >= rows) break;  // the same for the whole warp
    const float* x = inp + row * C;
    const float* dy = dout + row * C;
    float* dx = dinp + row * C;
    const float m = mean[row], s = rstd[row];

    float4 n[kVecs], d[kVecs];  // the row's normalised input and dout, in registers
    float g_sum = 0.0f, gn_sum = 0.0f;
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      const int v = lane + i * cuda::kWarpSize;
      if (v < vecs) {
        const float4 xv = cuda::load4_stream(x + 4 * v);
        d[i] = cuda::load4_stream(dy + 4 * v);
        const float4 w = cuda::load4(weight + 4 * v);
        n[i] = make_float4((xv.x - m) * s, (xv.y - m) * s, (xv.z - m) * s, (xv.w - m) * s);
        const float gx = w.x * d[i].x, gy = w.y * d[i].y, gz = w.z * d[i].z, gw = w.w * d[i].w;
        g_sum += (gx + gy) + (gz + gw);
        gn_sum += (gx * n[i].x + gy * n[i].y) + (gz * n[i].z + gw * n[i].w);
      }
    }
    const float g_mean = cuda::warp_sum(g_sum) / C;
    const float gn_mean = cuda::warp_sum(gn_sum) / C;
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      const int v = lane + i * cuda::kWarpSize;
      if (v < vecs) {
        const float4 w = cuda::load4(weight + 4 * v);
        float4 o = cuda::load4(dx + 4 * v);
        o.x += (w.x * d[i].x - g_mean - n[i].x * gn_mean) * s;
        o.y += (w.y * d[i].y - g_mean - n[i].y * gn_mean) * s;
        o.z += (w.z * d[i].z - g_mean - n[i].z * gn_mean) * s;
        o.w += (w.w * d[i].w - g_mean - n[i].w * gn_mean) * s;
        cuda::store4(dx + 4 * v, o);
        add4(dw[i], make_float4(n[i].x * d[i].x, n[i].y * d[i].y, n[i].z * d[i].z, n[i].w * d[i].w));
        add4(db[i], d[i]);
      }
    }
  }

  // Combine the warps in warp order: deterministic, no shared-memory atomics.
  for (int w = 0; w < warps; ++w) {
    if (warp == w) {
#pragma unroll
      for (int i = 0; i < kVecs; ++i) {
        const int v = lane + i * cuda::kWarpSize;
        if (v < vecs) {
          if (w == 0) {
            block_dw[v] = dw[i];
            block_db[v] = db[i];
          } else {
            add4(block_dw[v], dw[i]);
            add4(block_db[v], db[i]);
          }
        }
      }
    }
    __syncthreads();
  }

  for (int v = threadIdx.x; v < vecs; v += blockDim.x) {
    const float4 a = block_dw[v], b = block_db[v];
    if constexpr (kAtomic) {
      atomicAdd(dweight + 4 * v + 0, a.x);
      atomicAdd(dweight + 4 * v + 1, a.y);
      atomicAdd(dweight + 4 * v + 2, a.z);
      atomicAdd(dweight + 4 * v + 3, a.w);
      atomicAdd(dbias + 4 * v + 0, b.x);
      atomicAdd(dbias + 4 * v + 1, b.y);
      atomicAdd(dbias + 4 * v + 2, b.z);
      atomicAdd(dbias + 4 * v + 3, b.w);
    } else {
      cuda::store4(partials + int64_t(blockIdx.x) * C + 4 * v, a);
      cuda::store4(partials + (int64_t(gridDim.x) + blockIdx.x) * C + 4 * v, b);
    }
  }
}

template <int kVecs, bool kAtomic, int kMaxThreads>
void launch_bounded(const LayernormBackwardArgs& a, float* partials, unsigned grid, int block, int rows_per_warp,
                    cudaStream_t stream) {
  WB_LAUNCH(rows_vec4<kVecs, kAtomic, kMaxThreads>, grid, block, 0, stream, a.dinp, a.dweight, a.dbias, partials,
            a.dout, a.inp, a.weight, a.mean, a.rstd, a.B * a.T, a.C, rows_per_warp);
}

// Up to 256 threads the registers are not capped below the 255 a thread may have; 512
// threads leave 128 each, 1024 threads 64 (the large kVecs then spill, but launch).
template <int kVecs, bool kAtomic>
void launch_rows_with(const LayernormBackwardArgs& a, float* partials, unsigned grid, int block, int rows_per_warp,
                      cudaStream_t stream) {
  if (block <= 256) return launch_bounded<kVecs, kAtomic, 256>(a, partials, grid, block, rows_per_warp, stream);
  if (block <= 512) return launch_bounded<kVecs, kAtomic, 512>(a, partials, grid, block, rows_per_warp, stream);
  return launch_bounded<kVecs, kAtomic, 1024>(a, partials, grid, block, rows_per_warp, stream);
}

// Launches the row kernel instantiated for the fewest float4 registers per lane
// that hold a row (C % 4 == 0 and C <= kMaxC are the variants' requirements).
template <bool kAtomic>
void launch_rows(const LayernormBackwardArgs& a, float* partials, unsigned grid, int block, int rows_per_warp,
                 cudaStream_t stream) {
  cuda::require_aligned16(kAtomic ? "layernorm_backward cuda/4" : "layernorm_backward cuda/3",
                          {a.dinp, a.dout, a.inp, a.weight, partials});
  const int per_lane = (a.C / 4 + cuda::kWarpSize - 1) / cuda::kWarpSize;
  switch (per_lane) {
    case 1:
      return launch_rows_with<1, kAtomic>(a, partials, grid, block, rows_per_warp, stream);
    case 2:
      return launch_rows_with<2, kAtomic>(a, partials, grid, block, rows_per_warp, stream);
    case 3:
      return launch_rows_with<3, kAtomic>(a, partials, grid, block, rows_per_warp, stream);
    case 4:
      return launch_rows_with<4, kAtomic>(a, partials, grid, block, rows_per_warp, stream);
    case 5:
    case 6:
      return launch_rows_with<6, kAtomic>(a, partials, grid, block, rows_per_warp, stream);
    case 7:
    case 8:
      return launch_rows_with<8, kAtomic>(a, partials, grid, block, rows_per_warp, stream);
  }
  throw Unsupported("layernorm_backward: the float4 row kernel needs C <= " + std::to_string(kMaxC));
}

}  // namespace wb::variants::layernorm_backward_detail
