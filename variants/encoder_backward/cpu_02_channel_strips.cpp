// encoder_backward, CPU variant 2: strips of 64 channels over threads, rows walked in
// order, SIMD adds along the strip.
//
// Idea: like the reference, threads own disjoint channels, so rows of dwte that
// several tokens share are never written by two threads; but a thread owns a strip of
// 64 contiguous channels (`threads` threads over C/64 strips) and walks the B*T rows in
// order, adding the strip of dout[b,t] into the same strip of dwte[token] and of
// dwpe[t]: three contiguous 256-byte streams per row, a SIMD loop.
// Why it should beat variant 1: the reference's thread owns single channels and walks
// the rows with stride C, touching a new cache line of dout, dwte and dwpe for every
// element it adds; a strip uses whole lines.
// Determinism: every element of dwte and dwpe adds its rows in row order, as the
// reference does: the same bits as the reference, at any thread count.
// Limits: C/64 strips (12 at GPT-2's width) is the most parallelism there is.
#include <algorithm>

#include "contract/ops/encoder_backward.h"
#include "contract/variant.h"
#include "device/cpu/threads.h"

namespace wb::variants {
namespace {

constexpr int64_t kStrip = 64;

void encoder_backward_strips(const EncoderBackwardArgs& a, const Launch& l) {
  const int64_t rows = int64_t(a.B) * a.T, C = a.C;
#pragma omp parallel for num_threads(cpu::threads(l)) schedule(static)
  for (int64_t c0 = 0; c0 < C; c0 += kStrip) {
    const int64_t width = std::min(kStrip, C - c0);
    for (int64_t bt = 0; bt < rows; ++bt) {
      const float* __restrict d = a.dout + bt * C + c0;
      float* __restrict wte = a.dwte + int64_t(a.inp[bt]) * C + c0;
      float* __restrict wpe = a.dwpe + (bt % a.T) * C + c0;
#pragma omp simd
      for (int64_t j = 0; j < width; ++j) {
        wte[j] += d[j];
        wpe[j] += d[j];
      }
    }
  }
}

}  // namespace

Variant encoder_backward_cpu_2() {
  return cpu::threaded(
      &encoder_backward_strips,
      "threads own 64-channel strips, rows in order: SIMD adds on whole cache lines, the reference's bits");
}

}  // namespace wb::variants
