// attention_backward_bf16, CPU variant 2: attention_backward cpu/2 on each head widened
// to fp32, every gradient rounded once.
//
// Idea: per (batch, head) -- the OpenMP work items -- widen the head's q, k, v, dout and
// out rows (by shifts of their bits) into contiguous fp32 buffers, run the fp32 rung's
// row-by-row backward from lse on them (variants/attention/attention_head.h): dq, dk and dv
// accumulate in fp32 over all query rows, and each is rounded once to nearest even into
// dqkv (device/cpu/bf16_lanes.h), as the contract asks.
// Why it should beat the reference port: the port recomputes each score with a strided
// walk in double; here every dot product and axpy runs over hs contiguous floats.
// Measure: build/wb run attention_backward_bf16 --variant N --backend cpu --shape B=4,T=64,C=768,NH=12
// for N = 1, 2, interleaved (figures: results/cpu-amd-epyc-avx512bf16/README.md).
// Limits: as the fp32 rung (float accumulation in key order, B*NH work items); 8 T hs
// floats of buffers per work item.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "contract/ops/attention_backward.h"
#include "contract/variant.h"
#include "device/cpu/bf16_lanes.h"
#include "variants/attention/attention_head.h"

namespace wb::variants {
namespace {

void attention_backward_bf16_widened(const AttentionBackwardBf16Args& a, const Launch&) {
  const int64_t B = a.B, T = a.T, C = a.C, NH = a.NH, hs = C / NH, C3 = 3 * C;
  const uint16_t* qkv = cpu::bits_of(a.qkv);
  const uint16_t* dout = cpu::bits_of(a.dout);
  const uint16_t* out = cpu::bits_of(a.out);
  uint16_t* dqkv = cpu::bits_of(a.dqkv);
#pragma omp parallel for collapse(2) schedule(dynamic)
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < NH; ++h) {
      std::vector<float> q(T * hs), k(T * hs), v(T * hs), d(T * hs), o(T * hs);
      std::vector<float> dq(T * hs, 0.0f), dk(T * hs, 0.0f), dv(T * hs, 0.0f), p(T), ds(T);
      const uint16_t* head = qkv + b * T * C3 + h * hs;  // q of (b, t=0, h)
      cpu::widen_rows(head, C3, q.data(), T, hs);
      cpu::widen_rows(head + C, C3, k.data(), T, hs);
      cpu::widen_rows(head + 2 * C, C3, v.data(), T, hs);
      cpu::widen_rows(dout + b * T * C + h * hs, C, d.data(), T, hs);
      cpu::widen_rows(out + b * T * C + h * hs, C, o.data(), T, hs);
      cpu::attention_backward_head(q.data(), k.data(), v.data(), hs, d.data(), o.data(), hs, a.lse + (b * NH + h) * T,
                                   T, hs, dq.data(), dk.data(), dv.data(), p.data(), ds.data());
      uint16_t* dhead = dqkv + b * T * C3 + h * hs;
      cpu::round_rows(dq.data(), dhead, C3, T, hs);
      cpu::round_rows(dk.data(), dhead + C, C3, T, hs);
      cpu::round_rows(dv.data(), dhead + 2 * C, C3, T, hs);
    }
  }
}

}  // namespace

Variant attention_backward_bf16_cpu_2() {
  Variant v = Variant::of(&attention_backward_bf16_widened);
  v.summary = "each head widened to fp32, cpu/2's row-by-row backward from lse, each gradient rounded once; OpenMP";
  return v;
}

}  // namespace wb::variants
