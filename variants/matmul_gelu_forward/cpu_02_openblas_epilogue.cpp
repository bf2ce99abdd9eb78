// matmul_gelu_forward, CPU variant 2: one OpenBLAS sgemm, then the GELU in one
// vectorised pass.
//
// Idea: as matmul_forward cpu/3, the bias is broadcast into pre and one sgemm with
// beta = 1 adds the product to it (OpenBLAS scales C by beta in a pass of its own
// before it accumulates, so beta = 0 would cost the same pass without the bias); then
// one pass, row by row, writes gelu(pre) to out. The GELU is variants/gelu/gelu.h's
// (x sigmoid(2u) through the inline exp), in a loop that vectorises; it is compiled
// twice, for x86-64-v3 (eight lanes, fused multiply-adds) where the CPU has AVX2 and
// FMA, and for the baseline otherwise.
// Why it should beat matmul_forward cpu/3 followed by gelu_forward cpu/4: little, on a
// CPU. The (B*T, OC) activations of GPT-2 124M at B=4, T=64 (3 MiB) stay in the
// last-level cache between the sgemm and the GELU either way, so the fusion saves an
// op's dispatch and one OpenMP region, not a trip to memory. The op exists for the
// GPU, where the epilogue saves a round trip through HBM, and so that the step's
// contract is the same on every backend.
// Accuracy: pre is bit for bit matmul_forward cpu/3's out; out is within about 1.5e-6
// relative of the exact GELU of pre (bit for bit gelu_forward cpu/4's).
// Limits: the product is OpenBLAS's, threaded as OpenBLAS is built (its OpenMP build
// where CMake found it: the same pool as wb's loops).
#include <cstdint>

#include "contract/ops/matmul_gelu_forward.h"
#include "contract/variant.h"
#include "device/cpu/sgemm.h"
#include "device/cpu/target.h"
#include "variants/gelu/gelu.h"

namespace wb::variants {
namespace {

// out[o] = gelu(pre[o]) for o < n.
inline void gelu_row(float* __restrict out, const float* __restrict pre, int n) {
#pragma omp simd
  for (int o = 0; o < n; ++o) out[o] = cpu::gelu(pre[o]);
}

WB_TARGET_X86_64_V3 void gelu_row_avx2(float* out, const float* pre, int n) { gelu_row(out, pre, n); }

void matmul_gelu_openblas(const MatmulGeluForwardArgs& a, const Launch&) {
  const int rows = a.B * a.T;
  cpu::sgemm_bt_bias(a.pre, a.inp, a.weight, a.bias, rows, a.C, a.OC);
  const bool avx2 = !cpu::x86_64_v3_missing();
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; ++r) {
    float* out = a.out + int64_t(r) * a.OC;
    const float* pre = a.pre + int64_t(r) * a.OC;
    if (avx2) {
      gelu_row_avx2(out, pre, a.OC);
    } else {
      gelu_row(out, pre, a.OC);
    }
  }
}

}  // namespace

Variant matmul_gelu_forward_cpu_2() {
  Variant v = Variant::of(&matmul_gelu_openblas);
  v.summary = "bias broadcast into pre, one OpenBLAS sgemm over it (beta = 1), then the GELU in one vectorised pass";
  return v;
}

}  // namespace wb::variants
