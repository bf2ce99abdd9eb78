#pragma once
// The rows of the CPU softmax rungs from 2 on (softmax_forward, fused_classifier and
// fused_classifier_bf16; the x86-64-v3 rungs compile the same rows for their target):
// the exponentiation pass of a row (its maximum, then exp(x - max) for every element
// with its sum), in SIMD form and in the libm form of the expf rungs; the SIMD rows built
// on it; and the loop over rows that the rungs of one op share, which differ only in
// their row.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "contract/ops/fused_classifier.h"
#include "contract/ops/softmax_forward.h"
#include "device/cpu/simd_math.h"
#include "device/cpu/threads.h"

namespace wb::cpu {

struct ShiftedExp {
  float max;   // the row's largest value
  double sum;  // of exp(x - max) over the row
};

// Elements per float partial sum: the sum runs in float SIMD lanes within a block and
// adds the block sums in double, in a fixed order (the same bits at any thread count).
inline constexpr int64_t kExpSumBlock = 256;

// dst[i] = exp(src[i] - max) for i < n; dst may be src (in place). Always inlined, so
// that a WB_TARGET_X86_64_V3 caller compiles these loops for its own target.
[[gnu::always_inline]] inline ShiftedExp exp_shifted(float* dst, const float* src, int64_t n) {
  float max = -std::numeric_limits<float>::infinity();
#pragma omp simd reduction(max : max)
  for (int64_t i = 0; i < n; ++i) max = std::max(max, src[i]);
  double sum = 0;
  for (int64_t i0 = 0; i0 < n; i0 += kExpSumBlock) {
    const int64_t end = std::min(n, i0 + kExpSumBlock);
    float part = 0.0f;
#pragma omp simd reduction(+ : part)
    for (int64_t i = i0; i < end; ++i) {
      dst[i] = fast_exp(src[i] - max);
      part += dst[i];
    }
    sum += part;
  }
  return {max, sum};
}

// exp_shifted as the expf rungs (softmax_forward cpu/2, fused_classifier cpu/2) take it,
// the step before vectorising: libm's expf per element, a call that keeps both loops
// scalar, and the sum in double element by element.
[[gnu::always_inline]] inline ShiftedExp expf_shifted(float* dst, const float* src, int64_t n) {
  float max = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) max = std::max(max, src[i]);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    dst[i] = std::exp(src[i] - max);
    sum += dst[i];
  }
  return {max, sum};
}

// One row of softmax_forward's SIMD rungs: the V logits x become the probabilities p,
// p's padding up to Vp zeros.
[[gnu::always_inline]] inline void softmax_row(float* __restrict p, const float* __restrict x, int64_t V, int64_t Vp) {
  const ShiftedExp e = exp_shifted(p, x, V);
  const float inv = float(1.0 / e.sum);
#pragma omp simd
  for (int64_t i = 0; i < V; ++i) p[i] *= inv;
  for (int64_t i = V; i < Vp; ++i) p[i] = 0.0f;
}

// The first half of a classifier row in the SIMD rungs, up to the gradient's storage:
// the V logits x become e = exp(x - max) in place; the loss, max + log(sum) - x[target],
// reads x[target] before that, and e times scale = dloss / sum is the probability times
// dloss.
struct ClassifierExp {
  float loss;
  float scale;
};

[[gnu::always_inline]] inline ClassifierExp classifier_exp(float* x, int64_t V, int64_t target, float dloss) {
  const float x_target = x[target];
  const ShiftedExp e = exp_shifted(x, x, V);
  return {float(double(e.max) + std::log(e.sum) - double(x_target)), float(double(dloss) / e.sum)};
}

// One row of fused_classifier's SIMD rungs: x (V logits, then padding up to Vp) becomes
// the row's dlogits, (p - onehot) * dloss; returns the loss.
[[gnu::always_inline]] inline float classifier_row(float* __restrict x, int64_t V, int64_t Vp, int64_t target,
                                                   float dloss) {
  const ClassifierExp c = classifier_exp(x, V, target, dloss);
#pragma omp simd
  for (int64_t i = 0; i < V; ++i) x[i] *= c.scale;
  x[target] -= dloss;
  for (int64_t i = V; i < Vp; ++i) x[i] = 0.0f;
  return c.loss;
}

// The run function of softmax_forward's rungs from 2 on, which differ only in their row:
// whole rows over threads(l) OpenMP threads, Row(p, x, V, Vp) on each (a template
// argument, so that an inline row is inlined into the loop).
template <auto Row>
void softmax_rows(const SoftmaxForwardArgs& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T;
#pragma omp parallel for num_threads(threads(l)) schedule(static)
  for (int64_t row = 0; row < rows; ++row) Row(a.probs + row * a.Vp, a.logits + row * a.Vp, a.V, a.Vp);
}

// The same for fused_classifier: Row(x, V, Vp, target, dloss) returns the row's loss.
template <auto Row>
void classifier_rows(const FusedClassifierArgs& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T;
#pragma omp parallel for num_threads(threads(l)) schedule(static)
  for (int64_t row = 0; row < rows; ++row)
    a.losses[row] = Row(a.logits + row * a.Vp, a.V, a.Vp, a.targets[row], a.dloss);
}

}  // namespace wb::cpu
