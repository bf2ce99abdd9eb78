#pragma once
// matmul_gelu_forward: the MLP's first linear layer and its GELU in one op.
//   pre = inp @ weight^T + bias,  out = gelu(pre)  (gelu_forward's tanh approximation)
// pre is written too: it is what gelu_backward reads in the backward pass.
#include <cstdint>

#include "kernels/op.h"

namespace wb {

struct MatmulGeluForwardArgs {
  float* out;           // (B, T, OC) gelu(pre)
  float* pre;           // (B, T, OC) the linear layer's output, before the GELU
  const float* inp;     // (B, T, C)
  const float* weight;  // (OC, C)
  const float* bias;    // (OC), may be null (no bias)
  int B, T, C, OC;
};

const OpSpec& matmul_gelu_forward_op();

}  // namespace wb
