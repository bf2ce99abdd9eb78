// matmul_forward, CUDA variant 7: a hand-written TF32 tensor-core kernel (wmma).
//
// Idea: the block tile of variant 4 (tile x tile outputs, C walked in double-buffered
// slabs of 16 channels, float4 global loads staged through registers), but the math
// runs on the tensor cores: each warp owns a (tile / warps_m) x (tile / warps_n) piece
// of the block tile as 16x16 fp32 accumulator fragments and, per 8 channels, loads
// 16x8 fragments of inp (row-major A) and 8x16 fragments of weight^T (weight rows are
// the columns of B: col-major B, ld = row length) from shared memory and issues
// m16n16k8 TF32 mma_sync. Slabs keep the global layout (k contiguous) with rows padded
// to 20 floats, which keeps the fragment loads conflict-free and every fragment
// 32-byte aligned. Values are rounded to TF32 (round to nearest, __float_to_tf32) once,
// as they are written to shared memory. The epilogue goes through shared memory, one
// 16x16 fragment per warp at a time, so that partial tiles can be masked and the bias
// (if any) added.
// Parameters: block_size 128 (4 warps, 2 x 2) or 256 (8 warps, 2 x 4) and tile 64 or
// 128: warp tiles from 32x16 to 64x64.
// Why it should beat variant 4: a TF32 mma does 16x16x8 multiply-adds per warp
// instruction, several times the fp32 FMA throughput of the SM.
// Limits: TF32 inputs (10 mantissa bits; the tf32 class), C % 4 == 0 and 16-byte
// aligned inp and weight for the float4 loads (checked at launch), compute capability
// 8.0 or newer (checked at launch). Partial tiles at the edges of B*T and OC and a last
// partial slab of C are zero-filled and masked. Scalar, 64-byte-run output stores.
// Emulated through emu/include/mma.h, which draws the fragment layout per run:
// the epilogue goes through store_matrix_sync, never through x[i], so it holds.
#include <mma.h>  // under the emulator, emu/include/mma.h

#include <optional>
#include <stdexcept>
#include <string>

#include "contract/ops/matmul_forward.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "variants/matmul/matmul.cuh"

namespace wb::variants {
namespace {

namespace mf = cuda::matmul;

namespace wmma = nvcuda::wmma;

constexpr int kBK = 16;       // channels per slab
constexpr int kLd = kBK + 4;  // padded row of a slab in shared memory, a multiple of 4 floats

// kTile x kTile outputs per block, kWarpsM x kWarpsN warps.
template <int kTile, int kWarpsM, int kWarpsN>
__global__ void __launch_bounds__(32 * kWarpsM * kWarpsN)
    matmul_tf32_wmma(float* out, const float* inp, const float* weight, const float* bias, int rows, int C, int OC) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  constexpr int kWarps = kWarpsM * kWarpsN;
  constexpr int kThreads = 32 * kWarps;
  constexpr int kWM = kTile / kWarpsM;  // rows of a warp's tile
  constexpr int kWN = kTile / kWarpsN;  // columns of a warp's tile
  constexpr int kFM = kWM / 16;         // accumulator fragments down a warp's tile
  constexpr int kFN = kWN / 16;         // and across
  constexpr int kVecsPerRow = kBK / 4;
  constexpr int kVecs = kTile * kVecsPerRow;  // float4 per slab
  constexpr int kLoads = kVecs / kThreads;
  constexpr int kSlab = kTile * kLd;  // floats of one slab buffer
  static_assert(kWM % 16 == 0 && kWN % 16 == 0, "whole fragments per warp");
  static_assert(kVecs % kThreads == 0, "slabs split evenly over the threads");
  static_assert(kWarps * 256 <= 4 * kSlab, "the epilogue's per-warp 16x16 scratch fits in the slabs");

  // Four slab buffers: inp slabs 0 and 1, then weight slabs 0 and 1; each row-major
  // [kTile][kLd], element [m][k] = inp[row0 + m][k0 + k] (or weight[col0 + m][k0 + k]).
  WB_SHARED_ALIGNED(128, float, smem, [4 * kSlab]);

  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int wm = warp / kWarpsN;
  const int wn = warp % kWarpsN;
  const int row0 = blockIdx.y * kTile;
  const int col0 = blockIdx.x * kTile;
  const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);

  float4 xr[kLoads], wr[kLoads];  // the next slab, on its way from global memory

  // float4 number f of a slab: row f / kVecsPerRow, channels 4 * (f % kVecsPerRow) + {0..3}.
  auto load_slab = [&](int k0) {
#pragma unroll
    for (int i = 0; i < kLoads; ++i) {
      const int f = tid + i * kThreads;
      const int m = f / kVecsPerRow;
      const int c = k0 + 4 * (f % kVecsPerRow);  // C % 4 == 0: all four channels valid, or none
      const int r = row0 + m;
      const int o = col0 + m;
      xr[i] = r < rows && c < C ? cuda::load4(inp + int64_t(r) * C + c) : zero;
      wr[i] = o < OC && c < C ? cuda::load4(weight + int64_t(o) * C + c) : zero;
    }
  };
  auto to_tf32 = [](float4 v) {
    return make_float4(wmma::__float_to_tf32(v.x), wmma::__float_to_tf32(v.y), wmma::__float_to_tf32(v.z),
                       wmma::__float_to_tf32(v.w));
  };
  auto store_slab = [&](int b) {
    float* xs = smem + b * kSlab;
    float* ws = smem + (2 + b) * kSlab;
#pragma unroll
    for (int i = 0; i < kLoads; ++i) {
      const int f = tid + i * kThreads;
      const int at = (f / kVecsPerRow) * kLd + 4 * (f % kVecsPerRow);
      cuda::store4(xs + at, to_tf32(xr[i]));
      cuda::store4(ws + at, to_tf32(wr[i]));
    }
  };

  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[kFM][kFN];
#pragma unroll
  for (int i = 0; i < kFM; ++i)
#pragma unroll
    for (int j = 0; j < kFN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  const int slabs = (C + kBK - 1) / kBK;
  load_slab(0);
  store_slab(0);
  __syncthreads();
  for (int t = 0; t < slabs; ++t) {
    const int b = t & 1;
    const bool more = t + 1 < slabs;  // the same for every thread of the block
    if (more) load_slab((t + 1) * kBK);
    const float* xs = smem + b * kSlab + wm * kWM * kLd;        // this warp's rows of the inp slab
    const float* ws = smem + (2 + b) * kSlab + wn * kWN * kLd;  // and of the weight slab
#pragma unroll
    for (int kk = 0; kk < kBK; kk += 8) {
      wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> af[kFM];
      wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> bf[kFN];
#pragma unroll
      for (int i = 0; i < kFM; ++i) wmma::load_matrix_sync(af[i], xs + i * 16 * kLd + kk, kLd);
#pragma unroll
      for (int j = 0; j < kFN; ++j) wmma::load_matrix_sync(bf[j], ws + j * 16 * kLd + kk, kLd);
#pragma unroll
      for (int i = 0; i < kFM; ++i)
#pragma unroll
        for (int j = 0; j < kFN; ++j) wmma::mma_sync(acc[i][j], af[i], bf[j], acc[i][j]);
    }
    if (more) store_slab(b ^ 1);
    __syncthreads();
  }

  // Every thread has passed the last barrier: the slabs are free. Each warp writes its
  // fragments through its own 16x16 scratch, masking the edges and adding the bias.
  float* scratch = smem + warp * 256;
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
        if (r < rows && o < OC) out[int64_t(r) * OC + o] = scratch[e] + (bias ? bias[o] : 0.0f);
      }
      __syncwarp();
    }
  }
#else
  __trap();  // built for a device without TF32 tensor cores; launch() refuses it first
#endif
}

template <int kTile, int kWarpsM, int kWarpsN>
void launch_with(const MatmulForwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  const dim3 grid(cuda::grid_for(a.OC, kTile), cuda::grid_for(rows, kTile));
  WB_LAUNCH(matmul_tf32_wmma<kTile, kWarpsM, kWarpsN>, grid, 32 * kWarpsM * kWarpsN, 0, cuda::stream(l), a.out, a.inp,
            a.weight, a.bias, rows, a.C, a.OC);
}

void launch(const MatmulForwardArgs& a, const Launch& l) {
  int device = 0, major = 0;
  WB_CHECK(cudaGetDevice(&device));
  WB_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  if (major < 8) throw Unsupported("matmul_forward cuda/7 needs TF32 tensor cores (compute capability >= 8.0)");
  cuda::require_aligned16("matmul_forward cuda/7", {a.inp, a.weight});
  const int tile = l.get("tile");
  const int block = l.block_size();
  if (tile == 128 && block == 256) return launch_with<128, 2, 4>(a, l);
  if (tile == 128 && block == 128) return launch_with<128, 2, 2>(a, l);
  if (tile == 64 && block == 256) return launch_with<64, 2, 4>(a, l);
  if (tile == 64 && block == 128) return launch_with<64, 2, 2>(a, l);
  throw std::logic_error("matmul_forward cuda/7: no kernel for tile " + std::to_string(tile) + " and block_size " +
                         std::to_string(block));
}

}  // namespace

Variant matmul_forward_cuda_7() {
  Variant v = Variant::of(&launch);
  v.summary = "tile x tile outputs per block on TF32 tensor cores (wmma m16n16k8), double-buffered float4-loaded slabs";
  v.numeric = NumericClass::tf32;
  v.min_compute_capability = 80;
  v.params = {block_size_param({128, 256}, 256), TuningParam{"tile", {64, 128}, 128}};
  v.requirements = {{"C % 4 == 0", [](const Shape& s) { return s.C % 4 == 0; }}};
  v.launch_limit = [](const Shape& s, const ParamValues& p) { return mf::row_tile_limit(s, p.get("tile")); };
  return v;
}

}  // namespace wb::variants
