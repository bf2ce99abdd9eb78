#pragma once
// The exponentiation pass of a softmax row, shared by the SIMD rungs of softmax_forward
// and fused_classifier (and their x86-64-v3 builds): the row's maximum, then
// exp(x - max) for every element with its sum.
#include <algorithm>
#include <cstdint>
#include <limits>

#include "kernels/cpu/simd_math.h"

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

}  // namespace wb::cpu
