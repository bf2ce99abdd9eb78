// matmul_forward, CPU variant 3: OpenBLAS sgemm.
//
// Idea: hand the product to the vendor library: the bias is broadcast into out, then
// out = 1 * inp @ weight^T + 1 * out in one sgemm (row-major, weight transposed:
// device/cpu/sgemm.h's sgemm_bt_bias).
// Why it should beat variant 2: OpenBLAS packs panels for the cache hierarchy and
// runs hand-tuned assembly micro-kernels on every core.
// Limits: whatever OpenBLAS's own threading does (its OpenMP build where CMake found
// it, sharing wb's OpenMP team).
#include "contract/ops/matmul_forward.h"
#include "contract/variant.h"
#include "device/cpu/sgemm.h"

namespace wb::variants {
namespace {

void matmul_openblas(const MatmulForwardArgs& a, const Launch&) {
  cpu::sgemm_bt_bias(a.out, a.inp, a.weight, a.bias, int64_t(a.B) * a.T, a.C, a.OC);
}

}  // namespace

Variant matmul_forward_cpu_3() {
  Variant v = Variant::of(&matmul_openblas);
  v.summary = "bias broadcast into out, then one OpenBLAS sgemm (beta = 1)";
  return v;
}

}  // namespace wb::variants
