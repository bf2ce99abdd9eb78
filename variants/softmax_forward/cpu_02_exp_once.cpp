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
// Limits: expf is a call, so passes 1 and 2 stay scalar (variant 3).
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/cpu/threads.h"
#include "kernels/ops/softmax_forward.h"
#include "kernels/variant.h"

namespace wb::variants {
namespace {

void softmax_exp_once(const SoftmaxForwardArgs& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T, V = a.V, Vp = a.Vp;
#pragma omp parallel for num_threads(cpu::threads(l)) schedule(static)
  for (int64_t row = 0; row < rows; ++row) {
    const float* x = a.logits + row * Vp;
    float* p = a.probs + row * Vp;
    float max = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < V; ++i) max = std::max(max, x[i]);
    double sum = 0;
    for (int64_t i = 0; i < V; ++i) {
      p[i] = std::exp(x[i] - max);
      sum += p[i];
    }
    const float inv = float(1.0 / sum);
    for (int64_t i = 0; i < V; ++i) p[i] *= inv;
    for (int64_t i = V; i < Vp; ++i) p[i] = 0.0f;
  }
}

}  // namespace

Variant softmax_forward_cpu_2() {
  return cpu::threaded(&softmax_exp_once,
                       "rows over threads; one float expf per value, written to probs and scaled by 1/sum");
}

}  // namespace wb::variants
