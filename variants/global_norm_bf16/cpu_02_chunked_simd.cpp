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
// Measured (2-core development machine, load average about 5 from other jobs, so on one
// thread, two interleaved runs, medians;
//   OMP_NUM_THREADS=1 build/wb run global_norm_bf16 --variant N --backend cpu --shape N=2359296
// with N = 1, 2 and the fp32 op's rung): port 2.0-2.1 ms, this rung 265-307 us, global_norm
// cpu/2 (fp32) 480-540 us: 7x the port, under the fp32 rung with half the bytes.
// Limits: workspace of one double per chunk (N / 256 bytes); memory-bound at large N.
#include <cmath>

#include "kernels/cpu/bf16_lanes.h"
#include "kernels/cpu/threads.h"
#include "kernels/ops/global_norm.h"
#include "kernels/variant.h"

namespace wb::variants {
namespace {

constexpr int64_t kChunk = 2048;

int64_t chunks(int64_t n) { return (n + kChunk - 1) / kChunk; }

void global_norm_bf16_chunked(const GlobalNormBf16Args& a, const Launch& l) {
  const int64_t n = a.N, count = chunks(n);
  double* sums = static_cast<double*>(l.workspace);
  const uint16_t* __restrict g = cpu::bits_of(a.grads);
#pragma omp parallel for num_threads(cpu::threads(l)) schedule(static)
  for (int64_t k = 0; k < count; ++k) {
    const int64_t end = k + 1 < count ? (k + 1) * kChunk : n;
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int64_t i = k * kChunk; i < end; ++i) {
      const float x = cpu::widen(g[i]);
      s += x * x;
    }
    sums[k] = s;
  }
  double total = 0;
  for (int64_t k = 0; k < count; ++k) total += sums[k];
  a.out[0] = std::sqrt(float(total));
}

}  // namespace

Variant global_norm_bf16_cpu_2() {
  Variant v = Variant::of(&global_norm_bf16_chunked);
  v.summary = "chunks of 2048 widened by shifts and squared in fp32 SIMD lanes, chunk sums added in double in order";
  v.params = {cpu::threads_param()};
  v.workspace = [](const Shape& s, const ParamValues&) { return std::size_t(chunks(s.N)) * sizeof(double); };
  return v;
}

}  // namespace wb::variants
