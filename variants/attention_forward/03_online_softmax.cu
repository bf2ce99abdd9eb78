// attention_forward, CUDA variant 3: scale, causal mask and online softmax fused.
//
// Idea: one kernel, a warp per query row, a block per group of consecutive rows of one
// (b, h). The warp keeps its row's running max m, running sum l of exp(s - m) and an
// unnormalised output accumulator (each lane owns channels lane, lane+32, ...), and
// streams the keys 0..t in chunks of 32: lane j scores key k0+j against the query (held
// scaled in shared memory), one warp max and one warp sum update m and l, the
// accumulator is rescaled by exp(m_old - m_new), and the 32 probabilities are broadcast
// by shuffles while every lane adds p * v for its channels (coalesced reads of v).
// Scores are kept in log2 units (q pre-multiplied by log2(e)/sqrt(hs)) so that every
// exponential is one exp2f; lse is converted back to the natural log at the end.
// Why it should beat variant 2: no T x T workspace and no traffic for it, no score
// above the diagonal is ever computed, and one launch instead of five. Warps of a
// block read the same keys and values at about the same time, so k and v mostly come
// from L1/L2.
// Limits: k and v are re-read from cache by every query row (no reuse through shared
// memory or registers: that is variant 4); scoring reads 32 different key rows per load
// instruction (uncoalesced, hs/4 float4 loads per lane and chunk); 2 warp reductions and
// up to 32 shuffles per chunk. Head size at most 256 (8 channels per lane).
#include "contract/ops/attention_forward.h"
#include "device/cuda/runtime.h"
#include "variants/attention/attention_online_rows.cuh"

namespace wb::variants {
namespace {

void launch(const AttentionForwardArgs& a, const Launch& l) {
  cuda::attention_online_rows::launch(a.out, a.lse, a.qkv, a.B, a.T, a.C, a.NH, l, "attention_forward cuda/3");
}

}  // namespace

Variant attention_forward_cuda_3() {
  return cuda::attention_online_rows::variant(
      &launch, "warp per query row, keys streamed in chunks of 32, online max/sum in log2 units, one fused kernel");
}

}  // namespace wb::variants
