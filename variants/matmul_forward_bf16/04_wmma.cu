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
#include "variants/matmul/wmma_tiles.cuh"

namespace wb::variants {
namespace {

namespace tg = cuda::tensor_core_gemm;
namespace wt = cuda::wmma_tiles;

// kTile x kTile outputs per block, kWarpsM x kWarpsN warps.
template <int kTile, int kWarpsM, int kWarpsN>
__global__ void __launch_bounds__(32 * kWarpsM * kWarpsN) matmul_bf16_wmma(tg::Problem p) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  constexpr int kThreads = 32 * kWarpsM * kWarpsN;
  constexpr int kSlab = kTile * tg::kLd;  // bf16 of one slab buffer
  static_assert(kWarpsM * kWarpsN * 256 * sizeof(float) <= 4 * kSlab * sizeof(__nv_bfloat16),
                "the epilogue's per-warp 16x16 fp32 scratch fits in the slabs");

  // Four slab buffers: inp slabs 0 and 1, then weight slabs 0 and 1; each [kTile][kLd],
  // element [m][k] = inp[row0 + m][k0 + k] (or weight[col0 + m][k0 + k]).
  WB_SHARED_ALIGNED(128, __nv_bfloat16, smem, [4 * kSlab]);
  const int row0 = blockIdx.y * kTile;
  const int col0 = blockIdx.x * kTile;

  tg::StagedSlabs<kTile, kThreads> next;  // the next slab, on its way from global memory
  wt::WarpTile<kTile, kWarpsM, kWarpsN, __nv_bfloat16> tile;
  next.walk(p, smem, row0, col0, threadIdx.x, [&](const __nv_bfloat16* xs, const __nv_bfloat16* ws) {
    tile.template multiply_slab<tg::kBK, tg::kLd>(xs, ws);
  });

  // Every thread has passed the last barrier: the slabs are free. Each warp writes its
  // fragments through its own 16x16 fp32 scratch, masking the edges, adding the bias to
  // the fp32 sum and rounding each output once.
  tile.store(reinterpret_cast<float*>(smem), int(threadIdx.x) % 32, row0, col0, [&](int r, int o, float sum) {
    if (r < p.M && o < p.N)
      p.out[int64_t(r) * p.N + o] = __float2bfloat16(sum + (p.bias ? __bfloat162float(p.bias[o]) : 0.0f));
  });
#else
  __trap();  // built for a device without bf16 tensor cores; launch() refuses it first
#endif
}

void launch(const MatmulForwardBf16Args& a, const Launch& l) {
  constexpr const char* kWhat = "matmul_forward_bf16 cuda/4";
  const tg::Problem p = tg::linear_layer(a, nullptr, kWhat);
  wt::with_warps(l.get("tile"), l.block_size(), kWhat, [&](auto tile, auto warps_m, auto warps_n) {
    constexpr int kTile = decltype(tile)::value;
    const dim3 grid(cuda::grid_for(p.N, kTile), cuda::grid_for(p.M, kTile));
    WB_LAUNCH(matmul_bf16_wmma<kTile, decltype(warps_m)::value, decltype(warps_n)::value>, grid, l.block_size(), 0,
              cuda::stream(l), p);
  });
}

}  // namespace

Variant matmul_forward_bf16_cuda_4() {
  return wt::variant(&launch, tg::channels_in_chunks(),
                     "tile x tile outputs per block on bf16 tensor cores (wmma m16n16k16), double-buffered padded "
                     "slabs, bias and one rounding in the epilogue");
}

}  // namespace wb::variants
