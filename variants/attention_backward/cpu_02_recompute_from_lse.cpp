// attention_backward, CPU variant 2: probabilities recomputed from lse, one row at a
// time, in float.
//
// Idea: for each (batch, head) -- the OpenMP work items -- walk the query rows t.
// For row t, one pass over the keys t2 <= t fills three row buffers of length T:
// p = exp(q_t . k_t2 * scale - lse_t), dp = dout_t . v_t2 and ds = p * (dp - D_t)
// with D_t = dout_t . out_t. A second pass over the same keys applies them:
// dq_t += scale * ds k_t2, dk_t2 += scale * ds q_t, dv_t2 += p dout_t. dq, dk and dv
// of the head accumulate in float buffers of T x hs, written into dqkv at the end.
// No T x T buffer exists. (variants/attention/attention_head.h, which the bf16 rung shares.)
// Why it should beat variant 1 (the reference): the reference computes in double and
// recomputes the score with a fresh strided walk per pair; here every dot product and
// every axpy runs over hs contiguous floats that the compiler vectorises, and the row
// of q, dout and dq stays in L1 while the keys stream past.
// Limits: float accumulation in sequential order over the keys (error grows like T);
// the keys of one head are re-read once per query row (T^2/2 row reads per head,
// cached but not blocked); parallel over B*NH items only, so few heads leave cores idle.
#include <algorithm>
#include <vector>

#include "contract/ops/attention_backward.h"
#include "contract/variant.h"
#include "variants/attention/attention_head.h"

namespace wb::variants {
namespace {

void attention_backward_rows(const AttentionBackwardArgs& a, const Launch&) {
  const int64_t B = a.B, T = a.T, C = a.C, NH = a.NH, hs = C / NH, C3 = 3 * C;
#pragma omp parallel for collapse(2) schedule(dynamic)
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < NH; ++h) {
      // Per head: dq, dk, dv (T x hs each) and the two row buffers.
      std::vector<float> dq(T * hs, 0.0f), dk(T * hs, 0.0f), dv(T * hs, 0.0f);
      std::vector<float> p(T), ds(T);
      const float* q = a.qkv + b * T * C3 + h * hs;  // q of row t at q + t * C3
      cpu::attention_backward_head(q, q + C, q + 2 * C, C3, a.dout + b * T * C + h * hs, a.out + b * T * C + h * hs, C,
                                   a.lse + (b * NH + h) * T, T, hs, dq.data(), dk.data(), dv.data(), p.data(),
                                   ds.data());
      for (int64_t t = 0; t < T; ++t) {
        float* row = a.dqkv + (b * T + t) * C3 + h * hs;
        std::copy(dq.begin() + t * hs, dq.begin() + (t + 1) * hs, row);
        std::copy(dk.begin() + t * hs, dk.begin() + (t + 1) * hs, row + C);
        std::copy(dv.begin() + t * hs, dv.begin() + (t + 1) * hs, row + 2 * C);
      }
    }
  }
}

}  // namespace

Variant attention_backward_cpu_2() {
  Variant v = Variant::of(&attention_backward_rows);
  v.summary = "per (b, h), row by row: p, dout.v and ds from lse in row buffers, then float SIMD axpys; OpenMP";
  return v;
}

}  // namespace wb::variants
