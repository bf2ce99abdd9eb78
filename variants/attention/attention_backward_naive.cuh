#pragma once
// The naive attention backward of attention_backward cuda/1 (fp32 storage) and
// attention_backward_bf16 cuda/1 (bf16 storage), templated on the storage of dout, qkv
// and out (float or __nv_bfloat16): every element is widened on load and all arithmetic
// is fp32. The gradients are summed into an fp32 accumulator laid out as
// dqkv, (B, T, 3C): on fp32 storage that is dqkv itself, on bf16 storage a workspace
// copy that the caller rounds into dqkv once (a bf16 dqkv would round at every
// addition).
//   naive_dq:    one thread per (b, h, t) owns dq_t: for every key t2 <= t it
//                recomputes the score, p = exp(score * scale - lse_t) and
//                ds = p * (dout_t . v_t2 - D_t) * scale, and adds ds * k_t2.
//   naive_dk_dv: one thread per (b, h, t2) owns dk_t2 and dv_t2: for every query
//                t >= t2 it recomputes D_t, the score, p, dp and ds, and adds
//                scale * ds * q_t into dk_t2 and p * dout_t into dv_t2.
// Each thread zeroes and sums only its own elements of the accumulator, so no two
// threads touch the same element and the result is deterministic.
//
// The kernels sit in an anonymous namespace: every file that includes this header
// gets its own copy and uses it.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "device/cuda/dialect.cuh"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"
#include "variants/attention/head_row.cuh"

namespace wb::cuda::naive_attention_backward {
namespace {

using attention_rows::head_row;

template <class Storage>
__device__ float dot(const Storage* x, const Storage* y, int n) {
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) sum += widen(x[i]) * widen(y[i]);
  return sum;
}

// One thread per (b, h, t): dq_t, in the q part of acc.
template <class Storage>
__global__ void naive_dq(float* acc, const Storage* dout, const Storage* qkv, const Storage* out, const float* lse,
                         int B, int T, int C, int NH, float scale) {
  const int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= int64_t(B) * NH * T) return;
  const auto [b, bh, h, t, hs, C3] = head_row(idx, T, C, NH);

  const Storage* q = qkv + (b * T + t) * C3 + h * hs;
  const Storage* dout_t = dout + (b * T + t) * C + h * hs;
  const float D = dot(dout_t, out + (b * T + t) * C + h * hs, hs);
  const float lse_t = lse[idx];  // lse is (B, NH, T): idx is its flat index
  float* dq = acc + (b * T + t) * C3 + h * hs;
  for (int i = 0; i < hs; ++i) dq[i] = 0.0f;
  for (int t2 = 0; t2 <= t; ++t2) {
    const Storage* k = qkv + (b * T + t2) * C3 + C + h * hs;
    const Storage* v = qkv + (b * T + t2) * C3 + 2 * C + h * hs;
    const float p = expf(dot(q, k, hs) * scale - lse_t);
    const float ds = p * (dot(dout_t, v, hs) - D) * scale;
    for (int i = 0; i < hs; ++i) dq[i] += ds * widen(k[i]);
  }
}

// One thread per (b, h, t2): dk_t2 and dv_t2, in the k and v parts of acc.
template <class Storage>
__global__ void naive_dk_dv(float* acc, const Storage* dout, const Storage* qkv, const Storage* out, const float* lse,
                            int B, int T, int C, int NH, float scale) {
  const int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= int64_t(B) * NH * T) return;
  const auto [b, bh, h, t2, hs, C3] = head_row(idx, T, C, NH);

  const Storage* k = qkv + (b * T + t2) * C3 + C + h * hs;
  const Storage* v = qkv + (b * T + t2) * C3 + 2 * C + h * hs;
  float* dk = acc + (b * T + t2) * C3 + C + h * hs;
  float* dv = acc + (b * T + t2) * C3 + 2 * C + h * hs;
  for (int i = 0; i < hs; ++i) {
    dk[i] = 0.0f;
    dv[i] = 0.0f;
  }
  for (int t = t2; t < T; ++t) {
    const Storage* q = qkv + (b * T + t) * C3 + h * hs;
    const Storage* dout_t = dout + (b * T + t) * C + h * hs;
    const float D = dot(dout_t, out + (b * T + t) * C + h * hs, hs);
    const float p = expf(dot(q, k, hs) * scale - lse[bh * T + t]);
    const float ds = p * (dot(dout_t, v, hs) - D) * scale;
    for (int i = 0; i < hs; ++i) {
      dk[i] += ds * widen(q[i]);
      dv[i] += p * widen(dout_t[i]);
    }
  }
}

// Both kernels on the launch's stream, a thread per (b, h, t) each: dq, dk and dv summed
// into acc, (B, T, 3C) in fp32.
template <class Storage>
void launch(float* acc, const Storage* dout, const Storage* qkv, const Storage* out, const float* lse, int B, int T,
            int C, int NH, const Launch& l) {
  const int64_t threads = int64_t(B) * NH * T;
  const int block = l.block_size();
  const float scale = 1.0f / std::sqrt(float(C / NH));
  WB_LAUNCH(naive_dq<Storage>, grid_for(threads, block), block, 0, stream(l), acc, dout, qkv, out, lse, B, T, C, NH,
            scale);
  WB_LAUNCH(naive_dk_dv<Storage>, grid_for(threads, block), block, 0, stream(l), acc, dout, qkv, out, lse, B, T, C, NH,
            scale);
}

}  // namespace
}  // namespace wb::cuda::naive_attention_backward
