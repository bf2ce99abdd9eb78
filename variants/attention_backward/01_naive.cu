// attention_backward, CUDA variant 1: the naive port -- one thread per row of the
// gradient, everything recomputed where it is needed.
//
// Idea: two kernels. In the first, one thread per (b, h, t) owns dq_t: for every key
// t2 <= t it recomputes the score, p = exp(s - lse_t), dp = dout_t . v_t2 and
// ds = p * (dp - D_t) with D_t = dout_t . out_t, and adds scale * ds * k_t2 into dq_t.
// In the second, one thread per (b, h, t2) owns dk_t2 and dv_t2: for every query
// t >= t2 it recomputes D_t, the score, p, dp and ds, and adds scale * ds * q_t into
// dk_t2 and p * dout_t into dv_t2. Each thread accumulates straight into its own
// elements of dqkv (zeroed first by the same thread), so no two threads touch the
// same element and the result is deterministic.
// Why: the baseline of the ladder; plainly correct, nothing shared, nothing tiled.
// Limits: every score and dot product is recomputed twice (once per kernel) and D_t
// once per pair in the second kernel; neighbouring threads read rows 3C floats apart,
// so no load coalesces; the accumulators live in global memory (read-modify-write of
// hs floats per pair); the causal loops leave threads of a block with very unequal
// work.
#include <cmath>

#include "kernels/cuda/dialect.cuh"
#include "kernels/cuda/runtime.h"
#include "kernels/ops/attention_backward.h"

namespace wb::variants {
namespace {

__device__ float dot(const float* x, const float* y, int n) {
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) sum += x[i] * y[i];
  return sum;
}

// One thread per (b, h, t): dq_t.
__global__ void naive_dq(float* dqkv, const float* dout, const float* qkv, const float* out, const float* lse, int B,
                         int T, int C, int NH, float scale) {
  const int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= int64_t(B) * NH * T) return;
  const int t = int(idx % T);
  const int64_t bh = idx / T;
  const int h = int(bh % NH);
  const int64_t b = bh / NH;
  const int hs = C / NH;
  const int64_t C3 = 3 * int64_t(C);

  const float* q = qkv + (b * T + t) * C3 + h * hs;
  const float* dout_t = dout + (b * T + t) * C + h * hs;
  const float D = dot(dout_t, out + (b * T + t) * C + h * hs, hs);
  const float lse_t = lse[idx];  // lse is (B, NH, T): idx is its flat index
  float* dq = dqkv + (b * T + t) * C3 + h * hs;
  for (int i = 0; i < hs; ++i) dq[i] = 0.0f;
  for (int t2 = 0; t2 <= t; ++t2) {
    const float* k = qkv + (b * T + t2) * C3 + C + h * hs;
    const float* v = qkv + (b * T + t2) * C3 + 2 * C + h * hs;
    const float p = expf(dot(q, k, hs) * scale - lse_t);
    const float ds = p * (dot(dout_t, v, hs) - D) * scale;
    for (int i = 0; i < hs; ++i) dq[i] += ds * k[i];
  }
}

// One thread per (b, h, t2): dk_t2 and dv_t2.
__global__ void naive_dk_dv(float* dqkv, const float* dout, const float* qkv, const float* out, const float* lse, int B,
                            int T, int C, int NH, float scale) {
  const int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= int64_t(B) * NH * T) return;
  const int t2 = int(idx % T);
  const int64_t bh = idx / T;
  const int h = int(bh % NH);
  const int64_t b = bh / NH;
  const int hs = C / NH;
  const int64_t C3 = 3 * int64_t(C);

  const float* k = qkv + (b * T + t2) * C3 + C + h * hs;
  const float* v = qkv + (b * T + t2) * C3 + 2 * C + h * hs;
  float* dk = dqkv + (b * T + t2) * C3 + C + h * hs;
  float* dv = dqkv + (b * T + t2) * C3 + 2 * C + h * hs;
  for (int i = 0; i < hs; ++i) {
    dk[i] = 0.0f;
    dv[i] = 0.0f;
  }
  for (int t = t2; t < T; ++t) {
    const float* q = qkv + (b * T + t) * C3 + h * hs;
    const float* dout_t = dout + (b * T + t) * C + h * hs;
    const float D = dot(dout_t, out + (b * T + t) * C + h * hs, hs);
    const float p = expf(dot(q, k, hs) * scale - lse[bh * T + t]);
    const float ds = p * (dot(dout_t, v, hs) - D) * scale;
    for (int i = 0; i < hs; ++i) {
      dk[i] += ds * q[i];
      dv[i] += p * dout_t[i];
    }
  }
}

void launch(const AttentionBackwardArgs& a, const Launch& l) {
  const int64_t threads = int64_t(a.B) * a.NH * a.T;
  const int block = l.block_size();
  const float scale = 1.0f / std::sqrt(float(a.C / a.NH));
  const cudaStream_t s = cuda::stream(l);
  WB_LAUNCH(naive_dq, cuda::grid_for(threads, block), block, 0, s, a.dqkv, a.dout, a.qkv, a.out, a.lse, a.B, a.T, a.C,
            a.NH, scale);
  WB_LAUNCH(naive_dk_dv, cuda::grid_for(threads, block), block, 0, s, a.dqkv, a.dout, a.qkv, a.out, a.lse, a.B, a.T,
            a.C, a.NH, scale);
}

}  // namespace

Variant attention_backward_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary =
      "one thread per (b, h, t) for dq and one per (b, h, t2) for dk and dv, all recomputed, accumulated in place";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
