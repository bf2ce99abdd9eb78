// matmul_forward, CPU variant 3: OpenBLAS sgemm.
//
// Idea: hand the product to the vendor library: the bias is broadcast into out, then
// out = 1 * inp @ weight^T + 1 * out in one sgemm (row-major, weight transposed).
// Why it should beat variant 2: OpenBLAS packs panels for the cache hierarchy and
// runs hand-tuned assembly micro-kernels on every core.
// Limits: whatever OpenBLAS's own threading does (its OpenMP build where CMake found
// it, sharing wb's OpenMP team).
#include <cblas.h>

#include "contract/ops/matmul_forward.h"
#include "contract/variant.h"

namespace wb::variants {
namespace {

void matmul_openblas(const MatmulForwardArgs& a, const Launch&) {
  const int rows = a.B * a.T;
  float beta = 0.0f;
  if (a.bias) {
#pragma omp parallel for
    for (int r = 0; r < rows; ++r)
      for (int o = 0; o < a.OC; ++o) a.out[int64_t(r) * a.OC + o] = a.bias[o];
    beta = 1.0f;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, a.OC, a.C, 1.0f, a.inp, a.C, a.weight, a.C, beta, a.out,
              a.OC);
}

}  // namespace

Variant matmul_forward_cpu_3() {
  Variant v = Variant::of(&matmul_openblas);
  v.summary = "bias broadcast into out, then one OpenBLAS sgemm (beta = 1)";
  return v;
}

}  // namespace wb::variants
