#pragma once
// The CPU attention rungs' work for one (batch, head), on float rows with leading
// dimensions: attention_forward cpu/2 and attention_backward cpu/2 run them on the fp32
// qkv in place (leading dimension 3C), the bf16 rungs on rows of the head widened into
// contiguous buffers (leading dimension hs), then round what they produce once.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace wb::cpu {

inline float dot(const float* x, const float* y, int64_t n) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += x[i] * y[i];
  return sum;
}

// y += alpha * x over n floats.
inline void axpy(float* y, float alpha, const float* x, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

// Causal attention of one head, online softmax over blocks of kKeyBlock keys: row t of
// q, k, v at q + t * ld_qkv (k, v likewise), out row t at out + t * ld_out, lse[t] the
// log-sum-exp of row t's scaled scores. acc (hs floats) and s (kKeyBlock) are scratch.
inline constexpr int64_t kKeyBlock = 64;
inline void attention_forward_head(const float* q, const float* k, const float* v, int64_t ld_qkv, float* out,
                                   int64_t ld_out, float* lse, int64_t T, int64_t hs, float* acc, float* s) {
  const float scale = 1.0f / std::sqrt(float(hs));
  for (int64_t t = 0; t < T; ++t) {
    const float* qt = q + t * ld_qkv;
    float m = -std::numeric_limits<float>::infinity(), l = 0.0f;
    std::fill(acc, acc + hs, 0.0f);
    for (int64_t k0 = 0; k0 <= t; k0 += kKeyBlock) {
      const int64_t n = std::min(kKeyBlock, t - k0 + 1);
      float block_max = -std::numeric_limits<float>::infinity();
      for (int64_t j = 0; j < n; ++j) {
        s[j] = dot(qt, k + (k0 + j) * ld_qkv, hs) * scale;
        block_max = std::max(block_max, s[j]);
      }
      const float m_new = std::max(m, block_max);
      const float corr = std::exp(m - m_new);  // 0 for the first block (m = -inf)
      l *= corr;
      for (int64_t i = 0; i < hs; ++i) acc[i] *= corr;
      for (int64_t j = 0; j < n; ++j) {
        const float p = std::exp(s[j] - m_new);
        l += p;
        axpy(acc, p, v + (k0 + j) * ld_qkv, hs);
      }
      m = m_new;
    }
    float* o = out + t * ld_out;
    const float inv = 1.0f / l;
    for (int64_t i = 0; i < hs; ++i) o[i] = acc[i] * inv;
    lse[t] = m + std::log(l);
  }
}

// The gradients of one head from its lse: dq, dk, dv (T x hs each, contiguous, zeroed by
// the caller) accumulate; p and ds (T floats) are scratch. Rows as in the forward pass;
// dout and out rows at dout + t * ld_out, out + t * ld_out.
inline void attention_backward_head(const float* q, const float* k, const float* v, int64_t ld_qkv,
                                    const float* dout, const float* out, int64_t ld_out, const float* lse, int64_t T,
                                    int64_t hs, float* dq, float* dk, float* dv, float* p, float* ds) {
  const float scale = 1.0f / std::sqrt(float(hs));
  for (int64_t t = 0; t < T; ++t) {
    const float* qt = q + t * ld_qkv;
    const float* dout_t = dout + t * ld_out;
    const float D = dot(dout_t, out + t * ld_out, hs);
    for (int64_t t2 = 0; t2 <= t; ++t2) {
      p[t2] = std::exp(dot(qt, k + t2 * ld_qkv, hs) * scale - lse[t]);
      ds[t2] = p[t2] * (dot(dout_t, v + t2 * ld_qkv, hs) - D) * scale;
    }
    float* dq_t = dq + t * hs;
    for (int64_t t2 = 0; t2 <= t; ++t2) {
      axpy(dq_t, ds[t2], k + t2 * ld_qkv, hs);
      axpy(dk + t2 * hs, ds[t2], qt, hs);
      axpy(dv + t2 * hs, p[t2], dout_t, hs);
    }
  }
}

}  // namespace wb::cpu
