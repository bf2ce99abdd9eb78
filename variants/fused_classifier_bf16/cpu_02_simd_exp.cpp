// fused_classifier_bf16, CPU variant 2: fused_classifier cpu/3's vectorised passes over
// a row widened into an fp32 buffer.
//
// Idea: each thread takes whole rows (OpenMP, `threads` of them) and widens a row's V
// bf16 logits by shifts into its own fp32 buffer (200 KB at GPT-2's vocabulary: L2);
// then the fp32 rung's passes over the buffer (variants/softmax/softmax_row.h): the max as a
// SIMD max-reduction, e = exp(x - max) in place through the inline polynomial exp, summed
// in fp32 lanes over blocks of 256 and the blocks in double. The loss, max + log(sum) -
// x[target], is fp32; each dlogit e * dloss / sum (minus dloss at the target) is rounded
// once to nearest even by integer arithmetic (device/cpu/bf16_lanes.h) over the bf16
// logits; the padding Vp - V is written as zeros.
// Why it should beat the reference port: the port takes two double exps per logit in
// scalar loops and rounds through the branching to_bf16; here every pass runs in
// vector lanes with one fp32 exp per logit.
// Accuracy: as fused_classifier cpu/3 (fast_exp within 2e-7 relative, block sums in
// double) beside the half ulp of the dlogits' one rounding. One row is one thread's in
// a fixed order: the result does not depend on the thread count.
// Measure: OMP_NUM_THREADS=1 build/wb run fused_classifier_bf16 --variant N --backend cpu --shape B=4,T=64,V=50257,Vp=50304
// for N = 1, 2 and fused_classifier --variant 3 (the fp32 SIMD rung; cpu/2 is the expf
// one) (figures: results/cpu-amd-epyc-avx512bf16/README.md).
// Limits: the row's trips through L2; the baseline build's SSE is four fp32 lanes.
#include <vector>

#include "contract/ops/fused_classifier.h"
#include "contract/variant.h"
#include "device/cpu/bf16_lanes.h"
#include "device/cpu/threads.h"
#include "variants/softmax/softmax_row.h"

namespace wb::variants {
namespace {

void classifier_bf16_simd(const FusedClassifierBf16Args& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T, V = a.V, Vp = a.Vp;
#pragma omp parallel num_threads(cpu::threads(l))
  {
    std::vector<float> buffer(V);
    float* __restrict e = buffer.data();
#pragma omp for schedule(static)
    for (int64_t row = 0; row < rows; ++row) {
      uint16_t* __restrict x = cpu::bits_of(a.logits) + row * Vp;
#pragma omp simd
      for (int64_t i = 0; i < V; ++i) e[i] = cpu::widen(x[i]);
      const int64_t target = a.targets[row];
      const cpu::ClassifierExp c = cpu::classifier_exp(e, V, target, a.dloss);
      a.losses[row] = c.loss;
#pragma omp simd
      for (int64_t i = 0; i < V; ++i) x[i] = cpu::round_bits(e[i] * c.scale);
      x[target] = cpu::round_bits(e[target] * c.scale - a.dloss);
      for (int64_t i = V; i < Vp; ++i) x[i] = 0;
    }
  }
}

}  // namespace

Variant fused_classifier_bf16_cpu_2() {
  return cpu::threaded(
      &classifier_bf16_simd,
      "rows over threads; each row widened into an fp32 buffer, SIMD max, polynomial exp and block sums, dlogits "
      "rounded once");
}

}  // namespace wb::variants
