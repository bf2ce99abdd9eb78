// attention_forward_bf16, CUDA variant 2: a warp per query row, online softmax.
//
// Idea: attention_forward cuda/3 on bf16 storage. A block holds consecutive query rows
// of one (b, h), a warp per row; the warp keeps the row's running max m and sum l of
// exp2(s - m) and an unnormalised fp32 accumulator (lane owns channels lane, lane + 32,
// ...), and streams the keys 0..t in chunks of 32: lane j scores key k0 + j against the
// query (held widened and pre-scaled by log2(e)/sqrt(hs) in shared memory, in fp32),
// one warp max and one warp sum update m and l, the accumulator is rescaled, and the 32
// probabilities are broadcast by shuffles while every lane adds p * v for its channels
// (coalesced reads of v). The output is rounded once to bf16; lse stays fp32 (natural
// log). With hs % 8 == 0 and qkv 16-byte aligned, each key row is read as Packed128.
// Why it should beat variant 1: each score is computed once, no score above the diagonal
// is computed, one pass over k and v per row with coalesced reads of v, and half the
// bytes of the fp32 variant.
// Limits: k and v are re-read from cache by every query row (no reuse through shared
// memory), 32 different key rows per load instruction when scoring, head size at most
// 256 (8 channels per lane).
#include "contract/ops/attention_forward.h"
#include "device/cuda/packed.cuh"
#include "device/cuda/runtime.h"
#include "variants/attention/attention_online_rows.cuh"

namespace wb::variants {
namespace {

void launch(const AttentionForwardBf16Args& a, const Launch& l) {
  cuda::attention_online_rows::launch(cuda::as_cuda(a.out), a.lse, cuda::as_cuda(a.qkv), a.B, a.T, a.C, a.NH, l,
                                      "attention_forward_bf16 cuda/2");
}

}  // namespace

Variant attention_forward_bf16_cuda_2() {
  return cuda::attention_online_rows::variant(
      &launch, "warp per query row, keys streamed in chunks of 32, online max/sum in log2 units, fp32 accumulator");
}

}  // namespace wb::variants
