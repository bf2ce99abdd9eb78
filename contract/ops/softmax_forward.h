#pragma once
// softmax_forward: softmax over the first V of every row of Vp logits; the padded
// columns V..Vp of probs are written as 0.
#include <cstdint>

#include "contract/op_fwd.h"

namespace wb {

struct SoftmaxForwardArgs {
  float* probs;         // (B, T, Vp)
  const float* logits;  // (B, T, Vp)
  int B, T, V, Vp;
};

const OpSpec& softmax_forward_op();

}  // namespace wb
