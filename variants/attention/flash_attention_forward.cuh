#pragma once
// The FlashAttention-2-style forward of attention_forward_bf16 cuda/4 on tensor cores
// (mma.sync m16n8k16 bf16, ldmatrix, cp.async: device/cuda/tensor_core_ptx.cuh).
//
// A block holds kQueryTile = 16 x warps consecutive query rows of one (b, h); warp w
// owns rows 16w..16w+15 of it, and keeps everything about them in registers: the Q
// fragments (A operands, loaded once), the running max m and sum l of exp2(s - m) in
// log2 units, and the unnormalised output, 16 x kHead in m16n8 fp32 accumulators. The
// keys stream through shared memory in tiles of kKeyTile rows of K and of V, `stages`
// buffers deep (cp.async, one commit group per tile; the wait / barrier / refill order of
// variants/matmul/tensor_core_gemm.cuh's gemm_cp_async, and why one barrier per tile is
// enough). Per tile a warp computes S = Q K^T (K rows are B's columns: plain ldmatrix),
// scales it by log2(e)/sqrt(hs), masks keys past its rows on the tiles that reach the
// diagonal, updates m over each lane quad (the four lanes that share a row in the C
// layout) with __shfl_xor_sync, rescales its output by exp2(m_old - m_new), and adds
// P V. P never leaves the registers: the C fragments of two adjacent n8 key columns,
// rounded to packed bf16 pairs, are exactly the A fragment of one k16 step (see
// p_fragment), and V enters as B through ldmatrix .trans (its rows are keys). l sums the
// unrounded fp32 p per lane and is reduced over the quad once, at the end.
//
// Causality: a block loads key tiles up to its last row only, and a warp skips the
// tiles that start past its own last row. Ragged T: K and V rows past T, and channels
// past hs, are zero-filled copies (src-size 0); the zero V rows meet p = 0 (masked),
// never NaN. Query rows past T are computed on zero-filled Q and not stored.
//
// Head sizes: hs % 4 == 0 and hs <= kHead = 64. Rows are copied in 16-byte chunks when
// hs % 8 == 0 and qkv is 16-byte aligned, otherwise in 8-byte ones (hs % 4 == 0 keeps
// every head row 8-byte aligned); a head narrower than 64 is zero-padded to 64 channels,
// which wastes tensor-core work but keeps one kernel.
//
// Planted (tests/planted/, test only; kFault is kNone in the variant): the four
// forward faults of issue 40 that the emulator's check must catch, and a refill issued
// before its barrier (issue 52), which only a launch that refills a buffer shows.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "base/errors.h"
#include "base/math_constants.h"
#include "contract/variant.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "device/cuda/tensor_core_ptx.cuh"

namespace wb::cuda::flash_attention_forward {

constexpr int kHead = 64;
// Shared rows of kHead + 8 elements (144 bytes): the eight rows of an ldmatrix phase
// start 16 bytes apart modulo 128, in eight different groups of four banks.
constexpr int kLd = kHead + 8;

// A kernel template parameter; an int, so that the kernel's name reads the same from
// nvcc's and the emulator's symbols.
enum Fault : int {
  kNone = 0,
  kDiagonalTileSkipped = 1,  // a warp treats the tile that holds its diagonal as above it
  kNoRescale = 2,            // the output is not rescaled when the running max grows
  kPFragmentMisplaced = 3,   // P's A fragment with its second and third registers swapped
  kReadsBeforeWait = 4,      // a tile is read before the cp.async wait that lands it
  kRefillBeforeBarrier = 5,  // the next tile's refill issued before the barrier that ends
                             // the other warps' reads of its buffer
};

// A fresh m16n8 accumulator array (the forward's S, the backward's S, Sᵀ, dP, dPᵀ).
template <int kN>
__device__ inline void zero(float (&acc)[kN][4]) {
#pragma unroll
  for (int j = 0; j < kN; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[j][e] = 0.0f;
}

// acc[j] (16 x 8, j < kN) += A (16 x kHead, four k16 A fragments) times the kN * 8
// rows of `rows` (row r at rows + r * kLd) as B's columns: A rows^T. The forward's
// S = Q Kᵀ, and the backward's S, Sᵀ = K Qᵀ, dP and dPᵀ.
template <int kN>
__device__ inline void times_rows_transposed(float (&acc)[kN][4], const uint32_t (&a)[kHead / 16][4],
                                             const __nv_bfloat16* rows, int quad, int row) {
  static_assert(kN % 2 == 0, "ldmatrix x4 loads two n8 fragments");
#pragma unroll
  for (int kk = 0; kk < kHead / 16; ++kk)
#pragma unroll
    for (int jj = 0; jj < kN / 2; ++jj) {
      // Matrices (rows 0-7, channels 0-7), (0-7, 8-15), (8-15, 0-7), (8-15, 8-15).
      uint32_t r[4];
      tc::ldmatrix_x4(r, rows + (jj * 16 + (quad / 2) * 8 + row) * kLd + kk * 16 + (quad % 2) * 8);
      const uint32_t b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
      tc::mma_m16n8k16_bf16(acc[2 * jj], a[kk], b0, acc[2 * jj]);
      tc::mma_m16n8k16_bf16(acc[2 * jj + 1], a[kk], b1, acc[2 * jj + 1]);
    }
}

// The A fragment of P for keys 16kk..16kk+15 from the C fragments s[2kk] (keys 8 (2kk)
// + 2t, +1 of rows g and g + 8) and s[2kk + 1] (the next eight keys): a[0] row g and
// a[1] row g + 8 of the first eight keys, a[2] and a[3] of the next eight, each a pair of
// adjacent keys, the lower one in the low half.
template <int kFault>
__device__ inline void p_fragment(uint32_t (&a)[4], const float (&lo)[4], const float (&hi)[4]) {
  const uint32_t row_g_lo = tc::pack_bf16x2(__float2bfloat16(lo[0]), __float2bfloat16(lo[1]));
  const uint32_t row_g8_lo = tc::pack_bf16x2(__float2bfloat16(lo[2]), __float2bfloat16(lo[3]));
  const uint32_t row_g_hi = tc::pack_bf16x2(__float2bfloat16(hi[0]), __float2bfloat16(hi[1]));
  const uint32_t row_g8_hi = tc::pack_bf16x2(__float2bfloat16(hi[2]), __float2bfloat16(hi[3]));
  const bool swapped = kFault == kPFragmentMisplaced;
  a[0] = row_g_lo;
  a[1] = swapped ? row_g_hi : row_g8_lo;
  a[2] = swapped ? row_g8_lo : row_g_hi;
  a[3] = row_g8_hi;
}

// Copies `rows` head rows (channels 0 .. kHead - 1 of rows first.., row t at src + t *
// stride) into a shared tile of kLd-element rows, kBytes a chunk; chunks past T or hs
// are zero-filled. The caller commits the group.
template <int kBytes>
__device__ inline void copy_rows(__nv_bfloat16* dst, const __nv_bfloat16* src, int64_t stride, int T, int hs, int first,
                                 int rows) {
  constexpr int kElements = kBytes / 2;
  constexpr int kChunks = kHead / kElements;
  for (int i = threadIdx.x; i < rows * kChunks; i += blockDim.x) {
    const int r = i / kChunks, c = i % kChunks * kElements;
    const int token = first + r;
    const bool inside = token < T && c < hs;
    const __nv_bfloat16* from = inside ? src + int64_t(token) * stride + c : src;  // a valid address even if unread
    if constexpr (kBytes == 16)
      tc::cp_async_cg<16>(dst + r * kLd + c, from, inside ? 16 : 0);
    else
      tc::cp_async_ca<8>(dst + r * kLd + c, from, inside ? 8 : 0);
  }
}

// 16-byte chunks when `wide` (hs % 8 == 0, the tensors read 16-byte aligned), else
// 8-byte ones.
__device__ inline void copy_head_rows(bool wide, __nv_bfloat16* dst, const __nv_bfloat16* src, int64_t stride, int T,
                                      int hs, int first, int rows) {
  if (wide)
    copy_rows<16>(dst, src, stride, T, hs, first, rows);
  else
    copy_rows<8>(dst, src, stride, T, hs, first, rows);
}

// acc[j] (16 x 8 channels, j < kHead / 8) += X (16 x 16 kSteps, its C fragments x[2kk]
// and x[2kk + 1] rounded to bf16 as the A fragment of step kk) times the 16 kSteps rows
// of `rows` (row r at rows + r * kLd, the k of this product: ldmatrix .trans). The
// forward's O += P V, and the backward's dV, dK and dQ.
template <int kSteps, int kFault = kNone>
__device__ inline void times_rows(float (&acc)[kHead / 8][4], const float (&x)[2 * kSteps][4],
                                  const __nv_bfloat16* rows, int quad, int row) {
#pragma unroll
  for (int kk = 0; kk < kSteps; ++kk) {
    uint32_t a[4];
    p_fragment<kFault>(a, x[2 * kk], x[2 * kk + 1]);
#pragma unroll
    for (int jj = 0; jj < kHead / 16; ++jj) {
      // Matrices (rows 0-7, channels 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15).
      uint32_t r[4];
      tc::ldmatrix_x4_trans(r, rows + (kk * 16 + (quad % 2) * 8 + row) * kLd + jj * 16 + (quad / 2) * 8);
      const uint32_t b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
      tc::mma_m16n8k16_bf16(acc[2 * jj], a, b0, acc[2 * jj]);
      tc::mma_m16n8k16_bf16(acc[2 * jj + 1], a, b1, acc[2 * jj + 1]);
    }
  }
}

// Dynamic shared memory: the Q tile, then `stages` pairs of K and V tiles.
inline std::size_t shared_bytes(int query_tile, int key_tile, int stages) {
  return (std::size_t(query_tile) + std::size_t(stages) * 2 * key_tile) * kLd * sizeof(__nv_bfloat16);
}

// One block: query tile `tile` (the longest first) of (b, h) = blockIdx.x % (B * NH).
// wide: 16-byte chunks (hs % 8 == 0, qkv 16-byte aligned), else 8-byte ones.
template <int kKeyTile, int kFault>
__global__ void flash_forward(__nv_bfloat16* out, float* lse, const __nv_bfloat16* qkv, int B, int T, int C, int NH,
                              float scale_log2, int stages, bool wide) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  static_assert(kKeyTile % 16 == 0, "P V takes the keys 16 at a time");
  constexpr int kS = kKeyTile / 8;  // n8 fragments of S per tile
  constexpr int kO = kHead / 8;     // n8 fragments of the output
  WB_DYNAMIC_SHARED(int4, smem_raw);  // int4: 16-byte aligned
  __nv_bfloat16* const smem = reinterpret_cast<__nv_bfloat16*>(smem_raw);
  const int warps = blockDim.x / kWarpSize;
  const int query_tile = 16 * warps;
  __nv_bfloat16* const qs = smem;
  auto ks = [&](int buffer) { return smem + (query_tile + buffer * 2 * kKeyTile) * kLd; };
  auto vs = [&](int buffer) { return ks(buffer) + kKeyTile * kLd; };

  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const int g = lane / 4, t = lane % 4;
  const int quad = lane / 8, row = lane % 8;  // lanes 8j..8j+7 address the rows of ldmatrix's matrix j
  const int hs = C / NH;
  const int BH = B * NH;
  const int tiles_q = (T + query_tile - 1) / query_tile;
  const int q0 = (tiles_q - 1 - int(blockIdx.x / BH)) * query_tile;
  const int bh = int(blockIdx.x % BH);
  const int b = bh / NH, h = bh % NH;
  const int64_t batch_row = int64_t(b) * T;

  // Keys 0 .. end - 1 reach the block's last row; the warp's rows are first..last.
  const int end = min(q0 + query_tile, T);
  const int key_tiles = (end + kKeyTile - 1) / kKeyTile;
  const int first = q0 + 16 * warp;
  const int last = min(first + 15, T - 1);

  // The head's q: row t at q_head + t * 3C, its k and v C and 2C further on.
  const __nv_bfloat16* const q_head = qkv + batch_row * 3 * C + h * hs;
  auto issue = [&](int tile, int buffer) {
    if (tile == 0) copy_head_rows(wide, qs, q_head, 3 * C, T, hs, q0, query_tile);
    copy_head_rows(wide, ks(buffer), q_head + C, 3 * C, T, hs, tile * kKeyTile, kKeyTile);
    copy_head_rows(wide, vs(buffer), q_head + 2 * C, 3 * C, T, hs, tile * kKeyTile, kKeyTile);
  };
  auto wait = [&] { tc::cp_async_wait_pending(stages - 2); };  // stages is 2 or 3

  for (int s = 0; s < stages - 1; ++s) {
    if (s < key_tiles) issue(s, s);
    tc::cp_async_commit();
  }

  uint32_t qa[kHead / 16][4];
  float o[kO][4];
#pragma unroll
  for (int j = 0; j < kO; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) o[j][e] = 0.0f;
  // Rows g (index 0) and g + 8 (index 1) of the warp: the running max (quad-uniform)
  // and this lane's part of the running sum.
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};

  for (int tile = 0; tile < key_tiles; ++tile) {
    if (kFault != kReadsBeforeWait) wait();
    const int next = tile + stages - 1;
    if (kFault == kRefillBeforeBarrier && next < key_tiles) issue(next, next % stages);
    __syncthreads();
    if (kFault != kRefillBeforeBarrier && next < key_tiles) issue(next, next % stages);
    tc::cp_async_commit();
    if (tile == 0) {
#pragma unroll
      for (int kk = 0; kk < kHead / 16; ++kk)
        tc::ldmatrix_x4(qa[kk], qs + (16 * warp + (quad % 2) * 8 + row) * kLd + kk * 16 + (quad / 2) * 8);
    }
    const int k0 = tile * kKeyTile;
    const bool above = kFault == kDiagonalTileSkipped ? k0 + kKeyTile - 1 > last : k0 > last;
    if (first >= T || above) continue;  // warp-uniform: the barriers are all at the loop's top
    const __nv_bfloat16* const kt = ks(tile % stages);
    const __nv_bfloat16* const vt = vs(tile % stages);

    float s[kS][4];
    zero(s);
    times_rows_transposed(s, qa, kt, quad, row);  // S = Q Kᵀ: K's rows are B's columns

    // Scale, mask on the tiles that reach past the warp's first row, and take each
    // row's max over its quad.
    const bool diagonal = k0 + kKeyTile - 1 > first;
    float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int j = 0; j < kS; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int query = first + g + 8 * (e / 2), key = k0 + 8 * j + 2 * t + e % 2;
        s[j][e] = diagonal && key > query ? -INFINITY : s[j][e] * scale_log2;
        tile_max[e / 2] = fmaxf(tile_max[e / 2], s[j][e]);
      }
    float correction[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      tile_max[i] = fmaxf(tile_max[i], __shfl_xor_sync(kFullMask, tile_max[i], 1));
      tile_max[i] = fmaxf(tile_max[i], __shfl_xor_sync(kFullMask, tile_max[i], 2));
      // Finite: tile 0 holds key 0 for every row, and m only grows after it.
      const float m_new = fmaxf(m[i], tile_max[i]);
      correction[i] = exp2f(m[i] - m_new);  // 0 on tile 0 (m = -inf)
      m[i] = m_new;
      l[i] *= correction[i];
    }
#pragma unroll
    for (int j = 0; j < kS; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        s[j][e] = exp2f(s[j][e] - m[e / 2]);  // masked keys: exp2(-inf) = 0
        l[e / 2] += s[j][e];
      }
    if (kFault != kNoRescale) {
#pragma unroll
      for (int j = 0; j < kO; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) o[j][e] *= correction[e / 2];
    }

    // O += P V, 16 keys a step; V rows are keys (B's k): ldmatrix .trans.
    times_rows<kKeyTile / 16, kFault>(o, s, vt, quad, row);
    if (kFault == kReadsBeforeWait) wait();
  }
  tc::cp_async_wait_all();  // only empty groups are left; none may outlive the block

  if (first >= T) return;  // after the last barrier
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    l[i] += __shfl_xor_sync(kFullMask, l[i], 1);
    l[i] += __shfl_xor_sync(kFullMask, l[i], 2);
  }
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int query = first + g + 8 * i;
    if (query >= T) continue;
    const float inv = 1.0f / l[i];
    __nv_bfloat16* const at = out + (batch_row + query) * C + h * hs;
    // hs % 4 == 0: C and h * hs are even, every pair of channels 2t, 2t + 1 is 4-byte
    // aligned and lies inside the head when its first channel does.
#pragma unroll
    for (int j = 0; j < kO; ++j) {
      const int channel = 8 * j + 2 * t;
      if (channel >= hs) continue;
      __nv_bfloat162 pair;
      pair.x = __float2bfloat16(o[j][2 * i] * inv);
      pair.y = __float2bfloat16(o[j][2 * i + 1] * inv);
      *reinterpret_cast<__nv_bfloat162*>(at + channel) = pair;
    }
    if (t == 0) lse[int64_t(bh) * T + query] = (m[i] + log2f(l[i])) * math::kLn2;
  }
#else
  __trap();  // built for a device without bf16 mma; the variant requires compute capability 8.0
#endif
}

template <int kKeyTile, int kFault>
void launch_with(__nv_bfloat16* out, float* lse, const __nv_bfloat16* qkv, int B, int T, int C, int NH, int query_tile,
                 int stages, cudaStream_t stream) {
  auto* kernel = flash_forward<kKeyTile, kFault>;
  const int hs = C / NH;
  const std::size_t smem = shared_bytes(query_tile, kKeyTile, stages);
  // Up to 73 KiB (query tile 128, key tile 64, 3 stages): above the 48 KiB a launch gets
  // without opting in.
  WB_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  const int64_t grid = int64_t(B) * NH * ((T + query_tile - 1) / query_tile);
  const float scale_log2 = math::kLog2e / std::sqrt(float(hs));
  const bool wide = hs % 8 == 0 && aligned16(qkv);
  WB_LAUNCH(kernel, unsigned(grid), 32 * (query_tile / 16), smem, stream, out, lse, qkv, B, T, C, NH, scale_log2,
            stages, wide);
}

// flash_forward at a launch's key_tile, query_tile and stages; `who` names the variant
// in the Unsupported message of a head it cannot hold.
template <int kFault = kNone>
void launch(__nv_bfloat16* out, float* lse, const __nv_bfloat16* qkv, int B, int T, int C, int NH, int query_tile,
            int key_tile, int stages, cudaStream_t stream, const char* who) {
  const int hs = C / NH;
  if (hs % 4 != 0 || hs > kHead)
    throw Unsupported(std::string(who) + " needs C / NH % 4 == 0 and C / NH <= " + std::to_string(kHead) +
                      " (C / NH = " + std::to_string(hs) + ")");
  if (reinterpret_cast<std::uintptr_t>(qkv) % 8 != 0)
    throw Unsupported(std::string(who) + ": needs 8-byte aligned tensors for its cp.async chunks of qkv");
  if (stages != 2 && stages != 3) throw std::logic_error(std::string(who) + ": stages must be 2 or 3");
  switch (key_tile) {
    case 16:
      return launch_with<16, kFault>(out, lse, qkv, B, T, C, NH, query_tile, stages, stream);
    case 32:
      return launch_with<32, kFault>(out, lse, qkv, B, T, C, NH, query_tile, stages, stream);
    case 64:
      return launch_with<64, kFault>(out, lse, qkv, B, T, C, NH, query_tile, stages, stream);
    default:
      throw std::logic_error(std::string(who) + ": key_tile must be 16, 32 or 64");
  }
}

// The head sizes the kernel holds (a requirement of the variant).
inline Requirement head_size_requirement() {
  return {"C / NH % 4 == 0 and C / NH <= " + std::to_string(kHead),
          [](const Shape& s) { return s.NH > 0 && (s.C / s.NH) % 4 == 0 && s.C / s.NH <= kHead; }};
}

}  // namespace wb::cuda::flash_attention_forward
