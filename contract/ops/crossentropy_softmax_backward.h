#pragma once
// crossentropy_softmax_backward: gradient of the loss through softmax to the logits.
//   dlogits[b,t,i] += (probs[b,t,i] - (i == target)) * dlosses[b,t]  for i < V;
//   the padded columns V..Vp are left as they are.
#include <cstdint>

#include "contract/op_fwd.h"

namespace wb {

struct CrossentropySoftmaxBackwardArgs {
  float* dlogits;          // (B, T, Vp), accumulated
  const float* dlosses;    // (B, T)
  const float* probs;      // (B, T, Vp)
  const int32_t* targets;  // (B, T) in [0, V)
  int B, T, V, Vp;
};

const OpSpec& crossentropy_softmax_backward_op();

}  // namespace wb
