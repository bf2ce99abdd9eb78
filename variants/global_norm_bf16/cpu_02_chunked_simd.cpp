// global_norm_bf16, CPU variant 2: global_norm cpu/2's fixed chunks on bf16 bits.
//
// Idea: the N gradients cut into chunks of 2048; threads (`threads` of them) take
// contiguous runs of chunks; a chunk's sum of squares is one SIMD reduction in fp32
// lanes of the gradients widened by shifts (exact), converted to double and written to
// the workspace; then one thread adds the chunk sums in chunk order in double (as the
// fp32 rung: at GPT-2's 124M gradients that is 60 000 chunk sums, too many for an fp32
// running total to stay within the tolerance in the worst case) and takes the square
// root in fp32.
// Why it should beat the reference port: the port widens and squares one element at a
// time in a scalar loop; here eight bf16 (SSE: two groups of four lanes) per
// iteration, and half the bytes of global_norm cpu/2.
// Determinism: the chunks are fixed by N, not by the thread count, and are added in
// chunk order: every thread count gives the same bits.
// Accuracy: a chunk adds at most 512 squares per lane in fp32 (relative error about
// 1e-6 typically, under 3e-5 in the worst case); the op's tolerance is 1e-4 relative.
// Measure: OMP_NUM_THREADS=1 build/wb run global_norm_bf16 --variant N --backend cpu --shape N=2359296
// for N = 1, 2 and global_norm --variant 2 (figures: results/cpu-amd-epyc-avx512bf16/README.md).
// Limits: workspace of one double per chunk (N / 256 bytes); memory-bound at large N.
#include <cmath>

#include "contract/ops/global_norm.h"
#include "contract/variant.h"
#include "device/cpu/bf16_lanes.h"
#include "device/cpu/threads.h"
#include "variants/global_norm/chunked_squares.h"

namespace wb::variants {
namespace {

void global_norm_bf16_chunked(const GlobalNormBf16Args& a, const Launch& l) {
  const double total = cpu::chunked_squares::sum_of_squares(cpu::bits_of(a.grads), a.N,
                                                            static_cast<double*>(l.workspace), cpu::threads(l));
  a.out[0] = std::sqrt(float(total));
}

}  // namespace

Variant global_norm_bf16_cpu_2() {
  Variant v = cpu::threaded(
      &global_norm_bf16_chunked,
      "chunks of 2048 widened by shifts and squared in fp32 SIMD lanes, chunk sums added in double in order");
  v.workspace = [](const Shape& s, const ParamValues&) { return cpu::chunked_squares::workspace_bytes(s.N); };
  return v;
}

}  // namespace wb::variants
