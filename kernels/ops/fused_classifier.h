#pragma once
// fused_classifier: softmax, cross-entropy loss and its gradient in one pass over the
// logits, which are overwritten by dlogits (the logits are not needed afterwards):
//   p = softmax(logits[b,t,0:V]);  losses[b,t] = -log p[target]
//   logits[b,t,i] = (p[i] - (i == target)) * dloss  for i < V, and 0 for V <= i < Vp
#include <cstdint>

#include "kernels/op.h"

namespace wb {

struct FusedClassifierArgs {
  float* logits;           // (B, T, Vp): in logits, out dlogits
  float* losses;           // (B, T)
  const int32_t* targets;  // (B, T) in [0, V)
  float dloss;             // gradient of the mean loss: 1 / (B*T)
  int B, T, V, Vp;
};

const OpSpec& fused_classifier_op();

}  // namespace wb
