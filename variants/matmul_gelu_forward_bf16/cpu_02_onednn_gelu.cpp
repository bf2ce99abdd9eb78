// matmul_gelu_forward_bf16, CPU variant 2: oneDNN's bf16 matmul into an fp32
// accumulator, then one SIMD pass writes pre and its GELU, each rounded once.
//
// Idea: a oneDNN matmul primitive (device/cpu/onednn.h's bf16_matmul) with bf16 src inp
// (rows x C), weights (C x OC, the (OC, C) weight read transposed) and bias, and an fp32
// dst in the workspace: oneDNN accumulates in fp32 (AVX512-BF16's `vdpbf16ps` where the
// CPU has it) and adds the bias in fp32. Then an `omp parallel for simd` loop widens nothing and rounds twice per
// element from the same fp32 sum: pre = bf16(acc), out = bf16(gelu(acc)) with
// variants/gelu/gelu.h's GELU and device/cpu/bf16_lanes.h's branch-free rounding -- the
// contract's "GELU of the unrounded sum", as a GEMM epilogue computes it.
// Why it should beat the reference port: the port sums in double, one scalar dot
// product per output (most of a GPT-2 124M bf16 CPU step at B=4 T=64 before this rung:
// `trainer --precision bf16 --op-times`, figures in results/cpu-amd-epyc-avx512bf16/
// README.md); this is a tuned GEMM plus one pass over the
// output. A oneDNN GELU post-op writing bf16 would skip the accumulator, but pre would
// then need a second GEMM or a second output the post-op cannot give.
// Measure: build/wb run matmul_gelu_forward_bf16 --variant N --backend cpu --shape B=4,T=64,C=768,OC=3072
// for N = 1, 2, interleaved (figures: results/cpu-amd-epyc-avx512bf16/README.md).
// Limits: the workspace holds rows x OC floats (an extra 4 bytes written and read per
// output); oneDNN threads on its own (Debian's OpenMP build, wb's team); needs oneDNN's
// bf16 matmul, which Debian 12's oneDNN 2.6 makes only for AVX-512 CPUs.
#include <cstdint>

#include "contract/ops/matmul_gelu_forward.h"
#include "contract/variant.h"
#include "device/cpu/bf16_lanes.h"
#include "device/cpu/onednn.h"
#include "device/cpu/threads.h"
#include "variants/gelu/gelu.h"

namespace wb::variants {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

void matmul_gelu_bf16_onednn(const MatmulGeluForwardBf16Args& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T, n = rows * a.OC;
  float* acc = cpu::accumulator(l, n, "matmul_gelu_forward_bf16 cpu/2");
  // weight (OC, C) row-major is the (C x OC) weights read as their transpose.
  cpu::bf16_matmul(a.inp, tag::ab, a.weight, tag::ba, a.bias, acc, dt::f32, rows, a.C, a.OC);
  cpu::round_pre_and_gelu(acc, a.pre, a.out, n, cpu::threads(l));
}

}  // namespace

Variant matmul_gelu_forward_bf16_cpu_2() {
  return cpu::threaded_onednn_bf16(
      &matmul_gelu_bf16_onednn,
      "oneDNN bf16 matmul (bias fused) into an fp32 accumulator, then pre and GELU rounded once each, SIMD",
      [](const Shape& s) { return s.B * s.T * s.OC; });
}

}  // namespace wb::variants
