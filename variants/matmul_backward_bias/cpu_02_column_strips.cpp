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
#include "contract/ops/matmul_backward_bias.h"
#include "contract/variant.h"
#include "device/cpu/threads.h"
#include "variants/matmul_backward_bias/column_strips.h"

namespace wb::variants {

Variant matmul_backward_bias_cpu_2() {
  return cpu::threaded(
      &cpu::column_strips::bias_sums<double, MatmulBackwardBiasArgs>,
      "threads own 64-column strips, rows in order into double SIMD accumulators: the reference's bits");
}

}  // namespace wb::variants
