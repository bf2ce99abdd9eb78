// attention_forward, CPU variant 2: online softmax over blocks of keys, OpenMP.
//
// Idea: for each query row keep a running max m, a running sum l of exp(s - m) and an
// unnormalised output accumulator; walk the keys 0..t in blocks of 64: score the block
// (SIMD dot products, scaled), take its max, rescale l and the accumulator once by
// exp(m_old - m_new), then add exp(s - m_new) * v for the block (SIMD over channels).
// At the end out = acc / l and lse = m + log(l). OpenMP splits the (b, h) pairs.
// Why it should beat variant 1: the reference recomputes nothing but works in double
// and walks each row three times (scores, sum, p*v) through a row-long buffer; here
// there is one pass over k and v per row, in float with vectorizable inner loops, and
// the only scratch is a block of 64 scores and the hs-wide accumulator per thread.
// Limits: float accumulation (sequential over keys and channels); k and v rows are
// re-read from cache for every query row (no tiling across rows); parallelism is
// B*NH pairs, so small batches leave cores idle.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/ops/attention_forward.h"
#include "kernels/variant.h"

namespace wb::variants {
namespace {

constexpr int64_t kKeyBlock = 64;

void attention_online(const AttentionForwardArgs& a, const Launch&) {
  const int64_t B = a.B, T = a.T, C = a.C, NH = a.NH, hs = C / NH;
  const float scale = 1.0f / std::sqrt(float(hs));
#pragma omp parallel
  {
    std::vector<float> acc(hs), s(kKeyBlock);
#pragma omp for collapse(2) schedule(static)
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t h = 0; h < NH; ++h) {
        const float* head = a.qkv + b * T * 3 * C + h * hs;  // q of (b, t=0, h)
        for (int64_t t = 0; t < T; ++t) {
          const float* q = head + t * 3 * C;
          float m = -std::numeric_limits<float>::infinity(), l = 0.0f;
          std::fill(acc.begin(), acc.end(), 0.0f);
          for (int64_t k0 = 0; k0 <= t; k0 += kKeyBlock) {
            const int64_t n = std::min(kKeyBlock, t - k0 + 1);
            float block_max = -std::numeric_limits<float>::infinity();
            for (int64_t j = 0; j < n; ++j) {
              const float* k = head + (k0 + j) * 3 * C + C;
              float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
              for (int64_t i = 0; i < hs; ++i) dot += q[i] * k[i];
              s[j] = dot * scale;
              block_max = std::max(block_max, s[j]);
            }
            const float m_new = std::max(m, block_max);
            const float corr = std::exp(m - m_new);  // 0 for the first block (m = -inf)
            l *= corr;
            for (int64_t i = 0; i < hs; ++i) acc[i] *= corr;
            for (int64_t j = 0; j < n; ++j) {
              const float p = std::exp(s[j] - m_new);
              l += p;
              const float* v = head + (k0 + j) * 3 * C + 2 * C;
              float* o = acc.data();
#pragma omp simd
              for (int64_t i = 0; i < hs; ++i) o[i] += p * v[i];
            }
            m = m_new;
          }
          float* out = a.out + (b * T + t) * C + h * hs;
          const float inv = 1.0f / l;
          for (int64_t i = 0; i < hs; ++i) out[i] = acc[i] * inv;
          a.lse[(b * NH + h) * T + t] = m + std::log(l);
        }
      }
    }
  }
}

}  // namespace

Variant attention_forward_cpu_2() {
  Variant v = Variant::of(&attention_online);
  v.summary = "online max/sum over blocks of 64 keys, one pass over k and v per row, float SIMD, OpenMP over (b, h)";
  return v;
}

}  // namespace wb::variants
