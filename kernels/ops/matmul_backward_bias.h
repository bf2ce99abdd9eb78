#pragma once
// matmul_backward_bias: the bias gradient of matmul_forward on its own, so that its
// reduction gets a ladder of its own.
//   dbias[o] += sum over the B*T rows of dout[:, o]
#include <cstdint>

#include "kernels/op.h"

namespace wb {

struct MatmulBackwardBiasArgs {
  float* dbias;       // (OC), accumulated
  const float* dout;  // (B, T, OC)
  int B, T, OC;
};

const OpSpec& matmul_backward_bias_op();

}  // namespace wb
