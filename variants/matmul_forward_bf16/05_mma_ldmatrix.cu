// matmul_forward_bf16, CUDA variant 5: mma.sync m16n8k16 fed by ldmatrix, below WMMA.
//
// NOT YET RUN ON A DEVICE: compiled by nvcc for sm_80 and sm_90 on a machine without a
// GPU, and checked in emulation (emu/tensor_core_instructions.h models mma, ldmatrix and
// cp.async lane by lane).
//
// Idea: cuda/4's block tile and register-staged, double-buffered slabs of 32 channels
// (variants/matmul/bf16_slabs.cuh), but the warp's math is written at the instruction
// level (variants/matmul/tensor_core_gemm.cuh, WarpTile): per 16 channels, one ldmatrix.x4 gives a
// 16x16 A fragment of inp and one gives the B fragments of two 8-column pieces of
// weight, straight in mma.m16n8k16's register layout, and the warp issues
// (warp_tile / 16) x (warp_tile / 8) mma.sync. Shared-memory rows are padded to 80
// bytes, which makes every ldmatrix conflict-free (bf16_slabs.cuh says why padding and
// not a swizzle). The accumulators' layout is known (PTX ISA), so the epilogue adds the
// bias and rounds straight from registers, two outputs per 32-bit store where OC is even:
// no shared-memory round trip.
// Parameters: tile (the block tile, tile x tile) and warp_tile (each warp's square
// tile): 64 over 32 (4 warps), 128 over 64 (4 warps), 128 over 32 (16 warps); 64 over
// 64 is not built (tile_limit skips it, with the reason).
// Why it should beat cuda/4: ldmatrix loads a warp's fragments in one conflict-free
// instruction per 8x8 matrix quadruple where WMMA's opaque load_matrix_sync may issue
// several narrower loads; the epilogue writes registers directly instead of a 16x16
// round trip through shared memory per fragment; the warp tile is a free parameter.
// Limits: C % 8 == 0 and 16-byte aligned inp and weight (a requirement, and checked at
// launch), compute capability 8.0 or newer (checked at launch). Edges of B*T, OC and C
// zero-filled and masked. The slabs still pass through registers (cuda/6 copies them
// with cp.async), and only two are in flight.
#include <cuda_bf16.h>

#include "contract/ops/matmul_forward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"
#include "variants/matmul/bf16_slabs.cuh"
#include "variants/matmul/tensor_core_gemm.cuh"

namespace wb::variants {
namespace {

namespace tg = cuda::tensor_core_gemm;

// kTile x kTile outputs per block over (kTile / kWarpTile)^2 warps.
template <int kTile, int kWarpTile>
__global__ void __launch_bounds__(32 * (kTile / kWarpTile) * (kTile / kWarpTile)) matmul_bf16_mma(tg::Problem p) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  constexpr int kSide = kTile / kWarpTile;
  constexpr int kThreads = 32 * kSide * kSide;
  constexpr int kSlab = kTile * tg::kLd;  // bf16 of one slab buffer
  // Slab buffers: inp 0, inp 1, weight 0, weight 1; each [kTile][kLd].
  WB_SHARED_ALIGNED(128, __nv_bfloat16, smem, [4 * kSlab]);

  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;
  const int wm = warp / kSide, wn = warp % kSide;
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;

  tg::StagedSlabs<kTile, kThreads> next;  // the next slab, on its way from global memory
  tg::WarpTile<kWarpTile, kWarpTile> tile;
  tile.zero();
  next.walk(p, smem, row0, col0, tid, [&](const __nv_bfloat16* xs, const __nv_bfloat16* ws) {
    tile.template multiply_slab<true, true, tg::kLd, tg::kLd>(xs + wm * kWarpTile * tg::kLd,
                                                              ws + wn * kWarpTile * tg::kLd, lane);
  });
  tile.template store<tg::kBias>(p, row0 + wm * kWarpTile, col0 + wn * kWarpTile, lane);
#else
  __trap();  // built for a device without bf16 mma; launch() refuses it first
#endif
}

template <int kTile, int kWarpTile>
void launch_with(const tg::Problem& p, const Launch& l) {
  const dim3 grid(cuda::grid_for(p.N, kTile), cuda::grid_for(p.M, kTile));
  WB_LAUNCH(matmul_bf16_mma<kTile, kWarpTile>, grid, tg::threads_for(kTile, kWarpTile), 0, cuda::stream(l), p);
}

void launch(const MatmulForwardBf16Args& a, const Launch& l) {
  constexpr const char* kWhat = "matmul_forward_bf16 cuda/5";
  const tg::Problem p = tg::linear_layer(a, nullptr, kWhat);
  tg::with_tiles(l.get("tile"), l.get("warp_tile"), kWhat, [&](auto tile, auto warp_tile) {
    launch_with<decltype(tile)::value, decltype(warp_tile)::value>(p, l);
  });
}

}  // namespace

Variant matmul_forward_bf16_cuda_5() {
  Variant v = Variant::of(&launch);
  v.summary =
      "mma.sync m16n8k16 fed by ldmatrix from padded (conflict-free) slabs, register-staged double buffer, "
      "bias and one rounding straight from the accumulators";
  tg::declare_tiles(v, false);
  return v;
}

}  // namespace wb::variants
