// matmul_forward_bf16, CUDA variant 4: a hand-written bf16 tensor-core kernel (WMMA
// m16n16k16), the first rung below the libraries.
//
// NOT YET RUN ON A DEVICE: checked in emulation (emu/include/mma.h) and compiled
// by nvcc for sm_80 and sm_90 on a machine without a GPU.
//
// Idea: matmul_forward cuda/7's block tile on bf16 storage. A block computes tile x
// tile outputs; C is walked in double-buffered slabs of 32 channels kept k-contiguous
// in shared memory with padded rows (variants/matmul/bf16_slabs.cuh: layout, chunks, the
// register-staged copy). Each warp owns a (tile / 2) x (tile / warps_n) piece as 16x16
// fp32 accumulator fragments and, per 16 channels, loads 16x16 bf16 fragments of inp
// (row-major A) and of weight^T (weight rows are the columns of B: col-major B, ld =
// the padded row) and issues m16n16k16 mma_sync. The next slab's 16-byte chunks are
// loaded into registers before the math and stored after it, so their latency hides
// behind the tensor-core work. The epilogue goes through shared memory, one 16x16
// fragment per warp at a time (the fragment's element order is unspecified): the bias
// is added to the fp32 sum there and each output rounded once to nearest even.
// Parameters: block_size 128 (4 warps, 2 x 2) or 256 (8 warps, 2 x 4) and tile 64 or
// 128: warp tiles from 32x16 to 64x64.
// Why it should beat cuda/1 (and be the baseline of cuda/5..6): a bf16 mma does
// 16x16x16 multiply-adds per warp instruction, on tensor cores with several times the
// FMA throughput of the SM, and each element loaded from global memory is reused tile
// times from shared memory. Its limits are those of WMMA: fragments are opaque, so the
// epilogue needs a shared-memory round trip, and load_matrix_sync gives no control of
// the shared-memory reads (cuda/5 uses ldmatrix and mma.sync directly).
// Limits: C % 8 == 0 and 16-byte aligned inp and weight for the 16-byte chunks (a
// requirement, and checked at launch), compute capability 8.0 or newer (checked at
// launch). Partial tiles at the edges of B*T and OC and a last partial slab of C are
// zero-filled and masked. Scalar bf16 output stores.
#include <cuda_bf16.h>
#include <mma.h>  // under the emulator, emu/include/mma.h

#include <stdexcept>
#include <string>

#include "contract/ops/matmul_forward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"
#include "variants/matmul/bf16_slabs.cuh"
#include "variants/matmul/matmul.cuh"

namespace wb::variants {
namespace {

namespace tg = cuda::tensor_core_gemm;
namespace wmma = nvcuda::wmma;

// kTile x kTile outputs per block, kWarpsM x kWarpsN warps.
template <int kTile, int kWarpsM, int kWarpsN>
__global__ void __launch_bounds__(32 * kWarpsM * kWarpsN) matmul_bf16_wmma(tg::Problem p) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  constexpr int kWarps = kWarpsM * kWarpsN;
  constexpr int kThreads = 32 * kWarps;
  constexpr int kWM = kTile / kWarpsM;    // rows of a warp's tile
  constexpr int kWN = kTile / kWarpsN;    // columns of a warp's tile
  constexpr int kFM = kWM / 16;           // accumulator fragments down a warp's tile
  constexpr int kFN = kWN / 16;           // and across
  constexpr int kSlab = kTile * tg::kLd;  // bf16 of one slab buffer
  static_assert(kWM % 16 == 0 && kWN % 16 == 0, "whole fragments per warp");
  static_assert(kWarps * 256 * sizeof(float) <= 4 * kSlab * sizeof(__nv_bfloat16),
                "the epilogue's per-warp 16x16 fp32 scratch fits in the slabs");

  // Four slab buffers: inp slabs 0 and 1, then weight slabs 0 and 1; each [kTile][kLd],
  // element [m][k] = inp[row0 + m][k0 + k] (or weight[col0 + m][k0 + k]).
  WB_SHARED_ALIGNED(128, __nv_bfloat16, smem, [4 * kSlab]);

  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int wm = warp / kWarpsN;
  const int wn = warp % kWarpsN;
  const int row0 = blockIdx.y * kTile;
  const int col0 = blockIdx.x * kTile;

  tg::StagedSlabs<kTile, kThreads> next;  // the next slab, on its way from global memory

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[kFM][kFN];
#pragma unroll
  for (int i = 0; i < kFM; ++i)
#pragma unroll
    for (int j = 0; j < kFN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  const int slabs = (p.K + tg::kBK - 1) / tg::kBK;
  next.load(p, row0, col0, 0, tid);
  next.store(smem, smem + 2 * kSlab, tid);
  __syncthreads();
  for (int t = 0; t < slabs; ++t) {
    const int b = t & 1;
    const bool more = t + 1 < slabs;  // the same for every thread of the block
    if (more) next.load(p, row0, col0, (t + 1) * tg::kBK, tid);
    const __nv_bfloat16* xs = smem + b * kSlab + wm * kWM * tg::kLd;        // this warp's rows of the inp slab
    const __nv_bfloat16* ws = smem + (2 + b) * kSlab + wn * kWN * tg::kLd;  // and of the weight slab
#pragma unroll
    for (int kk = 0; kk < tg::kBK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> af[kFM];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> bf[kFN];
#pragma unroll
      for (int i = 0; i < kFM; ++i) wmma::load_matrix_sync(af[i], xs + i * 16 * tg::kLd + kk, tg::kLd);
#pragma unroll
      for (int j = 0; j < kFN; ++j) wmma::load_matrix_sync(bf[j], ws + j * 16 * tg::kLd + kk, tg::kLd);
#pragma unroll
      for (int i = 0; i < kFM; ++i)
#pragma unroll
        for (int j = 0; j < kFN; ++j) wmma::mma_sync(acc[i][j], af[i], bf[j], acc[i][j]);
    }
    if (more) next.store(smem + (b ^ 1) * kSlab, smem + (2 + (b ^ 1)) * kSlab, tid);
    __syncthreads();
  }

  // Every thread has passed the last barrier: the slabs are free. Each warp writes its
  // fragments through its own 16x16 fp32 scratch, masking the edges and adding the bias.
  float* scratch = reinterpret_cast<float*>(smem) + warp * 256;
#pragma unroll
  for (int i = 0; i < kFM; ++i) {
#pragma unroll
    for (int j = 0; j < kFN; ++j) {
      wmma::store_matrix_sync(scratch, acc[i][j], 16, wmma::mem_row_major);
      __syncwarp();
#pragma unroll
      for (int q = 0; q < 8; ++q) {
        const int e = lane + 32 * q;
        const int r = row0 + wm * kWM + i * 16 + e / 16;
        const int o = col0 + wn * kWN + j * 16 + e % 16;
        if (r < p.M && o < p.N)
          p.out[int64_t(r) * p.N + o] = __float2bfloat16(scratch[e] + (p.bias ? __bfloat162float(p.bias[o]) : 0.0f));
      }
      __syncwarp();
    }
  }
#else
  __trap();  // built for a device without bf16 tensor cores; launch() refuses it first
#endif
}

template <int kTile, int kWarpsM, int kWarpsN>
void launch_with(const tg::Problem& p, const Launch& l) {
  const dim3 grid(cuda::grid_for(p.N, kTile), cuda::grid_for(p.M, kTile));
  WB_LAUNCH(matmul_bf16_wmma<kTile, kWarpsM, kWarpsN>, grid, 32 * kWarpsM * kWarpsN, 0, cuda::stream(l), p);
}

void launch(const MatmulForwardBf16Args& a, const Launch& l) {
  const tg::Problem p = tg::linear_layer(a, nullptr, "matmul_forward_bf16 cuda/4");
  const int tile = l.get("tile");
  const int block = l.block_size();
  if (tile == 128 && block == 256) return launch_with<128, 2, 4>(p, l);
  if (tile == 128 && block == 128) return launch_with<128, 2, 2>(p, l);
  if (tile == 64 && block == 256) return launch_with<64, 2, 4>(p, l);
  if (tile == 64 && block == 128) return launch_with<64, 2, 2>(p, l);
  throw std::logic_error("matmul_forward_bf16 cuda/4: no kernel for tile " + std::to_string(tile) + " and block_size " +
                         std::to_string(block));
}

}  // namespace

Variant matmul_forward_bf16_cuda_4() {
  Variant v = Variant::of(&launch);
  v.summary =
      "tile x tile outputs per block on bf16 tensor cores (wmma m16n16k16), double-buffered padded slabs, "
      "bias and one rounding in the epilogue";
  v.min_compute_capability = 80;
  v.params = {block_size_param({128, 256}, 256), TuningParam{"tile", {64, 128}, 128}};
  v.requirements = {tg::channels_in_chunks()};
  v.launch_limit = [](const Shape& s, const ParamValues& p) { return cuda::matmul::row_tile_limit(s, p.get("tile")); };
  return v;
}

}  // namespace wb::variants
