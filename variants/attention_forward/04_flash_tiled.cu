// attention_forward, CUDA variant 4: flash-style tiled kernel in fp32.
//
// Idea: a block owns a tile of Br query rows of one (b, h) and walks the key tiles of Bc
// keys from 0 up to the diagonal. Q (scaled by log2(e)/sqrt(hs)) is loaded into shared
// memory once; for every key tile K and V are loaded into shared memory, each thread
// computes a TM x TN micro-tile of scores from float4 reads of Q and K (rows
// ty*TM + i, keys tx + 16*j), masks it on the diagonal tile only, updates the running
// max and sum of its rows (the 16 threads sharing rows reduce with xor shuffles, so
// every one of them holds the same statistics), writes the probabilities to shared
// memory and accumulates P V into its TM x (D/16) block of the output from float4 reads
// of P and V. Key tiles entirely above the diagonal are never visited. The output is
// normalised and written once; lse = (m + log2 l) * ln 2.
//   threads: 16 x (block_size / 16); Br = tile_q = (block_size / 16) * TM;
//   Bc = tile_k = 16 * TN; D = hs rounded up to 64 or 128 (zero padded).
//   shared memory: Q, K, V tiles with rows of D + 4 floats (conflict-free float4
//   reads) and P with rows of Bc + 4: ((Br + 2 Bc)(D + 4) + Br (Bc + 4)) * 4 bytes.
// Why it should beat variant 3: each K and V element read from memory serves Br query
// rows out of shared memory, each Q element Bc keys, and each thread does TM*TN (or
// TM*D/16) multiply-adds per pair of float4 shared-memory reads -- register tiling as
// in an SGEMM, instead of per-row streaming with warp reductions per 32 keys.
// Limits: hs <= 128; plain fp32 FMA (no tensor cores); a block's work grows with its
// row tile (the grid starts the heaviest tiles first); the diagonal tile does the full
// Bc x Br work and masks half of it; shared memory above 48 KiB needs the opt-in, and
// configurations over 160 KiB (hs > 64 with the largest tiles) are skipped so that
// every legal one also fits an A100.
#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include "contract/ops/attention_forward.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "variants/attention_forward/common.cuh"

namespace wb::variants {
namespace {

using attention::out_row;
using attention::qkv_row;

constexpr int kTx = 16;                       // threads along keys / output channels
constexpr int kMaxHeadSize = 128;             // D is 64 or 128
constexpr std::size_t kMaxSmem = 160 * 1024;  // fits sm_80 (164 KiB) and sm_90 (227 KiB)

int padded_head(int hs) { return hs <= 64 ? 64 : 128; }

std::size_t smem_bytes(int D, int Br, int Bc) {
  return (std::size_t(Br + 2 * Bc) * (D + 4) + std::size_t(Br) * (Bc + 4)) * sizeof(float);
}

// Loads rows [row0, row0 + rows) of part (0 q, 1 k, 2 v) of head (b, h) into a tile of
// rows x D (row stride D + 4), zero for rows >= T and channels >= hs, times mul.
template <int kD>
__device__ void load_tile(float* tile, int rows, const float* qkv, int part, int b, int h, int row0, int T, int C,
                          int hs, float mul, bool vec) {
  constexpr int kVecs = kD / 4;
  for (int idx = threadIdx.x; idx < rows * kVecs; idx += blockDim.x) {
    const int r = idx / kVecs;
    const int d = (idx % kVecs) * 4;
    const int t = row0 + r;
    float4 x = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (t < T && d < hs) {
      const float* src = qkv + qkv_row(b, t, T, C) + part * C + h * hs + d;
      if (vec) {  // hs % 4 == 0 and qkv 16-byte aligned: d + 3 < hs and src is too
        x = cuda::load4(src);
      } else {
        x.x = src[0];
        if (d + 1 < hs) x.y = src[1];
        if (d + 2 < hs) x.z = src[2];
        if (d + 3 < hs) x.w = src[3];
      }
      x.x *= mul;
      x.y *= mul;
      x.z *= mul;
      x.w *= mul;
    }
    cuda::store4(tile + r * (kD + 4) + d, x);
  }
}

// Max / sum over the 16 threads (lanes l, l^1, .., l^8) that share a row group; every
// one of them gets the bitwise same result (each step adds the same two values).
__device__ inline float group_max(float v) {
#pragma unroll
  for (int offset = kTx / 2; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(cuda::kFullMask, v, offset));
  return v;
}
__device__ inline float group_sum(float v) {
#pragma unroll
  for (int offset = kTx / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(cuda::kFullMask, v, offset);
  return v;
}

template <int kD, int kTM, int kTN>
__global__ void __launch_bounds__(256) attention_flash_tiled(float* out, float* lse, const float* qkv, int B, int T,
                                                             int C, int NH, float scale_log2, bool vec) {
  constexpr int kBc = kTx * kTN;    // keys per tile
  constexpr int kDs = kD + 4;       // row stride of the Q, K, V tiles
  constexpr int kPs = kBc + 4;      // row stride of the P tile
  constexpr int kGroups = kD / 64;  // float4 output groups per thread: channels g*64 + tx*4 ..
  const int tx = threadIdx.x % kTx;
  const int ty = threadIdx.x / kTx;
  const int Br = (blockDim.x / kTx) * kTM;  // query rows per tile
  const int hs = C / NH;
  const int BH = B * NH;
  const int q_tiles = (T + Br - 1) / Br;
  const int q_tile = q_tiles - 1 - int(blockIdx.x / BH);  // heaviest tiles first
  const int bh = int(blockIdx.x % BH);
  const int b = bh / NH, h = bh % NH;
  const int q0 = q_tile * Br;

  WB_DYNAMIC_SHARED(float4, smem4);  // float4 for 16-byte alignment
  float* Qs = reinterpret_cast<float*>(smem4);
  float* Ks = Qs + Br * kDs;
  float* Vs = Ks + kBc * kDs;
  float* Ps = Vs + kBc * kDs;

  load_tile<kD>(Qs, Br, qkv, 0, b, h, q0, T, C, hs, scale_log2, vec);

  float m[kTM], l[kTM];
  float4 acc[kTM][kGroups];
#pragma unroll
  for (int i = 0; i < kTM; ++i) {
    m[i] = -INFINITY;
    l[i] = 0.0f;
#pragma unroll
    for (int g = 0; g < kGroups; ++g) acc[i][g] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }

  const int last_key = min(q0 + Br, T) - 1;  // keys above it are masked for every row
  for (int k0 = 0; k0 <= last_key; k0 += kBc) {
    load_tile<kD>(Ks, kBc, qkv, 1, b, h, k0, T, C, hs, 1.0f, vec);
    load_tile<kD>(Vs, kBc, qkv, 2, b, h, k0, T, C, hs, 1.0f, vec);
    __syncthreads();  // Q (first time), K, V ready

    // S = Q K^T for rows ty*kTM + i and keys tx + 16*j (log2 units).
    float s[kTM][kTN];
#pragma unroll
    for (int i = 0; i < kTM; ++i)
#pragma unroll
      for (int j = 0; j < kTN; ++j) s[i][j] = 0.0f;
#pragma unroll 4
    for (int d = 0; d < kD; d += 4) {
      float4 qv[kTM], kv[kTN];
#pragma unroll
      for (int i = 0; i < kTM; ++i) qv[i] = cuda::load4(Qs + (ty * kTM + i) * kDs + d);
#pragma unroll
      for (int j = 0; j < kTN; ++j) kv[j] = cuda::load4(Ks + (tx + kTx * j) * kDs + d);
#pragma unroll
      for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; ++j)
          s[i][j] += (qv[i].x * kv[j].x + qv[i].y * kv[j].y) + (qv[i].z * kv[j].z + qv[i].w * kv[j].w);
    }

    // Causal mask, only where the tile reaches above the diagonal (key > row).
    if (k0 + kBc - 1 > q0) {
#pragma unroll
      for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; ++j)
          if (k0 + tx + kTx * j > q0 + ty * kTM + i) s[i][j] = -INFINITY;
    }

    // Online softmax per row; the row's keys of this tile are spread over 16 threads.
#pragma unroll
    for (int i = 0; i < kTM; ++i) {
      float tile_max = s[i][0];
#pragma unroll
      for (int j = 1; j < kTN; ++j) tile_max = fmaxf(tile_max, s[i][j]);
      // Finite: the first tile holds key 0, which no row masks; later tiles keep m.
      const float m_new = fmaxf(m[i], group_max(tile_max));
      const float corr = exp2f(m[i] - m_new);  // 0 on the first tile (m = -inf)
      float row_sum = 0.0f;
#pragma unroll
      for (int j = 0; j < kTN; ++j) {
        const float p = exp2f(s[i][j] - m_new);  // masked: exp2(-inf) = 0
        Ps[(ty * kTM + i) * kPs + tx + kTx * j] = p;
        row_sum += p;
      }
      l[i] = l[i] * corr + group_sum(row_sum);
      m[i] = m_new;
#pragma unroll
      for (int g = 0; g < kGroups; ++g) {
        acc[i][g].x *= corr;
        acc[i][g].y *= corr;
        acc[i][g].z *= corr;
        acc[i][g].w *= corr;
      }
    }
    __syncthreads();  // P complete

    // O += P V for rows ty*kTM + i and channels g*64 + tx*4 + 0..3.
#pragma unroll 2
    for (int j = 0; j < kBc; j += 4) {
      float4 pv[kTM];
#pragma unroll
      for (int i = 0; i < kTM; ++i) pv[i] = cuda::load4(Ps + (ty * kTM + i) * kPs + j);
#pragma unroll
      for (int jj = 0; jj < 4; ++jj) {
#pragma unroll
        for (int g = 0; g < kGroups; ++g) {
          const float4 vv = cuda::load4(Vs + (j + jj) * kDs + g * 64 + tx * 4);
#pragma unroll
          for (int i = 0; i < kTM; ++i) {
            const float p = jj == 0 ? pv[i].x : jj == 1 ? pv[i].y : jj == 2 ? pv[i].z : pv[i].w;
            acc[i][g].x += p * vv.x;
            acc[i][g].y += p * vv.y;
            acc[i][g].z += p * vv.z;
            acc[i][g].w += p * vv.w;
          }
        }
      }
    }
    __syncthreads();  // K, V, P may be overwritten by the next tile
  }

#pragma unroll
  for (int i = 0; i < kTM; ++i) {
    const int t = q0 + ty * kTM + i;
    if (t >= T) continue;
    const float inv = 1.0f / l[i];
    float* o = out + out_row(b, t, T, C) + h * hs;
#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
      const int c = g * 64 + tx * 4;
      if (c >= hs) continue;
      const float4 r = make_float4(acc[i][g].x * inv, acc[i][g].y * inv, acc[i][g].z * inv, acc[i][g].w * inv);
      if (vec) {  // hs % 4 == 0 and out 16-byte aligned: c + 3 < hs, o + c is too
        cuda::store4(o + c, r);
      } else {
        o[c] = r.x;
        if (c + 1 < hs) o[c + 1] = r.y;
        if (c + 2 < hs) o[c + 2] = r.z;
        if (c + 3 < hs) o[c + 3] = r.w;
      }
    }
    if (tx == 0) lse[int64_t(bh) * T + t] = (m[i] + log2f(l[i])) * attention::kLn2;
  }
}

template <int kD, int kTM, int kTN>
void launch_with(const AttentionForwardArgs& a, const Launch& l) {
  const int block = l.block_size();
  const int Br = (block / kTx) * kTM;
  const int Bc = kTx * kTN;
  const int hs = attention::head_size(a);
  const std::size_t smem = smem_bytes(kD, Br, Bc);
  auto* kernel = attention_flash_tiled<kD, kTM, kTN>;
  WB_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  const int64_t grid = int64_t(a.B) * a.NH * ((a.T + Br - 1) / Br);
  const float scale_log2 = attention::kLog2e / std::sqrt(float(hs));
  WB_LAUNCH(kernel, unsigned(grid), block, smem, cuda::stream(l), a.out, a.lse, a.qkv, a.B, a.T, a.C, a.NH, scale_log2,
            hs % 4 == 0 && cuda::aligned16(a.qkv) && cuda::aligned16(a.out));
}

template <int kD, int kTM>
void dispatch_tn(const AttentionForwardArgs& a, const Launch& l, int tn) {
  if (tn == 2) return launch_with<kD, kTM, 2>(a, l);
  if (tn == 4) return launch_with<kD, kTM, 4>(a, l);
  throw std::logic_error("attention_forward cuda/4: no kernel for " + std::to_string(tn) + " keys per thread");
}

template <int kD>
void dispatch_tm(const AttentionForwardArgs& a, const Launch& l, int tm, int tn) {
  if (tm == 2) return dispatch_tn<kD, 2>(a, l, tn);
  if (tm == 4) return dispatch_tn<kD, 4>(a, l, tn);
  if (tm == 8) return dispatch_tn<kD, 8>(a, l, tn);
  throw std::logic_error("attention_forward cuda/4: no kernel for " + std::to_string(tm) + " rows per thread");
}

// Rows per thread for a configuration (tile_q / (block_size / 16)); 0 if not whole.
int rows_per_thread(const ParamValues& p) {
  const int thread_rows = p.get("block_size") / kTx;
  const int tile_q = p.get("tile_q");
  return tile_q % thread_rows == 0 ? tile_q / thread_rows : 0;
}

void launch(const AttentionForwardArgs& a, const Launch& l) {
  const int tm = rows_per_thread(l.params);
  const int tn = l.get("tile_k") / kTx;
  if (padded_head(attention::head_size(a)) == 64) return dispatch_tm<64>(a, l, tm, tn);
  return dispatch_tm<128>(a, l, tm, tn);
}

std::optional<std::string> limit(const Shape& s, const ParamValues& p) {
  const int tm = rows_per_thread(p);
  if (tm != 2 && tm != 4 && tm != 8)
    return "tile_q / (block_size / 16) must be 2, 4 or 8 rows per thread (is " + std::to_string(p.get("tile_q")) +
           " / " + std::to_string(p.get("block_size") / kTx) + ")";
  const std::size_t smem = smem_bytes(padded_head(int(s.C / s.NH)), p.get("tile_q"), p.get("tile_k"));
  if (smem > kMaxSmem)
    return "needs " + std::to_string(smem / 1024) + " KiB of shared memory (limit " + std::to_string(kMaxSmem / 1024) +
           " KiB)";
  return std::nullopt;
}

}  // namespace

Variant attention_forward_cuda_4() {
  Variant v = Variant::of(&launch);
  v.summary =
      "flash-style fp32: Q/K/V tiles in shared memory, register micro-tiles, online softmax, no tile above the "
      "diagonal";
  v.params = {block_size_param({64, 128, 256}, 256), TuningParam{"tile_q", {32, 64, 128}, 64},
              TuningParam{"tile_k", {32, 64}, 64}};
  v.requirements = {{"C / NH <= " + std::to_string(kMaxHeadSize),
                     [](const Shape& s) { return s.NH > 0 && s.C / s.NH <= kMaxHeadSize; }}};
  v.launch_limit = limit;
  return v;
}

}  // namespace wb::variants
