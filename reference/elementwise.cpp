// CPU reference of the elementwise ops: gelu_forward, gelu_backward, residual_forward.
#include <cmath>

#include "reference/reference.h"

namespace wb::reference {
namespace {

const double kGeluScale = std::sqrt(2.0 / M_PI);
constexpr double kGeluCubic = 0.044715;

}  // namespace

double gelu(double x) { return 0.5 * x * (1.0 + std::tanh(kGeluScale * (x + kGeluCubic * x * x * x))); }

namespace {

// gelu_forward and its bf16 port, on either storage: the GELU in double of the widened
// input, each result rounded once.
template <class Float>
void gelu_forward_on(const GeluForwardArgsOn<Float>& a) {
#pragma omp parallel for
  for (int64_t i = 0; i < a.N; ++i) store(a.out[i], gelu(value(a.inp[i])));
}

// gelu_backward and its bf16 port, on either storage: gelu'(inp) * dout in double of the
// widened values, each result rounded once.
template <class Float>
void gelu_backward_on(const GeluBackwardArgsOn<Float>& a) {
#pragma omp parallel for
  for (int64_t i = 0; i < a.N; ++i) {
    const double x = value(a.inp[i]);
    const double th = std::tanh(kGeluScale * (x + kGeluCubic * x * x * x));
    const double dudx = kGeluScale * (1.0 + 3.0 * kGeluCubic * x * x);
    const double grad = 0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * dudx;
    store(a.dinp[i], grad * value(a.dout[i]));
  }
}

}  // namespace

void gelu_forward(const GeluForwardArgs& a) { gelu_forward_on(a); }
void gelu_backward(const GeluBackwardArgs& a) { gelu_backward_on(a); }

void residual_forward(const ResidualForwardArgs& a) {
#pragma omp parallel for
  for (int64_t i = 0; i < a.N; ++i) a.out[i] = a.inp1[i] + a.inp2[i];
}

// The bf16 ports: the fp32 references' arithmetic (in double) on the widened inputs,
// each result rounded once from double to bf16.
void gelu_forward_bf16(const GeluForwardBf16Args& a) { gelu_forward_on(a); }
void gelu_backward_bf16(const GeluBackwardBf16Args& a) { gelu_backward_on(a); }

// The bf16 port: the fp32 sum of the widened inputs, rounded once to nearest even.
void residual_forward_bf16(const ResidualForwardBf16Args& a) {
#pragma omp parallel for
  for (int64_t i = 0; i < a.N; ++i) a.out[i] = to_bf16(to_float(a.inp1[i]) + to_float(a.inp2[i]));
}

}  // namespace wb::reference

namespace wb::references {

std::vector<Variant> elementwise() {
  return {WB_REFERENCE(gelu_forward),           WB_REFERENCE(gelu_backward),
          WB_REFERENCE(residual_forward),       WB_REFERENCE_PORT(residual_forward_bf16),
          WB_REFERENCE_PORT(gelu_forward_bf16), WB_REFERENCE_PORT(gelu_backward_bf16)};
}

}  // namespace wb::references
