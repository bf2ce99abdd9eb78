// fused_classifier, CPU variant 2: float, one exp per logit, kept in place.
//
// Idea: each thread takes whole rows (OpenMP, `threads` of them). Per row of V logits:
// pass 1 finds the max; pass 2 overwrites every logit with e = exp(x - max) (float
// expf) and sums them; pass 3 scales the row by dloss / sum, which makes it
// p * dloss, and subtracts dloss at the target: (p - onehot) * dloss, as the op writes
// it. The loss, max + log(sum) - x[target], reads x[target] before pass 2 overwrites it.
// Why it should beat variant 1: the reference calls double exp twice per logit (once
// for the sum, once for the gradient); here there is one float expf per logit, and
// the row stays in the core's cache from the first pass to the last.
// Accuracy: the sum is accumulated in double, so loss and probabilities keep the
// float rounding of expf only (about 1e-7 relative).
// Limits: expf is a call, so every pass but the last stays scalar (variant 3). Passes 1
// and 2 are softmax_forward cpu/2's too (expf_shifted, variants/softmax/softmax_row.h).
#include <cmath>

#include "contract/ops/fused_classifier.h"
#include "contract/variant.h"
#include "device/cpu/threads.h"
#include "variants/softmax/softmax_row.h"

namespace wb::variants {
namespace {

[[gnu::always_inline]] inline float exp_once_row(float* x, int64_t V, int64_t Vp, int64_t target, float dloss) {
  const float x_target = x[target];
  const cpu::ShiftedExp e = cpu::expf_shifted(x, x, V);
  const float scale = float(double(dloss) / e.sum);
  for (int64_t i = 0; i < V; ++i) x[i] *= scale;
  x[target] -= dloss;
  for (int64_t i = V; i < Vp; ++i) x[i] = 0.0f;
  return float(double(e.max) + std::log(e.sum) - double(x_target));
}

}  // namespace

Variant fused_classifier_cpu_2() {
  return cpu::threaded(&cpu::classifier_rows<exp_once_row>,
                       "rows over threads; one float expf per logit, stored in place and scaled by dloss/sum");
}

}  // namespace wb::variants
