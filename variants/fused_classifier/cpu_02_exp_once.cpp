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
// Limits: expf is a call, so every pass but the last stays scalar (variant 3).
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/cpu/threads.h"
#include "kernels/ops/fused_classifier.h"
#include "kernels/variant.h"

namespace wb::variants {
namespace {

void classifier_exp_once(const FusedClassifierArgs& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T, V = a.V, Vp = a.Vp;
#pragma omp parallel for num_threads(cpu::threads(l)) schedule(static)
  for (int64_t row = 0; row < rows; ++row) {
    float* x = a.logits + row * Vp;
    const int64_t target = a.targets[row];
    const float x_target = x[target];
    float max = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < V; ++i) max = std::max(max, x[i]);
    double sum = 0;
    for (int64_t i = 0; i < V; ++i) {
      x[i] = std::exp(x[i] - max);
      sum += x[i];
    }
    a.losses[row] = float(double(max) + std::log(sum) - double(x_target));
    const float scale = float(double(a.dloss) / sum);
    for (int64_t i = 0; i < V; ++i) x[i] *= scale;
    x[target] -= a.dloss;
    for (int64_t i = V; i < Vp; ++i) x[i] = 0.0f;
  }
}

}  // namespace

Variant fused_classifier_cpu_2() {
  return cpu::threaded(&classifier_exp_once,
                       "rows over threads; one float expf per logit, stored in place and scaled by dloss/sum");
}

}  // namespace wb::variants
