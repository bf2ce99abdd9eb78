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
#include "variants/matmul/double_buffer.cuh"
#include "variants/matmul/matmul.cuh"
#include "variants/matmul/wmma_tiles.cuh"

namespace wb::variants {
namespace {

namespace db = cuda::double_buffer;
namespace wt = cuda::wmma_tiles;
namespace wmma = nvcuda::wmma;

constexpr int kBK = 16;       // channels per slab
constexpr int kLd = kBK + 4;  // padded row of a slab in shared memory, a multiple of 4 floats

// kTile x kTile outputs per block, kWarpsM x kWarpsN warps.
template <int kTile, int kWarpsM, int kWarpsN>
__global__ void __launch_bounds__(32 * kWarpsM * kWarpsN)
    matmul_tf32_wmma(float* out, const float* inp, const float* weight, const float* bias, int rows, int C, int OC) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  constexpr int kThreads = 32 * kWarpsM * kWarpsN;
  constexpr int kSlab = kTile * kLd;  // floats of one slab buffer
  using Staged = db::Float4Rows<kTile, kBK, kThreads>;
  static_assert(Staged::kEven, "slabs split evenly over the threads");
  static_assert(kWarpsM * kWarpsN * 256 <= 4 * kSlab, "the epilogue's per-warp 16x16 scratch fits in the slabs");

  // Four slab buffers: inp slabs 0 and 1, then weight slabs 0 and 1; each row-major
  // [kTile][kLd], element [m][k] = inp[row0 + m][k0 + k] (or weight[col0 + m][k0 + k]).
  WB_SHARED_ALIGNED(128, float, smem, [4 * kSlab]);

  const int tid = threadIdx.x;
  const int row0 = blockIdx.y * kTile;
  const int col0 = blockIdx.x * kTile;

  Staged next;  // the next slab, on its way from global memory
  auto to_tf32 = [](float4 v) {
    return make_float4(wmma::__float_to_tf32(v.x), wmma::__float_to_tf32(v.y), wmma::__float_to_tf32(v.z),
                       wmma::__float_to_tf32(v.w));
  };
  // The slabs keep the global layout (k contiguous), each value rounded to TF32 once.
  auto store_slab = [&](int b) {
#pragma unroll
    for (int i = 0; i < Staged::kLoads; ++i) {
      const int at = Staged::row(tid, i) * kLd + Staged::channel(tid, i);
      cuda::store4(smem + b * kSlab + at, to_tf32(next.x[i]));
      cuda::store4(smem + (2 + b) * kSlab + at, to_tf32(next.w[i]));
    }
  };

  const int lane = threadIdx.x % 32;
  wt::WarpTile<kTile, kWarpsM, kWarpsN, wmma::precision::tf32> tile;
  db::walk((C + kBK - 1) / kBK, [&](int slab) { next.load(inp, weight, rows, C, OC, row0, col0, slab * kBK, tid); },
           store_slab, [&](int b) { tile.template multiply_slab<kBK, kLd>(smem + b * kSlab, smem + (2 + b) * kSlab); });

  // Every thread has passed the last barrier: the slabs are free. Each warp writes its
  // fragments through its own 16x16 scratch, masking the edges and adding the bias.
  tile.store(smem, lane, row0, col0, [&](int r, int o, float sum) {
    if (r < rows && o < OC) out[int64_t(r) * OC + o] = sum + (bias ? bias[o] : 0.0f);
  });
#else
  __trap();  // built for a device without TF32 tensor cores; launch() refuses it first
#endif
}

void launch(const MatmulForwardArgs& a, const Launch& l) {
  int device = 0, major = 0;
  WB_CHECK(cudaGetDevice(&device));
  WB_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  if (major < 8) throw Unsupported("matmul_forward cuda/7 needs TF32 tensor cores (compute capability >= 8.0)");
  cuda::require_aligned16("matmul_forward cuda/7", {a.inp, a.weight});
  const int rows = a.B * a.T;
  wt::with_warps(l.get("tile"), l.block_size(), "matmul_forward cuda/7", [&](auto tile, auto warps_m, auto warps_n) {
    constexpr int kTile = decltype(tile)::value;
    const dim3 grid(cuda::grid_for(a.OC, kTile), cuda::grid_for(rows, kTile));
    WB_LAUNCH(matmul_tf32_wmma<kTile, decltype(warps_m)::value, decltype(warps_n)::value>, grid, l.block_size(), 0,
              cuda::stream(l), a.out, a.inp, a.weight, a.bias, rows, a.C, a.OC);
  });
}

}  // namespace

Variant matmul_forward_cuda_7() {
  Variant v = wt::variant(
      &launch, {"C % 4 == 0", [](const Shape& s) { return s.C % 4 == 0; }},
      "tile x tile outputs per block on TF32 tensor cores (wmma m16n16k8), double-buffered float4-loaded slabs");
  v.numeric = NumericClass::tf32;
  return v;
}

}  // namespace wb::variants
