// fused_residual_layernorm_forward_bf16, CPU variant 2: residual and layernorm of a row
// in one pass over it, fp32 SIMD on bf16 storage.
//
// Idea: each thread takes whole rows (OpenMP, `threads` of them). For a row, one SIMD
// loop widens inp1 and inp2 by shifts, adds in fp32, rounds the sum once to nearest
// even into residual, and keeps the widened ROUNDED residual in the thread's fp32
// buffer (in L1): the op normalises the stored bf16 residual, the values
// layernorm_backward reads back. Then layernorm_forward_bf16 cpu/2's row loops over the
// buffer (variants/layernorm/layernorm_row_bf16.h): fp32 statistics, each output rounded once.
// Why it should beat the reference port: the port runs double arithmetic one scalar
// element at a time; here every loop is fp32 vector lanes, and the residual is never
// read back from memory.
// Accuracy: the residual is the port's bits (the fp32 sum of two bf16s, rounded once);
// normed as layernorm_forward_bf16 cpu/2. The result does not depend on the thread
// count.
// Measure: OMP_NUM_THREADS=1 build/wb run fused_residual_layernorm_forward_bf16 --variant N --backend cpu --shape B=4,T=64,C=768
// for N = 1, 2 and fused_residual_layernorm_forward --variant 2 (figures:
// results/cpu-amd-epyc-avx512bf16/README.md).
// Limits: B*T rows must outnumber the threads.
#include "contract/ops/fused_residual_layernorm_forward.h"
#include "contract/variant.h"
#include "device/cpu/threads.h"
#include "variants/layernorm/layernorm_row_bf16.h"

namespace wb::variants {
namespace {

void fused_residual_layernorm_bf16_simd(const FusedResidualLayernormForwardBf16Args& a, const Launch& l) {
  cpu::layernorm_rows_bf16(a, a.normed, cpu::threads(l), [&](int64_t row, float* __restrict x) {
    const uint16_t* __restrict in1 = cpu::bits_of(a.inp1) + row * a.C;
    const uint16_t* __restrict in2 = cpu::bits_of(a.inp2) + row * a.C;
    uint16_t* __restrict residual = cpu::bits_of(a.residual) + row * a.C;
#pragma omp simd
    for (int64_t c = 0; c < a.C; ++c) {
      const uint16_t r = cpu::round_bits(cpu::widen(in1[c]) + cpu::widen(in2[c]));
      residual[c] = r;
      x[c] = cpu::widen(r);
    }
  });
}

}  // namespace

Variant fused_residual_layernorm_forward_bf16_cpu_2() {
  return cpu::threaded(
      &fused_residual_layernorm_bf16_simd,
      "rows over threads; residual rounded once and kept widened in an fp32 row buffer, then fp32 SIMD layernorm, one "
      "rounding");
}

}  // namespace wb::variants
