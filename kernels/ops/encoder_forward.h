#pragma once
// encoder_forward: token plus position embedding.
//   out[b,t,:] = wte[inp[b,t], :] + wpe[t, :]
#include <cstdint>

#include "kernels/op.h"

namespace wb {

struct EncoderForwardArgs {
  float* out;          // (B, T, C)
  const int32_t* inp;  // (B, T) token ids in [0, V)
  const float* wte;    // (V, C) token embedding
  const float* wpe;    // (T, C) position embedding (the first T rows of maxT)
  int B, T, C;
};

const OpSpec& encoder_forward_op();

}  // namespace wb
