#pragma once
// adamw: the per-element update shared by the fp32 and bf16 variants, the host-side
// constants of one step, and the rounding of a bf16 parameter from its master weight.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "kernels/ops/adamw.h"
#include "kernels/stochastic_rounding.h"

namespace wb::cuda::adamw {

// What every element needs besides its own values; the bias corrections 1 - beta^t
// are computed once on the host, in double. grad_scale is not known on the host (the
// norm lives on the device): each kernel fills it in with scaled() as it starts.
struct Step {
  float lr, beta1, beta2, eps, weight_decay, grad_clip, grad_scale;
  float correction1, correction2;  // 1 - beta1^t, 1 - beta2^t
};

// From AdamwArgs or AdamwBf16Args.
template <class Args>
inline Step step_of(const Args& a) {
  return {a.lr,
          a.beta1,
          a.beta2,
          a.eps,
          a.weight_decay,
          a.grad_clip,
          0.0f,  // set on the device by scaled()
          float(1.0 - std::pow(double(a.beta1), a.t)),
          float(1.0 - std::pow(double(a.beta2), a.t))};
}

// The step with its gradient scale, from the norm global_norm left in device memory
// (every thread reads the same 4 bytes: one broadcast per warp).
__device__ inline Step scaled(Step s, const float* grad_norm) {
  s.grad_scale = clip_scale(*grad_norm, s.grad_clip);
  return s;
}

// One element: the gradient scaled first, then the moments, then the parameter with
// decoupled weight decay. Updates p, m and v in place.
__device__ inline void update(float& p, float& m, float& v, float grad, const Step& s) {
  const float g = grad * s.grad_scale;
  m = s.beta1 * m + (1.0f - s.beta1) * g;
  v = s.beta2 * v + (1.0f - s.beta2) * g * g;
  const float m_hat = m / s.correction1;
  const float v_hat = v / s.correction2;
  p -= s.lr * (m_hat / (sqrtf(v_hat) + s.eps) + s.weight_decay * p);
}

// The bf16 parameter of element i from its master weight: rounded stochastically with
// the step's seed (kernels/stochastic_rounding.h: the same bits on every backend), or
// to nearest even.
__device__ inline __nv_bfloat16 round_param(float master, int64_t i, uint32_t seed, int stochastic) {
  if (!stochastic) return __float2bfloat16(master);
  return __ushort_as_bfloat16(stochastic_round_bits(__float_as_uint(master), rounding_noise(uint64_t(i), seed)));
}

}  // namespace wb::cuda::adamw
