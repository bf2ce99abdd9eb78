// attention_forward, CPU variant 2: online softmax over blocks of keys, OpenMP.
//
// Idea: for each query row keep a running max m, a running sum l of exp(s - m) and an
// unnormalised output accumulator; walk the keys 0..t in blocks of 64: score the block
// (SIMD dot products, scaled), take its max, rescale l and the accumulator once by
// exp(m_old - m_new), then add exp(s - m_new) * v for the block (SIMD over channels).
// At the end out = acc / l and lse = m + log(l) (variants/attention/attention_head.h, which the
// bf16 rung shares). OpenMP splits the (b, h) pairs.
// Why it should beat variant 1: the reference recomputes nothing but works in double
// and walks each row three times (scores, sum, p*v) through a row-long buffer; here
// there is one pass over k and v per row, in float with vectorizable inner loops, and
// the only scratch is a block of 64 scores and the hs-wide accumulator per thread.
// Limits: float accumulation (sequential over keys and channels); k and v rows are
// re-read from cache for every query row (no tiling across rows); parallelism is
// B*NH pairs, so small batches leave cores idle.
#include <vector>

#include "contract/ops/attention_forward.h"
#include "contract/variant.h"
#include "variants/attention/attention_head.h"

namespace wb::variants {
namespace {

void attention_online(const AttentionForwardArgs& a, const Launch&) {
  const int64_t B = a.B, T = a.T, C = a.C, NH = a.NH, hs = C / NH;
#pragma omp parallel
  {
    std::vector<float> acc(hs), s(cpu::kKeyBlock);
#pragma omp for collapse(2) schedule(static)
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t h = 0; h < NH; ++h) {
        const float* q = a.qkv + b * T * 3 * C + h * hs;  // q of (b, t=0, h)
        cpu::attention_forward_head(q, q + C, q + 2 * C, 3 * C, a.out + b * T * C + h * hs, C,
                                    a.lse + (b * NH + h) * T, T, hs, acc.data(), s.data());
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
