#pragma once
// adamw: one AdamW step with bias correction and decoupled weight decay; the
// gradient is first multiplied by grad_scale (gradient clipping).
//   g = grad * grad_scale;  m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2
//   param -= lr * (m / (1-b1^t) / (sqrt(v / (1-b2^t)) + eps) + weight_decay * param)
#include <cstdint>

#include "kernels/op.h"

namespace wb {

struct AdamwArgs {
  float* params;       // (N), updated
  float* m;            // (N) first moment, updated
  float* v;            // (N) second moment, updated
  const float* grads;  // (N)
  int64_t N;
  float lr, beta1, beta2, eps, weight_decay, grad_scale;
  int t;  // step, from 1
};

const OpSpec& adamw_op();

}  // namespace wb
