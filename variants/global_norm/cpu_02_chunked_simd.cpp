// global_norm, CPU variant 2: fixed chunks summed in float SIMD lanes, chunks added in
// double in chunk order.
//
// Idea: the N gradients are cut into chunks of 2048; threads (`threads` of them) take
// contiguous runs of chunks. A chunk's sum of squares is one SIMD reduction in float
// lanes, converted to double and written to the workspace; once every chunk is done,
// one thread adds the chunk sums in order and takes the square root.
// Why it should beat variant 1: the reference converts every gradient to double and
// adds it to a scalar; here four (SSE) squares are added per instruction and the only
// double work is one addition per chunk.
// Determinism: the chunks are fixed by N, not by the thread count, and are added in
// chunk order, so every thread count gives the same bits (the reference's OpenMP
// reduction adds its per-thread sums in an order the runtime picks).
// Accuracy: a chunk adds at most 512 squares per lane in float, a relative error
// under 3e-5 in the worst case and about 1e-6 typically; the chunks add in double.
// The op's tolerance on the norm is 1e-4 relative.
// Limits: workspace of one double per chunk (N / 256 bytes); memory-bound at large N.
#include <cmath>

#include "kernels/cpu/threads.h"
#include "kernels/ops/global_norm.h"
#include "kernels/variant.h"

namespace wb::variants {
namespace {

constexpr int64_t kChunk = 2048;

int64_t chunks(int64_t n) { return (n + kChunk - 1) / kChunk; }

void global_norm_chunked(const GlobalNormArgs& a, const Launch& l) {
  const int64_t n = a.N, count = chunks(n);
  double* sums = static_cast<double*>(l.workspace);
  const float* __restrict g = a.grads;
#pragma omp parallel for num_threads(cpu::threads(l)) schedule(static)
  for (int64_t k = 0; k < count; ++k) {
    const int64_t end = k + 1 < count ? (k + 1) * kChunk : n;
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int64_t i = k * kChunk; i < end; ++i) s += g[i] * g[i];
    sums[k] = s;
  }
  double total = 0;
  for (int64_t k = 0; k < count; ++k) total += sums[k];
  a.out[0] = float(std::sqrt(total));
}

}  // namespace

Variant global_norm_cpu_2() {
  Variant v = Variant::of(&global_norm_chunked);
  v.summary = "chunks of 2048 squared in float SIMD lanes, chunk sums added in double in order";
  v.params = {cpu::threads_param()};
  v.workspace = [](const Shape& s, const ParamValues&) { return std::size_t(chunks(s.N)) * sizeof(double); };
  return v;
}

}  // namespace wb::variants
