#pragma once
// The slabs of wb's hand-written bf16 tensor-core GEMMs (matmul_forward_bf16 cuda/4..6,
// matmul_gelu_forward_bf16 cuda/4, matmul_backward_bf16 cuda/4): what the WMMA rung and
// the mma.sync rungs share, the shared-memory layout of a slab, its split into 16-byte
// chunks, the register-staged copy and the launchers' checks. variants/matmul/tensor_core_gemm.cuh
// builds the mma.sync kernels on it.
//
//   out (M x N) = A (M x K) @ B (K x N), bf16 in shared memory, products exact in fp32,
//   sums in fp32, each output rounded once to nearest even.
//
// A block computes a tile x tile block of out, walking K in slabs of kBK = 32. Each
// operand keeps its global layout in shared memory: a k-contiguous operand (the
// forward's inp, rows x C, and weight, OC x C) is a slab of tile rows of 32 k values; a
// k-major one (the backward's weight, dout^T and inp, stored K rows long in M or N) is
// 32 k rows of tile values. ldmatrix reads either as mma's fragments, the k-major ones
// with .trans; nothing is transposed on the way in.
//
// Shared-memory rows are padded, not swizzled: every row gets 16 bytes more than it
// holds (kPad). ldmatrix reads, per 8x8 matrix, 8 rows of 16 bytes at one column
// offset. With rows of 32 bf16 (64 bytes) stored 80 bytes apart, those 8 rows start at
// byte offsets 0, 80, ..., 560, in the 16-byte bank groups 0, 5, 2, 7, 4, 1, 6, 3 (mod
// 128 bytes): all 32 banks once, no conflict; rows of 64 or 128 bf16 stored 144 or 272
// bytes apart step through the groups by 1 likewise. Unpadded, a 64-byte stride puts
// rows 0, 2, 4, 6 (and 1, 3, 5, 7) on the same banks, and a 128- or 256-byte one all 8:
// 4- and 8-way conflicts on every ldmatrix. The XOR swizzle that avoids them without
// padding saves 6-20% of shared memory but needs the same XOR in every writer and
// reader; with at most 80 KiB per block (tile 128, 4 stages) the padding fits every
// sm_80..sm_90 part, and the addressing stays plain. Padded rows stay 16-byte aligned,
// as ldmatrix, cp.async and 128-bit stores need, and 16-row steps of a k-contiguous
// slab stay 32-byte aligned (1280 bytes), as WMMA's fragment loads need.
//
// Requirements the variants declare: every row that is copied in chunks holds a
// multiple of 8 elements (C % 8 == 0 in the forward; C and OC in the backward) and
// the operands are 16-byte aligned: a chunk is entirely inside the matrix or entirely
// past its end, and edges are zero-filled a chunk (or a k row) at a time. Rows and
// columns past M, N or K are zero in shared memory and their outputs are not stored.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>

#include "base/bf16.h"
#include "base/errors.h"
#include "contract/shape.h"
#include "contract/variant.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"
#include "variants/matmul/double_buffer.cuh"

namespace wb::cuda::tensor_core_gemm {

constexpr int kBK = 32;          // channels (k) per slab: two k16 steps of mma.m16n8k16
constexpr int kPad = 8;          // bf16 of padding after every shared-memory row (16 bytes)
constexpr int kLd = kBK + kPad;  // a k-contiguous slab row in shared memory, in bf16
constexpr int kChunk = 8;        // bf16 in one 16-byte chunk
static_assert(kLd * 2 % 16 == 0, "padded rows stay 16-byte aligned (ldmatrix, cp.async)");

// One product, out (M x N, row-major, ld N) = A (M x K) @ B (K x N), with its epilogue.
// The operands are stored either k-contiguous (A as M rows of K, B as N rows of K: the
// forward's inp and weight) or k-major (K rows of M or N: the backward's transposed
// operands), with row strides lda and ldb; the kernels know which at compile time.
// The forward writes out = bf16(sum + bias) and leaves pre null; with the fused GELU,
// pre = bf16(sum + bias) and out = bf16(gelu(sum + bias)), both of the unrounded fp32
// sum (matmul_gelu_forward_bf16's contract: one rounding each); an accumulating
// product writes out = bf16(out + sum), the old value widened first (a gradient).
struct Problem {
  __nv_bfloat16* out;
  __nv_bfloat16* pre;  // the GELU epilogue only
  const __nv_bfloat16* a;
  const __nv_bfloat16* b;
  const __nv_bfloat16* bias;  // (N), may be null
  int M, N, K;
  int lda, ldb;
  bool pair_stores;  // N even and out (and pre) 4-byte aligned: two outputs per 32-bit access
};

// A kRows x kCols window of a row-major bf16 matrix, in 16-byte chunks over kThreads
// threads: chunk f = tid + i * kThreads is window row f / (kCols / 8), columns
// 8 * (f % (kCols / 8)) .. + 7, so consecutive threads read consecutive chunks of a row
// (a k-contiguous slab: kTile rows of kBK; a k-major one: kBK rows of kTile). In shared
// memory the window's rows are kLdS = kCols + kPad apart.
template <int kRows, int kCols, int kThreads>
struct Window {
  static constexpr int kChunksPerRow = kCols / kChunk;
  static constexpr int kPerThread = kRows * kChunksPerRow / kThreads;
  static constexpr int kLdS = kCols + kPad;
  static constexpr int kElements = kRows * kLdS;  // bf16 of shared memory
  static_assert(kCols % kChunk == 0, "whole chunks per row");
  static_assert(kRows * kChunksPerRow % kThreads == 0, "a window splits evenly over the threads");
  __device__ static int row(int tid, int i) { return (tid + i * kThreads) / kChunksPerRow; }
  __device__ static int col(int tid, int i) { return kChunk * ((tid + i * kThreads) % kChunksPerRow); }
  // Where chunk i of the window at (row0, col0) of src (rows x cols, stride ld) is, or
  // nullptr when it lies past the matrix (cols % 8 == 0: a chunk is all in or all out).
  __device__ static const __nv_bfloat16* source(const __nv_bfloat16* src, int ld, int rows, int cols, int row0,
                                                int col0, int tid, int i) {
    const int r = row0 + row(tid, i), c = col0 + col(tid, i);
    return r < rows && c < cols ? src + int64_t(r) * ld + c : nullptr;
  }
  __device__ static int at(int tid, int i) { return row(tid, i) * kLdS + col(tid, i); }
};

// A window on its way through registers (matmul_forward_bf16 cuda/4 and cuda/5): load()
// issues the global loads, store() writes them to shared memory after the compute that
// hides their latency. Chunks past the matrix are zero.
template <int kRows, int kCols, int kThreads>
struct StagedWindow {
  using W = Window<kRows, kCols, kThreads>;
  Packed128<__nv_bfloat16> v[W::kPerThread];

  __device__ void load(const __nv_bfloat16* src, int ld, int rows, int cols, int row0, int col0, int tid) {
#pragma unroll
    for (int i = 0; i < W::kPerThread; ++i) {
      const __nv_bfloat16* from = W::source(src, ld, rows, cols, row0, col0, tid, i);
      v[i] = from ? load128(from) : zero();
    }
  }
  __device__ void store(__nv_bfloat16* dst, int tid) const {
#pragma unroll
    for (int i = 0; i < W::kPerThread; ++i) *reinterpret_cast<Packed128<__nv_bfloat16>*>(dst + W::at(tid, i)) = v[i];
  }
  __device__ static Packed128<__nv_bfloat16> zero() {
    Packed128<__nv_bfloat16> z;
#pragma unroll
    for (int e = 0; e < Packed128<__nv_bfloat16>::kSize; ++e) z[e] = __float2bfloat16(0.0f);
    return z;
  }
};

// The forward's two slabs (inp and weight, both k-contiguous) on their way through
// registers: the next slab of the register-staged rungs.
template <int kTile, int kThreads>
struct StagedSlabs {
  StagedWindow<kTile, kBK, kThreads> x, w;
  __device__ void load(const Problem& p, int row0, int col0, int k0, int tid) {
    x.load(p.a, p.lda, p.M, p.K, row0, k0, tid);
    w.load(p.b, p.ldb, p.N, p.K, col0, k0, tid);
  }
  __device__ void store(__nv_bfloat16* xs, __nv_bfloat16* ws, int tid) const {
    x.store(xs, tid);
    w.store(ws, tid);
  }

  // The register-staged double buffer (variants/matmul/double_buffer.cuh) over the
  // slabs of p.K, in four slab buffers of kTile x kLd at smem: inp slabs 0 and 1, then
  // weight slabs 0 and 1. multiply(xs, ws) gets the inp and weight slabs to multiply.
  template <class Multiply>
  __device__ void walk(const Problem& p, __nv_bfloat16* smem, int row0, int col0, int tid, Multiply&& multiply) {
    constexpr int kSlab = kTile * kLd;
    double_buffer::walk((p.K + kBK - 1) / kBK, [&](int slab) { load(p, row0, col0, slab * kBK, tid); },
                        [&](int b) { store(smem + b * kSlab, smem + (2 + b) * kSlab, tid); },
                        [&](int b) { multiply(smem + b * kSlab, smem + (2 + b) * kSlab); });
  }
};

// The forward's shape requirement: whole 16-byte chunks per row of inp and weight.
inline Requirement channels_in_chunks() {
  return {"C % 8 == 0", [](const Shape& s) { return s.C % 8 == 0; }};
}

// What every tensor-core launcher checks first: a device with bf16 mma (compute
// capability 8.0) and 16-byte aligned operands; either missing is a skip (Unsupported).
inline void require_launchable(const char* what, std::initializer_list<const void*> operands) {
  int device = 0, major = 0;
  WB_CHECK(cudaGetDevice(&device));
  WB_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  if (major < 8) throw Unsupported(std::string(what) + " needs bf16 tensor cores (compute capability >= 8.0)");
  require_aligned16(what, operands);
}

// The forward's product from its argument struct (matmul_forward_bf16's or, with pre,
// matmul_gelu_forward_bf16's), after the launcher's checks: out (rows x OC) = inp
// (rows x C) @ weight^T + bias, both operands k-contiguous with row stride C.
template <class Args>
Problem linear_layer(const Args& a, bf16* pre, const char* what) {
  require_launchable(what, {a.inp, a.weight});
  auto aligned4 = [](const void* q) { return reinterpret_cast<std::uintptr_t>(q) % 4 == 0; };
  const bool pairs = a.OC % 2 == 0 && aligned4(a.out) && (!pre || aligned4(pre));
  // M = rows, N = OC, K = C, lda = ldb = C
  return Problem{
      as_cuda(a.out), as_cuda(pre), as_cuda(a.inp), as_cuda(a.weight), as_cuda(a.bias), a.B * a.T, a.OC, a.C, a.C, a.C,
      pairs};
}

}  // namespace wb::cuda::tensor_core_gemm
