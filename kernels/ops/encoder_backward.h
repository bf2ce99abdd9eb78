#pragma once
// encoder_backward: scatter the output gradient into the embedding gradients.
//   dwte[inp[b,t], :] += dout[b,t,:];  dwpe[t, :] += dout[b,t,:]
#include <cstdint>

#include "kernels/op.h"

namespace wb {

struct EncoderBackwardArgs {
  float* dwte;         // (V, C), accumulated
  float* dwpe;         // (T, C), accumulated
  const float* dout;   // (B, T, C)
  const int32_t* inp;  // (B, T) token ids in [0, V)
  int B, T, C;
};

const OpSpec& encoder_backward_op();

}  // namespace wb
