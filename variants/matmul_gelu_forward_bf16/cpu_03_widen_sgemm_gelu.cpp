// matmul_gelu_forward_bf16, CPU variant 3: widen to fp32, one OpenBLAS sgemm with the
// bias, then pre and its GELU rounded once each from the same fp32 sum.
//
// Idea: the portable route of matmul_forward_bf16 cpu/2 with cpu/2's epilogue: widen
// inp and weight to fp32 (exact) into the workspace, broadcast the bias into the fp32
// accumulator, one sgemm with beta = 1 (acc = inp32 @ weight32^T + acc), then one SIMD
// pass writes pre = bf16(acc) and out = bf16(gelu(acc)): the GELU of the unrounded sum,
// as the contract asks, with variants/gelu/gelu.h's GELU and device/cpu/bf16_lanes.h's
// branch-free rounding.
// Why: on a CPU where oneDNN makes no bf16 matmul (no AVX-512: Debian 12's oneDNN 2.6),
// cpu/2 is skipped, and the reference port (one scalar double dot product per output)
// was all that was left: most of a bf16 CPU training step. OpenBLAS's sgemm runs on every
// x86-64 CPU with the kernels of its level.
// Against cpu/2 where both run: two widening passes and fp32 operands (twice the bytes
// through the caches, no bf16 dot products), so slower; the default plan takes the
// highest id that runs, this one, and a best.json section with bf16 entries picks cpu/2
// where a sweep measured it faster.
// Measure: build/wb run matmul_gelu_forward_bf16 --variant N --backend cpu --shape B=4,T=64,C=768,OC=3072
// for N = 2, 3, and under tools/capped.sh (AVX2, OpenBLAS's Haswell kernels) for N = 1, 3
// (figures: results/cpu-intel-r-xeon-r-processor-amx/README.md).
// Limits: the workspace holds the widened operands and the accumulator,
// (B*T*C + OC*C + B*T*OC) floats.
#include <cstdint>
#include <stdexcept>

#include "contract/ops/matmul_gelu_forward.h"
#include "contract/variant.h"
#include "device/cpu/bf16_lanes.h"
#include "device/cpu/sgemm.h"
#include "device/cpu/threads.h"
#include "variants/gelu/gelu.h"

namespace wb::variants {
namespace {

std::size_t workspace_floats(int64_t rows, int64_t C, int64_t OC) { return std::size_t(rows * C + OC * C + rows * OC); }

void matmul_gelu_bf16_widen_sgemm(const MatmulGeluForwardBf16Args& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T, C = a.C, OC = a.OC;
  if (l.workspace_bytes < workspace_floats(rows, C, OC) * sizeof(float))
    throw std::logic_error("matmul_gelu_forward_bf16 cpu/3: workspace too small for the fp32 operands");
  const int threads = cpu::threads(l);
  float* inp = static_cast<float*>(l.workspace);
  float* weight = inp + rows * C;
  float* acc = weight + OC * C;
  cpu::widen_all(a.inp, inp, rows * C, threads);
  cpu::widen_all(a.weight, weight, OC * C, threads);
  cpu::sgemm_bt_bias(acc, inp, weight, a.bias, rows, C, OC, threads);
  cpu::round_pre_and_gelu(acc, a.pre, a.out, rows * OC, threads);
}

}  // namespace

Variant matmul_gelu_forward_bf16_cpu_3() {
  Variant v = cpu::threaded(
      &matmul_gelu_bf16_widen_sgemm,
      "widen inp and weight to fp32, one OpenBLAS sgemm with the bias, pre and GELU rounded once each, SIMD");
  v.workspace = [](const Shape& s, const ParamValues&) {
    return workspace_floats(int64_t(s.B) * s.T, s.C, s.OC) * sizeof(float);
  };
  return v;
}

}  // namespace wb::variants
