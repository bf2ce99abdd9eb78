#pragma once
// The mma.sync kernels of wb's hand-written bf16 GEMMs: a warp's tile of m16n8k16
// accumulators fed by ldmatrix from the padded slabs of variants/matmul/bf16_slabs.cuh
// (why padded: see there), its epilogues (bias, bias + GELU, accumulation into a bf16
// gradient; one rounding per output), and the multi-stage cp.async kernel that
// matmul_forward_bf16 cuda/6, matmul_gelu_forward_bf16 cuda/4 and matmul_backward_bf16
// cuda/4 all launch. Compute capability 8.0: mma.m16n8k16 with bf16, ldmatrix and
// cp.async (device/cuda/tensor_core_ptx.cuh).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "contract/shape.h"
#include "contract/variant.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "device/cuda/tensor_core_ptx.cuh"
#include "variants/gelu/gelu.cuh"
#include "variants/matmul/bf16_slabs.cuh"
#include "variants/matmul/matmul.cuh"

namespace wb::cuda::tensor_core_gemm {

// How the fp32 sums become outputs (a kernel template parameter; an int, so that the
// kernel's name reads the same from nvcc's and the emulator's symbols).
enum Epilogue : int {
  kBias = 0,        // out = bf16(sum + bias), bias may be null
  kBiasGelu = 1,    // pre = bf16(sum + bias), out = bf16(gelu(sum + bias))
  kAccumulate = 2,  // out = bf16(out + sum): a gradient accumulated across the step
};

// The slab of one operand at k0 for a block whose tile starts at `first` (row of A or
// column of B): a k-contiguous operand (kKContiguous: kTile rows of kBK k values, rows
// first .. first + kTile - 1 of the stored matrix) or a k-major one (kBK rows of kTile,
// stored rows k0 .. k0 + kBK - 1). `extent` is M or N.
template <int kTile, int kThreads, bool kKContiguous>
struct Slab {
  using W = std::conditional_t<kKContiguous, Window<kTile, kBK, kThreads>, Window<kBK, kTile, kThreads>>;
  static constexpr int kLdS = W::kLdS;
  static constexpr int kElements = W::kElements;

  // Copied straight to shared memory with cp.async (16 bytes a chunk, .cg: the tiles
  // are reused from shared memory, not from L1); a chunk past the matrix reads 0 bytes
  // (the src-size form) and is zero-filled. The caller commits the group.
  __device__ static void copy_async(__nv_bfloat16* dst, const __nv_bfloat16* src, int ld, int extent, int K, int first,
                                    int k0, int tid) {
#pragma unroll
    for (int i = 0; i < W::kPerThread; ++i) {
      const __nv_bfloat16* from = kKContiguous ? W::source(src, ld, extent, K, first, k0, tid, i)
                                               : W::source(src, ld, K, extent, k0, first, tid, i);
      // A chunk that is not read still needs a valid address: the matrix's first.
      tc::cp_async_cg<16>(dst + W::at(tid, i), from ? from : src, from ? 16 : 0);
    }
  }
};

// One warp's kWM x kWN piece of the block tile: kFM x kFN accumulators of 16x8, in the
// C/D fragment layout of mma.m16n8k16 (c[0..1] row g, c[2..3] row g + 8, columns 2t, 2t+1).
template <int kWM, int kWN>
struct WarpTile {
  static constexpr int kFM = kWM / 16;
  static constexpr int kFN = kWN / 8;
  static_assert(kWM % 16 == 0 && kWN % 16 == 0, "B fragments are loaded two n8 columns at a time");
  float acc[kFM][kFN][4];

  __device__ void zero() {
#pragma unroll
    for (int i = 0; i < kFM; ++i)
#pragma unroll
      for (int j = 0; j < kFN; ++j)
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.0f;
  }

  // acc += this warp's rows of the A slab times its columns of the B slab, one slab of
  // kBK. `as` points at the warp's first row of A (k-contiguous: its row; k-major: its
  // column of the slab's row 0), `bs` likewise for B; kLdA and kLdB are the slabs'
  // padded row lengths.
  template <bool kAKContiguous, bool kBKContiguous, int kLdA, int kLdB>
  __device__ void multiply_slab(const __nv_bfloat16* as, const __nv_bfloat16* bs, int lane) {
    const int quad = lane / 8, row = lane % 8;  // lanes 8j..8j+7 address the rows of matrix j
#pragma unroll
    for (int kk = 0; kk < kBK; kk += 16) {
      // A (16x16 at rows 16i): matrices 0..3 hold (m 0-7, k 0-7), (m 8-15, k 0-7),
      // (m 0-7, k 8-15), (m 8-15, k 8-15): a[0..3] in mma's order, so matrix j sits at
      // m offset 8 (j % 2), k offset 8 (j / 2). Stored [m][k], its rows are m: plain
      // ldmatrix; stored [k][m], its rows are k: .trans gives the same registers.
      uint32_t a[kFM][4];
#pragma unroll
      for (int i = 0; i < kFM; ++i) {
        if constexpr (kAKContiguous)
          tc::ldmatrix_x4(a[i], as + (i * 16 + (quad % 2) * 8 + row) * kLdA + kk + (quad / 2) * 8);
        else
          tc::ldmatrix_x4_trans(a[i], as + (kk + (quad / 2) * 8 + row) * kLdA + i * 16 + (quad % 2) * 8);
      }
      // B for two n8 fragments at once (columns 16jj..16jj+15): matrices 0..3 hold
      // (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15): b[0..1] of
      // fragment 2jj, then of 2jj + 1; matrix j sits at n offset 8 (j / 2), k offset
      // 8 (j % 2). Stored [n][k] (the forward's weight): plain; stored [k][n]: .trans.
      uint32_t b[kFN][2];
#pragma unroll
      for (int jj = 0; jj < kFN / 2; ++jj) {
        uint32_t r[4];
        if constexpr (kBKContiguous)
          tc::ldmatrix_x4(r, bs + (jj * 16 + (quad / 2) * 8 + row) * kLdB + kk + (quad % 2) * 8);
        else
          tc::ldmatrix_x4_trans(r, bs + (kk + (quad % 2) * 8 + row) * kLdB + jj * 16 + (quad / 2) * 8);
        b[2 * jj][0] = r[0];
        b[2 * jj][1] = r[1];
        b[2 * jj + 1][0] = r[2];
        b[2 * jj + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < kFM; ++i)
#pragma unroll
        for (int j = 0; j < kFN; ++j) tc::mma_m16n8k16_bf16(acc[i][j], a[i], b[j], acc[i][j]);
    }
  }

  // The epilogue, straight from the fragments: each output rounded once (see Epilogue).
  // (r0, o0) is the warp's first output; edges past M or N are not stored.
  template <int kEpilogue>
  __device__ void store(const Problem& p, int r0, int o0, int lane) const {
    const int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int j = 0; j < kFN; ++j) {
      const int o = o0 + j * 8 + 2 * t;
      const float b0 = p.bias && o < p.N ? __bfloat162float(p.bias[o]) : 0.0f;
      const float b1 = p.bias && o + 1 < p.N ? __bfloat162float(p.bias[o + 1]) : 0.0f;
#pragma unroll
      for (int i = 0; i < kFM; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {  // rows g and g + 8
          const int r = r0 + i * 16 + g + 8 * h;
          if (r >= p.M || o >= p.N) continue;
          store_pair<kEpilogue>(p, int64_t(r) * p.N + o, o + 1 < p.N, acc[i][j][2 * h] + b0, acc[i][j][2 * h + 1] + b1);
        }
    }
  }

  // Outputs at and at + 1 of one row (at + 1 only where `both`).
  template <int kEpilogue>
  __device__ static void store_pair(const Problem& p, int64_t at, bool both, float v0, float v1) {
    const bool pair = p.pair_stores && both;  // N even: at is even, at + 1 in the row, 4-byte aligned
    if constexpr (kEpilogue == kAccumulate) {
      if (pair) {
        const __nv_bfloat162 old = *reinterpret_cast<const __nv_bfloat162*>(p.out + at);
        v0 += __bfloat162float(old.x);
        v1 += __bfloat162float(old.y);
      } else {
        v0 += __bfloat162float(p.out[at]);
        if (both) v1 += __bfloat162float(p.out[at + 1]);
      }
    }
    if constexpr (kEpilogue == kBiasGelu) put(p.pre, at, pair, both, v0, v1);
    if constexpr (kEpilogue == kBiasGelu) {
      put(p.out, at, pair, both, gelu::gelu(v0), gelu::gelu(v1));
    } else {
      put(p.out, at, pair, both, v0, v1);
    }
  }
  __device__ static void put(__nv_bfloat16* dst, int64_t at, bool pair, bool both, float v0, float v1) {
    if (pair) {
      __nv_bfloat162 two;
      two.x = __float2bfloat16(v0);
      two.y = __float2bfloat16(v1);
      *reinterpret_cast<__nv_bfloat162*>(dst + at) = two;
      return;
    }
    dst[at] = __float2bfloat16(v0);
    if (both) dst[at + 1] = __float2bfloat16(v1);
  }
};

// The multi-stage cp.async kernel (matmul_forward_bf16 cuda/6, matmul_gelu_forward_bf16
// cuda/4, matmul_backward_bf16 cuda/4): a kTile x kTile block tile of out over
// (kTile / kWarpTile)^2 warps of kWarpTile x kWarpTile each; A k-contiguous or k-major
// (kAKContiguous), B likewise (kBKContiguous); `stages` slab buffers of A and B in
// dynamic shared memory (stages_bytes), 2..4, a run-time value: the loop is the same for
// every depth, and one instantiation serves them all.
//
// Slab t lives in buffer t % stages. Before the loop, slabs 0 .. stages-2 are in
// flight, one commit group each (a group is committed every step, empty past the last
// slab, so that "group t" is always slab t). At step t: wait until at most stages-2
// groups are pending (slab t has landed for this thread), a barrier (every thread's
// chunks of slab t are visible, and every warp has finished step t-1, whose buffer is
// the one refilled next), issue slab t + stages - 1 into buffer (t - 1) % stages, then
// multiply slab t while up to stages-1 slabs are being copied.
template <int kTile, int kWarpTile, int kEpilogue, bool kAKContiguous, bool kBKContiguous>
__global__ void __launch_bounds__(32 * (kTile / kWarpTile) * (kTile / kWarpTile)) gemm_cp_async(Problem p, int stages) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  constexpr int kSide = kTile / kWarpTile;
  constexpr int kThreads = 32 * kSide * kSide;
  using SA = Slab<kTile, kThreads, kAKContiguous>;
  using SB = Slab<kTile, kThreads, kBKContiguous>;
  WB_DYNAMIC_SHARED(int4, smem_raw);  // int4: 16-byte aligned
  __nv_bfloat16* const smem = reinterpret_cast<__nv_bfloat16*>(smem_raw);
  auto as = [&](int b) { return smem + b * (SA::kElements + SB::kElements); };  // A slab of buffer b
  auto bs = [&](int b) { return as(b) + SA::kElements; };                       // and its B slab

  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;
  const int wm = warp / kSide, wn = warp % kSide;
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
  const int slabs = (p.K + kBK - 1) / kBK;
  auto issue = [&](int slab, int b) {
    SA::copy_async(as(b), p.a, p.lda, p.M, p.K, row0, slab * kBK, tid);
    SB::copy_async(bs(b), p.b, p.ldb, p.N, p.K, col0, slab * kBK, tid);
  };
  // The warp's first row of A and column of B within a slab.
  const int a_at = kAKContiguous ? wm * kWarpTile * SA::kLdS : wm * kWarpTile;
  const int b_at = kBKContiguous ? wn * kWarpTile * SB::kLdS : wn * kWarpTile;

  for (int s = 0; s < stages - 1; ++s) {
    if (s < slabs) issue(s, s);
    tc::cp_async_commit();
  }
  WarpTile<kWarpTile, kWarpTile> tile;
  tile.zero();
  for (int t = 0; t < slabs; ++t) {
    tc::cp_async_wait_pending(stages - 2);  // stages is the same for the whole grid
    __syncthreads();
    const int next = t + stages - 1;
    if (next < slabs) issue(next, next % stages);
    tc::cp_async_commit();
    const int b = t % stages;
    tile.template multiply_slab<kAKContiguous, kBKContiguous, SA::kLdS, SB::kLdS>(as(b) + a_at, bs(b) + b_at, lane);
  }
  tc::cp_async_wait_all();  // only empty groups are left; none may outlive the block
  tile.template store<kEpilogue>(p, row0 + wm * kWarpTile, col0 + wn * kWarpTile, lane);
#else
  __trap();  // built for a device without bf16 mma; the launcher refuses it first
#endif
}

// Dynamic shared memory of gemm_cp_async: an A and a B slab per stage.
template <int kTile, int kWarpTile, bool kAKContiguous, bool kBKContiguous>
constexpr std::size_t stages_bytes(int stages) {
  constexpr int kThreads = 32 * (kTile / kWarpTile) * (kTile / kWarpTile);
  return std::size_t(stages) *
         (Slab<kTile, kThreads, kAKContiguous>::kElements + Slab<kTile, kThreads, kBKContiguous>::kElements) *
         sizeof(__nv_bfloat16);
}

// The block and warp tiles built for the mma.sync kernels (launch parameters "tile"
// and "warp_tile"): 64 over 32 (4 warps of 32x32), 128 over 64 (4 warps of 64x64) and
// 128 over 32 (16 warps of 32x32). 64 over 64 (a single warp staging whole tiles) is
// not built.
// (with_tiles below dispatches the same three.)
inline bool tiles_built(int tile, int warp_tile) {
  return (tile == 64 && warp_tile == 32) || (tile == 128 && warp_tile == 64) || (tile == 128 && warp_tile == 32);
}
inline int threads_for(int tile, int warp_tile) { return 32 * (tile / warp_tile) * (tile / warp_tile); }

// The launch limit of those variants: a built pair of tiles, and row tiles that fit in
// gridDim.y.
inline std::optional<std::string> tile_limit(const Shape& s, const ParamValues& p) {
  const int tile = p.get("tile"), warp_tile = p.get("warp_tile");
  if (!tiles_built(tile, warp_tile))
    return "a " + std::to_string(tile) + "x" + std::to_string(tile) + " block tile of " + std::to_string(warp_tile) +
           "x" + std::to_string(warp_tile) + " warp tiles is not built (64 over 32, 128 over 64, 128 over 32 are)";
  return matmul::row_tile_limit(s, tile);
}

template <int kTile, int kWarpTile, int kEpilogue, bool kAKContiguous, bool kBKContiguous>
void launch_cp_async_with(const Problem& p, int stages, cudaStream_t stream) {
  auto* kernel = gemm_cp_async<kTile, kWarpTile, kEpilogue, kAKContiguous, kBKContiguous>;
  const std::size_t smem = stages_bytes<kTile, kWarpTile, kAKContiguous, kBKContiguous>(stages);
  // Up to 80 KiB (tile 128, 4 stages): above the 48 KiB a launch gets without opting in.
  WB_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  const dim3 grid(grid_for(p.N, kTile), grid_for(p.M, kTile));
  WB_LAUNCH(kernel, grid, threads_for(kTile, kWarpTile), smem, stream, p, stages);
}

// Calls f(kTile, kWarpTile) with the built pair (tile, warp_tile) as integral
// constants: the one place that turns the launch parameters into an instantiation.
template <class F>
void with_tiles(int tile, int warp_tile, const char* what, F&& f) {
  using I64 = std::integral_constant<int, 64>;
  using I32 = std::integral_constant<int, 32>;
  using I128 = std::integral_constant<int, 128>;
  if (tile == 64 && warp_tile == 32) return f(I64{}, I32{});
  if (tile == 128 && warp_tile == 64) return f(I128{}, I64{});
  if (tile == 128 && warp_tile == 32) return f(I128{}, I32{});
  throw std::logic_error(std::string(what) + ": no kernel for tile " + std::to_string(tile) + " and warp_tile " +
                         std::to_string(warp_tile));
}

// gemm_cp_async at the launch's "tile", "warp_tile" and "stages".
template <int kEpilogue, bool kAKContiguous = true, bool kBKContiguous = true>
void launch_cp_async(const Problem& p, const Launch& l, const char* what) {
  const int stages = l.get("stages");
  if (stages < 2 || stages > 4) throw std::logic_error(std::string(what) + ": stages must be 2, 3 or 4");
  with_tiles(l.get("tile"), l.get("warp_tile"), what, [&](auto tile, auto warp_tile) {
    launch_cp_async_with<decltype(tile)::value, decltype(warp_tile)::value, kEpilogue, kAKContiguous, kBKContiguous>(
        p, stages, stream(l));
  });
}

// What the mma.sync variants declare alike: compute capability 8.0, the launch
// parameters tile and warp_tile (tile_limit says which pairs are built) and, with
// `pipelined`, the cp.async depth stages; whole 16-byte chunks per row of C.
inline void declare_tiles(Variant& v, bool pipelined) {
  v.min_compute_capability = 80;
  v.params = {TuningParam{"tile", {64, 128}, 128}, TuningParam{"warp_tile", {32, 64}, 64}};
  if (pipelined) v.params.push_back(TuningParam{"stages", {2, 3, 4}, 3});
  v.requirements = {channels_in_chunks()};
  v.launch_limit = tile_limit;
}

}  // namespace wb::cuda::tensor_core_gemm
