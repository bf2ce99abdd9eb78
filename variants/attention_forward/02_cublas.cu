// attention_forward, CUDA variant 2: cuBLAS batched matmuls around a softmax kernel.
//
// Idea: the textbook decomposition. A permute kernel (heads.cuh's to_heads) copies q,
// k and v out of the fused qkv into three (B, NH, T, hs) buffers of the workspace; one
// cublasSgemmStridedBatched (batch B*NH) forms the scores S = q k^T / sqrt(hs) into a
// (B, NH, T, T) workspace; a causal softmax kernel (a warp per row) turns each row into
// probabilities in place -- zero above the diagonal -- and writes lse; a second batched
// sgemm forms P v into (B, NH, T, hs); an unpermute kernel scatters that into out.
// Why it should beat variant 1: the two products run as tuned batched SGEMMs with
// every q.k and p.v done once, and the softmax reads its row coalesced.
// Limits: the full T x T score matrix per head is computed (twice the causal work),
// written, read and written again and read by the second product: B*NH*T*T floats of
// workspace (400 MB at B=8, T=1024, NH=12) and the memory traffic that goes with it.
// Plain fp32 SGEMM: the math mode is set to CUBLAS_DEFAULT_MATH (no TF32) on every call
// (cuda::cublas_fp32, device/cuda/cublas.h).
//
// Workspace (floats): q | k | v, each B*T*C, then S, B*NH*T*T. The result of P v is
// written over the q buffer, which is dead by then.
#include <cublas_v2.h>

#include <cmath>
#include <cstddef>

#include "contract/ops/attention_forward.h"
#include "device/cuda/cublas.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "variants/attention_forward/heads.cuh"

namespace wb::variants {
namespace {

using attention::out_row;
using attention::qkv_row;

// A warp per row of S (B*NH*T rows of T, already scaled). Row r is query t = r % T:
// entries 0..t become exp(s - lse), entries above the diagonal 0; lse[r] is written
// (lse is (B, NH, T), the same row order).
__global__ void causal_softmax_rows(float* S, float* lse, int64_t rows, int T) {
  const int lane = threadIdx.x % cuda::kWarpSize;
  const int64_t row = int64_t(blockIdx.x) * (blockDim.x / cuda::kWarpSize) + threadIdx.x / cuda::kWarpSize;
  if (row >= rows) return;  // the whole warp leaves together
  const int t = int(row % T);
  float* s = S + row * T;

  // Online max and sum over this lane's entries, then merged across the warp.
  float m = -INFINITY, sum = 0.0f;
  for (int j = lane; j <= t; j += cuda::kWarpSize) {
    const float x = s[j];
    if (x > m) {
      sum = sum * expf(m - x) + 1.0f;
      m = x;
    } else {
      sum += expf(x - m);
    }
  }
  const float row_max = cuda::warp_max(m);  // finite: entry 0 always takes part
  sum = m == -INFINITY ? 0.0f : sum * expf(m - row_max);
  const float l = row_max + logf(cuda::warp_sum(sum));

  for (int j = lane; j < T; j += cuda::kWarpSize) s[j] = j <= t ? expf(s[j] - l) : 0.0f;
  if (lane == 0) lse[row] = l;
}

struct Workspace {
  float *q, *k, *v, *S;
};

std::size_t workspace_floats(int64_t B, int64_t T, int64_t C, int64_t NH) {
  return 3 * std::size_t(B) * T * C + std::size_t(B) * NH * T * T;
}

Workspace carve(void* base, const AttentionForwardArgs& a) {
  float* f = static_cast<float*>(base);
  const std::size_t btc = std::size_t(a.B) * a.T * a.C;
  return {f, f + btc, f + 2 * btc, f + 3 * btc};
}

void launch(const AttentionForwardArgs& a, const Launch& l) {
  const cudaStream_t stream = cuda::stream(l);
  const int block = l.block_size();
  const int hs = attention::head_size(a);
  const Workspace w = carve(l.workspace, a);
  const int64_t n = int64_t(a.B) * a.T * a.C;

  WB_LAUNCH(attention::to_heads, cuda::grid_for(n, block), block, 0, stream, w.q, w.k, w.v, a.qkv, int64_t(3) * a.C,
            a.B, a.T, a.C, a.NH);

  cublasHandle_t handle = cuda::cublas_fp32(l);  // plain fp32, no TF32
  const int batch = a.B * a.NH;
  const long long head = static_cast<long long>(a.T) * hs;     // floats per head of q, k, v, o
  const long long scores = static_cast<long long>(a.T) * a.T;  // floats per head of S
  const float scale = 1.0f / std::sqrt(float(hs)), one = 1.0f, zero = 0.0f;

  // Row-major S (T x T) is column-major S^T: S^T(t2, t) = sum_d k(t2, d) q(t, d), i.e.
  // S^T = K^T Q with K and Q column-major (hs x T) -- exactly the row-major buffers.
  WB_CHECK(cublasSgemmStridedBatched(handle, CUBLAS_OP_T, CUBLAS_OP_N, a.T, a.T, hs, &scale, w.k, hs, head, w.q, hs,
                                     head, &zero, w.S, a.T, scores, batch));

  const int rows_per_block = block / cuda::kWarpSize;
  const int64_t rows = int64_t(batch) * a.T;
  WB_LAUNCH(causal_softmax_rows, cuda::grid_for(rows, rows_per_block), block, 0, stream, w.S, a.lse, rows, a.T);

  // Row-major O (T x hs) is column-major O^T (hs x T) = V^T P^T: V column-major
  // (hs x T) and P^T column-major (T x T) are the row-major buffers. O goes over q.
  float* o = w.q;
  WB_CHECK(cublasSgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, hs, a.T, a.T, &one, w.v, hs, head, w.S, a.T,
                                     scores, &zero, o, hs, head, batch));

  WB_LAUNCH(attention::from_heads, cuda::grid_for(n, block), block, 0, stream, a.out, int64_t(a.C), o, nullptr,
            nullptr, a.B, a.T, a.C, a.NH);
}

}  // namespace

Variant attention_forward_cuda_2() {
  Variant v = Variant::of(&launch);
  v.summary =
      "permute q/k/v, batched SGEMM for S = q k^T / sqrt(hs) (B, NH, T, T), causal softmax, SGEMM P v, unpermute";
  v.params = {block_size_param()};
  v.workspace = [](const Shape& s, const ParamValues&) {
    return workspace_floats(s.B, s.T, s.C, s.NH) * sizeof(float);
  };
  return v;
}

}  // namespace wb::variants
