#pragma once
// One AdamW step on fp32 values for the CPU rungs of adamw and adamw_bf16: the step's
// constants hoisted out of the loop (the bias corrections in double, then as floats),
// and the update of one element, always inlined so that it compiles into the caller's
// SIMD loop.
#include <cmath>

#include "contract/ops/adamw.h"

namespace wb::cpu {

struct AdamwStep {
  float b1, b2;       // beta1, beta2
  float inv_c1;       // 1 / (1 - beta1^t)
  float inv_sqrt_c2;  // 1 / sqrt(1 - beta2^t)
  float lr, decay;    // lr, lr * weight_decay
  float eps, scale;   // eps, the clipping scale of the norm
};

template <class Args>
AdamwStep adamw_step(const Args& a) {
  return {a.beta1,
          a.beta2,
          float(1.0 / (1.0 - std::pow(double(a.beta1), *a.t))),
          float(1.0 / std::sqrt(1.0 - std::pow(double(a.beta2), *a.t))),
          *a.lr,
          *a.lr * a.weight_decay,
          a.eps,
          clip_scale(*a.grad_norm, a.grad_clip)};
}

// The new value of parameter p for gradient g (before the scale); m and v are updated.
[[gnu::always_inline]] inline float adamw_update(const AdamwStep& k, float p, float g, float& m, float& v) {
  g *= k.scale;
  const float mi = k.b1 * m + (1.0f - k.b1) * g;
  const float vi = k.b2 * v + (1.0f - k.b2) * g * g;
  m = mi;
  v = vi;
  return p - (k.lr * (mi * k.inv_c1) / (std::sqrt(vi) * k.inv_sqrt_c2 + k.eps) + k.decay * p);
}

}  // namespace wb::cpu
