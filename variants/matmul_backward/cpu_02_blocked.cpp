// matmul_backward, CPU variant 2: cache-blocked, OpenMP, vectorizable inner loops.
//
// Idea: both products are written so that the innermost loop runs over contiguous C:
//   dinp[r, :]     = sum_o dout[r, o] * weight[o, :]   (threads split rows)
//   dweight[o, :] += sum_r dout[r, o] * inp[r, :]      (threads split output rows)
// and each tile accumulates in a local float buffer that is then stored to dinp
// (overwritten) or added to dweight (accumulated) once. dweight takes four output rows
// at a time, so every row of inp read serves four of them. The bias gradient is the
// separate op matmul_backward_bias.
// Why it should beat variant 1: SIMD float multiply-adds over contiguous memory and
// reuse of inp rows, instead of the reference's strided double dot products.
// Limits: fp32 accumulation in sequential order (error grows like the summed length);
// dout is read with a stride of OC in the dweight sweep.
#include <algorithm>
#include <vector>

#include "contract/ops/matmul_backward.h"
#include "contract/variant.h"

namespace wb::variants {
namespace {

constexpr int64_t kOut = 4;  // output rows of dweight per tile

void matmul_backward_blocked(const MatmulBackwardArgs& a, const Launch&) {
  const int64_t rows = int64_t(a.B) * a.T, C = a.C, OC = a.OC;

#pragma omp parallel
  {
    std::vector<float> acc(kOut * C);

#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      float* d = acc.data();
      std::fill(d, d + C, 0.0f);
      for (int64_t o = 0; o < OC; ++o) {
        const float g = a.dout[r * OC + o];
        const float* w = a.weight + o * C;
#pragma omp simd
        for (int64_t c = 0; c < C; ++c) d[c] += g * w[c];
      }
      float* dinp = a.dinp + r * C;
#pragma omp simd
      for (int64_t c = 0; c < C; ++c) dinp[c] = d[c];
    }

#pragma omp for schedule(static)
    for (int64_t o0 = 0; o0 < OC; o0 += kOut) {
      const int64_t no = std::min(kOut, OC - o0);
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (int64_t r = 0; r < rows; ++r) {
        const float* x = a.inp + r * C;
        for (int64_t i = 0; i < no; ++i) {
          const float g = a.dout[r * OC + o0 + i];
          float* d = acc.data() + i * C;
#pragma omp simd
          for (int64_t c = 0; c < C; ++c) d[c] += g * x[c];
        }
      }
      for (int64_t i = 0; i < no; ++i) {
        float* dw = a.dweight + (o0 + i) * C;
        const float* d = acc.data() + i * C;
#pragma omp simd
        for (int64_t c = 0; c < C; ++c) dw[c] += d[c];
      }
    }
  }
}

}  // namespace

Variant matmul_backward_cpu_2() {
  Variant v = Variant::of(&matmul_backward_blocked);
  v.summary = "contiguous SIMD inner loops over C, local accumulators, 4 dweight rows per tile, OpenMP";
  return v;
}

}  // namespace wb::variants
