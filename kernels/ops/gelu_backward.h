#pragma once
// gelu_backward: dinp = gelu'(inp) * dout, elementwise over N = B*T*C values.
#include <cstdint>

#include "kernels/op.h"

namespace wb {

struct GeluBackwardArgs {
  float* dinp;        // (N), written
  const float* inp;   // (N)
  const float* dout;  // (N)
  int64_t N;
};

const OpSpec& gelu_backward_op();

}  // namespace wb
