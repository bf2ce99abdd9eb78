// attention_backward, CUDA variant 3: flash-style tiled backward in fp32, scores
// recomputed tile by tile from q, k and lse, no T x T buffer.
//
// Idea: the heads are cut into tiles of `tile` rows (32 or 64; query and key tiles
// have the same size). Three kernels:
//   1. row_dots: D_t = dout_t . out_t for every (b, h, t) into the workspace, one warp
//      per row (and, with dq_atomics=1, zeroes the q part of dqkv).
//   2. flash_dk_dv: one block per (key tile j, b, h) keeps k_j and v_j in shared
//      memory and dk_j, dv_j in registers, and loops over the query tiles i >= j (the
//      tiles i < j are fully masked and skipped): it loads q_i and dout_i, recomputes
//      S = q_i k_j^T and dP = dout_i v_j^T, then P = exp(S * scale - lse) (masked) and
//      dS = P * (dP - D), and adds dv_j += P^T dout_i, dk_j += dS^T q_i. With
//      dq_atomics=1 it also adds dS k_j * scale into dq with atomicAdd.
//   3. flash_dq (dq_atomics=0 only): one block per (query tile i, b, h) keeps q_i,
//      dout_i and dq_i and loops over the key tiles j <= i, recomputing S, dP and dS
//      the same way, dq_i += dS k_j.
// dq_atomics=0 is deterministic (every sum in a fixed order) at the price of
// recomputing S and dP in the dq pass: 7 tile products per pair of tiles instead of 5.
// dq_atomics=1 does the 5 products once, but the order of the float atomics on dq
// varies from run to run: not deterministic.
// Register tiling: 256 threads as 16 x 16; each thread owns a (tile/16) x (tile/16)
// block of the score tile (rows ty + 16a, columns tx + 16b) and, for the products
// into dk/dv/dq, tile/16 rows times hs/16 channels (as float4 columns 4ty + 64e).
// Shared tiles have rows padded by 4 floats, so that the 128-bit reads of 8 lanes
// of a quarter-warp fall on distinct banks. Blocks with the most tiles to visit are
// launched first (key tile 0 for dk/dv, the last query tile for dq).
// Why it should beat variant 2: fewer multiply-adds (tiles above the diagonal are
// never computed: 7 or 5 products over half the T x T square against variant 2's 5
// over all of it, 70% or 50% of its work) and no T x T traffic through memory: the
// scores live in registers and one shared tile; memory moves O(T^2 / tile * hs)
// bytes, mostly from L2, instead of several passes over 2 * B * NH * T^2 floats.
// Limits: hs % 4 == 0 (128-bit loads of rows) and hs <= 128 (kernels instantiated for
// hs padded to 64 or 128, the padding computed as zeros); fp32 FMA on CUDA cores, no
// tensor cores. Shared memory per block: 38.75 KiB (tile 32, hs <= 64), 85.5 KiB
// (tile 64, hs <= 64), 149.5 KiB (tile 64, hs <= 128: needs that much opt-in shared
// memory per block, as sm_80 and sm_90 have); with tile 64, ptxas gives the kernels
// 146-250 registers, so one block (8 warps) per SM -- tile 32 trades reuse for
// occupancy, the sweep decides. Loads are not double-buffered.
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "kernels/cuda/device_utils.cuh"
#include "kernels/cuda/dialect.cuh"
#include "kernels/cuda/runtime.h"
#include "kernels/ops/attention_backward.h"

namespace wb::variants {
namespace {

constexpr int kThreads = 256;  // 16 x 16
constexpr int kSide = 16;      // threads per side of the thread grid
constexpr int kPad = 4;        // floats of padding per shared row
constexpr int kMaxHs = 128;
constexpr float kLog2e = 1.4426950408889634f;

// Shared-memory layout of both tiled kernels, for hs padded to kHS and tiles of
// kTile rows: q, dout, k, v tiles (kTile x kLd), one P/dS tile (kTile x kLdS), and
// the per-row lse (in log2 units) and D of the current query tile.
template <int kHS, int kTile>
struct Layout {
  static_assert(kHS % 64 == 0, "channels are owned as float4 columns 4*ty + 64*e");
  static_assert(kTile == 32 || kTile == 64, "micro-tiles of 2 or 4");
  static constexpr int kLd = kHS + kPad;
  static constexpr int kLdS = kTile + kPad;
  static constexpr int kM = kTile / kSide;  // rows (and columns) of a thread's micro-tile
  static constexpr int kE = kHS / 64;       // float4 channel columns per thread
  static constexpr int kTileFloats = kTile * kLd;
  static constexpr int kFloats = 4 * kTileFloats + kTile * kLdS + 2 * kTile;
  static constexpr std::size_t kBytes = std::size_t(kFloats) * sizeof(float);
  static_assert(kLd % 4 == 0 && kLdS % 4 == 0 && kTileFloats % 4 == 0, "rows and tiles 16-byte aligned");
  static_assert(kTile * (kHS / 4) % kThreads == 0, "tile loads split evenly over the threads");
};

// Pointers into the dynamic shared memory of one block.
template <int kHS, int kTile>
struct Tiles {
  using L = Layout<kHS, kTile>;
  float *q, *dout, *k, *v, *ps, *lse, *D;
  __device__ explicit Tiles(float* base)
      : q(base),
        dout(base + L::kTileFloats),
        k(base + 2 * L::kTileFloats),
        v(base + 3 * L::kTileFloats),
        ps(base + 4 * L::kTileFloats),
        lse(base + 4 * L::kTileFloats + kTile * L::kLdS),
        D(base + 4 * L::kTileFloats + kTile * L::kLdS + kTile) {}
};

__device__ inline float component(const float4& v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }

__device__ inline void fma4(float4& acc, float x, const float4& y) {
  acc.x = fmaf(x, y.x, acc.x);
  acc.y = fmaf(x, y.y, acc.y);
  acc.z = fmaf(x, y.z, acc.z);
  acc.w = fmaf(x, y.w, acc.w);
}

__device__ inline float dot4(const float4& x, const float4& y, float acc) {
  acc = fmaf(x.x, y.x, acc);
  acc = fmaf(x.y, y.y, acc);
  acc = fmaf(x.z, y.z, acc);
  return fmaf(x.w, y.w, acc);
}

// kM consecutive floats from shared memory (8- or 16-byte aligned).
template <int kM>
__device__ inline void load_vec(const float* p, float (&x)[kM]);
template <>
__device__ inline void load_vec<2>(const float* p, float (&x)[2]) {
  const float2 v = *reinterpret_cast<const float2*>(p);
  x[0] = v.x;
  x[1] = v.y;
}
template <>
__device__ inline void load_vec<4>(const float* p, float (&x)[4]) {
  const float4 v = cuda::load4(p);
  x[0] = v.x;
  x[1] = v.y;
  x[2] = v.z;
  x[3] = v.w;
}

template <int kM, int kE>
__device__ inline void zero(float4 (&acc)[kM][kE]) {
#pragma unroll
  for (int a = 0; a < kM; ++a)
#pragma unroll
    for (int e = 0; e < kE; ++e) acc[a][e] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}

// Rows row0 .. row0 + kTile - 1 of two (T, hs) matrices (row t of x at x + t * x_stride)
// into shared tiles of kTile x kLd; rows >= T and channels >= hs are zero. All loads
// are issued before the stores.
template <int kHS, int kTile>
__device__ void load_two_tiles(float* x_tile, const float* x, int64_t x_stride, float* y_tile, const float* y,
                               int64_t y_stride, int row0, int T, int hs) {
  using L = Layout<kHS, kTile>;
  constexpr int kVecs = kHS / 4;                        // float4 per padded row
  constexpr int kPerThread = kTile * kVecs / kThreads;  // float4 per thread and tile
  float4 xv[kPerThread], yv[kPerThread];
#pragma unroll
  for (int n = 0; n < kPerThread; ++n) {
    const int idx = threadIdx.x + n * kThreads;
    const int r = idx / kVecs, c = 4 * (idx % kVecs);
    const int t = row0 + r;
    const bool inside = t < T && c < hs;
    const float4 z = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    xv[n] = inside ? cuda::load4(x + int64_t(t) * x_stride + c) : z;
    yv[n] = inside ? cuda::load4(y + int64_t(t) * y_stride + c) : z;
  }
#pragma unroll
  for (int n = 0; n < kPerThread; ++n) {
    const int idx = threadIdx.x + n * kThreads;
    const int r = idx / kVecs, c = 4 * (idx % kVecs);
    cuda::store4(x_tile + r * L::kLd + c, xv[n]);
    cuda::store4(y_tile + r * L::kLd + c, yv[n]);
  }
}

// lse (times log2 e) and D of the query rows q0 .. q0 + kTile - 1; 0 beyond T.
template <int kTile>
__device__ void load_row_stats(float* lse_tile, float* D_tile, const float* lse, const float* D, int q0, int T) {
  if (int(threadIdx.x) < kTile) {
    const int t = q0 + int(threadIdx.x);
    lse_tile[threadIdx.x] = t < T ? lse[t] * kLog2e : 0.0f;
    D_tile[threadIdx.x] = t < T ? D[t] : 0.0f;
  }
}

// s[a][b] = q_r . k_c and dp[a][b] = dout_r . v_c for the thread's rows r = ty + 16a
// and columns c = tx + 16b of the score tile (unscaled).
template <int kHS, int kTile>
__device__ void scores(float (&s)[kTile / kSide][kTile / kSide], float (&dp)[kTile / kSide][kTile / kSide],
                       const Tiles<kHS, kTile>& sm, int tx, int ty) {
  using L = Layout<kHS, kTile>;
  constexpr int kM = L::kM;
#pragma unroll
  for (int a = 0; a < kM; ++a)
#pragma unroll
    for (int b = 0; b < kM; ++b) s[a][b] = dp[a][b] = 0.0f;
#pragma unroll 4
  for (int d = 0; d < kHS; d += 4) {
    float4 y[kM];
#pragma unroll
    for (int b = 0; b < kM; ++b) y[b] = cuda::load4(sm.k + (tx + kSide * b) * L::kLd + d);
#pragma unroll
    for (int a = 0; a < kM; ++a) {
      const float4 x = cuda::load4(sm.q + (ty + kSide * a) * L::kLd + d);
#pragma unroll
      for (int b = 0; b < kM; ++b) s[a][b] = dot4(x, y[b], s[a][b]);
    }
#pragma unroll
    for (int b = 0; b < kM; ++b) y[b] = cuda::load4(sm.v + (tx + kSide * b) * L::kLd + d);
#pragma unroll
    for (int a = 0; a < kM; ++a) {
      const float4 x = cuda::load4(sm.dout + (ty + kSide * a) * L::kLd + d);
#pragma unroll
      for (int b = 0; b < kM; ++b) dp[a][b] = dot4(x, y[b], dp[a][b]);
    }
  }
}

// In place: s becomes P = exp(s * scale - lse) where key <= query < T, else 0; dp
// becomes dS = P * (dp - D).
template <int kM>
__device__ void probabilities(float (&s)[kM][kM], float (&dp)[kM][kM], const float* lse_tile, const float* D_tile,
                              int q0, int k0, int T, float scale_log2, int tx, int ty) {
#pragma unroll
  for (int a = 0; a < kM; ++a) {
    const int r = ty + kSide * a;
    const int tq = q0 + r;
    const float l = lse_tile[r], D = D_tile[r];
#pragma unroll
    for (int b = 0; b < kM; ++b) {
      const int tk = k0 + tx + kSide * b;
      const float p = (tk <= tq && tq < T) ? exp2f(s[a][b] * scale_log2 - l) : 0.0f;
      s[a][b] = p;
      dp[a][b] = p * (dp[a][b] - D);
    }
  }
}

// The thread's micro-tile into the shared P/dS tile.
template <int kHS, int kTile>
__device__ void store_scores(float* ps, const float (&x)[kTile / kSide][kTile / kSide], int tx, int ty) {
  using L = Layout<kHS, kTile>;
#pragma unroll
  for (int a = 0; a < L::kM; ++a)
#pragma unroll
    for (int b = 0; b < L::kM; ++b) ps[(ty + kSide * a) * L::kLdS + tx + kSide * b] = x[a][b];
}

// acc[m][e] += sum_r X[r][kM * tx + m] * Y[r][4 ty + 64 e .. +3]: dv += P^T dout and
// dk += dS^T q, for the thread's keys kM * tx + m and channels 4 ty + 64 e.
template <int kHS, int kTile>
__device__ void accumulate_transposed(float4 (&acc)[kTile / kSide][kHS / 64], const float* X, const float* Y, int tx,
                                      int ty) {
  using L = Layout<kHS, kTile>;
#pragma unroll 4
  for (int r = 0; r < kTile; ++r) {
    float x[L::kM];
    load_vec<L::kM>(X + r * L::kLdS + L::kM * tx, x);
#pragma unroll
    for (int e = 0; e < L::kE; ++e) {
      const float4 y = cuda::load4(Y + r * L::kLd + 4 * ty + 64 * e);
#pragma unroll
      for (int m = 0; m < L::kM; ++m) fma4(acc[m][e], x[m], y);
    }
  }
}

// acc[a][e] += sum_c X[tx + 16 a][c] * Y[c][4 ty + 64 e .. +3]: dq += dS k, for the
// thread's query rows tx + 16 a and channels 4 ty + 64 e.
template <int kHS, int kTile>
__device__ void accumulate_direct(float4 (&acc)[kTile / kSide][kHS / 64], const float* X, const float* Y, int tx,
                                  int ty) {
  using L = Layout<kHS, kTile>;
#pragma unroll 2
  for (int c = 0; c < kTile; c += 4) {
    float4 x[L::kM];
#pragma unroll
    for (int a = 0; a < L::kM; ++a) x[a] = cuda::load4(X + (tx + kSide * a) * L::kLdS + c);
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int e = 0; e < L::kE; ++e) {
        const float4 y = cuda::load4(Y + (c + i) * L::kLd + 4 * ty + 64 * e);
#pragma unroll
        for (int a = 0; a < L::kM; ++a) fma4(acc[a][e], component(x[a], i), y);
      }
  }
}

// Where one block's head lives.
struct HeadView {
  const float *q, *k, *v, *dout, *lse, *D;  // row t of q at q + t * 3C; of dout at dout + t * C
  float* dq;                                // the q part of dqkv: row t at dq + t * 3C
  int64_t C3, C;
  int hs;
};

__device__ inline HeadView head_view(float* dqkv, const float* dout, const float* qkv, const float* lse, const float* D,
                                     int bh, int T, int C, int NH) {
  HeadView v;
  const int b = bh / NH, h = bh % NH;
  v.hs = C / NH;
  v.C3 = 3 * int64_t(C);
  v.C = C;
  v.q = qkv + int64_t(b) * T * v.C3 + int64_t(h) * v.hs;
  v.k = v.q + C;
  v.v = v.q + 2 * int64_t(C);
  v.dq = dqkv + int64_t(b) * T * v.C3 + int64_t(h) * v.hs;
  v.dout = dout + int64_t(b) * T * C + int64_t(h) * v.hs;
  v.lse = lse + int64_t(bh) * T;
  v.D = D + int64_t(bh) * T;
  return v;
}

// One warp per (b, h, t): D[(b * NH + h) * T + t] = dout_t . out_t over the head's
// channels; with zero_dq, also zeroes that row of the q part of dqkv.
__global__ void row_dots(float* D, float* dqkv, bool zero_dq, const float* dout, const float* out, int B, int T, int C,
                         int NH) {
  const int lane = threadIdx.x % cuda::kWarpSize;
  const int64_t row = int64_t(blockIdx.x) * (blockDim.x / cuda::kWarpSize) + threadIdx.x / cuda::kWarpSize;
  if (row >= int64_t(B) * NH * T) return;  // the whole warp leaves together
  const int t = int(row % T);
  const int64_t bh = row / T;
  const int h = int(bh % NH);
  const int64_t b = bh / NH;
  const int hs = C / NH;
  const int64_t at = (b * T + t) * C + int64_t(h) * hs;
  float sum = 0.0f;
  for (int i = lane; i < hs; i += cuda::kWarpSize) sum += dout[at + i] * out[at + i];
  sum = cuda::warp_sum(sum);
  if (lane == 0) D[row] = sum;
  if (zero_dq) {
    float* dq = dqkv + (b * T + t) * 3 * int64_t(C) + int64_t(h) * hs;
    for (int i = lane; i < hs; i += cuda::kWarpSize) dq[i] = 0.0f;
  }
}

// The thread's share of dq for the query tile at q0 (rows q0 + tx + 16 a, channels
// 4 ty + 64 e), times scale, into the q part of dqkv: added with atomics (kAtomic: the
// blocks of other key tiles add into the same rows) or stored (the block owns them).
template <int kHS, int kTile, bool kAtomic>
__device__ void write_dq(const HeadView& hv, const float4 (&dq)[kTile / kSide][kHS / 64], int q0, int T, float scale,
                         int tx, int ty) {
  using L = Layout<kHS, kTile>;
#pragma unroll
  for (int a = 0; a < L::kM; ++a) {
    const int tq = q0 + tx + kSide * a;
    if (tq >= T) continue;
#pragma unroll
    for (int e = 0; e < L::kE; ++e) {
      const int c = 4 * ty + 64 * e;
      if (c >= hv.hs) continue;
      const float4 g = make_float4(scale * dq[a][e].x, scale * dq[a][e].y, scale * dq[a][e].z, scale * dq[a][e].w);
      float* dst = hv.dq + int64_t(tq) * hv.C3 + c;
      if constexpr (kAtomic) {
        atomicAdd(dst + 0, g.x);
        atomicAdd(dst + 1, g.y);
        atomicAdd(dst + 2, g.z);
        atomicAdd(dst + 3, g.w);
      } else {
        cuda::store4(dst, g);
      }
    }
  }
}

// One block per (key tile j, b, h); block index = rank * heads + bh with j = rank, so
// key tile 0 (which visits every query tile) goes first.
template <int kHS, int kTile, bool kAtomicDq>
__global__ void __launch_bounds__(kThreads)
    flash_dk_dv(float* dqkv, const float* dout, const float* qkv, const float* lse, const float* D, int heads, int T,
                int C, int NH, float scale, float scale_log2) {
  using L = Layout<kHS, kTile>;
  constexpr int kM = L::kM, kE = L::kE;
  WB_DYNAMIC_SHARED(float4, smem);
  const Tiles<kHS, kTile> sm(reinterpret_cast<float*>(smem));
  const int tiles = (T + kTile - 1) / kTile;
  const int j = int(blockIdx.x) / heads;
  const int bh = int(blockIdx.x) % heads;
  const HeadView hv = head_view(dqkv, dout, qkv, lse, D, bh, T, C, NH);
  const int tx = int(threadIdx.x) % kSide, ty = int(threadIdx.x) / kSide;
  const int k0 = j * kTile;

  load_two_tiles<kHS, kTile>(sm.k, hv.k, hv.C3, sm.v, hv.v, hv.C3, k0, T, hv.hs);
  float4 dk[kM][kE], dv[kM][kE];
  zero(dk);
  zero(dv);

  for (int i = j; i < tiles; ++i) {  // query tiles i < j lie entirely above the diagonal
    const int q0 = i * kTile;
    __syncthreads();  // the previous tile's q, dout and P/dS are no longer read
    load_two_tiles<kHS, kTile>(sm.q, hv.q, hv.C3, sm.dout, hv.dout, hv.C, q0, T, hv.hs);
    load_row_stats<kTile>(sm.lse, sm.D, hv.lse, hv.D, q0, T);
    __syncthreads();

    float s[kM][kM], dp[kM][kM];
    scores<kHS, kTile>(s, dp, sm, tx, ty);
    probabilities<kM>(s, dp, sm.lse, sm.D, q0, k0, T, scale_log2, tx, ty);
    store_scores<kHS, kTile>(sm.ps, s, tx, ty);  // P
    __syncthreads();
    accumulate_transposed<kHS, kTile>(dv, sm.ps, sm.dout, tx, ty);
    __syncthreads();
    store_scores<kHS, kTile>(sm.ps, dp, tx, ty);  // dS
    __syncthreads();
    accumulate_transposed<kHS, kTile>(dk, sm.ps, sm.q, tx, ty);

    if constexpr (kAtomicDq) {
      float4 dq[kM][kE];
      zero(dq);
      accumulate_direct<kHS, kTile>(dq, sm.ps, sm.k, tx, ty);
      write_dq<kHS, kTile, true>(hv, dq, q0, T, scale, tx, ty);
    }
  }

  // Keys k0 + kM * tx + m, channels 4 ty + 64 e: dk into the k part, dv into the v part.
#pragma unroll
  for (int m = 0; m < kM; ++m) {
    const int tk = k0 + kM * tx + m;
    if (tk >= T) continue;
#pragma unroll
    for (int e = 0; e < kE; ++e) {
      const int c = 4 * ty + 64 * e;
      if (c >= hv.hs) continue;
      float* row = hv.dq + int64_t(tk) * hv.C3 + c;
      const float4 g = dk[m][e];
      cuda::store4(row + C, make_float4(scale * g.x, scale * g.y, scale * g.z, scale * g.w));
      cuda::store4(row + 2 * int64_t(C), dv[m][e]);
    }
  }
}

// One block per (query tile i, b, h); block index = rank * heads + bh with
// i = tiles - 1 - rank, so the last query tile (which visits every key tile) goes first.
template <int kHS, int kTile>
__global__ void __launch_bounds__(kThreads)
    flash_dq(float* dqkv, const float* dout, const float* qkv, const float* lse, const float* D, int heads, int T,
             int C, int NH, float scale, float scale_log2) {
  using L = Layout<kHS, kTile>;
  constexpr int kM = L::kM, kE = L::kE;
  WB_DYNAMIC_SHARED(float4, smem);
  const Tiles<kHS, kTile> sm(reinterpret_cast<float*>(smem));
  const int tiles = (T + kTile - 1) / kTile;
  const int i = tiles - 1 - int(blockIdx.x) / heads;
  const int bh = int(blockIdx.x) % heads;
  const HeadView hv = head_view(dqkv, dout, qkv, lse, D, bh, T, C, NH);
  const int tx = int(threadIdx.x) % kSide, ty = int(threadIdx.x) / kSide;
  const int q0 = i * kTile;

  load_two_tiles<kHS, kTile>(sm.q, hv.q, hv.C3, sm.dout, hv.dout, hv.C, q0, T, hv.hs);
  load_row_stats<kTile>(sm.lse, sm.D, hv.lse, hv.D, q0, T);
  float4 dq[kM][kE];
  zero(dq);

  for (int j = 0; j <= i; ++j) {  // key tiles j > i lie entirely above the diagonal
    const int k0 = j * kTile;
    __syncthreads();  // the previous tile's k and dS are no longer read
    load_two_tiles<kHS, kTile>(sm.k, hv.k, hv.C3, sm.v, hv.v, hv.C3, k0, T, hv.hs);
    __syncthreads();

    float s[kM][kM], dp[kM][kM];
    scores<kHS, kTile>(s, dp, sm, tx, ty);
    probabilities<kM>(s, dp, sm.lse, sm.D, q0, k0, T, scale_log2, tx, ty);
    store_scores<kHS, kTile>(sm.ps, dp, tx, ty);  // dS
    __syncthreads();
    accumulate_direct<kHS, kTile>(dq, sm.ps, sm.k, tx, ty);
  }

  write_dq<kHS, kTile, false>(hv, dq, q0, T, scale, tx, ty);
}

template <class Kernel>
void launch_tiles(Kernel kernel, unsigned blocks, std::size_t smem_bytes, cudaStream_t stream,
                  const AttentionBackwardArgs& a, const float* D, float scale) {
  WB_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_bytes)));
  WB_LAUNCH(kernel, blocks, kThreads, smem_bytes, stream, a.dqkv, a.dout, a.qkv, a.lse, D, a.B * a.NH, a.T, a.C, a.NH,
            scale, scale * kLog2e);
}

template <int kHS, int kTile>
void launch_with(const AttentionBackwardArgs& a, const Launch& l, bool atomic_dq) {
  using L = Layout<kHS, kTile>;
  const cudaStream_t stream = cuda::stream(l);
  const int64_t rows = int64_t(a.B) * a.NH * a.T;
  const int64_t tiles = (a.T + kTile - 1) / kTile;
  const int64_t blocks = tiles * a.B * a.NH;
  if (blocks > 0x7fffffff) throw Unsupported("attention_backward cuda/3: too many tiles for one grid");
  const float scale = 1.0f / std::sqrt(float(a.C / a.NH));
  float* D = static_cast<float*>(l.workspace);  // (B, NH, T)

  WB_LAUNCH(row_dots, cuda::grid_for(rows, kThreads / cuda::kWarpSize), kThreads, 0, stream, D, a.dqkv, atomic_dq,
            a.dout, a.out, a.B, a.T, a.C, a.NH);
  if (atomic_dq) {
    launch_tiles(flash_dk_dv<kHS, kTile, true>, unsigned(blocks), L::kBytes, stream, a, D, scale);
  } else {
    launch_tiles(flash_dk_dv<kHS, kTile, false>, unsigned(blocks), L::kBytes, stream, a, D, scale);
    launch_tiles(flash_dq<kHS, kTile>, unsigned(blocks), L::kBytes, stream, a, D, scale);
  }
}

template <int kHS>
void launch_hs(const AttentionBackwardArgs& a, const Launch& l, int tile, bool atomic_dq) {
  if (tile == 32) return launch_with<kHS, 32>(a, l, atomic_dq);
  if (tile == 64) return launch_with<kHS, 64>(a, l, atomic_dq);
  throw std::logic_error("attention_backward cuda/3: tile " + std::to_string(tile) + " is not instantiated");
}

void launch(const AttentionBackwardArgs& a, const Launch& l) {
  cuda::require_aligned16("attention_backward cuda/3", {a.dqkv, a.dout, a.qkv, a.out});
  const int hs = a.C / a.NH;
  const int tile = l.get("tile");
  const bool atomic_dq = l.get("dq_atomics") != 0;
  if (hs <= 64) return launch_hs<64>(a, l, tile, atomic_dq);
  if (hs <= kMaxHs) return launch_hs<kMaxHs>(a, l, tile, atomic_dq);
  throw Unsupported("attention_backward cuda/3 needs hs <= " + std::to_string(kMaxHs));
}

}  // namespace

Variant attention_backward_cuda_3() {
  Variant v = Variant::of(&launch);
  v.summary =
      "flash-style fp32 backward: scores recomputed per tile from lse, masked tiles skipped, dk/dv per key tile in "
      "registers, dq by a second pass (deterministic) or atomics";
  v.numeric = NumericClass::fp32;
  v.params = {block_size_param({kThreads}, kThreads), TuningParam{"tile", {32, 64}, 64},
              TuningParam{"dq_atomics", {0, 1}, 0}};
  // dq_atomics=1 adds into dq with float atomicAdd, whose order varies.
  v.deterministic = [](const ParamValues& p) { return p.get("dq_atomics") == 0; };
  v.requirements = {
      {"C / NH % 4 == 0", [](const Shape& s) { return s.NH > 0 && (s.C / s.NH) % 4 == 0; }},
      {"C / NH <= " + std::to_string(kMaxHs), [](const Shape& s) { return s.NH > 0 && s.C / s.NH <= kMaxHs; }}};
  v.workspace = [](const Shape& s, const ParamValues&) { return std::size_t(s.B * s.NH * s.T) * sizeof(float); };
  return v;
}

}  // namespace wb::variants
