// CPU reference of adamw and global_norm.
#include <cmath>

#include "base/stochastic_rounding.h"
#include "contract/ops/adamw.h"
#include "reference/reference.h"

namespace wb::reference {

namespace {

// One AdamW step in double, as torch.optim.AdamW (decoupled weight decay) takes it.
struct AdamwStep {
  double lr, b1, b2, eps, weight_decay, grad_scale, correction1, correction2;

  template <class Args>
  explicit AdamwStep(const Args& a)
      : AdamwStep(*a.lr, a.beta1, a.beta2, a.eps, a.weight_decay, clip_scale(*a.grad_norm, a.grad_clip), *a.t) {}
  // From the op's scalars and step tensors, as the argument structs hold them (in float).
  explicit AdamwStep(const TensorTable& t)
      : AdamwStep(*t.f32("lr"), float(t.scalar("beta1")), float(t.scalar("beta2")), float(t.scalar("eps")),
                  float(t.scalar("weight_decay")), clip_scale(*t.f32("grad_norm"), float(t.scalar("grad_clip"))),
                  *t.i32("t")) {}
  AdamwStep(float lr_, float beta1, float beta2, float eps_, float weight_decay_, float grad_scale_, int t)
      : lr(lr_),
        b1(beta1),
        b2(beta2),
        eps(eps_),
        weight_decay(weight_decay_),
        grad_scale(grad_scale_),
        correction1(1.0 - std::pow(b1, t)),
        correction2(1.0 - std::pow(b2, t)) {}

  // Updates the parameter p and the moments m and v of one element from its gradient.
  void update(float& p, float& m, float& v, double grad) const {
    const double g = grad * grad_scale;
    const double m1 = b1 * m + (1.0 - b1) * g;
    const double v1 = b2 * v + (1.0 - b2) * g * g;
    const double m_hat = m1 / correction1;
    const double v_hat = v1 / correction2;
    p = float(p - lr * (m_hat / (std::sqrt(v_hat) + eps) + weight_decay * p));
    m = float(m1);
    v = float(v1);
  }
};

}  // namespace

void adamw(const AdamwArgs& a) {
  const AdamwStep step(a);
#pragma omp parallel for
  for (int64_t i = 0; i < a.N; ++i) step.update(a.params[i], a.m[i], a.v[i], a.grads[i]);
}

// The port: adamw's step on the master weights, then each bf16 parameter rounded from
// its new master weight as the contract says (stochastically, or to nearest even).
void adamw_bf16(const AdamwBf16Args& a) {
  const AdamwStep step(a);
#pragma omp parallel for
  for (int64_t i = 0; i < a.N; ++i) {
    step.update(a.master[i], a.m[i], a.v[i], to_float(a.grads[i]));
    a.params[i] = a.stochastic
                      ? bf16::from_bits(stochastic_round_bits(float_bits(a.master[i]), rounding_noise(i, uint32_t(*a.seed))))
                      : to_bf16(a.master[i]);
  }
}

// Its truth, on the widened tensors: the same step, params left at the unrounded master.
void adamw_bf16_truth(const TensorTable& t) {
  const AdamwStep step(t);
  float *params = t.f32("params"), *master = t.f32("master"), *m = t.f32("m"), *v = t.f32("v");
  const float* grads = t.f32("grads");
#pragma omp parallel for
  for (int64_t i = 0; i < t.shape().N; ++i) {
    step.update(master[i], m[i], v[i], grads[i]);
    params[i] = master[i];
  }
}

void global_norm(const GlobalNormArgs& a) {
  double sum = 0;
#pragma omp parallel for reduction(+ : sum)
  for (int64_t i = 0; i < a.N; ++i) sum += double(a.grads[i]) * a.grads[i];
  a.out[0] = float(std::sqrt(sum));
}

// The port: the fp32 reference's sum in double over the widened gradients.
void global_norm_bf16(const GlobalNormBf16Args& a) {
  double sum = 0;
#pragma omp parallel for reduction(+ : sum)
  for (int64_t i = 0; i < a.N; ++i) sum += double(to_float(a.grads[i])) * to_float(a.grads[i]);
  a.out[0] = float(std::sqrt(sum));
}

}  // namespace wb::reference

namespace wb::references {

std::vector<Variant> optimizer() {
  return {WB_REFERENCE(adamw), WB_REFERENCE(global_norm), WB_REFERENCE_PORT_WITH_TRUTH(adamw_bf16),
          WB_REFERENCE_PORT(global_norm_bf16)};
}

}  // namespace wb::references
