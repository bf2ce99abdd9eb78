#pragma once
// layernorm_backward: gradients of layernorm_forward from the saved mean and rstd.
//   n = (x - mean) * rstd, g = weight * dout
//   dinp += (g - mean(g) - n * mean(g * n)) * rstd;  dweight += sum_bt n * dout;  dbias += sum_bt dout
#include <cstdint>

#include "kernels/op.h"

namespace wb {

struct LayernormBackwardArgs {
  float* dinp;          // (B, T, C), accumulated
  float* dweight;       // (C), accumulated
  float* dbias;         // (C), accumulated
  const float* dout;    // (B, T, C)
  const float* inp;     // (B, T, C)
  const float* weight;  // (C)
  const float* mean;    // (B, T) as written by layernorm_forward
  const float* rstd;    // (B, T)
  int B, T, C;
};

const OpSpec& layernorm_backward_op();

}  // namespace wb
