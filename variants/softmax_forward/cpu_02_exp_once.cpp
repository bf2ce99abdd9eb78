// softmax_forward, CPU variant 2: float, one exp per value, written once and scaled.
//
// Idea: each thread takes whole rows (OpenMP, `threads` of them). Per row: pass 1
// finds the max of the V logits; pass 2 writes e = exp(x - max) (float expf) into
// probs and sums it; pass 3 scales probs by 1 / sum; the padding is written as 0.
// Why it should beat variant 1: the reference calls double exp twice per value (for
// the sum, then for the output); here there is one float expf per value, and the row
// of probs stays in the core's cache from pass 2 to pass 3.
// Accuracy: the sum is accumulated in double; each probability keeps expf's float
// rounding and one scaling (a few 1e-7 relative; the op allows 1e-4).
// Limits: expf is a call, so passes 1 and 2 stay scalar (variant 3). Passes 1 and 2
// are fused_classifier cpu/2's too (expf_shifted, variants/softmax/softmax_row.h).
#include "contract/ops/softmax_forward.h"
#include "contract/variant.h"
#include "device/cpu/threads.h"
#include "variants/softmax/softmax_row.h"

namespace wb::variants {
namespace {

[[gnu::always_inline]] inline void exp_once_row(float* p, const float* x, int64_t V, int64_t Vp) {
  const cpu::ShiftedExp e = cpu::expf_shifted(p, x, V);
  const float inv = float(1.0 / e.sum);
  for (int64_t i = 0; i < V; ++i) p[i] *= inv;
  for (int64_t i = V; i < Vp; ++i) p[i] = 0.0f;
}

}  // namespace

Variant softmax_forward_cpu_2() {
  return cpu::threaded(&cpu::softmax_rows<exp_once_row>,
                       "rows over threads; one float expf per value, written to probs and scaled by 1/sum");
}

}  // namespace wb::variants
