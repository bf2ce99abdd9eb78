#pragma once
// The column sums of matmul_backward_bias cpu/2 (fp32 dout, double accumulators: the
// reference's bits) and matmul_backward_bias_bf16 cpu/2 (bf16 dout widened by shifts,
// fp32 accumulators, each dbias rounded once), templated on the accumulator type and
// the argument struct: threads take strips of kStrip contiguous columns of dout; a
// thread walks the B*T rows in order, adding the strip of each row into kStrip
// accumulators (a SIMD loop over the strip), then adds each accumulator into its dbias
// (device/cpu/bf16_lanes.h, add_into). Every column adds its rows in row order: the
// same bits at any thread count.
#include <algorithm>
#include <cstdint>

#include "contract/variant.h"
#include "device/cpu/bf16_lanes.h"
#include "device/cpu/threads.h"

namespace wb::cpu::column_strips {

constexpr int64_t kStrip = 64;

template <class Acc, class Args>
void bias_sums(const Args& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T, OC = a.OC;
#pragma omp parallel for num_threads(threads(l)) schedule(static)
  for (int64_t o0 = 0; o0 < OC; o0 += kStrip) {
    const int64_t width = std::min(kStrip, OC - o0);
    Acc acc[kStrip] = {};
    for (int64_t r = 0; r < rows; ++r) {
      const auto* __restrict d = lanes(a.dout) + r * OC + o0;
#pragma omp simd
      for (int64_t j = 0; j < width; ++j) acc[j] += widen(d[j]);
    }
    auto* __restrict dbias = lanes(a.dbias) + o0;
#pragma omp simd
    for (int64_t j = 0; j < width; ++j) add_into(dbias[j], float(acc[j]));
  }
}

}  // namespace wb::cpu::column_strips
