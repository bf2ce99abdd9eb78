#pragma once
// matmul_forward: a linear layer over B*T rows.
//   out = inp @ weight^T + bias,  weight of shape (OC, C)
#include <cstdint>

#include "kernels/op.h"

namespace wb {

struct MatmulForwardArgs {
  float* out;           // (B, T, OC)
  const float* inp;     // (B, T, C)
  const float* weight;  // (OC, C)
  const float* bias;    // (OC), may be null (no bias)
  int B, T, C, OC;
};

const OpSpec& matmul_forward_op();

}  // namespace wb
