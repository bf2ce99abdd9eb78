#pragma once
// The sum of squares of global_norm cpu/2 (fp32 gradients) and global_norm_bf16 cpu/2
// (bf16 gradients, widened by shifts): chunks of kChunk elements over threads, each
// chunk squared and summed in float SIMD lanes into its slot of the workspace, then the
// chunk sums added in double in chunk order (the same bits at any thread count). The
// square root, and the precision it is taken in, stays with each rung.
#include <cstddef>
#include <cstdint>

#include "device/cpu/bf16_lanes.h"

namespace wb::cpu::chunked_squares {

constexpr int64_t kChunk = 2048;

inline int64_t chunks(int64_t n) { return (n + kChunk - 1) / kChunk; }

// The workspace: one double per chunk.
inline std::size_t workspace_bytes(int64_t n) { return std::size_t(chunks(n)) * sizeof(double); }

// E: float, or uint16_t for bf16 bits (lanes() of the tensor).
template <class E>
double sum_of_squares(const E* __restrict g, int64_t n, double* sums, int threads) {
  const int64_t count = chunks(n);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t k = 0; k < count; ++k) {
    const int64_t end = k + 1 < count ? (k + 1) * kChunk : n;
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int64_t i = k * kChunk; i < end; ++i) {
      const float x = widen(g[i]);
      s += x * x;
    }
    sums[k] = s;
  }
  double total = 0;
  for (int64_t k = 0; k < count; ++k) total += sums[k];
  return total;
}

}  // namespace wb::cpu::chunked_squares
