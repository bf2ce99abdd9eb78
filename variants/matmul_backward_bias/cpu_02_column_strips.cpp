// matmul_backward_bias, CPU variant 2: strips of 64 columns over threads, rows walked
// in order, SIMD double accumulators.
//
// Idea: threads (`threads` of them) take strips of 64 contiguous columns of dout; a
// thread walks the B*T rows in order, adding the strip of each row into 64 double
// accumulators (a SIMD loop over the strip), then adds the accumulators to dbias.
// Why it should beat variant 1: the reference's thread sums one column at a time,
// walking the rows with stride OC: a new cache line for every value it adds, and the
// line's other 15 values are read again by other columns later; a strip uses whole
// lines, in a pattern the hardware prefetcher follows.
// Determinism: every column adds its rows in row order in double, as the reference
// does: the same bits as the reference, at any thread count.
// Limits: OC/64 strips (12 at OC=768) is the most parallelism there is; a few rows and
// many columns would be better split by rows too.
#include <algorithm>

#include "kernels/cpu/threads.h"
#include "kernels/ops/matmul_backward_bias.h"
#include "kernels/variant.h"

namespace wb::variants {
namespace {

constexpr int64_t kStrip = 64;

void bias_strips(const MatmulBackwardBiasArgs& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T, OC = a.OC;
#pragma omp parallel for num_threads(cpu::threads(l)) schedule(static)
  for (int64_t o0 = 0; o0 < OC; o0 += kStrip) {
    const int64_t width = std::min(kStrip, OC - o0);
    double acc[kStrip] = {};
    for (int64_t r = 0; r < rows; ++r) {
      const float* __restrict d = a.dout + r * OC + o0;
#pragma omp simd
      for (int64_t j = 0; j < width; ++j) acc[j] += d[j];
    }
    for (int64_t j = 0; j < width; ++j) a.dbias[o0 + j] += float(acc[j]);
  }
}

}  // namespace

Variant matmul_backward_bias_cpu_2() {
  Variant v = Variant::of(&bias_strips);
  v.summary = "threads own 64-column strips, rows in order into double SIMD accumulators: the reference's bits";
  v.params = {cpu::threads_param()};
  return v;
}

}  // namespace wb::variants
