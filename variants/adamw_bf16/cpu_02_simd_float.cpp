// adamw_bf16, CPU variant 2: adamw cpu/2's fp32 pass with the bf16 gradient widened in
// the lanes and the bf16 parameter written from the new master weight.
//
// Idea: one `omp parallel for simd` pass over static chunks, the step's constants
// (bias corrections, lr * weight_decay) hoisted: the gradient widened by a shift,
// m, v and the master weight updated in fp32 as adamw cpu/2 updates params, m and v;
// then params[i] from the new master weight, stochastically rounded with the bits of
// stochastic_round_bits(float_bits(master), rounding_noise(i, seed)) as the contract
// says (base/stochastic_rounding.h), or with stochastic == 0 rounded to nearest even:
// both as one branch-free comparison of the dropped half with a threshold. rounding_noise's hash
// of the high half of i and the seed is the same for 2^32 consecutive indices: it is
// taken once per such block, so the loop hashes only the low half.
// Why it should beat the reference port: the port runs the step in double, one element
// at a time with pow-free but scalar arithmetic and a branching rounding; here the
// whole element, hash included (32-bit multiplies and shifts), runs in vector lanes.
// Accuracy: adamw cpu/2's (fp32 against the double truth, inside adamw's tolerances);
// the rounding noise is the port's bits, so params differ only where the fp32 master
// differs. The result does not depend on the thread count.
// Measure: OMP_NUM_THREADS=1 build/wb run adamw_bf16 --variant N --backend cpu --shape N=2359296
// for N = 1, 2 and adamw --variant 2 (figures: results/cpu-amd-epyc-avx512bf16/README.md);
// against adamw cpu/2 the hash's 32-bit multiplies, which have no single SSE2
// instruction (pmulld is SSE4.1), dominate.
// Limits: 20 bytes per element moved (master, m, v read and written, grads, params):
// memory-bound at large N.
#include "base/stochastic_rounding.h"
#include "contract/ops/adamw.h"
#include "contract/variant.h"
#include "device/cpu/bf16_lanes.h"
#include "device/cpu/threads.h"
#include "variants/adamw/adamw_step.h"

namespace wb::variants {
namespace {

void adamw_bf16_simd(const AdamwBf16Args& a, const Launch& l) {
  const cpu::AdamwStep k = cpu::adamw_step(a);
  const uint32_t stochastic = a.stochastic != 0 ? 1u : 0u;  // not a bool: a byte load keeps the loop scalar
  uint16_t* __restrict params = cpu::bits_of(a.params);
  float* __restrict master = a.master;
  float* __restrict m = a.m;
  float* __restrict v = a.v;
  const uint16_t* __restrict grads = cpu::bits_of(a.grads);
  const uint32_t seed_mix = mix32(uint32_t(*a.seed) ^ 0x9E3779B9u);  // as rounding_noise
  constexpr int64_t kBlock = int64_t(1) << 32;
  for (int64_t first = 0; first < a.N; first += kBlock) {
    const int64_t end = a.N - first < kBlock ? a.N : first + kBlock;
    const uint32_t high = mix32(uint32_t(first >> 32) ^ seed_mix);
#pragma omp parallel for simd num_threads(cpu::threads(l)) schedule(static)
    for (int64_t i = first; i < end; ++i) {
      const float next = cpu::adamw_update(k, master[i], cpu::widen(grads[i]), m[i], v[i]);
      master[i] = next;
      // Both roundings as one comparison of the dropped low half with a threshold:
      // stochastic_round_bits's noise, or to nearest even 0x8000 minus the lowest kept
      // bit (ties go up from an odd value only). The same bits as the contract's
      // functions, without their branches.
      const uint32_t bits = float_bits(next), dropped = bits & 0xFFFFu;
      const uint32_t noise = mix32(uint32_t(i) ^ high);  // taken either way: the lanes compute both sides
      const uint32_t threshold = stochastic ? (noise & 0xFFFFu) : 0x8000u - ((bits >> 16) & 1u);
      const uint16_t rounded = uint16_t((bits >> 16) + (dropped > threshold ? 1u : 0u));
      params[i] = (bits & 0x7FFFFFFFu) > 0x7F800000u ? uint16_t(kBf16CanonicalNaN) : rounded;
    }
  }
}

}  // namespace

Variant adamw_bf16_cpu_2() {
  return cpu::threaded(
      &adamw_bf16_simd,
      "one fp32 pass, constants hoisted, gradient widened by a shift, params rounded in the lanes (hash included)");
}

}  // namespace wb::variants
