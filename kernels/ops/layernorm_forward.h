#pragma once
// layernorm_forward: normalise every row of C channels, then scale and shift.
//   out = (x - mean) * rstd * weight + bias,  rstd = 1 / sqrt(var + 1e-5) (biased var)
#include <cstdint>

#include "kernels/op.h"

namespace wb {

constexpr float kLayernormEps = 1e-5f;

struct LayernormForwardArgs {
  float* out;           // (B, T, C)
  float* mean;          // (B, T)
  float* rstd;          // (B, T)
  const float* inp;     // (B, T, C)
  const float* weight;  // (C)
  const float* bias;    // (C)
  int B, T, C;
};

const OpSpec& layernorm_forward_op();

}  // namespace wb
