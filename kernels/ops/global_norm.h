#pragma once
// global_norm: the L2 norm of all gradients, for clipping.
//   out[0] = sqrt(sum_i grads[i]^2)
#include <cstdint>

#include "kernels/op.h"

namespace wb {

struct GlobalNormArgs {
  float* out;          // (1)
  const float* grads;  // (N)
  int64_t N;
};

const OpSpec& global_norm_op();

}  // namespace wb
