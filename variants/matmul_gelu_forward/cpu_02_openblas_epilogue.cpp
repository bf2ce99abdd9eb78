// matmul_gelu_forward, CPU variant 2: one OpenBLAS sgemm, then the bias and the GELU
// in one pass.
//
// Idea: unfused, the step makes three passes over the (B*T, OC) activations:
// matmul_forward cpu/3 broadcasts the bias into its output and runs sgemm with
// beta = 1 over it (read and written), then gelu_forward reads that output back to
// write the GELU. Here sgemm writes pre with beta = 0 (not read), and one pass, row by
// row, adds the bias to pre and writes gelu(pre) while the row is in L1. The GELU is
// kernels/cpu/gelu.h's (x sigmoid(2u) through the inline exp), in a loop that
// vectorises; it is compiled twice, for x86-64-v3 (eight lanes, fused multiply-adds)
// where the CPU has AVX2 and FMA, and for the baseline otherwise.
// Why it should beat matmul_forward cpu/3 followed by gelu_forward cpu/4: one pass
// over the activations instead of two after the product, and one OpenMP region fewer.
// Accuracy: pre is OpenBLAS's sgemm plus the bias; out is within about 1.5e-6
// relative of the exact GELU of pre (gelu_forward cpu/3 and cpu/4 compute it alike).
// Limits: the product is OpenBLAS's, threaded as OpenBLAS is built (its OpenMP build
// where CMake found it: the same pool as wb's loops); the GEMM itself is as fast as
// matmul_forward cpu/3's.
#include <cblas.h>

#include <cstdint>

#include "kernels/cpu/gelu.h"
#include "kernels/cpu/target.h"
#include "kernels/ops/matmul_gelu_forward.h"
#include "kernels/variant.h"

namespace wb::variants {
namespace {

// pre[o] += bias[o] (when there is one), out[o] = gelu(pre[o]), for o < n.
inline void bias_gelu_row(float* __restrict out, float* __restrict pre, const float* __restrict bias, int n) {
  if (bias) {
#pragma omp simd
    for (int o = 0; o < n; ++o) {
      const float p = pre[o] + bias[o];
      pre[o] = p;
      out[o] = cpu::gelu(p);
    }
  } else {
#pragma omp simd
    for (int o = 0; o < n; ++o) out[o] = cpu::gelu(pre[o]);
  }
}

WB_TARGET_X86_64_V3 void bias_gelu_row_avx2(float* out, float* pre, const float* bias, int n) {
  bias_gelu_row(out, pre, bias, n);
}

void matmul_gelu_openblas(const MatmulGeluForwardArgs& a, const Launch&) {
  const int rows = a.B * a.T;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, a.OC, a.C, 1.0f, a.inp, a.C, a.weight, a.C, 0.0f, a.pre,
              a.OC);
  const bool avx2 = !cpu::x86_64_v3_missing();
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; ++r) {
    float* out = a.out + int64_t(r) * a.OC;
    float* pre = a.pre + int64_t(r) * a.OC;
    if (avx2) {
      bias_gelu_row_avx2(out, pre, a.bias, a.OC);
    } else {
      bias_gelu_row(out, pre, a.bias, a.OC);
    }
  }
}

}  // namespace

Variant matmul_gelu_forward_cpu_2() {
  Variant v = Variant::of(&matmul_gelu_openblas);
  v.op = "matmul_gelu_forward";
  v.backend = Backend::cpu;
  v.id = 2;
  v.name = "openblas_epilogue";
  v.summary = "one OpenBLAS sgemm into pre (beta = 0), then bias and GELU row by row in one vectorised pass";
  return v;
}

}  // namespace wb::variants
