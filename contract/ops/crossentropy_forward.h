#pragma once
// crossentropy_forward: losses[b,t] = -log(probs[b, t, targets[b,t]]).
#include <cstdint>

#include "contract/op_fwd.h"

namespace wb {

struct CrossentropyForwardArgs {
  float* losses;           // (B, T)
  const float* probs;      // (B, T, Vp)
  const int32_t* targets;  // (B, T) in [0, V)
  int B, T, Vp;
};

const OpSpec& crossentropy_forward_op();

}  // namespace wb
