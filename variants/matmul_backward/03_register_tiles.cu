// matmul_backward, CUDA variant 3: register-blocked tiles, split-K for dweight.
//
// Idea: the same single kernel for both products as variant 2,
//   out (M, N) (+)= A (M, K) @ Bm (K, N),  Bm row-major, A row-major or transposed
//   dinp    (rows, C)  = dout (rows, OC)   @ weight (OC, C)    M = rows, K = OC
//   dweight (OC, C)   += dout^T (OC, rows) @ inp (rows, C)     M = OC,   K = rows
// (dinp overwritten, dweight accumulated: a template flag picks the store),
// but each thread now computes a TT x TT block of outputs (TT = thread_tile) held in
// registers. A block owns a TILE x TILE tile of out with (TILE / TT)^2 threads and
// walks K in steps of KT (k_tile): it stages a KT x TILE slice of A (stored k-major,
// so that it reads the same whichever layout A has) and of Bm in shared memory; each
// thread then reads, per k, TT values of A and TT of Bm as float4 and does TT * TT
// multiply-adds on them. The next K step's global loads are issued into registers
// before the current step is computed, so their latency hides behind the math.
// A thread's rows (and columns) are TT / 4 groups of four, the groups TILE / (TT / 4)
// apart, so that the float4 reads of a warp fall on consecutive addresses (no bank
// conflicts). dweight sums over K = B*T = 8192 rows while its output (OC x C = 3072 x
// 768) makes few tiles (144 of 128 x 128): with splits > 1 the K range is cut into
// that many parts, each part's tile sums go to the workspace, and a second kernel adds
// the parts in a fixed order to dweight (deterministic). The bias gradient is the
// separate op matmul_backward_bias.
// Why it should beat variant 2: per k a thread does TT^2 multiply-adds for 2 * TT / 4
// float4 shared-memory loads (4 loads for 64 FMAs at TT = 8, where variant 2 needs two
// scalar loads per FMA), so it moves from the shared-memory bound towards the FMA
// bound; split-K fills the SMs for dweight.
// Limits: fp32 FMA pipes only (no tensor cores): at best a fraction of cuBLAS. TT = 8
// takes about 128 registers per thread (ptxas, sm_90: two 256-thread blocks per SM,
// no spills; TILE = 64 with TT = 8 takes 160-210, one block of 64 threads). Edges
// are zero-filled and stores guarded, so any shape runs; ceil(B*T / TILE) and
// ceil(OC / TILE) must stay within 65535 (grid y). Workspace: for splits > 1,
// splits * OC * C floats (none otherwise).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "contract/ops/matmul_backward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"

namespace wb::variants {
namespace {

constexpr int64_t kMaxGridY = 65535;
constexpr int kReduceBlock = 256;

constexpr int threads_for(int tile, int thread_tile) { return (tile / thread_tile) * (tile / thread_tile); }

// How a block stages a KT x TILE slice of A and of Bm: each of kThreads threads holds
// kLoads elements of each in registers, element i of thread tid being number
// tid + i * kThreads of the slice. Consecutive threads take consecutive addresses in
// global memory: along k for a row-major A (8 or 16 floats of a row, then the next
// row), along m for a transposed A, along n for Bm. Since kThreads is a multiple of
// both kKTile and kTile, one coordinate of a thread's elements is the same for all
// of them and the other advances by a constant step:
//   row-major A:  k = tid % KT,            m = tid / KT + i * (kThreads / KT)
//   A^T and Bm:   m (n) = tid % TILE,      k = tid / TILE + i * (kThreads / TILE)
template <int kTile, int kKTile, int kThreads, bool kAKContiguous>
struct Staging {
  static constexpr int kLoads = kTile * kKTile / kThreads;
  static constexpr int kPad = 4;
  static constexpr int kMStep = kThreads / kKTile;  // row-major A: rows between a thread's elements
  static constexpr int kKStep = kThreads / kTile;   // A^T and Bm: k between a thread's elements
  static_assert(kThreads % kKTile == 0 && kThreads % kTile == 0, "constant steps need whole rows of threads");
  static_assert(kLoads * kMStep == kTile && kLoads * kKStep == kKTile, "the elements cover the slices");

  // Global -> registers for the K step at k0; zeros outside the matrix and at k >= k_end.
  __device__ __forceinline__ static void load(float (&ra)[kLoads], float (&rb)[kLoads], const float* a, const float* b,
                                              int tid, int m0, int n0, int k0, int k_end, int M, int N, int lda) {
    if (kAKContiguous) {
      const int k = k0 + tid % kKTile, m = m0 + tid / kKTile;
      const float* p = a + std::size_t(m) * lda + k;
#pragma unroll
      for (int i = 0; i < kLoads; ++i)
        ra[i] = (m + i * kMStep < M && k < k_end) ? p[std::size_t(i) * kMStep * lda] : 0.0f;
    } else {
      const int k = k0 + tid / kTile, m = m0 + tid % kTile;
      const float* p = a + std::size_t(k) * lda + m;
#pragma unroll
      for (int i = 0; i < kLoads; ++i)
        ra[i] = (m < M && k + i * kKStep < k_end) ? p[std::size_t(i) * kKStep * lda] : 0.0f;
    }
    const int k = k0 + tid / kTile, n = n0 + tid % kTile;
    const float* p = b + std::size_t(k) * N + n;
#pragma unroll
    for (int i = 0; i < kLoads; ++i) rb[i] = (n < N && k + i * kKStep < k_end) ? p[std::size_t(i) * kKStep * N] : 0.0f;
  }

  // Registers -> shared slices sa[k][m], sb[k][n].
  __device__ __forceinline__ static void store(float (&sa)[kKTile][kTile + kPad], float (&sb)[kKTile][kTile + kPad],
                                               const float (&ra)[kLoads], const float (&rb)[kLoads], int tid) {
#pragma unroll
    for (int i = 0; i < kLoads; ++i) {
      if (kAKContiguous)
        sa[tid % kKTile][tid / kKTile + i * kMStep] = ra[i];
      else
        sa[tid / kTile + i * kKStep][tid % kTile] = ra[i];
      sb[tid / kTile + i * kKStep][tid % kTile] = rb[i];
    }
  }
};

// A (M, K) @ Bm (K, N) over the K range of split blockIdx.z:
//   A(m, k) = a[m * lda + k] when kAKContiguous, a[k * lda + m] otherwise;
//   Bm(k, n) = b[k * N + n]; out(m, n) = out[m * N + n].
// With partial == nullptr the tile sums are added to out (kAccumulate) or stored in it
// (otherwise); with a partial buffer they are stored in
// partial[blockIdx.z * M * N + m * N + n] (every element of the M x N slab, also for
// an empty K range).
// grid (ceil(N / kTile), ceil(M / kTile), splits), block threads_for(kTile, kThreadTile).
template <int kTile, int kKTile, int kThreadTile, bool kAKContiguous, bool kAccumulate>
__global__ void __launch_bounds__(threads_for(kTile, kThreadTile))
    gemm_register_tiles(float* out, float* partial, const float* a, const float* b, int M, int N, int K, int lda,
                        int k_per_split) {
  constexpr int kSide = kTile / kThreadTile;  // threads along each side of the tile
  constexpr int kThreads = kSide * kSide;
  constexpr int kGroups = kThreadTile / 4;  // float4 groups per thread and dimension
  constexpr int kGroupStride = kSide * 4;   // distance between a thread's groups
  using Stage = Staging<kTile, kKTile, kThreads, kAKContiguous>;
  constexpr int kLoads = Stage::kLoads;  // elements of A (and of Bm) each thread stages
  constexpr int kPad = Stage::kPad;      // keeps rows 16-byte aligned, spreads banks
  static_assert(kThreadTile % 4 == 0, "thread tiles are groups of float4");
  static_assert(kTile % kThreadTile == 0, "the thread grid must cover the tile");
  static_assert(kTile % 32 == 0, "tiles are multiples of 32 (coalescing, banks)");
  static_assert((kTile * kKTile) % kThreads == 0, "every thread stages the same number of elements");
  static_assert(kGroups * kGroupStride == kTile, "a thread's groups span the tile");

  WB_SHARED_ALIGNED(16, float, sa, [kKTile][kTile + kPad]);  // sa[k][m]
  WB_SHARED_ALIGNED(16, float, sb, [kKTile][kTile + kPad]);  // sb[k][n]

  const int tid = threadIdx.x;
  const int tx = tid % kSide, ty = tid / kSide;
  const int m0 = blockIdx.y * kTile, n0 = blockIdx.x * kTile;
  const int k_begin = blockIdx.z * k_per_split;
  const int k_end = min(K, k_begin + k_per_split);

  float ra[kLoads], rb[kLoads];  // the next K step, staged in registers

  float acc[kThreadTile][kThreadTile];
#pragma unroll
  for (int i = 0; i < kThreadTile; ++i)
#pragma unroll
    for (int j = 0; j < kThreadTile; ++j) acc[i][j] = 0.0f;

  Stage::load(ra, rb, a, b, tid, m0, n0, k_begin, k_end, M, N, lda);
  for (int k0 = k_begin; k0 < k_end; k0 += kKTile) {  // the same trip count for every thread
    Stage::store(sa, sb, ra, rb, tid);
    __syncthreads();
    if (k0 + kKTile < k_end)  // in flight during the math below
      Stage::load(ra, rb, a, b, tid, m0, n0, k0 + kKTile, k_end, M, N, lda);
#pragma unroll
    for (int kk = 0; kk < kKTile; ++kk) {
      float fa[kThreadTile], fb[kThreadTile];
#pragma unroll
      for (int g = 0; g < kGroups; ++g) {
        const float4 va = *reinterpret_cast<const float4*>(&sa[kk][g * kGroupStride + ty * 4]);
        const float4 vb = *reinterpret_cast<const float4*>(&sb[kk][g * kGroupStride + tx * 4]);
        fa[4 * g + 0] = va.x;
        fa[4 * g + 1] = va.y;
        fa[4 * g + 2] = va.z;
        fa[4 * g + 3] = va.w;
        fb[4 * g + 0] = vb.x;
        fb[4 * g + 1] = vb.y;
        fb[4 * g + 2] = vb.z;
        fb[4 * g + 3] = vb.w;
      }
#pragma unroll
      for (int i = 0; i < kThreadTile; ++i)
#pragma unroll
        for (int j = 0; j < kThreadTile; ++j) acc[i][j] = fmaf(fa[i], fb[j], acc[i][j]);
    }
    __syncthreads();  // the slices are overwritten by the next step
  }

  float* slab = partial ? partial + std::size_t(blockIdx.z) * std::size_t(M) * std::size_t(N) : nullptr;
#pragma unroll
  for (int i = 0; i < kThreadTile; ++i) {
    const int m = m0 + (i / 4) * kGroupStride + ty * 4 + i % 4;
    if (m >= M) continue;
#pragma unroll
    for (int j = 0; j < kThreadTile; ++j) {
      const int n = n0 + (j / 4) * kGroupStride + tx * 4 + j % 4;
      if (n >= N) continue;
      const std::size_t at = std::size_t(m) * N + n;
      if (slab)
        slab[at] = acc[i][j];
      else if (kAccumulate)
        out[at] += acc[i][j];
      else
        out[at] = acc[i][j];
    }
  }
}

// out[i] += partial[0][i] + partial[1][i] + ... + partial[splits - 1][i], in that order.
__global__ void add_split_partials(float* out, const float* partial, int64_t count, int splits) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  float s = partial[i];
  for (int z = 1; z < splits; ++z) s += partial[z * count + i];
  out[i] += s;
}

int round_up_to(int x, int to) { return (x + to - 1) / to * to; }

template <int kTile, int kKTile, int kThreadTile>
void launch_gemms(const MatmulBackwardArgs& a, int rows, int splits, float* split_partials, cudaStream_t stream) {
  constexpr int kThreads = threads_for(kTile, kThreadTile);
  // dinp (rows, C) = dout (rows, OC) @ weight (OC, C): M = rows, N = C, K = OC, no split
  const dim3 grid_dinp(cuda::grid_for(a.C, kTile), cuda::grid_for(rows, kTile), 1);
  WB_LAUNCH(gemm_register_tiles<kTile, kKTile, kThreadTile, true, false>, grid_dinp, kThreads, 0, stream, a.dinp,
            nullptr, a.dout, a.weight, rows, a.C, a.OC, a.OC, round_up_to(a.OC, kKTile));
  // dweight (OC, C) += dout^T (OC, rows) @ inp (rows, C): M = OC, N = C, K = rows in
  // `splits` parts of a whole number of K steps each
  const int k_per_split = round_up_to((rows + splits - 1) / splits, kKTile);
  const dim3 grid_dweight(cuda::grid_for(a.C, kTile), cuda::grid_for(a.OC, kTile), splits);
  WB_LAUNCH(gemm_register_tiles<kTile, kKTile, kThreadTile, false, true>, grid_dweight, kThreads, 0, stream, a.dweight,
            splits > 1 ? split_partials : nullptr, a.dout, a.inp, a.OC, a.C, rows, a.OC, k_per_split);
  if (splits > 1) {
    const int64_t count = int64_t(a.OC) * a.C;
    WB_LAUNCH(add_split_partials, cuda::grid_for(count, kReduceBlock), kReduceBlock, 0, stream, a.dweight,
              split_partials, count, splits);
  }
}

template <int kTile, int kKTile>
void launch_with_k_tile(const MatmulBackwardArgs& a, int rows, int thread_tile, int splits, float* ws,
                        cudaStream_t stream) {
  if (thread_tile == 4) return launch_gemms<kTile, kKTile, 4>(a, rows, splits, ws, stream);
  if (thread_tile == 8) return launch_gemms<kTile, kKTile, 8>(a, rows, splits, ws, stream);
  throw std::logic_error("matmul_backward cuda/3: thread_tile " + std::to_string(thread_tile) + " is not built");
}

template <int kTile>
void launch_with_tile(const MatmulBackwardArgs& a, int rows, int k_tile, int thread_tile, int splits, float* ws,
                      cudaStream_t stream) {
  if (k_tile == 8) return launch_with_k_tile<kTile, 8>(a, rows, thread_tile, splits, ws, stream);
  if (k_tile == 16) return launch_with_k_tile<kTile, 16>(a, rows, thread_tile, splits, ws, stream);
  throw std::logic_error("matmul_backward cuda/3: k_tile " + std::to_string(k_tile) + " is not built");
}

void launch(const MatmulBackwardArgs& a, const Launch& l) {
  const int rows = a.B * a.T;
  cudaStream_t stream = cuda::stream(l);
  const int tile = l.get("tile"), k_tile = l.get("k_tile"), thread_tile = l.get("thread_tile");
  const int splits = l.get("splits");
  float* split_partials = static_cast<float*>(l.workspace);  // splits * OC * C floats when splits > 1
  if (tile == 64)
    launch_with_tile<64>(a, rows, k_tile, thread_tile, splits, split_partials, stream);
  else if (tile == 128)
    launch_with_tile<128>(a, rows, k_tile, thread_tile, splits, split_partials, stream);
  else
    throw std::logic_error("matmul_backward cuda/3: tile " + std::to_string(tile) + " is not built");
}

}  // namespace

Variant matmul_backward_cuda_3() {
  Variant v = Variant::of(&launch);
  v.summary = "TILE^2 block tiles, TT^2 outputs per thread in registers, float4 shared reads, split-K for dweight";
  // block size = (tile / thread_tile)^2: 64 x 64 tiles with 8 x 8 per thread -> 64
  // threads, 4 x 4 -> 256; 128 x 128 tiles -> 256 or 1024 threads
  v.params = {TuningParam{"tile", {64, 128}, 128}, TuningParam{"thread_tile", {4, 8}, 8},
              TuningParam{"k_tile", {8, 16}, 8}, TuningParam{"splits", {1, 2, 4}, 2}};
  v.launch_limit = [](const Shape& s, const ParamValues& p) -> std::optional<std::string> {
    const int64_t tile = p.get("tile");
    if ((s.B * s.T + tile - 1) / tile > kMaxGridY || (s.OC + tile - 1) / tile > kMaxGridY)
      return "ceil(B*T / " + std::to_string(tile) + ") and ceil(OC / " + std::to_string(tile) +
             ") must be <= 65535 (grid y)";
    return std::nullopt;
  };
  v.workspace = [](const Shape& s, const ParamValues& p) {
    const int splits = p.get("splits");
    return splits > 1 ? std::size_t(splits) * s.OC * s.C * sizeof(float) : std::size_t(0);
  };
  return v;
}

}  // namespace wb::variants
