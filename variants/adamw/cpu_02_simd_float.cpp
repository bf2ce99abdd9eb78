// adamw, CPU variant 2: one vectorised float pass, the step's constants hoisted.
//
// Idea: everything that does not depend on the element -- 1 / (1 - beta1^t),
// 1 / sqrt(1 - beta2^t), lr, lr * weight_decay -- is computed once; the loop is then
// a straight line of float multiply-adds, one sqrt and one division per parameter,
// `omp parallel for simd` over contiguous chunks: each thread streams its share of
// params, m, v and grads once, four (SSE) lanes at a time.
//   m_hat / (sqrt(v_hat) + eps) = (m / c1) / (sqrt(v) / sqrt(c2) + eps)
// Why it should beat variant 1: the reference converts every value to double and
// divides by both corrections per element; float SIMD does four parameters per
// instruction and the update is memory-bound (16 bytes read and 12 written per
// parameter), so what is left is the streaming.
// Accuracy: a few float roundings per value (relative 1e-7 each); the op holds params
// to 1e-6 + 1e-5 |ref| and the moments to 1e-5 relative.
// Limits: with N in the millions the pass is bound by memory bandwidth; more threads
// help only until the socket's bandwidth is used.
#include "contract/ops/adamw.h"
#include "contract/variant.h"
#include "device/cpu/threads.h"
#include "variants/adamw/adamw_step.h"

namespace wb::variants {
namespace {

void adamw_simd(const AdamwArgs& a, const Launch& l) {
  const cpu::AdamwStep k = cpu::adamw_step(a);
  float* __restrict params = a.params;
  float* __restrict m = a.m;
  float* __restrict v = a.v;
  const float* __restrict grads = a.grads;
#pragma omp parallel for simd num_threads(cpu::threads(l)) schedule(static)
  for (int64_t i = 0; i < a.N; ++i) {
    params[i] = cpu::adamw_update(k, params[i], grads[i], m[i], v[i]);
  }
}

}  // namespace

Variant adamw_cpu_2() {
  return cpu::threaded(&adamw_simd,
                       "one float pass with the step's constants hoisted: SIMD loop (sqrt included), OpenMP chunks");
}

}  // namespace wb::variants
