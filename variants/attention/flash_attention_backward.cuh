#pragma once
// The flash-style tiled attention backward of attention_backward cuda/3 (fp32 storage)
// and attention_backward_bf16 cuda/2 (bf16 storage), templated on the storage of dqkv,
// dout, qkv and out (float or __nv_bfloat16); lse, D and every tile in shared memory
// are fp32 in both, and every product and sum is fp32.
//
// Three kernels (the variant files say why and what it costs):
//   1. row_dots: D_t = dout_t . out_t for every (b, h, t), one warp per row; with
//      dq_atomics=1 it also zeroes that row of the fp32 dq accumulator.
//   2. flash_dk_dv: one block per (key tile j, b, h); k_j and v_j in shared memory,
//      dk_j and dv_j in registers, a loop over the query tiles i >= j recomputing
//      S = q_i k_j^T, dP = dout_i v_j^T, P = exp(S * scale - lse) (masked) and
//      dS = P * (dP - D); dv_j += P^T dout_i, dk_j += dS^T q_i. With dq_atomics=1
//      also dq += dS k_j * scale with float atomicAdd into the fp32 dq accumulator.
//   3. flash_dq (dq_atomics=0): one block per (query tile i, b, h) keeps q_i, dout_i
//      and dq_i and loops over the key tiles j <= i, dq_i += dS k_j.
// Each output element is stored once, converted from its final fp32 value (narrow):
// dk and dv by flash_dk_dv, dq by flash_dq -- or, with dq_atomics=1, from the fp32
// accumulator: on fp32 storage that is the q part of dqkv itself, on bf16 storage an
// fp32 (B, T, C) buffer in the workspace that narrow_dq rounds into dqkv at the end
// (a bf16 atomicAdd would round at every addition).
//
// Register tiling: 256 threads as 16 x 16; each thread owns a (tile/16) x (tile/16)
// block of the score tile (rows ty + 16a, columns tx + 16b) and, for the products
// into dk/dv/dq, tile/16 rows times hs/16 channels (as float4 columns 4ty + 64e).
// Shared tiles have rows padded by 4 floats, so that the 128-bit reads of 8 lanes of
// a quarter-warp fall on distinct banks. Global rows are read 4 elements per access
// (128 bits of fp32, 64 bits of bf16, widened to a float4 before the shared store).
// Blocks with the most tiles to visit are launched first (key tile 0 for dk/dv, the
// last query tile for dq).
// Requirements: hs % 4 == 0, hs <= 128 (kernels instantiated for hs padded to 64 or
// 128, the padding zeros); tensors aligned to 4 elements (16 bytes fp32, 8 bytes
// bf16). Shared memory per block (the same for both storages): 38.75 KiB (tile 32,
// hs <= 64), 85.5 KiB (tile 64, hs <= 64), 149.5 KiB (tile 64, hs <= 128).
//
// The kernels sit in an anonymous namespace: every file that includes this header
// gets its own copy and uses it.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "base/math_constants.h"
#include "contract/variant.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"

namespace wb::cuda::flash_backward {

constexpr int kThreads = 256;  // 16 x 16
constexpr int kSide = 16;      // threads per side of the thread grid
constexpr int kPad = 4;        // floats of padding per shared row
constexpr int kMaxHs = 128;
using math::kLog2e;

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

// Bytes of workspace: D (B, NH, T), and on bf16 storage with dq_atomics=1 the fp32 dq
// accumulator (B, T, C) after it.
template <class Storage>
std::size_t workspace_bytes(int64_t B, int64_t T, int64_t C, int64_t NH, bool atomic_dq) {
  std::size_t floats = std::size_t(B * NH * T);
  if (!std::is_same_v<Storage, float> && atomic_dq) floats += std::size_t(B * T * C);
  return floats * sizeof(float);
}

// What both rungs declare besides their summary: block_size (kThreads only), tile and
// dq_atomics, determinism (dq_atomics=1 adds into the fp32 dq accumulator with float
// atomicAdd, whose order varies), the head-size requirements and the workspace.
template <class Storage>
void describe(Variant& v) {
  v.params = {block_size_param({kThreads}, kThreads), TuningParam{"tile", {32, 64}, 64},
              TuningParam{"dq_atomics", {0, 1}, 0}};
  v.deterministic = [](const ParamValues& p) { return p.get("dq_atomics") == 0; };
  v.requirements = {
      {"C / NH % 4 == 0", [](const Shape& s) { return s.NH > 0 && (s.C / s.NH) % 4 == 0; }},
      {"C / NH <= " + std::to_string(kMaxHs), [](const Shape& s) { return s.NH > 0 && s.C / s.NH <= kMaxHs; }}};
  v.workspace = [](const Shape& s, const ParamValues& p) {
    return workspace_bytes<Storage>(s.B, s.T, s.C, s.NH, p.get("dq_atomics") != 0);
  };
}

// Four consecutive elements of float or bf16 storage as a float4, and a float4 stored
// as four elements (rounded once to nearest even on bf16). Addresses aligned to four
// elements: one 128-bit access for fp32, one 64-bit access for bf16.
__device__ inline float4 load4_widened(const float* p) { return load4(p); }
__device__ inline float4 load4_widened(const __nv_bfloat16* p) {
#if WB_EMU
  ::wb::emu::check_aligned(p, 8);
#endif
  const uint2 bits = *reinterpret_cast<const uint2*>(p);
  __nv_bfloat162 lo, hi;
  memcpy(&lo, &bits.x, sizeof lo);
  memcpy(&hi, &bits.y, sizeof hi);
  const float2 a = __bfloat1622float2(lo), b = __bfloat1622float2(hi);
  return make_float4(a.x, a.y, b.x, b.y);
}
__device__ inline void store4_narrowed(float* p, float4 v) { store4(p, v); }
__device__ inline void store4_narrowed(__nv_bfloat16* p, float4 v) {
#if WB_EMU
  ::wb::emu::check_aligned(p, 8);
#endif
  const __nv_bfloat162 lo = __floats2bfloat162_rn(v.x, v.y), hi = __floats2bfloat162_rn(v.z, v.w);
  uint2 bits;
  memcpy(&bits.x, &lo, sizeof lo);
  memcpy(&bits.y, &hi, sizeof hi);
  *reinterpret_cast<uint2*>(p) = bits;
}

// The alignment check before a launch: four elements per access.
template <class Storage>
void require_aligned(const std::string& what, std::initializer_list<const void*> pointers) {
  constexpr std::size_t kAlign = 4 * sizeof(Storage);
  for (const void* p : pointers)
    if (reinterpret_cast<std::uintptr_t>(p) % kAlign != 0)
      throw Unsupported(what + ": needs " + std::to_string(kAlign) + "-byte aligned tensors for its " +
                        std::to_string(8 * kAlign) + "-bit accesses");
}

namespace {

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
  const float4 v = load4(p);
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
// widened into shared fp32 tiles of kTile x kLd; rows >= T and channels >= hs are zero.
// All loads are issued before the stores.
template <int kHS, int kTile, class Storage>
__device__ void load_two_tiles(float* x_tile, const Storage* x, int64_t x_stride, float* y_tile, const Storage* y,
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
    xv[n] = inside ? load4_widened(x + int64_t(t) * x_stride + c) : z;
    yv[n] = inside ? load4_widened(y + int64_t(t) * y_stride + c) : z;
  }
#pragma unroll
  for (int n = 0; n < kPerThread; ++n) {
    const int idx = threadIdx.x + n * kThreads;
    const int r = idx / kVecs, c = 4 * (idx % kVecs);
    store4(x_tile + r * L::kLd + c, xv[n]);
    store4(y_tile + r * L::kLd + c, yv[n]);
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
    for (int b = 0; b < kM; ++b) y[b] = load4(sm.k + (tx + kSide * b) * L::kLd + d);
#pragma unroll
    for (int a = 0; a < kM; ++a) {
      const float4 x = load4(sm.q + (ty + kSide * a) * L::kLd + d);
#pragma unroll
      for (int b = 0; b < kM; ++b) s[a][b] = dot4(x, y[b], s[a][b]);
    }
#pragma unroll
    for (int b = 0; b < kM; ++b) y[b] = load4(sm.v + (tx + kSide * b) * L::kLd + d);
#pragma unroll
    for (int a = 0; a < kM; ++a) {
      const float4 x = load4(sm.dout + (ty + kSide * a) * L::kLd + d);
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
      const float4 y = load4(Y + r * L::kLd + 4 * ty + 64 * e);
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
    for (int a = 0; a < L::kM; ++a) x[a] = load4(X + (tx + kSide * a) * L::kLdS + c);
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int e = 0; e < L::kE; ++e) {
        const float4 y = load4(Y + (c + i) * L::kLd + 4 * ty + 64 * e);
#pragma unroll
        for (int a = 0; a < L::kM; ++a) fma4(acc[a][e], component(x[a], i), y);
      }
  }
}

// One launch's problem: the op's tensors, D, and the fp32 dq accumulator of
// dq_atomics=1 (row t of batch b, head h at dq_sum + (b * T + t) * dq_sum_stride + h * hs;
// null with dq_atomics=0). row_dots and narrow_dq take it whole; the two tiled kernels
// take its fields as separate parameters, as attention_backward cuda/3 always did (with
// the struct, ptxas gave some of the fp32 instantiations up to 20 more registers).
template <class Storage>
struct Problem {
  Storage* dqkv;
  const Storage *dout, *qkv, *out;
  const float* lse;
  float* D;
  float* dq_sum;
  int64_t dq_sum_stride;
  int B, T, C, NH;
};

// Where one block's head lives.
template <class Storage>
struct HeadView {
  const Storage *q, *k, *v, *dout;  // row t of q at q + t * 3C; of dout at dout + t * C
  const float *lse, *D;
  Storage* dq;    // the q part of dqkv: row t at dq + t * 3C
  float* dq_sum;  // the fp32 dq accumulator: row t at dq_sum + t * dq_sum_stride
  int64_t C3, C, dq_sum_stride;
  int hs;
};

template <class Storage>
__device__ inline HeadView<Storage> head_view(Storage* dqkv, float* dq_sum, int64_t dq_sum_stride, const Storage* dout,
                                              const Storage* qkv, const float* lse, const float* D, int bh, int T,
                                              int C, int NH) {
  HeadView<Storage> v;
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
  v.dq_sum_stride = dq_sum_stride;
  v.dq_sum = dq_sum ? dq_sum + int64_t(b) * T * dq_sum_stride + int64_t(h) * v.hs : nullptr;
  return v;
}

// One warp per (b, h, t): D[(b * NH + h) * T + t] = dout_t . out_t over the head's
// channels; with a dq accumulator, also zeroes its row.
template <class Storage>
__global__ void row_dots(Problem<Storage> p) {
  const int lane = threadIdx.x % kWarpSize;
  const int64_t row = int64_t(blockIdx.x) * (blockDim.x / kWarpSize) + threadIdx.x / kWarpSize;
  if (row >= int64_t(p.B) * p.NH * p.T) return;  // the whole warp leaves together
  const int t = int(row % p.T);
  const int64_t bh = row / p.T;
  const int h = int(bh % p.NH);
  const int64_t b = bh / p.NH;
  const int hs = p.C / p.NH;
  const int64_t at = (b * p.T + t) * p.C + int64_t(h) * hs;
  float sum = 0.0f;
  for (int i = lane; i < hs; i += kWarpSize) sum += widen(p.dout[at + i]) * widen(p.out[at + i]);
  sum = warp_sum(sum);
  if (lane == 0) p.D[row] = sum;
  if (p.dq_sum) {
    float* dq = p.dq_sum + (b * p.T + t) * p.dq_sum_stride + int64_t(h) * hs;
    for (int i = lane; i < hs; i += kWarpSize) dq[i] = 0.0f;
  }
}

// The dq accumulator rounded into the q part of dqkv (bf16 storage, dq_atomics=1):
// one thread per four channels, (B*T, C) with C % 4 == 0.
template <class Storage>
__global__ void narrow_dq(Problem<Storage> p) {
  const int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t quads = int64_t(p.C) / 4;
  if (idx >= int64_t(p.B) * p.T * quads) return;
  const int64_t row = idx / quads;
  const int64_t c = 4 * (idx % quads);
  const float* sum = p.dq_sum + row * p.dq_sum_stride + c;  // read as four floats: no alignment asked
  const float4 g = make_float4(sum[0], sum[1], sum[2], sum[3]);
  store4_narrowed(p.dqkv + row * 3 * int64_t(p.C) + c, g);
}

// The thread's share of dq for the query tile at q0 (rows q0 + tx + 16 a, channels
// 4 ty + 64 e), times scale: added with fp32 atomics into the dq accumulator (kAtomic:
// the blocks of other key tiles add into the same rows) or stored, rounded once, into
// the q part of dqkv (the block owns them).
template <int kHS, int kTile, bool kAtomic, class Storage>
__device__ void write_dq(const HeadView<Storage>& hv, const float4 (&dq)[kTile / kSide][kHS / 64], int q0, int T,
                         float scale, int tx, int ty) {
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
      if constexpr (kAtomic) {
        float* dst = hv.dq_sum + int64_t(tq) * hv.dq_sum_stride + c;
        atomicAdd(dst + 0, g.x);
        atomicAdd(dst + 1, g.y);
        atomicAdd(dst + 2, g.z);
        atomicAdd(dst + 3, g.w);
      } else {
        store4_narrowed(hv.dq + int64_t(tq) * hv.C3 + c, g);
      }
    }
  }
}

// One block per (key tile j, b, h); block index = rank * heads + bh with j = rank, so
// key tile 0 (which visits every query tile) goes first.
template <int kHS, int kTile, bool kAtomicDq, class Storage>
__global__ void __launch_bounds__(kThreads)
    flash_dk_dv(Storage* dqkv, float* dq_sum, int64_t dq_sum_stride, const Storage* dout, const Storage* qkv,
                const float* lse, const float* D, int heads, int T, int C, int NH, float scale, float scale_log2) {
  using L = Layout<kHS, kTile>;
  constexpr int kM = L::kM, kE = L::kE;
  WB_DYNAMIC_SHARED(float4, smem);
  const Tiles<kHS, kTile> sm(reinterpret_cast<float*>(smem));
  const int tiles = (T + kTile - 1) / kTile;
  const int j = int(blockIdx.x) / heads;
  const int bh = int(blockIdx.x) % heads;
  const HeadView<Storage> hv = head_view(dqkv, dq_sum, dq_sum_stride, dout, qkv, lse, D, bh, T, C, NH);
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
      Storage* row = hv.dq + int64_t(tk) * hv.C3 + c;
      const float4 g = dk[m][e];
      store4_narrowed(row + hv.C, make_float4(scale * g.x, scale * g.y, scale * g.z, scale * g.w));
      store4_narrowed(row + 2 * hv.C, dv[m][e]);
    }
  }
}

// One block per (query tile i, b, h); block index = rank * heads + bh with
// i = tiles - 1 - rank, so the last query tile (which visits every key tile) goes first.
template <int kHS, int kTile, class Storage>
__global__ void __launch_bounds__(kThreads)
    flash_dq(Storage* dqkv, float* dq_sum, int64_t dq_sum_stride, const Storage* dout, const Storage* qkv,
             const float* lse, const float* D, int heads, int T, int C, int NH, float scale, float scale_log2) {
  using L = Layout<kHS, kTile>;
  constexpr int kM = L::kM, kE = L::kE;
  WB_DYNAMIC_SHARED(float4, smem);
  const Tiles<kHS, kTile> sm(reinterpret_cast<float*>(smem));
  const int tiles = (T + kTile - 1) / kTile;
  const int i = tiles - 1 - int(blockIdx.x) / heads;
  const int bh = int(blockIdx.x) % heads;
  const HeadView<Storage> hv = head_view(dqkv, dq_sum, dq_sum_stride, dout, qkv, lse, D, bh, T, C, NH);
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

template <class Kernel, class Storage>
void launch_tiles(Kernel kernel, unsigned blocks, std::size_t smem_bytes, cudaStream_t stream,
                  const Problem<Storage>& p, float scale) {
  WB_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_bytes)));
  WB_LAUNCH(kernel, blocks, kThreads, smem_bytes, stream, p.dqkv, p.dq_sum, p.dq_sum_stride, p.dout, p.qkv, p.lse, p.D,
            p.B * p.NH, p.T, p.C, p.NH, scale, scale * kLog2e);
}

template <int kHS, int kTile, class Storage>
void launch_with(const Problem<Storage>& p, cudaStream_t stream, bool atomic_dq, const std::string& what) {
  using L = Layout<kHS, kTile>;
  const int64_t rows = int64_t(p.B) * p.NH * p.T;
  const int64_t tiles = (p.T + kTile - 1) / kTile;
  const int64_t blocks = tiles * p.B * p.NH;
  if (blocks > 0x7fffffff) throw Unsupported(what + ": too many tiles for one grid");
  const float scale = 1.0f / std::sqrt(float(p.C / p.NH));

  WB_LAUNCH(row_dots<Storage>, grid_for(rows, kThreads / kWarpSize), kThreads, 0, stream, p);
  if (atomic_dq) {
    launch_tiles(flash_dk_dv<kHS, kTile, true, Storage>, unsigned(blocks), L::kBytes, stream, p, scale);
    if constexpr (!std::is_same_v<Storage, float>) {
      WB_LAUNCH(narrow_dq<Storage>, grid_for(int64_t(p.B) * p.T * (p.C / 4), kThreads), kThreads, 0, stream, p);
    }
  } else {
    launch_tiles(flash_dk_dv<kHS, kTile, false, Storage>, unsigned(blocks), L::kBytes, stream, p, scale);
    launch_tiles(flash_dq<kHS, kTile, Storage>, unsigned(blocks), L::kBytes, stream, p, scale);
  }
}

template <int kHS, class Storage>
void launch_hs(const Problem<Storage>& p, cudaStream_t stream, int tile, bool atomic_dq, const std::string& what) {
  if (tile == 32) return launch_with<kHS, 32>(p, stream, atomic_dq, what);
  if (tile == 64) return launch_with<kHS, 64>(p, stream, atomic_dq, what);
  throw std::logic_error(what + ": tile " + std::to_string(tile) + " is not instantiated");
}

// The whole backward: checks, the workspace carved (D, then on bf16 storage with
// dq_atomics=1 the fp32 dq accumulator), the kernels launched on the variant's stream.
// `what` names the variant in errors.
template <class Storage>
void launch(Storage* dqkv, const Storage* dout, const Storage* qkv, const Storage* out, const float* lse, int B, int T,
            int C, int NH, const Launch& l, const std::string& what) {
  require_aligned<Storage>(what, {dqkv, dout, qkv, out});
  const int hs = C / NH;
  if (hs > kMaxHs) throw Unsupported(what + " needs hs <= " + std::to_string(kMaxHs));
  const int tile = l.get("tile");
  const bool atomic_dq = l.get("dq_atomics") != 0;
  if (l.workspace_bytes < workspace_bytes<Storage>(B, T, C, NH, atomic_dq))
    throw std::logic_error(what + ": workspace too small");

  Problem<Storage> p{dqkv, dout, qkv, out, lse, static_cast<float*>(l.workspace), nullptr, 0, B, T, C, NH};
  if (atomic_dq) {
    if constexpr (std::is_same_v<Storage, float>) {
      p.dq_sum = dqkv;  // the q part of dqkv itself
      p.dq_sum_stride = 3 * int64_t(C);
    } else {
      p.dq_sum = p.D + int64_t(B) * NH * T;  // (B, T, C) in fp32 after D
      p.dq_sum_stride = C;
    }
  }
  const cudaStream_t s = stream(l);
  if (hs <= 64) return launch_hs<64>(p, s, tile, atomic_dq, what);
  return launch_hs<kMaxHs>(p, s, tile, atomic_dq, what);
}

}  // namespace
}  // namespace wb::cuda::flash_backward
