// encoder_backward_bf16, CPU variant 2: positions sorted into runs of one token;
// threads own runs (rows of dwte) and positions t (rows of dwpe); fp32 SIMD sums over
// 64-channel strips, every element rounded once.
//
// Idea: encoder_backward cpu/2 walks 64-channel strips so that threads own disjoint
// channels and the rows of dwte that several positions share never race. On bf16
// storage each element must add all its contributions in fp32 before its one rounding,
// so the positions of one token have to be gathered anyway: they are sorted once by
// (token, position) into runs (the CPU form of the runs of the CUDA rung 02_bucketed).
// A run owns its row of dwte, so threads (`threads` of them) can take whole runs
// instead of strips: for each 64-channel strip of the row a thread adds the run's dout
// strips in position order into 64 fp32 accumulators (bf16 widened by shifts, a SIMD
// loop) and rounds the dwte strip once from its old value widened plus the sum; then
// threads take the positions t and do the same for dwpe[t] over b in order. Rounding to
// nearest even by integer arithmetic (device/cpu/bf16_lanes.h; to_bf16's bits).
// Why it should beat the reference port: the port's thread owns single channels, walks
// the rows with stride C and sums every token through a std::map of doubles (a tree
// lookup per element); here the grouping is done once for all channels and every
// addition is a lane of a SIMD loop over whole cache lines. (A first version kept the
// fp32 rung's channel strips as the threads' pieces and walked the runs inside each
// strip: the runs visit dout's rows in token order, a random order, so after the cache
// flush every strip missed on 2 fresh lines per row: a multiple of the fp32 rung's time.
// Owning runs and walking each row's strips in turn brings it near the fp32 rung's.)
// Determinism: the runs are fixed by the tokens and every element adds its rows in
// position order, whichever thread owns it: the same bits at any thread count.
// Accuracy: the sums run in fp32 (the port's in double), as the contract and the CUDA
// rungs do; dwte and dwpe elements are rounded once each.
// Measure: OMP_NUM_THREADS=1 build/wb run encoder_backward_bf16 --variant N --backend cpu --shape B=4,T=64,C=768,V=50257
// for N = 1, 2 and encoder_backward --variant 2, with and without --no-flush (figures:
// results/cpu-amd-epyc-avx512bf16/README.md): cold rows of dwte and dout after the cache
// flush dominate this rung and the fp32 rung alike.
// Limits: the sort of the B*T positions is serial, O(B*T log(B*T)), and allocates B*T
// ints per call (plus the run starts); one token at most positions leaves one thread
// with most of dwte's work; dwpe's T rows are the second loop's parallelism.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "contract/ops/encoder_backward.h"
#include "contract/variant.h"
#include "device/cpu/bf16_lanes.h"
#include "device/cpu/threads.h"

namespace wb::variants {
namespace {

constexpr int64_t kStrip = 64;

// strip[j] = round(widen(strip[j]) + acc[j]) for j < width.
void round_into(uint16_t* __restrict strip, const float* __restrict acc, int64_t width) {
#pragma omp simd
  for (int64_t j = 0; j < width; ++j) strip[j] = cpu::round_bits(cpu::widen(strip[j]) + acc[j]);
}

// acc[j] = 0 + widen(dout[row(0), c0 + j]) + ... + widen(dout[row(count - 1), c0 + j])
// in fp32, added in that order, for j < width; count >= 1. (The first row is added to
// 0 in the same loop that starts acc: the bits of a zeroed acc, without a memset.)
template <class Row>
void sum_strip(float* __restrict acc, const uint16_t* dout, int64_t C, int64_t c0, int64_t width, int64_t count,
               Row row) {
  const uint16_t* __restrict first = dout + row(0) * C + c0;
#pragma omp simd
  for (int64_t j = 0; j < width; ++j) acc[j] = 0.0f + cpu::widen(first[j]);
  for (int64_t k = 1; k < count; ++k) {
    const uint16_t* __restrict d = dout + row(k) * C + c0;
#pragma omp simd
    for (int64_t j = 0; j < width; ++j) acc[j] += cpu::widen(d[j]);
  }
}

void encoder_backward_bf16_runs(const EncoderBackwardBf16Args& a, const Launch& l) {
  const int64_t B = a.B, T = a.T, C = a.C, rows = B * T;
  if (rows == 0) return;  // nothing to add (and sum_strip needs a row)
  // by_token: the positions sorted by (token, position); run_begin: where each run of
  // one token starts in it, then rows.
  std::vector<int32_t> by_token(static_cast<std::size_t>(rows)), run_begin;
  std::iota(by_token.begin(), by_token.end(), 0);
  std::sort(by_token.begin(), by_token.end(),
            [&a](int32_t x, int32_t y) { return a.inp[x] != a.inp[y] ? a.inp[x] < a.inp[y] : x < y; });
  for (int64_t i = 0; i < rows; ++i)
    if (i == 0 || a.inp[by_token[i]] != a.inp[by_token[i - 1]]) run_begin.push_back(int32_t(i));
  run_begin.push_back(int32_t(rows));
  const int64_t runs = int64_t(run_begin.size()) - 1;
  const uint16_t* dout = cpu::bits_of(a.dout);
#pragma omp parallel num_threads(cpu::threads(l))
  {
    float acc[kStrip];
    // Each run owns its row of dwte: no two threads write one row.
#pragma omp for schedule(static) nowait
    for (int64_t r = 0; r < runs; ++r) {
      const int32_t* positions = by_token.data() + run_begin[r];
      const int64_t count = run_begin[r + 1] - run_begin[r];
      uint16_t* wte = cpu::bits_of(a.dwte) + int64_t(a.inp[positions[0]]) * C;
      for (int64_t c0 = 0; c0 < C; c0 += kStrip) {
        const int64_t width = std::min(kStrip, C - c0);
        sum_strip(acc, dout, C, c0, width, count, [positions](int64_t k) { return int64_t(positions[k]); });
        round_into(wte + c0, acc, width);
      }
    }
#pragma omp for schedule(static)
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t c0 = 0; c0 < C; c0 += kStrip) {
        const int64_t width = std::min(kStrip, C - c0);
        sum_strip(acc, dout, C, c0, width, B, [t, T](int64_t b) { return b * T + t; });
        round_into(cpu::bits_of(a.dwpe) + t * C + c0, acc, width);
      }
    }
  }
}

}  // namespace

Variant encoder_backward_bf16_cpu_2() {
  return cpu::threaded(
      &encoder_backward_bf16_runs,
      "positions sorted into runs of one token; threads own runs and t, fp32 SIMD sums over 64-channel strips, "
      "every element of dwte and dwpe rounded once");
}

}  // namespace wb::variants
