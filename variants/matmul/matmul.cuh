#pragma once
// Shared by the CUDA variants of matmul_forward (and matmul_gelu_forward, which runs
// the same products): the grid limits of the naive kernels (one thread per output on
// gridDim.x) and of the tiled kernels (x over column tiles of OC, y over row tiles of
// B*T), the square-block geometry and launch limit of the register-tiled kernels, the
// fp32 cuBLAS product and the bias kernel of the library variants.
//
// out (B*T, OC) = inp (B*T, C) @ weight^T + bias, weight (OC, C), all row-major;
// bias may be null (the classifier has none).
#include <cstdint>
#include <optional>
#include <string>

#include "contract/shape.h"
#include "contract/variant.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/libraries.h"
#include "device/cuda/runtime.h"

namespace wb::cuda::matmul {

constexpr int64_t kMaxGridX = 2147483647;
constexpr int64_t kMaxGridY = 65535;

inline int64_t rows_of(const Shape& s) { return s.B * s.T; }

// Naive kernels put one thread per output (B*T*OC of them) on a 1-D grid of
// block_size-thread blocks, at most 2^31-1 blocks.
inline std::optional<std::string> thread_per_output_limit(const Shape& s, const ParamValues& p) {
  const int64_t blocks = (rows_of(s) * s.OC + p.get("block_size") - 1) / p.get("block_size");
  if (blocks > kMaxGridX) return "B*T*OC needs " + std::to_string(blocks) + " blocks, more than gridDim.x allows";
  return std::nullopt;
}

// Tiled kernels put the row tiles of B*T on gridDim.y, at most 65535 of them.
inline std::optional<std::string> row_tile_limit(const Shape& s, int64_t rows_per_tile) {
  const int64_t tiles = (rows_of(s) + rows_per_tile - 1) / rows_per_tile;
  if (tiles <= kMaxGridY) return std::nullopt;
  return "B*T = " + std::to_string(rows_of(s)) + " needs " + std::to_string(tiles) + " row tiles of " +
         std::to_string(rows_per_tile) + ", more than gridDim.y allows (65535)";
}

// Threads along one side of a square thread block: 8 for 64, 16 for 256, 32 for 1024;
// 0 when block_size is not a square.
inline int threads_per_side(int block_size) {
  int side = 1;
  while (side * side < block_size) ++side;
  return side * side == block_size ? side : 0;
}

// Outputs along one side of a thread's square tile when a tile x tile block tile is
// split over a square block of block_size threads; 0 when it does not divide.
inline int thread_tile_side(int tile, int block_size) {
  const int side = threads_per_side(block_size);
  return side > 0 && tile % side == 0 ? tile / side : 0;
}

// The launch limit of the register-tiled variants (cuda/3 and cuda/4), whose
// parameters are block_size and tile: the tile x tile block tile over block_size
// threads must give a 4x4 or 8x8 thread tile (the ones instantiated), and the row
// tiles must fit in gridDim.y.
inline std::optional<std::string> register_tile_limit(const Shape& s, const ParamValues& p) {
  const int tile = p.get("tile");
  const int tm = thread_tile_side(tile, p.get("block_size"));
  if (tm != 4 && tm != 8)
    return "a " + std::to_string(tile) + "x" + std::to_string(tile) + " tile over " +
           std::to_string(p.get("block_size")) + " threads gives " + std::to_string(tm) + "x" + std::to_string(tm) +
           " outputs per thread; only 4x4 and 8x8 are built";
  return row_tile_limit(s, tile);
}

// out (rows x OC, row-major) = inp (rows x C) @ weight^T, weight (OC x C): one cuBLAS
// SGEMM in plain fp32 on the launch's stream. cuBLAS is column-major; a row-major
// (rows x OC) out is a column-major (OC x rows) matrix, so the call computes
//   out^T (OC x rows) = weight (OC x C) @ inp^T (C x rows)
// where weight is the column-major (C x OC) array it is stored as, transposed
// (CUBLAS_OP_T, ld C), and inp is the column-major (C x rows) array, as is (ld C). The
// handle is shared by every variant and already on the launch's stream (no
// cublasSetStream here: it would reset the fixed workspace a CUDA graph needs,
// device/cuda/libraries.h); the math mode is set to CUBLAS_DEFAULT_MATH on every call,
// which keeps SGEMM off the TF32 tensor cores (the fp32 class).
inline void sgemm_fp32(const Launch& l, float* out, const float* inp, const float* weight, int rows, int C, int OC) {
  cublasHandle_t handle = cuda::libraries(l).cublas();
  WB_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
  const float alpha = 1.0f, beta = 0.0f;
  WB_CHECK(cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, OC, rows, C, &alpha, weight, C, inp, C, &beta, out, OC));
}

namespace {

// out[r, o] += bias[o], one thread per element.
__global__ void add_bias_scalar(float* out, const float* bias, int64_t n, int OC) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] += bias[i % OC];
}

// The same, four columns per thread with 128-bit accesses (OC % 4 == 0, both
// pointers 16-byte aligned): n4 = rows * OC / 4, oc4 = OC / 4.
__global__ void add_bias_vec4(float* out, const float* bias, int64_t n4, int oc4) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n4) return;
  const float4 b = cuda::load4(bias + 4 * (i % oc4));
  float4 v = cuda::load4(out + 4 * i);
  v.x += b.x;
  v.y += b.y;
  v.z += b.z;
  v.w += b.w;
  cuda::store4(out + 4 * i, v);
}

// Adds the bias to every row of out (rows x OC) on the stream; block threads per block.
inline void add_bias(float* out, const float* bias, int64_t rows, int OC, int block, cudaStream_t stream) {
  const int64_t n = rows * OC;
  if (OC % 4 == 0 && cuda::aligned16(out) && cuda::aligned16(bias)) {
    WB_LAUNCH(add_bias_vec4, cuda::grid_for(n / 4, block), block, 0, stream, out, bias, n / 4, OC / 4);
  } else {
    WB_LAUNCH(add_bias_scalar, cuda::grid_for(n, block), block, 0, stream, out, bias, n, OC);
  }
}

}  // namespace
}  // namespace wb::cuda::matmul
