// matmul_backward, CUDA variant 2: square shared-memory tiles.
//
// Idea: both products are one kernel, out (M, N) (+)= A (M, K) @ Bm (K, N), with Bm
// row-major and A read either row-major or transposed:
//   dinp    (rows, C)  = dout (rows, OC)   @ weight (OC, C)    A = dout, k contiguous
//   dweight (OC, C)   += dout^T (OC, rows) @ inp (rows, C)     A = dout^T, m contiguous
// (dinp overwritten, dweight accumulated: a template flag picks the store).
// A block of TILE x TILE threads owns a TILE x TILE tile of out, one element per
// thread. It walks K in steps of TILE: the block loads a TILE x TILE tile of A and one
// of Bm into shared memory (each global read coalesced: consecutive threads read
// consecutive addresses whichever way A is laid out), synchronises, and every thread
// takes its dot product over the tile from shared memory. The bias gradient is the
// separate op matmul_backward_bias.
// Why it should beat variant 1: every float loaded from global memory now serves TILE
// multiply-adds instead of one, so the kernel leaves the L1/L2 bound of variant 1.
// Limits: one output per thread: two shared-memory loads per multiply-add, so it is
// bound by shared-memory bandwidth, well below the FMA peak. block_size picks the
// tile: 64 -> 8 x 8, 256 -> 16 x 16, 1024 -> 32 x 32. Edges are zero-filled, so any
// shape runs; the grid's y extent (ceil(rows / TILE)) must stay within 65535.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "contract/ops/matmul_backward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

constexpr int64_t kMaxGridY = 65535;

// out (M, N) += A (M, K) @ Bm (K, N) when kAccumulate, out = A @ Bm otherwise.
// A(m, k) = a[m * lda + k] when kAKContiguous, a[k * lda + m] otherwise;
// Bm(k, n) = b[k * N + n]; out(m, n) = out[m * N + n].
// grid (ceil(N / kTile), ceil(M / kTile)), block (kTile, kTile).
template <int kTile, bool kAKContiguous, bool kAccumulate>
__global__ void __launch_bounds__(kTile* kTile)
    gemm_shared_tiles(float* out, const float* a, const float* b, int M, int N, int K, int lda) {
  WB_SHARED(float, sa, [kTile][kTile + 1]);  // sa[k][m]; +1 breaks bank conflicts on transposed stores
  WB_SHARED(float, sb, [kTile][kTile]);      // sb[k][n]
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int m0 = blockIdx.y * kTile, n0 = blockIdx.x * kTile;
  const int m = m0 + ty, n = n0 + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += kTile) {  // the same trip count for every thread
    if (kAKContiguous) {
      // tx runs along k: coalesced reads of a row of A, stored transposed
      const int am = m0 + ty, ak = k0 + tx;
      sa[tx][ty] = (am < M && ak < K) ? a[int64_t(am) * lda + ak] : 0.0f;
    } else {
      // tx runs along m: coalesced reads of a row of A^T
      const int am = m0 + tx, ak = k0 + ty;
      sa[ty][tx] = (am < M && ak < K) ? a[int64_t(ak) * lda + am] : 0.0f;
    }
    const int bk = k0 + ty;
    sb[ty][tx] = (bk < K && n < N) ? b[int64_t(bk) * N + n] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTile; ++kk) acc += sa[kk][ty] * sb[kk][tx];
    __syncthreads();
  }
  if (m < M && n < N) {
    if (kAccumulate)
      out[int64_t(m) * N + n] += acc;
    else
      out[int64_t(m) * N + n] = acc;
  }
}

template <int kTile>
void launch_tiles(const MatmulBackwardArgs& a, int rows, cudaStream_t stream) {
  const dim3 block(kTile, kTile);
  // dinp (rows, C) = dout (rows, OC) @ weight (OC, C): M = rows, N = C, K = OC
  const dim3 grid_dinp(cuda::grid_for(a.C, kTile), cuda::grid_for(rows, kTile));
  WB_LAUNCH(gemm_shared_tiles<kTile, true, false>, grid_dinp, block, 0, stream, a.dinp, a.dout, a.weight, rows, a.C,
            a.OC, a.OC);
  // dweight (OC, C) += dout^T (OC, rows) @ inp (rows, C): M = OC, N = C, K = rows
  const dim3 grid_dweight(cuda::grid_for(a.C, kTile), cuda::grid_for(a.OC, kTile));
  WB_LAUNCH(gemm_shared_tiles<kTile, false, true>, grid_dweight, block, 0, stream, a.dweight, a.dout, a.inp, a.OC, a.C,
            rows, a.OC);
}

void launch(const MatmulBackwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  cudaStream_t stream = cuda::stream(l);
  switch (l.block_size()) {
    case 64:
      launch_tiles<8>(a, rows, stream);
      break;
    case 256:
      launch_tiles<16>(a, rows, stream);
      break;
    case 1024:
      launch_tiles<32>(a, rows, stream);
      break;
    default:
      throw std::logic_error("matmul_backward cuda/2: block size " + std::to_string(l.block_size()) +
                             " is not a square tile");
  }
}

int tile_of(int block_size) { return block_size == 64 ? 8 : block_size == 256 ? 16 : 32; }

}  // namespace

Variant matmul_backward_cuda_2() {
  Variant v = Variant::of(&launch);
  v.summary = "square tiles of A and B staged in shared memory, one output per thread (block size = tile^2)";
  v.params = {block_size_param({64, 256, 1024}, 256)};
  v.launch_limit = [](const Shape& s, const ParamValues& p) -> std::optional<std::string> {
    const int tile = tile_of(p.get("block_size"));
    if ((s.B * s.T + tile - 1) / tile > kMaxGridY || (s.OC + tile - 1) / tile > kMaxGridY)
      return "ceil(B*T / " + std::to_string(tile) + ") and ceil(OC / " + std::to_string(tile) +
             ") must be <= 65535 (grid y)";
    return std::nullopt;
  };
  return v;
}

}  // namespace wb::variants
