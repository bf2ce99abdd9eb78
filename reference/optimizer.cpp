// CPU reference of adamw and global_norm.
#include <cmath>

#include "reference/reference.h"

namespace wb::reference {

void adamw(const AdamwArgs& a) {
  const double b1 = a.beta1, b2 = a.beta2;
  const double correction1 = 1.0 - std::pow(b1, a.t);
  const double correction2 = 1.0 - std::pow(b2, a.t);
#pragma omp parallel for
  for (int64_t i = 0; i < a.N; ++i) {
    const double g = double(a.grads[i]) * a.grad_scale;
    const double m = b1 * a.m[i] + (1.0 - b1) * g;
    const double v = b2 * a.v[i] + (1.0 - b2) * g * g;
    const double m_hat = m / correction1;
    const double v_hat = v / correction2;
    const double p = a.params[i];
    a.params[i] = float(p - double(a.lr) * (m_hat / (std::sqrt(v_hat) + a.eps) + double(a.weight_decay) * p));
    a.m[i] = float(m);
    a.v[i] = float(v);
  }
}

void global_norm(const GlobalNormArgs& a) {
  double sum = 0;
#pragma omp parallel for reduction(+ : sum)
  for (int64_t i = 0; i < a.N; ++i) sum += double(a.grads[i]) * a.grads[i];
  a.out[0] = float(std::sqrt(sum));
}

}  // namespace wb::reference

namespace wb::references {

std::vector<Variant> optimizer() {
  return {Variant::reference("adamw", &reference::adamw), Variant::reference("global_norm", &reference::global_norm)};
}

}  // namespace wb::references
