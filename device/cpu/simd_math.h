#pragma once
// Float math that vectorises: arithmetic, comparisons and integer bit operations
// only, no library calls. libm's expf and tanhf are calls, and a call keeps a loop
// scalar (GCC only substitutes vector versions under -ffast-math); these inline
// functions let a loop under `#pragma omp simd` run entirely in SIMD registers (the
// CPU variants are compiled with -fno-trapping-math, without which GCC keeps any
// float comparison followed by arithmetic as a branch: contract/CMakeLists.txt).
#include <cmath>
#include <cstdint>

#include "base/bf16.h"  // float_bits, float_from_bits
#include "base/math_constants.h"

namespace wb::cpu {

// exp(x) in float. For x in [-87.6, 88.3] the relative error is below 2e-7 (under
// 2 ulp; tests/contract/test_cpu_simd_math.cpp measures it). Below -87.7 it returns 0 (the
// true result is subnormal, under 1e-38), above 88.4 +inf (the true result is within
// 30% of float's largest or overflows); NaN stays NaN.
//
// exp(x) = 2^k * exp(r) with k = round(x / ln 2) and r = x - k ln 2 in [-ln2/2, ln2/2].
// Adding 1.5 * 2^23 to x / ln 2 rounds it to the nearest integer and leaves k in the low
// bits of the sum, so 2^k is built from those bits without a float-to-int conversion;
// x is clamped first so that the biased exponent k + 127 stays within 0 (2^k becomes
// +0) and 255 (+inf): the ends come out of the arithmetic with no select on the
// result. ln 2 is split in two (the first part has 9
// significant bits, so k * kLn2Hi is exact) to keep r accurate. exp(r) is its Taylor
// polynomial to degree 7: the first omitted term is below 2e-9 on that interval.
inline float fast_exp(float x) {
  constexpr float kLn2Hi = 0.693359375f;
  constexpr float kLn2Lo = -2.12194440e-4f;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23
  float xc = x < -88.0f ? -88.0f : x;    // k >= -127
  xc = xc > 89.0f ? 89.0f : xc;          // k <= 128
  const float t = xc * math::kLog2e + kRound;
  const float k = t - kRound;
  const float r = (xc - k * kLn2Hi) - k * kLn2Lo;
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  // k + 127 is the biased exponent of 2^k; kRound's own bits hold k = 0.
  const uint32_t exponent = float_bits(t) - float_bits(kRound) + 127u;
  return p * float_from_bits(exponent << 23);
}

// sigmoid(z) = 1 / (1 + exp(-z)) and its complement 1 - sigmoid(z) = sigmoid(-z),
// both to full relative precision (error below 4e-7): both come from exp(-|z|), which
// is at most 1 and never overflows, and neither is a difference of nearly equal
// numbers, so the complement stays accurate where sigmoid(z) rounds to 1.
struct SigmoidPair {
  float sigmoid;
  float complement;
};

inline SigmoidPair sigmoid_pair(float z) {
  const float e = fast_exp(-std::fabs(z));
  const float near_one = 1.0f / (1.0f + e);  // sigmoid(|z|), in [1/2, 1)
  const float near_zero = e * near_one;      // sigmoid(-|z|), in (0, 1/2]
  return {z >= 0.0f ? near_one : near_zero, z >= 0.0f ? near_zero : near_one};
}

}  // namespace wb::cpu
