#pragma once
// residual_forward: out = inp1 + inp2, elementwise over N = B*T*C values.
#include <cstdint>

#include "kernels/op.h"

namespace wb {

struct ResidualForwardArgs {
  float* out;         // (N)
  const float* inp1;  // (N)
  const float* inp2;  // (N)
  int64_t N;
};

const OpSpec& residual_forward_op();

}  // namespace wb
