// matmul_backward_bias_bf16, CPU variant 2: matmul_backward_bias cpu/2's column strips
// on bf16 dout, fp32 SIMD accumulators, each dbias rounded once.
//
// Idea: threads (`threads` of them) take strips of 64 contiguous columns of dout; a
// thread walks the B*T rows in order, widening the strip of each row by shifts and
// adding it into 64 fp32 accumulators (a SIMD loop over the strip), then rounds each
// dbias once from its old value widened plus its column's sum, to nearest even by
// integer arithmetic (device/cpu/bf16_lanes.h; the same bits as to_bf16), as the
// contract says.
// Why it should beat the reference port: the port's thread sums one column at a time in
// double, walking the rows with stride OC: a new cache line for every value it adds,
// and the line's other 31 values read again by other columns later; a strip uses whole
// lines, in vector lanes, in a pattern the hardware prefetcher follows.
// Determinism: the strips are fixed by the shape and every column adds its rows in row
// order: the same bits at any thread count.
// Accuracy: the column sums run in fp32 over the B*T rows (the port's in double), as
// the CUDA rungs do; the op's tolerance is summed over those rows.
// Measure: OMP_NUM_THREADS=1 build/wb run matmul_backward_bias_bf16 --variant N --backend cpu --shape B=4,T=64,OC=768
// for N = 1, 2 and matmul_backward_bias --variant 2, and the same at OC=2304, 3072
// (figures: results/cpu-amd-epyc-avx512bf16/README.md). Why it should beat the fp32
// rung too: half the bytes of dout, fp32 lanes where it keeps double accumulators.
// Limits: OC/64 strips (12 at OC=768) is the most parallelism there is; a few rows and
// many columns would be better split by rows too.
#include "contract/ops/matmul_backward_bias.h"
#include "contract/variant.h"
#include "device/cpu/threads.h"
#include "variants/matmul_backward_bias/column_strips.h"

namespace wb::variants {

Variant matmul_backward_bias_bf16_cpu_2() {
  return cpu::threaded(&cpu::column_strips::bias_sums<float, MatmulBackwardBiasBf16Args>,
                       "threads own 64-column strips, rows in order into fp32 SIMD accumulators (bf16 widened by "
                       "shifts), each dbias rounded once");
}

}  // namespace wb::variants
