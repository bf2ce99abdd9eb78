#pragma once
// fused_residual_layernorm_forward: the residual add followed by the next layernorm.
//   residual = inp1 + inp2;  normed = layernorm(residual) as layernorm_forward
#include <cstdint>

#include "kernels/op.h"

namespace wb {

struct FusedResidualLayernormForwardArgs {
  float* residual;      // (B, T, C)
  float* normed;        // (B, T, C)
  float* mean;          // (B, T)
  float* rstd;          // (B, T)
  const float* inp1;    // (B, T, C)
  const float* inp2;    // (B, T, C)
  const float* weight;  // (C)
  const float* bias;    // (C)
  int B, T, C;
};

const OpSpec& fused_residual_layernorm_forward_op();

}  // namespace wb
