#pragma once
// The FlashAttention-2-style backward of attention_backward_bf16 cuda/3 on tensor cores
// (mma.sync m16n8k16 bf16, ldmatrix, cp.async: device/cuda/tensor_core_ptx.cuh), built
// from the pieces of the forward (variants/attention/flash_attention_forward.cuh: head rows of
// kHead = 64 channels padded to kLd = 72 elements, so that ldmatrix is conflict-free,
// P's A fragment from two C fragments) and of the CUDA-core backward (variants/attention/
// flash_attention_backward.cuh: row_dots for D and the zeroed dq accumulator, narrow_dq,
// the workspace, the alignment check).
//
//   1. row_dots: D_t = dO_t . O_t in fp32, one warp per (b, h, t); with dq_atomics=1 it
//      also zeroes the row of the fp32 (B, T, C) dq accumulator.
//   2. flash_dk_dv: one block per (key tile, b, h), kKeyTile = 16 x warps keys; warp w
//      owns keys 16w..16w+15 and keeps in registers their K and V rows (A fragments,
//      loaded once) and their dK and dV (16 x kHead each, m16n8 fp32 accumulators over
//      every query tile). The query tiles (kQueryTile rows of Q and of dO, with their
//      lse and D) stream through shared memory in a two-stage cp.async pipeline, the
//      forward's wait / barrier / refill order. Causal: the block starts at the query
//      tile that holds its first key, and a warp skips the tiles whose rows all lie
//      before its first key. Per tile a warp computes the TRANSPOSED scores
//        S^T = K Q^T           (Q rows are B's columns: plain ldmatrix)
//        P^T = exp2(S^T scale log2(e) - lse[query] log2(e)), 0 where key > query or
//              query >= T
//        dP^T = V dO^T         (dO as B: plain ldmatrix)
//        dS^T = P^T o (dP^T - D[query])
//        dV += P^T dO          (P^T rounded to bf16 pairs: the A fragment straight from
//                               the C fragments, as the forward's P; dO as B through
//                               ldmatrix .trans: its rows are queries, the k of this mma)
//        dK += dS^T Q          (dS^T rounded likewise; Q through ldmatrix .trans)
//      Keys are the rows (m) of every accumulator, so P^T and dS^T need no shuffle to
//      become A operands. dK is scaled by 1/sqrt(hs) once, at the end; dK and dV are
//      rounded to bf16 once, when stored.
//      With dq_atomics=1 the warps also write dS^T (bf16) into a shared key x query tile;
//      after a barrier the block computes dQ_tile = dS K (dS as A through ldmatrix .trans
//      of that tile, K as B through ldmatrix .trans of the block's K tile), warp w taking
//      16-channel slices of the kQueryTile x kHead output, and adds it, scaled, into the
//      fp32 dq accumulator with float atomicAdd (the blocks of other key tiles add into
//      the same rows); narrow_dq then rounds it into dqkv's q part.
//   3. flash_dq (dq_atomics=0, deterministic): one block per (query tile, b, h),
//      kQueryTile = 16 x warps rows; warp w keeps its Q and dO rows (A fragments), its
//      rows' lse and D and its dQ (16 x kHead) in registers, and the key tiles (K and V,
//      kKeyTile rows) up to the block's last row stream through a two-stage cp.async
//      pipeline. It is launched with the launch's two tile sizes in swapped roles: blocks
//      of key_tile query rows (the warps of flash_dk_dv: 2 or 4, never a lone warp) and
//      streamed key tiles of query_tile keys, so that each kernel holds key_tile rows in
//      its warps and streams tiles of query_tile rows (and a thread has at most 44
//      cp.async copies in flight, within what the emulator models). Per tile: S = Q K^T and dP = dO V^T (K, V rows as B: plain ldmatrix),
//      P = exp2(S scale log2(e) - lse log2(e)) masked, dS = P o (dP - D), dQ += dS K
//      (dS rounded to bf16 as the A fragment, K as B through ldmatrix .trans); scaled
//      and rounded once when stored. In this form flash_dk_dv computes no dQ at all.
//
// Ragged T: rows past T and channels past hs are zero-filled copies (cp.async src-size 0);
// their p is masked to 0, never NaN, and they are not stored. Head sizes: hs % 4 == 0 and
// hs <= 64, zero-padded to 64 (the forward's requirement). Rows are copied in 16-byte
// chunks when hs % 8 == 0 and qkv and dout are 16-byte aligned, else in 8-byte ones.
//
// Planted (tests/planted/, test only; kFault is kNone in the variant): the backward
// faults the emulator's check must catch.
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
#include "variants/attention/flash_attention_backward.cuh"
#include "variants/attention/flash_attention_forward.cuh"

namespace wb::cuda::flash_attention_backward_mma {

using flash_attention_forward::copy_head_rows;
using flash_attention_forward::kHead;
using flash_attention_forward::kLd;
using flash_attention_forward::times_rows;
using flash_attention_forward::times_rows_transposed;
using flash_attention_forward::zero;
constexpr int kStages = 2;

// A kernel template parameter (an int, as the forward's).
enum Fault : int {
  kNone = 0,
  kDqWithoutAtomics = 1,     // dq_atomics=1 adds into the fp32 accumulator with a plain read-add-write
  kDiagonalTileSkipped = 2,  // flash_dk_dv starts one query tile late: the tile that holds its diagonal
  kReadsBeforeWait = 3,      // a query stage (and the key tile) read before the cp.async wait that lands it
};

// `rows` floats of a (T) row from first on (lse or D), zero past T.
__device__ inline void copy_floats(float* dst, const float* src, int T, int first, int rows) {
  for (int i = threadIdx.x; i < rows; i += blockDim.x) {
    const bool inside = first + i < T;
    tc::cp_async_ca<4>(dst + i, inside ? src + first + i : src, inside ? 4 : 0);
  }
}

// The four k16 A fragments of 16 head rows in shared memory (row r at rows + r * kLd).
__device__ inline void a_fragments(uint32_t (&a)[kHead / 16][4], const __nv_bfloat16* rows, int quad, int row) {
#pragma unroll
  for (int kk = 0; kk < kHead / 16; ++kk)
    tc::ldmatrix_x4(a[kk], rows + ((quad % 2) * 8 + row) * kLd + kk * 16 + (quad / 2) * 8);
}

// A warp's 16 x kHead accumulator (rows first + g, first + g + 8; channels 8j + 2t, +1),
// times `scale`, rounded to bf16 pairs at row t of `dst` + t * stride; rows >= T and
// channels >= hs are not stored. hs % 4 == 0: every pair is 4-byte aligned and lies
// inside the head when its first channel does.
__device__ inline void store_rows(__nv_bfloat16* dst, int64_t stride, const float (&acc)[kHead / 8][4], float scale,
                                  int first, int T, int hs, int g, int t) {
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int r = first + g + 8 * i;
    if (r >= T) continue;
#pragma unroll
    for (int j = 0; j < kHead / 8; ++j) {
      const int channel = 8 * j + 2 * t;
      if (channel >= hs) continue;
      __nv_bfloat162 pair;
      pair.x = __float2bfloat16(acc[j][2 * i] * scale);
      pair.y = __float2bfloat16(acc[j][2 * i + 1] * scale);
      *reinterpret_cast<__nv_bfloat162*>(dst + int64_t(r) * stride + channel) = pair;
    }
  }
}

// Where one block's head lives: row t of q at q + t * 3C (k, v after it), of dout at
// dout + t * C, of the q part of dqkv at dq + t * 3C; lse and D of the head at lse, D.
struct Head {
  const __nv_bfloat16 *q, *k, *v, *dout;
  __nv_bfloat16* dq;
  const float *lse, *D;
  float* dq_sum;  // the fp32 dq accumulator (dq_atomics=1): row t at dq_sum + t * C
  int64_t C3, C;
  int hs;
};

__device__ inline Head head_of(__nv_bfloat16* dqkv, float* dq_sum, const __nv_bfloat16* dout,
                               const __nv_bfloat16* qkv, const float* lse, const float* D, int bh, int T, int C,
                               int NH) {
  Head hd;
  const int b = bh / NH, h = bh % NH;
  hd.hs = C / NH;
  hd.C3 = 3 * int64_t(C);
  hd.C = C;
  const int64_t row0 = int64_t(b) * T;
  hd.q = qkv + row0 * hd.C3 + int64_t(h) * hd.hs;
  hd.k = hd.q + C;
  hd.v = hd.q + 2 * int64_t(C);
  hd.dout = dout + row0 * C + int64_t(h) * hd.hs;
  hd.dq = dqkv + row0 * hd.C3 + int64_t(h) * hd.hs;
  hd.lse = lse + int64_t(bh) * T;
  hd.D = D + int64_t(bh) * T;
  hd.dq_sum = dq_sum ? dq_sum + row0 * C + int64_t(h) * hd.hs : nullptr;
  return hd;
}

// Shared memory of flash_dk_dv: the K and V tiles, kStages query stages (Q and dO
// tiles, then lse and D as floats) and, with dq_atomics=1, the dS^T tile
// (key x query, rows of query_tile + 8 bf16: 16-byte aligned, and the eight rows of an
// ldmatrix phase in eight different 16-byte groups of banks).
__host__ __device__ constexpr int ds_ld(int query_tile) { return query_tile + 8; }
inline std::size_t stage_bytes(int query_tile) {
  return 2 * std::size_t(query_tile) * kLd * sizeof(__nv_bfloat16) + 2 * std::size_t(query_tile) * sizeof(float);
}
inline std::size_t dk_dv_shared_bytes(int key_tile, int query_tile, bool atomic_dq) {
  return 2 * std::size_t(key_tile) * kLd * sizeof(__nv_bfloat16) + kStages * stage_bytes(query_tile) +
         (atomic_dq ? std::size_t(key_tile) * ds_ld(query_tile) * sizeof(__nv_bfloat16) : 0);
}
// Shared memory of flash_dq: the Q and dO tiles, then kStages pairs of K and V tiles.
inline std::size_t dq_shared_bytes(int key_tile, int query_tile) {
  return (2 * std::size_t(query_tile) + kStages * 2 * std::size_t(key_tile)) * kLd * sizeof(__nv_bfloat16);
}

// One block per (key tile, b, h): block index = rank * BH + bh with key tile j = rank,
// so key tile 0 (which visits every query tile) goes first.
template <int kKeyTile, int kQueryTile, bool kAtomicDq, int kFault>
__global__ void flash_dk_dv(__nv_bfloat16* dqkv, float* dq_sum, const __nv_bfloat16* dout, const __nv_bfloat16* qkv,
                            const float* lse, const float* D, int B, int T, int C, int NH, float scale,
                            float scale_log2, bool wide) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  static_assert(kKeyTile == 32 || kKeyTile == 64, "2 or 4 warps of 16 keys");
  static_assert(kQueryTile % 16 == 0 && kQueryTile <= 64, "query tiles of 16, 32 or 64 rows");
  constexpr int kN = kQueryTile / 8;  // n8 fragments of S^T per query tile
  constexpr int kO = kHead / 8;       // n8 fragments of dK and dV
  constexpr int kWarps = kKeyTile / 16;
  constexpr int kLdS = ds_ld(kQueryTile);
  WB_DYNAMIC_SHARED(int4, smem_raw);  // int4: 16-byte aligned
  __nv_bfloat16* const ks = reinterpret_cast<__nv_bfloat16*>(smem_raw);
  __nv_bfloat16* const vs = ks + kKeyTile * kLd;
  char* const stages = reinterpret_cast<char*>(vs + kKeyTile * kLd);
  constexpr std::size_t kStageBytes = 2 * kQueryTile * kLd * sizeof(__nv_bfloat16) + 2 * kQueryTile * sizeof(float);
  auto qs = [&](int s) { return reinterpret_cast<__nv_bfloat16*>(stages + s * kStageBytes); };
  auto dos = [&](int s) { return qs(s) + kQueryTile * kLd; };
  auto lses = [&](int s) { return reinterpret_cast<float*>(dos(s) + kQueryTile * kLd); };
  auto Ds = [&](int s) { return lses(s) + kQueryTile; };
  __nv_bfloat16* const dst_tile = reinterpret_cast<__nv_bfloat16*>(stages + kStages * kStageBytes);  // dS^T

  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const int g = lane / 4, t = lane % 4;
  const int quad = lane / 8, row = lane % 8;
  const int BH = B * NH;
  const int bh = int(blockIdx.x % BH);
  const int k0 = int(blockIdx.x / BH) * kKeyTile;
  const Head hd = head_of(dqkv, dq_sum, dout, qkv, lse, D, bh, T, C, NH);
  const int kw = k0 + 16 * warp;  // the warp's first key

  const int tiles = (T + kQueryTile - 1) / kQueryTile;
  const int first_tile = k0 / kQueryTile + (kFault == kDiagonalTileSkipped ? 1 : 0);

  auto issue = [&](int tile, int s) {
    const int q0 = tile * kQueryTile;
    copy_head_rows(wide, qs(s), hd.q, hd.C3, T, hd.hs, q0, kQueryTile);
    copy_head_rows(wide, dos(s), hd.dout, hd.C, T, hd.hs, q0, kQueryTile);
    copy_floats(lses(s), hd.lse, T, q0, kQueryTile);
    copy_floats(Ds(s), hd.D, T, q0, kQueryTile);
  };
  copy_head_rows(wide, ks, hd.k, hd.C3, T, hd.hs, k0, kKeyTile);
  copy_head_rows(wide, vs, hd.v, hd.C3, T, hd.hs, k0, kKeyTile);
  if (first_tile < tiles) issue(first_tile, 0);
  tc::cp_async_commit();

  uint32_t ka[kHead / 16][4], va[kHead / 16][4];
  float dk[kO][4], dv[kO][4];
  zero(dk);
  zero(dv);

  for (int tile = first_tile; tile < tiles; ++tile) {
    const int s = (tile - first_tile) % kStages;
    if (kFault != kReadsBeforeWait) tc::cp_async_wait<0>();  // two stages: the current one is the only pending group
    __syncthreads();  // every thread's copies landed; every warp is done with the other stage (and dS^T)
    if (tile + 1 < tiles) issue(tile + 1, (s + 1) % kStages);
    tc::cp_async_commit();
    if (tile == first_tile) {
      a_fragments(ka, ks + 16 * warp * kLd, quad, row);
      a_fragments(va, vs + 16 * warp * kLd, quad, row);
    }
    const int q0 = tile * kQueryTile;
    const int q_last = min(q0 + kQueryTile, T) - 1;  // the tile's last row
    const __nv_bfloat16* const qt = qs(s);
    const __nv_bfloat16* const dot = dos(s);
    const float* const lset = lses(s);
    const float* const Dt = Ds(s);

    if (kw <= q_last) {  // warp-uniform: otherwise every key of the warp lies after every row (or past T)
      float st[kN][4], dpt[kN][4];
      zero(st);
      zero(dpt);
      times_rows_transposed(st, ka, qt, quad, row);    // S^T = K Q^T
      times_rows_transposed(dpt, va, dot, quad, row);  // dP^T = V dO^T
      const bool edge = kw + 15 > q0 || q0 + kQueryTile > T;
#pragma unroll
      for (int j = 0; j < kN; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = kw + g + 8 * (e / 2), c = 8 * j + 2 * t + e % 2, query = q0 + c;
          const float p = edge && (key > query || query >= T) ? 0.0f
                                                               : exp2f(st[j][e] * scale_log2 - lset[c] * math::kLog2e);
          st[j][e] = p;                      // P^T
          dpt[j][e] = p * (dpt[j][e] - Dt[c]);  // dS^T
        }
      times_rows<kN / 2>(dv, st, dot, quad, row);  // dV += P^T dO
      times_rows<kN / 2>(dk, dpt, qt, quad, row);  // dK += dS^T Q
      if constexpr (kAtomicDq) {
        // dS^T as bf16 pairs (queries c, c + 1) into the warp's rows of the shared tile.
#pragma unroll
        for (int j = 0; j < kN; ++j)
#pragma unroll
          for (int i = 0; i < 2; ++i)
            *reinterpret_cast<__nv_bfloat162*>(dst_tile + (16 * warp + g + 8 * i) * kLdS + 8 * j + 2 * t) =
                __floats2bfloat162_rn(dpt[j][2 * i], dpt[j][2 * i + 1]);
      }
    }
    if constexpr (kAtomicDq) {
      __syncthreads();  // the dS^T tile is whole (the rows of keys past q_last are never read)
      // dQ_tile (kQueryTile x kHead) = dS K: units of 16 rows x 16 channels, warp w
      // taking units w, w + kWarps, ...; the key steps stop at the warps that computed.
      constexpr int kUnits = kQueryTile / 16 * (kHead / 16);
      static_assert(kUnits % kWarps == 0, "every warp takes as many units");
#pragma unroll
      for (int u = warp; u < kUnits; u += kWarps) {
        const int m0 = u / (kHead / 16) * 16, n0 = u % (kHead / 16) * 16;
        float acc[2][4];
        zero(acc);
#pragma unroll
        for (int kk = 0; kk < kWarps; ++kk) {
          if (k0 + 16 * kk > q_last) break;  // uniform: keys after every row of the tile
          // A = dS (queries x keys) from the key-major dS^T tile: .trans, matrices
          // (queries 0-7, keys 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15).
          uint32_t a[4];
          tc::ldmatrix_x4_trans(a, dst_tile + (16 * kk + (quad / 2) * 8 + row) * kLdS + m0 + (quad % 2) * 8);
          // B = K (keys x channels): .trans, as V in the forward's P V.
          uint32_t r[4];
          tc::ldmatrix_x4_trans(r, ks + (16 * kk + (quad % 2) * 8 + row) * kLd + n0 + (quad / 2) * 8);
          const uint32_t b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
          tc::mma_m16n8k16_bf16(acc[0], a, b0, acc[0]);
          tc::mma_m16n8k16_bf16(acc[1], a, b1, acc[1]);
        }
#pragma unroll
        for (int jj = 0; jj < 2; ++jj)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int query = q0 + m0 + g + 8 * (e / 2), channel = n0 + 8 * jj + 2 * t + e % 2;
            if (query >= T || channel >= hd.hs) continue;
            float* const at = hd.dq_sum + int64_t(query) * hd.C + channel;
            if (kFault == kDqWithoutAtomics)
              *at += scale * acc[jj][e];
            else
              atomicAdd(at, scale * acc[jj][e]);
          }
      }
    }
    if (kFault == kReadsBeforeWait) tc::cp_async_wait<0>();
  }
  tc::cp_async_wait_all();  // only empty groups are left; none may outlive the block

  store_rows(hd.dq + hd.C, hd.C3, dk, scale, kw, T, hd.hs, g, t);     // the k part
  store_rows(hd.dq + 2 * hd.C, hd.C3, dv, 1.0f, kw, T, hd.hs, g, t);  // the v part
#else
  __trap();  // built for a device without bf16 mma; the variant requires compute capability 8.0
#endif
}

// One block per (query tile, b, h): block index = rank * BH + bh with query tile
// tiles - 1 - rank, so the last query tile (which visits every key tile) goes first.
template <int kKeyTile, int kQueryTile, int kFault>
__global__ void flash_dq(__nv_bfloat16* dqkv, const __nv_bfloat16* dout, const __nv_bfloat16* qkv, const float* lse,
                         const float* D, int B, int T, int C, int NH, float scale, float scale_log2, bool wide) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  static_assert(kKeyTile % 16 == 0 && kKeyTile <= 64, "key tiles of 16 to 64 keys");
  static_assert(kQueryTile % 16 == 0 && kQueryTile <= 64, "1 to 4 warps of 16 rows");
  constexpr int kN = kKeyTile / 8;  // n8 fragments of S per key tile
  constexpr int kO = kHead / 8;
  WB_DYNAMIC_SHARED(int4, smem_raw);
  __nv_bfloat16* const qs = reinterpret_cast<__nv_bfloat16*>(smem_raw);
  __nv_bfloat16* const dos = qs + kQueryTile * kLd;
  auto ks = [&](int s) { return dos + (kQueryTile + s * 2 * kKeyTile) * kLd; };
  auto vs = [&](int s) { return ks(s) + kKeyTile * kLd; };

  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const int g = lane / 4, t = lane % 4;
  const int quad = lane / 8, row = lane % 8;
  const int BH = B * NH;
  const int bh = int(blockIdx.x % BH);
  const int tiles_q = (T + kQueryTile - 1) / kQueryTile;
  const int q0 = (tiles_q - 1 - int(blockIdx.x / BH)) * kQueryTile;
  const Head hd = head_of(dqkv, nullptr, dout, qkv, lse, D, bh, T, C, NH);

  const int end = min(q0 + kQueryTile, T);  // keys 0 .. end - 1 reach the block's rows
  const int key_tiles = (end + kKeyTile - 1) / kKeyTile;
  const int first = q0 + 16 * warp;
  const int last = min(first + 15, T - 1);

  auto issue = [&](int tile, int s) {
    if (tile == 0) {
      copy_head_rows(wide, qs, hd.q, hd.C3, T, hd.hs, q0, kQueryTile);
      copy_head_rows(wide, dos, hd.dout, hd.C, T, hd.hs, q0, kQueryTile);
    }
    copy_head_rows(wide, ks(s), hd.k, hd.C3, T, hd.hs, tile * kKeyTile, kKeyTile);
    copy_head_rows(wide, vs(s), hd.v, hd.C3, T, hd.hs, tile * kKeyTile, kKeyTile);
  };
  issue(0, 0);
  tc::cp_async_commit();

  // The lse (log2 units) and D of rows g and g + 8 of the warp; 0 past T (not stored).
  float lse2[2], Dr[2];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int r = first + g + 8 * i;
    lse2[i] = r < T ? hd.lse[r] * math::kLog2e : 0.0f;
    Dr[i] = r < T ? hd.D[r] : 0.0f;
  }
  uint32_t qa[kHead / 16][4], doa[kHead / 16][4];
  float dq[kO][4];
  zero(dq);

  for (int tile = 0; tile < key_tiles; ++tile) {
    const int s = tile % kStages;
    if (kFault != kReadsBeforeWait) tc::cp_async_wait<0>();
    __syncthreads();
    if (tile + 1 < key_tiles) issue(tile + 1, (s + 1) % kStages);
    tc::cp_async_commit();
    if (tile == 0) {
      a_fragments(qa, qs + 16 * warp * kLd, quad, row);
      a_fragments(doa, dos + 16 * warp * kLd, quad, row);
    }
    const int k0 = tile * kKeyTile;
    if (first < T && k0 <= last) {  // warp-uniform: the barriers are all at the loop's top
      const __nv_bfloat16* const kt = ks(s);
      const __nv_bfloat16* const vt = vs(s);
      float sc[kN][4], dp[kN][4];
      zero(sc);
      zero(dp);
      times_rows_transposed(sc, qa, kt, quad, row);   // S = Q K^T
      times_rows_transposed(dp, doa, vt, quad, row);  // dP = dO V^T
      const bool diagonal = k0 + kKeyTile - 1 > first;
#pragma unroll
      for (int j = 0; j < kN; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int query = first + g + 8 * (e / 2), key = k0 + 8 * j + 2 * t + e % 2;
          const float p = diagonal && key > query ? 0.0f : exp2f(sc[j][e] * scale_log2 - lse2[e / 2]);
          dp[j][e] = p * (dp[j][e] - Dr[e / 2]);  // dS
        }
      times_rows<kN / 2>(dq, dp, kt, quad, row);  // dQ += dS K
    }
    if (kFault == kReadsBeforeWait) tc::cp_async_wait<0>();
  }
  tc::cp_async_wait_all();

  if (first >= T) return;
  store_rows(hd.dq, hd.C3, dq, scale, first, T, hd.hs, g, t);
#else
  __trap();
#endif
}

template <class Kernel>
void allow_shared(Kernel kernel, std::size_t bytes) {
  WB_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
}

template <int kKeyTile, int kQueryTile, int kFault>
void launch_with(const flash_backward::Problem<__nv_bfloat16>& p, bool atomic_dq, bool wide, cudaStream_t stream,
                 const std::string& who) {
  const int64_t BH = int64_t(p.B) * p.NH;
  const int64_t key_blocks = BH * ((p.T + kKeyTile - 1) / kKeyTile);
  const int64_t query_blocks = key_blocks;  // flash_dq: blocks of kKeyTile query rows
  if (key_blocks > 0x7fffffff || query_blocks > 0x7fffffff) throw Unsupported(who + ": too many tiles for one grid");
  const float scale = 1.0f / std::sqrt(float(p.C / p.NH));
  const float scale_log2 = scale * math::kLog2e;
  const int64_t rows = BH * p.T;
  constexpr int kRowThreads = 256;

  WB_LAUNCH(flash_backward::row_dots<__nv_bfloat16>, grid_for(rows, kRowThreads / kWarpSize), kRowThreads, 0, stream,
            p);
  if (atomic_dq) {
    auto* kernel = flash_dk_dv<kKeyTile, kQueryTile, true, kFault>;
    const std::size_t smem = dk_dv_shared_bytes(kKeyTile, kQueryTile, true);
    allow_shared(kernel, smem);
    WB_LAUNCH(kernel, unsigned(key_blocks), 2 * kKeyTile, smem, stream, p.dqkv, p.dq_sum, p.dout, p.qkv, p.lse, p.D,
              p.B, p.T, p.C, p.NH, scale, scale_log2, wide);
    WB_LAUNCH(flash_backward::narrow_dq<__nv_bfloat16>, grid_for(int64_t(p.B) * p.T * (p.C / 4), kRowThreads),
              kRowThreads, 0, stream, p);
  } else {
    auto* kernel = flash_dk_dv<kKeyTile, kQueryTile, false, kFault>;
    const std::size_t smem = dk_dv_shared_bytes(kKeyTile, kQueryTile, false);
    allow_shared(kernel, smem);
    WB_LAUNCH(kernel, unsigned(key_blocks), 2 * kKeyTile, smem, stream, p.dqkv, static_cast<float*>(nullptr), p.dout,
              p.qkv, p.lse, p.D, p.B, p.T, p.C, p.NH, scale, scale_log2, wide);
    // The roles swapped: blocks of kKeyTile query rows (the same warps), key tiles of
    // kQueryTile keys streamed.
    auto* dq_kernel = flash_dq<kQueryTile, kKeyTile, kFault>;
    const std::size_t dq_smem = dq_shared_bytes(kQueryTile, kKeyTile);
    allow_shared(dq_kernel, dq_smem);
    WB_LAUNCH(dq_kernel, unsigned(query_blocks), 2 * kKeyTile, dq_smem, stream, p.dqkv, p.dout, p.qkv, p.lse, p.D, p.B,
              p.T, p.C, p.NH, scale, scale_log2, wide);
  }
}

template <int kKeyTile, int kFault>
void launch_key_tile(const flash_backward::Problem<__nv_bfloat16>& p, int query_tile, bool atomic_dq, bool wide,
                     cudaStream_t stream, const std::string& who) {
  switch (query_tile) {
    case 16:
      return launch_with<kKeyTile, 16, kFault>(p, atomic_dq, wide, stream, who);
    case 32:
      return launch_with<kKeyTile, 32, kFault>(p, atomic_dq, wide, stream, who);
    case 64:
      return launch_with<kKeyTile, 64, kFault>(p, atomic_dq, wide, stream, who);
    default:
      throw std::logic_error(who + ": query_tile must be 16, 32 or 64");
  }
}

// Bytes of workspace: D, and with dq_atomics=1 the fp32 dq accumulator (those of
// attention_backward_bf16 cuda/2).
inline std::size_t workspace_bytes(int64_t B, int64_t T, int64_t C, int64_t NH, bool atomic_dq) {
  return flash_backward::workspace_bytes<__nv_bfloat16>(B, T, C, NH, atomic_dq);
}

// The whole backward at a launch's key_tile, query_tile and dq_atomics: checks, the
// workspace carved (D, then with dq_atomics=1 the fp32 dq accumulator), the kernels
// launched on `stream`. `who` names the variant in errors.
template <int kFault = kNone>
void launch(__nv_bfloat16* dqkv, const __nv_bfloat16* dout, const __nv_bfloat16* qkv, const __nv_bfloat16* out,
            const float* lse, int B, int T, int C, int NH, int key_tile, int query_tile, bool atomic_dq,
            void* workspace, std::size_t workspace_size, cudaStream_t stream, const std::string& who) {
  const int hs = C / NH;
  if (hs % 4 != 0 || hs > kHead)
    throw Unsupported(who + " needs C / NH % 4 == 0 and C / NH <= " + std::to_string(kHead) +
                      " (C / NH = " + std::to_string(hs) + ")");
  // 8-byte cp.async chunks of qkv and dout, row_dots and narrow_dq's 64-bit accesses.
  flash_backward::require_aligned<__nv_bfloat16>(who, {dqkv, dout, qkv, out});
  if (workspace_size < workspace_bytes(B, T, C, NH, atomic_dq)) throw std::logic_error(who + ": workspace too small");
  flash_backward::Problem<__nv_bfloat16> p{dqkv, dout, qkv, out, lse, static_cast<float*>(workspace), nullptr, 0,
                                           B,    T,    C,   NH};
  if (atomic_dq) {
    p.dq_sum = p.D + int64_t(B) * NH * T;  // (B, T, C) in fp32 after D; row_dots zeroes it
    p.dq_sum_stride = C;
  }
  const bool wide = hs % 8 == 0 && aligned16(qkv) && aligned16(dout);
  switch (key_tile) {
    case 32:
      return launch_key_tile<32, kFault>(p, query_tile, atomic_dq, wide, stream, who);
    case 64:
      return launch_key_tile<64, kFault>(p, query_tile, atomic_dq, wide, stream, who);
    default:
      throw std::logic_error(who + ": key_tile must be 32 or 64");
  }
}

}  // namespace wb::cuda::flash_attention_backward_mma
