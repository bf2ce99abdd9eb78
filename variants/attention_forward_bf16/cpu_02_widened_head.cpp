// attention_forward_bf16, CPU variant 2: attention_forward cpu/2's online softmax on
// each head widened to fp32, the output rounded once.
//
// Idea: per (batch, head) -- the OpenMP work items -- widen the head's q, k and v rows
// (T x hs each, by shifts of their bits) into contiguous fp32 buffers, run the fp32
// rung's online softmax over blocks of 64 keys on them (variants/attention/attention_head.h)
// into an fp32 output buffer, and round each output once to nearest even
// (device/cpu/bf16_lanes.h); lse stays fp32.
// Why it should beat the reference port: the port computes in double with a row-long
// score buffer and three passes per row; here the fp32 rung's single pass with SIMD
// dot products and axpys, on rows that are contiguous after the widening.
// Measure: build/wb run attention_forward_bf16 --variant N --backend cpu --shape B=4,T=64,C=768,NH=12
// for N = 1, 2, interleaved (figures: results/cpu-amd-epyc-avx512bf16/README.md).
// Limits: as the fp32 rung (float accumulation, B*NH work items); the widened head
// (3 T hs floats) and its output (T hs) per thread.
#include <cstdint>
#include <vector>

#include "contract/ops/attention_forward.h"
#include "contract/variant.h"
#include "device/cpu/bf16_lanes.h"
#include "variants/attention/attention_head.h"

namespace wb::variants {
namespace {

void attention_bf16_widened(const AttentionForwardBf16Args& a, const Launch&) {
  const int64_t B = a.B, T = a.T, C = a.C, NH = a.NH, hs = C / NH;
  const uint16_t* qkv = cpu::bits_of(a.qkv);
  uint16_t* out = cpu::bits_of(a.out);
#pragma omp parallel
  {
    std::vector<float> q(T * hs), k(T * hs), v(T * hs), o(T * hs), acc(hs), s(cpu::kKeyBlock);
#pragma omp for collapse(2) schedule(static)
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t h = 0; h < NH; ++h) {
        const uint16_t* head = qkv + b * T * 3 * C + h * hs;  // q of (b, t=0, h)
        cpu::widen_rows(head, 3 * C, q.data(), T, hs);
        cpu::widen_rows(head + C, 3 * C, k.data(), T, hs);
        cpu::widen_rows(head + 2 * C, 3 * C, v.data(), T, hs);
        cpu::attention_forward_head(q.data(), k.data(), v.data(), hs, o.data(), hs, a.lse + (b * NH + h) * T, T, hs,
                                    acc.data(), s.data());
        cpu::round_rows(o.data(), out + b * T * C + h * hs, C, T, hs);
      }
    }
  }
}

}  // namespace

Variant attention_forward_bf16_cpu_2() {
  Variant v = Variant::of(&attention_bf16_widened);
  v.summary = "each head widened to fp32, cpu/2's online softmax over blocks of 64 keys, out rounded once; OpenMP";
  return v;
}

}  // namespace wb::variants
