#pragma once
// The slabs of wb's hand-written bf16 tensor-core GEMMs (matmul_forward_bf16 cuda/4..6,
// matmul_gelu_forward_bf16 cuda/4): what the WMMA rung and the mma.sync rungs share,
// the shared-memory layout of a slab, its split into 16-byte chunks, the register-staged
// copy and the launchers' checks. kernels/cuda/tc_gemm.cuh builds the mma.sync kernels
// on it.
//
//   out (rows x OC) = inp (rows x C) @ weight^T + bias,  weight (OC x C), all row-major bf16,
//   products exact in fp32, sums in fp32, each output rounded once to nearest even.
//
// Both operands are k-contiguous in global memory, and they stay so in shared memory: a
// block computes a tile x tile block of out, walking C in slabs of kBK = 32 channels;
// a slab of inp is tile rows of 32 channels ([m][k]), a slab of weight likewise tile
// rows ([n][k]), which is exactly the "col" B operand of mma.m16n8k16 and WMMA's
// col_major matrix_b (B[k][n] = weight[n][k]), so neither needs a transpose.
//
// Shared-memory rows are padded, not swizzled: a slab row holds 32 bf16 (64 bytes) and
// is stored kLd = 40 bf16 (80 bytes) apart. ldmatrix reads, per 8x8 matrix, 8 rows of
// 16 bytes at one k offset; 80-byte strides put those 8 rows at byte offsets 0, 80, ...,
// 560, which fall in the 16-byte bank groups 0, 5, 2, 7, 4, 1, 6, 3 (mod 128 bytes):
// all 32 banks once, no conflict. A 64-byte stride would put rows 0, 2, 4, 6 (and 1, 3,
// 5, 7) on the same banks: a 4-way conflict on every ldmatrix. The XOR swizzle that
// avoids this without padding saves 20% of shared memory but needs the same XOR in
// every writer and reader; with at most 80 KiB per block (tile 128, 4 stages) the
// padding fits every sm_80..sm_90 part, and the addressing stays plain. Padded rows stay
// 16-byte aligned (80 = 5 x 16), as ldmatrix, cp.async and 128-bit stores need, and
// 16-row steps stay 32-byte aligned (1280 bytes), as WMMA's fragment loads need.
//
// Requirements the variants declare: C % 8 == 0 and 16-byte aligned inp and weight (a
// row of either is whole 16-byte chunks: a chunk is entirely inside the matrix or
// entirely past its end, and tails are zero-filled a chunk at a time). Rows past B*T or
// OC, and channels past C, are zero in shared memory and their outputs are not stored.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "kernels/cuda/dialect.cuh"
#include "kernels/cuda/packed.cuh"
#include "kernels/cuda/runtime.h"
#include "kernels/errors.h"
#include "kernels/shape.h"
#include "kernels/variant.h"

namespace wb::cuda::tc_gemm {

constexpr int kBK = 32;        // channels per slab: two k16 steps of mma.m16n8k16
constexpr int kLd = kBK + 8;   // a slab row in shared memory, padded (see above), in bf16
constexpr int kChunk = 8;      // bf16 in one 16-byte chunk
constexpr int kChunksPerRow = kBK / kChunk;
static_assert(kLd * 2 % 16 == 0, "padded rows stay 16-byte aligned (ldmatrix, cp.async)");

// The operands of one product. A plain linear layer writes out = bf16(sum + bias) and
// leaves pre null; the fused GELU (kGelu) writes pre = bf16(sum + bias) and out =
// bf16(gelu(sum + bias)), both of the unrounded fp32 sum (matmul_gelu_forward_bf16's
// contract: one rounding each).
struct Problem {
  __nv_bfloat16* out;
  __nv_bfloat16* pre;  // kGelu only
  const __nv_bfloat16* inp;
  const __nv_bfloat16* weight;
  const __nv_bfloat16* bias;  // may be null
  int rows, C, OC;
  bool pair_stores;  // OC even and out (and pre) 4-byte aligned: two outputs per 32-bit store
};

// How the slabs of a kTile-row operand split into 16-byte chunks over kThreads threads:
// chunk f = tid + i * kThreads is row f / 4, channels 8 * (f % 4) .. + 7; consecutive
// threads take consecutive chunks of a row, so a warp reads 8 rows x 64 contiguous bytes.
template <int kTile, int kThreads>
struct Chunks {
  static constexpr int kPerThread = kTile * kChunksPerRow / kThreads;
  static_assert(kTile * kChunksPerRow % kThreads == 0, "a slab splits evenly over the threads");
  __device__ static int row(int tid, int i) { return (tid + i * kThreads) / kChunksPerRow; }
  __device__ static int col(int tid, int i) { return kChunk * ((tid + i * kThreads) % kChunksPerRow); }
};

// The next slab of inp and weight on its way through registers (matmul_forward_bf16
// cuda/4 and cuda/5): load() issues the global loads, store() writes them to the slab
// buffers after the compute that hides their latency. Chunks past the matrix are zero.
template <int kTile, int kThreads>
struct StagedSlab {
  using Ch = Chunks<kTile, kThreads>;
  Packed128<__nv_bfloat16> x[Ch::kPerThread], w[Ch::kPerThread];

  __device__ void load(const Problem& p, int row0, int col0, int k0, int tid) {
#pragma unroll
    for (int i = 0; i < Ch::kPerThread; ++i) {
      const int m = Ch::row(tid, i);
      const int c = k0 + Ch::col(tid, i);
      x[i] = row0 + m < p.rows && c < p.C ? load128(p.inp + int64_t(row0 + m) * p.C + c) : zero();
      w[i] = col0 + m < p.OC && c < p.C ? load128(p.weight + int64_t(col0 + m) * p.C + c) : zero();
    }
  }
  __device__ void store(__nv_bfloat16* xs, __nv_bfloat16* ws, int tid) const {
#pragma unroll
    for (int i = 0; i < Ch::kPerThread; ++i) {
      const int at = Ch::row(tid, i) * kLd + Ch::col(tid, i);
      *reinterpret_cast<Packed128<__nv_bfloat16>*>(xs + at) = x[i];
      *reinterpret_cast<Packed128<__nv_bfloat16>*>(ws + at) = w[i];
    }
  }
  __device__ static Packed128<__nv_bfloat16> zero() {
    Packed128<__nv_bfloat16> z;
#pragma unroll
    for (int e = 0; e < Packed128<__nv_bfloat16>::kSize; ++e) z[e] = __float2bfloat16(0.0f);
    return z;
  }
};

// The tiles' shape requirement: whole 16-byte chunks per row.
inline Requirement channels_in_chunks() {
  return {"C % 8 == 0", [](const Shape& s) { return s.C % 8 == 0; }};
}

// What every tensor-core launcher checks first: a device with bf16 mma (compute
// capability 8.0) and 16-byte aligned operands; either missing is a skip (Unsupported).
inline void require_launchable(const char* what, const void* inp, const void* weight) {
  int device = 0, major = 0;
  WB_CHECK(cudaGetDevice(&device));
  WB_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  if (major < 8) throw Unsupported(std::string(what) + " needs bf16 tensor cores (compute capability >= 8.0)");
  require_aligned16(what, {inp, weight});
}

// Whether out (and pre) take two outputs per 32-bit store.
inline bool pairs_fit(int OC, const void* out, const void* pre) {
  auto aligned4 = [](const void* q) { return reinterpret_cast<std::uintptr_t>(q) % 4 == 0; };
  return OC % 2 == 0 && aligned4(out) && (!pre || aligned4(pre));
}

}  // namespace wb::cuda::tc_gemm
