#pragma once
// Float constants that more than one kernel uses, host and device alike, written once
// so that every copy is the same float.
namespace wb::math {

constexpr float kLog2e = 1.4426950408889634f;  // log2(e): exp(x) = exp2(x * log2(e))
constexpr float kLn2 = 0.6931471805599453f;    // ln(2): ln(x) = log2(x) * ln(2)

// GPT-2's GELU, tanh approximation: gelu(x) = x/2 (1 + tanh u), u = kGeluScale (x + kGeluCubic x^3).
constexpr float kGeluScale = 0.7978845608028654f;  // sqrt(2/pi)
constexpr float kGeluCubic = 0.044715f;

}  // namespace wb::math
