// encoder_backward, CUDA variant 2: deterministic, positions bucketed by token.
//
// Idea: instead of letting the B*T positions race for the rows of dwte, group them by
// token first, then let one set of threads sum each group in a fixed order.
//   1. histogram: count the positions of every bucket, bucket = token & (H - 1), H a
//      power of two >= B*T (integer atomics: the counts are exact whatever the order);
//   2. exclusive scan of the H counts (one block): where each bucket starts;
//   3. scatter (token, position) pairs into their buckets -- in an arbitrary order;
//   4. rank: every position counts, inside its bucket, the pairs that sort before it
//      by (token, position). That gives it a unique slot, so the sorted order no longer
//      depends on step 3: all positions of one token end up contiguous, in increasing
//      position order; the first of each run records the run's length;
//   5. one block per run start and 32 channels sums dout over the run (slice s of the
//      block takes run entries s, s + S, ..., then slice sums are added in slice order)
//      and adds the total to dwte[token];
//   6. dwpe[t, c] += sum over b of dout[b, t, c], b in increasing order, one thread
//      per (t, c).
// Hashing the token (rather than bucketing by the full id) keeps the scan at O(B*T)
// independent of V, which the argument struct does not carry; the rank in step 4
// separates tokens that share a bucket.
// Why it should beat variant 1: it does not -- it trades speed for results that are
// bitwise identical from run to run (no float atomics anywhere; every sum has an order
// fixed by the data). It does avoid variant 1's serialisation of frequent tokens on one
// address, since each run is summed in registers.
// Limits: seven operations on the stream; step 4 costs the square of a bucket's size
// (a token that fills most of the batch costs ~(B*T)^2 comparisons, cached in L1);
// step 5 gives a long run to one row of blocks. Workspace: 8H + 16 B*T bytes.
#include <cstdint>
#include <stdexcept>

#include "contract/ops/encoder_backward.h"
#include "device/cuda/device_utils.cuh"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "variants/encoder_backward/token_runs.cuh"

namespace wb::variants {
namespace {

namespace runs = cuda::token_runs;

void launch(const EncoderBackwardArgs& a, const Launch& l) {
  const int positions = a.B * a.T;
  if (l.workspace_bytes < runs::workspace_for(positions))
    throw std::logic_error("encoder_backward cuda/2: workspace too small");
  const runs::Layout w = runs::layout(l.workspace, positions);
  const cudaStream_t s = cuda::stream(l);
  runs::sort_positions_by_token(w, a.inp, positions, s);

  const int block = l.block_size();
  const dim3 runs_grid(unsigned(positions), cuda::grid_for(a.C, cuda::kWarpSize));
  WB_LAUNCH(runs::accumulate_runs<float>, runs_grid, block, 0, s, a.dwte, a.dout, w.sorted, w.run_len, a.inp, a.C);
  const int64_t plane = int64_t(a.T) * a.C;
  WB_LAUNCH(runs::accumulate_positions<float>, cuda::grid_for(plane, block), block, 0, s, a.dwpe, a.dout, a.B, a.T,
            a.C);
}

}  // namespace

Variant encoder_backward_cuda_2() {
  Variant v = Variant::of(&launch);
  v.summary = "deterministic: positions sorted by (token, position) in the workspace, each token's run summed in order";
  v.params = {block_size_param()};
  v.requirements = {{"C <= 2097120", [](const Shape& s) { return s.C <= 65535 * 32; }}};
  v.workspace = [](const Shape& s, const ParamValues&) { return runs::workspace_for(s.B * s.T); };
  return v;
}

}  // namespace wb::variants
