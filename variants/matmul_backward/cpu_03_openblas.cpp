// matmul_backward, CPU variant 3: OpenBLAS.
//
// Idea: two sgemm calls write straight into the gradients:
//   dinp    (B*T x C)   = dout (B*T x OC) @ weight (OC x C)    beta = 0 (overwritten)
//   dweight (OC x C)   += dout^T          @ inp    (B*T x C)   beta = 1 (accumulated)
// The bias gradient is the separate op matmul_backward_bias.
// Why it should beat variant 2: packed, cache-aware panels and tuned micro-kernels.
// Limits: whatever OpenBLAS's own threading does (its OpenMP build where CMake found
// it, sharing wb's OpenMP team); no workspace.
#include "contract/ops/matmul_backward.h"
#include "contract/variant.h"
#include "device/cpu/sgemm.h"

namespace wb::variants {
namespace {

void matmul_backward_openblas(const MatmulBackwardArgs& a, const Launch&) {
  const int64_t rows = int64_t(a.B) * a.T;
  cpu::sgemm(CblasNoTrans, CblasNoTrans, rows, a.C, a.OC, a.dout, a.weight, 0.0f, a.dinp);
  cpu::sgemm(CblasTrans, CblasNoTrans, a.OC, a.C, rows, a.dout, a.inp, 1.0f, a.dweight);
}

}  // namespace

Variant matmul_backward_cpu_3() {
  Variant v = Variant::of(&matmul_backward_openblas);
  v.summary = "two OpenBLAS sgemm calls, beta = 0 for dinp and 1 for dweight";
  return v;
}

}  // namespace wb::variants
