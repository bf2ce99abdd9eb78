// attention_backward, CUDA variant 1: the naive port -- one thread per row of the
// gradient, everything recomputed where it is needed.
//
// Idea: two kernels. In the first, one thread per (b, h, t) owns dq_t: for every key
// t2 <= t it recomputes the score, p = exp(s - lse_t), dp = dout_t . v_t2 and
// ds = p * (dp - D_t) with D_t = dout_t . out_t, and adds scale * ds * k_t2 into dq_t.
// In the second, one thread per (b, h, t2) owns dk_t2 and dv_t2: for every query
// t >= t2 it recomputes D_t, the score, p, dp and ds, and adds scale * ds * q_t into
// dk_t2 and p * dout_t into dv_t2. Each thread accumulates straight into its own
// elements of dqkv (zeroed first by the same thread), so no two threads touch the
// same element and the result is deterministic.
// Why: the baseline of the ladder; plainly correct, nothing shared, nothing tiled.
// Limits: every score and dot product is recomputed twice (once per kernel) and D_t
// once per pair in the second kernel; neighbouring threads read rows 3C floats apart,
// so no load coalesces; the accumulators live in global memory (read-modify-write of
// hs floats per pair); the causal loops leave threads of a block with very unequal
// work.
#include <cmath>

#include "contract/ops/attention_backward.h"
#include "device/cuda/dialect.cuh"
#include "device/cuda/runtime.h"
#include "variants/attention/attention_backward_naive.cuh"

namespace wb::variants {
namespace {

// fp32 storage: the accumulator is dqkv itself.
void launch(const AttentionBackwardArgs& a, const Launch& l) {
  cuda::naive_attention_backward::launch(a.dqkv, a.dout, a.qkv, a.out, a.lse, a.B, a.T, a.C, a.NH, l);
}

}  // namespace

Variant attention_backward_cuda_1() {
  Variant v = Variant::of(&launch);
  v.summary =
      "one thread per (b, h, t) for dq and one per (b, h, t2) for dk and dv, all recomputed, accumulated in place";
  v.params = {block_size_param()};
  return v;
}

}  // namespace wb::variants
