#pragma once
// gelu_forward: GELU, tanh approximation, elementwise over N = B*T*C values.
//   out = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
#include <cstdint>

#include "kernels/op.h"

namespace wb {

struct GeluForwardArgs {
  float* out;        // (N)
  const float* inp;  // (N)
  int64_t N;
};

const OpSpec& gelu_forward_op();

}  // namespace wb
