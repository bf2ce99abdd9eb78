#pragma once
// matmul_backward: the input and weight gradients of matmul_forward.
//   dinp = dout @ weight  (overwritten);  dweight += dout^T @ inp  (accumulated)
// The bias gradient is the separate op matmul_backward_bias.
#include <cstdint>

#include "kernels/op.h"

namespace wb {

struct MatmulBackwardArgs {
  float* dinp;          // (B, T, C), overwritten
  float* dweight;       // (OC, C), accumulated
  const float* dout;    // (B, T, OC)
  const float* inp;     // (B, T, C)
  const float* weight;  // (OC, C)
  int B, T, C, OC;
};

const OpSpec& matmul_backward_op();

}  // namespace wb
