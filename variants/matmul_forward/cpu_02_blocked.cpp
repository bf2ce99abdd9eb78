// matmul_forward, CPU variant 2: cache-blocked, OpenMP, vectorizable inner loop.
//
// Idea: transpose the weight once into the workspace (C x OC), so that the innermost
// loop runs over output columns: out[r, o..] += x[r, c] * wT[c, o..] -- contiguous,
// no reduction, which the compiler turns into SIMD. Rows are taken four at a time so
// that every row of wT loaded into cache serves four outputs, and output columns in
// blocks of 256 so that the accumulators stay in L1. Threads split the row tiles.
// Why it should beat variant 1: the reference's dot products walk weight rows with a
// scalar double accumulator; here every multiply-add is a float SIMD lane and the
// weight block is reused from cache.
// Limits: fp32 accumulation in sequential order over C (error grows like C); the
// transpose costs C*OC per call and a workspace of the same size.
#include <algorithm>

#include "contract/ops/matmul_forward.h"
#include "contract/variant.h"

namespace wb::variants {
namespace {

constexpr int64_t kRows = 4;    // rows of inp per tile
constexpr int64_t kCols = 256;  // output columns per block

void matmul_blocked(const MatmulForwardArgs& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T, C = a.C, OC = a.OC;
  float* wT = static_cast<float*>(l.workspace);  // (C, OC)
#pragma omp parallel for
  for (int64_t o = 0; o < OC; ++o)
    for (int64_t c = 0; c < C; ++c) wT[c * OC + o] = a.weight[o * C + c];

#pragma omp parallel for schedule(static)
  for (int64_t r0 = 0; r0 < rows; r0 += kRows) {
    const int64_t nr = std::min(kRows, rows - r0);
    float acc[kRows][kCols];
    for (int64_t o0 = 0; o0 < OC; o0 += kCols) {
      const int64_t no = std::min(kCols, OC - o0);
      for (int64_t i = 0; i < nr; ++i)
        for (int64_t j = 0; j < no; ++j) acc[i][j] = a.bias ? a.bias[o0 + j] : 0.0f;
      for (int64_t c = 0; c < C; ++c) {
        const float* w = wT + c * OC + o0;
        for (int64_t i = 0; i < nr; ++i) {
          const float x = a.inp[(r0 + i) * C + c];
#pragma omp simd
          for (int64_t j = 0; j < no; ++j) acc[i][j] += x * w[j];
        }
      }
      for (int64_t i = 0; i < nr; ++i)
        for (int64_t j = 0; j < no; ++j) a.out[(r0 + i) * OC + o0 + j] = acc[i][j];
    }
  }
}

}  // namespace

Variant matmul_forward_cpu_2() {
  Variant v = Variant::of(&matmul_blocked);
  v.summary = "weight transposed into the workspace, 4-row x 256-column tiles, SIMD inner loop over columns, OpenMP";
  v.workspace = [](const Shape& s, const ParamValues&) { return std::size_t(s.C * s.OC) * sizeof(float); };
  return v;
}

}  // namespace wb::variants
