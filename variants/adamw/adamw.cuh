#pragma once
// adamw: the per-element update shared by the fp32 and bf16 variants, the constants of
// one step (read on the device), and the rounding of a bf16 parameter from its master
// weight.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "base/stochastic_rounding.h"
#include "contract/ops/adamw.h"

namespace wb::cuda::adamw {

// What a kernel is launched with: the run's constants by value, and where this step's
// values are (device memory, which the host may rewrite between replays of a captured
// step: nothing of the step is baked into the launch).
struct StepInputs {
  float beta1, beta2, eps, weight_decay, grad_clip;
  const float* grad_norm;  // where global_norm wrote it
  const float* lr;
  const int32_t* t;
  const int32_t* seed;  // adamw_bf16 only; nullptr for adamw
};

// What every element needs, resolved on the device by step_at() as a kernel starts
// (every thread reads the same few bytes: one broadcast per warp; the two double powers
// cost a few dozen instructions per thread against a memory-bound update).
struct Step {
  float lr, beta1, beta2, eps, weight_decay, grad_scale;
  float correction1, correction2;  // 1 - beta1^t, 1 - beta2^t
  uint32_t seed;                   // of the stochastic rounding (adamw_bf16)
};

// From AdamwArgs or AdamwBf16Args.
inline StepInputs inputs_of(const AdamwArgs& a) {
  return {a.beta1, a.beta2, a.eps, a.weight_decay, a.grad_clip, a.grad_norm, a.lr, a.t, nullptr};
}
inline StepInputs inputs_of(const AdamwBf16Args& a) {
  return {a.beta1, a.beta2, a.eps, a.weight_decay, a.grad_clip, a.grad_norm, a.lr, a.t, a.seed};
}

// The bias correction 1 - beta^t of a moment at step t, in double as the host computes
// it (beta^t is within float rounding of 1 for beta2 = 0.999 and small t: a float power
// would cancel to a few correct bits), rounded once to float.
__device__ inline float bias_correction(float beta, int t) { return float(1.0 - pow(double(beta), double(t))); }

// This step's constants from its values in device memory.
__device__ inline Step step_at(const StepInputs& in) {
  const int t = *in.t;
  return {*in.lr,
          in.beta1,
          in.beta2,
          in.eps,
          in.weight_decay,
          clip_scale(*in.grad_norm, in.grad_clip),
          bias_correction(in.beta1, t),
          bias_correction(in.beta2, t),
          in.seed ? uint32_t(*in.seed) : 0u};
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
// the step's seed (base/stochastic_rounding.h: the same bits on every backend), or
// to nearest even.
__device__ inline __nv_bfloat16 round_param(float master, int64_t i, uint32_t seed, int stochastic) {
  if (!stochastic) return __float2bfloat16(master);
  return __ushort_as_bfloat16(stochastic_round_bits(__float_as_uint(master), rounding_noise(uint64_t(i), seed)));
}

}  // namespace wb::cuda::adamw
