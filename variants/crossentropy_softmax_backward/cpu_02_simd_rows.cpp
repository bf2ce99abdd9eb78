// crossentropy_softmax_backward, CPU variant 2: rows over threads, a branch-free SIMD
// loop per row.
//
// Idea: each thread takes whole rows (`threads` of them). Per row the loop over the
// V columns is dlogits += probs * dloss, contiguous, restrict-qualified, under
// `#pragma omp simd`; the one-hot term is taken out of the loop: dloss is subtracted
// at the target afterwards.
// Why it should beat variant 1: the reference tests i == target and converts to and
// from double for every element, which keeps its loop scalar; here four (SSE)
// elements go through each instruction.
// Accuracy: off the target the result is the reference's bit for bit (a float times a
// float rounded once to float, then one float add); at the target it rounds twice
// instead of once, an error of about one ulp of dloss.
// Limits: memory-bound (probs read, dlogits read and written); padding untouched.
#include "contract/ops/crossentropy_softmax_backward.h"
#include "contract/variant.h"
#include "device/cpu/threads.h"

namespace wb::variants {
namespace {

void crossentropy_backward_simd(const CrossentropySoftmaxBackwardArgs& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T, V = a.V, Vp = a.Vp;
#pragma omp parallel for num_threads(cpu::threads(l)) schedule(static)
  for (int64_t row = 0; row < rows; ++row) {
    const float* __restrict p = a.probs + row * Vp;
    float* __restrict d = a.dlogits + row * Vp;
    const float dloss = a.dlosses[row];
#pragma omp simd
    for (int64_t i = 0; i < V; ++i) d[i] += p[i] * dloss;
    d[a.targets[row]] -= dloss;
  }
}

}  // namespace

Variant crossentropy_softmax_backward_cpu_2() {
  return cpu::threaded(
      &crossentropy_backward_simd,
      "rows over threads; dlogits += probs * dloss as a SIMD loop, the one-hot term subtracted after it");
}

}  // namespace wb::variants
