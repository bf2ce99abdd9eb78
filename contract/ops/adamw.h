#pragma once
// adamw: one AdamW step with bias correction and decoupled weight decay; the
// gradient is first multiplied by the clipping scale of the global gradient norm.
//   g = grad * clip_scale(*grad_norm, grad_clip);  m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2
//   param -= lr * (m / (1-b1^t) / (sqrt(v / (1-b2^t)) + eps) + weight_decay * param)
// What changes from one step to the next -- the norm, where global_norm wrote it, the
// learning rate, the step number t (and adamw_bf16's rounding seed) -- is read from
// device memory, not passed by value (as torch.optim.AdamW's capturable form keeps its
// step on the device): the step never waits for the host between the norm and the
// update, and a captured CUDA graph of the whole step, AdamW included, stays valid from
// one step to the next (the trainer writes the new values before each replay). What a
// run holds fixed -- the betas, eps, weight decay and clipping norm -- is by value.
#include <cstdint>

#include "base/bf16.h"
#include "base/stochastic_rounding.h"  // WB_HOST_DEVICE
#include "contract/op_fwd.h"

namespace wb {

// The gradients' multiplier from the global norm, as torch.nn.utils.clip_grad_norm_:
// clip / (norm + 1e-6) when that is below 1, else 1; 1 when clip is 0 (no clipping). In
// float on every backend, so that each computes the same scale.
WB_HOST_DEVICE inline float clip_scale(float norm, float clip) {
  if (!(clip > 0.0f)) return 1.0f;
  const float scale = clip / (norm + 1e-6f);
  return scale < 1.0f ? scale : 1.0f;  // a NaN norm gives 1, as std::min(1.0f, NaN) did
}

struct AdamwArgs {
  float* params;       // (N), updated
  float* m;            // (N) first moment, updated
  float* v;            // (N) second moment, updated
  const float* grads;  // (N)
  const float* grad_norm;  // (1) the global gradient norm (device memory, as global_norm wrote it)
  const float* lr;         // (1) this step's learning rate (device memory)
  const int32_t* t;        // (1) this step's number, from 1 (device memory)
  int64_t N;
  float beta1, beta2, eps, weight_decay, grad_clip;  // grad_clip: the clipping norm, 0 = off
};

const OpSpec& adamw_op();

// adamw_bf16: the step of llm.c's bf16 training: the gradients in bf16, the fp32 master
// weights, m and v updated in fp32 as adamw updates params, m and v; then the bf16
// parameters the forward pass reads are written from the new master weights, rounded
// stochastically (base/stochastic_rounding.h: element i with `seed`, the same bits
// on every backend and launch configuration) or, with stochastic == 0, to nearest even.
// No fp32 op has master weights, so the op states its own truth: adamw's arithmetic
// in double on the widened gradients, the master weights unrounded. Tolerances: master,
// m and v as adamw's params, m and v; params one ulp of bf16 beyond adamw's (a
// stochastic rounding lands on either neighbour), and the bias test holds it unbiased.
// Measured 2026-11-28 (`WB=build/wb bash tools/bf16_error_study.sh 10 adamw_bf16`: the
// emulated CUDA ladder and the CPU port, the 5 check shapes, seeds 1-10, with the norm,
// learning rate and step drawn at random): params use at most 99.8% of their tolerance
// (a neighbour almost an ulp away: stochastic rounding) with a mean signed error within
// 0.032 ulp; master 2.7%, m 81.1%, v 2.0%.
struct AdamwBf16Args {
  bf16* params;        // (N), written from the master weights
  float* master;       // (N) fp32 master weights, updated
  float* m;            // (N) first moment, updated
  float* v;            // (N) second moment, updated
  const bf16* grads;   // (N)
  const float* grad_norm;  // (1) the global gradient norm (device memory, as global_norm_bf16 wrote it)
  const float* lr;         // (1) this step's learning rate (device memory)
  const int32_t* t;        // (1) this step's number, from 1 (device memory)
  const int32_t* seed;     // (1) this step's seed of the stochastic rounding, its bits a uint32 (device memory)
  int64_t N;
  float beta1, beta2, eps, weight_decay, grad_clip;  // grad_clip: the clipping norm, 0 = off
  int stochastic;     // 1: stochastic rounding of params; 0: to nearest even
};

const OpSpec& adamw_bf16_op();

}  // namespace wb
