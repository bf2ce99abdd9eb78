// matmul_backward_bf16, CPU variant 3: two oneDNN bf16 matmuls into an fp32
// accumulator, each output rounded once.
//
// Idea: cpu/2's two products without widening the operands: oneDNN matmul primitives
// (device/cpu/onednn.h's bf16_matmul) read the bf16 matrices as they are stored and
// accumulate in fp32 (AVX512-BF16's `vdpbf16ps` where the CPU has it) into the
// workspace:
//   acc (B*T x C) = dout (B*T x OC) @ weight (OC x C)               -> dinp = bf16(acc)
//   acc (OC x C)  = dout^T (OC x B*T, dout read transposed) @ inp   -> dweight = bf16(dweight + acc)
// so dinp is rounded once and dweight's accumulation happens in fp32 before its one
// rounding (device/cpu/bf16_lanes.h's branch-free rounding, one SIMD pass each).
// Why it should beat cpu/2: no widening passes, half the bytes of the operands through
// the caches, twice the multiply-adds per instruction of fp32 FMA.
// Measure: build/wb run matmul_backward_bf16 --variant N --backend cpu --shape B=4,T=64,C=768,OC=3072
// for N = 2, 3, interleaved (figures: results/cpu-amd-epyc-avx512bf16/README.md).
// Limits: the workspace holds max(B*T x C, OC x C) floats; oneDNN threads on its own;
// needs oneDNN's bf16 matmul, which Debian 12's oneDNN 2.6 makes only for AVX-512 CPUs.
#include <algorithm>
#include <cstdint>

#include "contract/ops/matmul_backward.h"
#include "contract/variant.h"
#include "device/cpu/bf16_lanes.h"
#include "device/cpu/onednn.h"
#include "device/cpu/threads.h"

namespace wb::variants {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

int64_t accumulator_floats(int64_t rows, int64_t C, int64_t OC) { return std::max(rows * C, OC * C); }

void matmul_backward_bf16_onednn(const MatmulBackwardBf16Args& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T, C = a.C, OC = a.OC;
  float* acc = cpu::accumulator(l, accumulator_floats(rows, C, OC), "matmul_backward_bf16 cpu/3");
  const int threads = cpu::threads(l);

  cpu::bf16_matmul(a.dout, tag::ab, a.weight, tag::ab, nullptr, acc, dt::f32, rows, OC, C);
  uint16_t* dinp = cpu::bits_of(a.dinp);
#pragma omp parallel for simd num_threads(threads) schedule(static)
  for (int64_t i = 0; i < rows * C; ++i) dinp[i] = cpu::round_bits(acc[i]);

  cpu::bf16_matmul(a.dout, tag::ba, a.inp, tag::ab, nullptr, acc, dt::f32, OC, rows, C);  // dout read transposed
  uint16_t* dweight = cpu::bits_of(a.dweight);
#pragma omp parallel for simd num_threads(threads) schedule(static)
  for (int64_t i = 0; i < OC * C; ++i) dweight[i] = cpu::round_bits(cpu::widen(dweight[i]) + acc[i]);
}

}  // namespace

Variant matmul_backward_bf16_cpu_3() {
  return cpu::threaded_onednn_bf16(
      &matmul_backward_bf16_onednn,
      "two oneDNN bf16 matmuls into an fp32 accumulator (dout read transposed for dweight), rounded once",
      [](const Shape& s) { return accumulator_floats(s.B * s.T, s.C, s.OC); });
}

}  // namespace wb::variants
