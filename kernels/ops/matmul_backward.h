#pragma once
// matmul_backward: gradients of matmul_forward.
//   dinp += dout @ weight;  dweight += dout^T @ inp;  dbias += sum over B*T rows of dout
#include <cstdint>

#include "kernels/op.h"

namespace wb {

struct MatmulBackwardArgs {
  float* dinp;          // (B, T, C), accumulated
  float* dweight;       // (OC, C), accumulated
  float* dbias;         // (OC), accumulated; may be null (no bias)
  const float* dout;    // (B, T, OC)
  const float* inp;     // (B, T, C)
  const float* weight;  // (OC, C)
  int B, T, C, OC;
};

const OpSpec& matmul_backward_op();

}  // namespace wb
