#pragma once
// attention_backward: gradient of attention_forward with respect to qkv, from q, k,
// v, the forward's out and lse, and dout. Probabilities are recomputed from lse:
//   p = exp(s - lse);  D_t = dout_t . out_t;  ds = p * (dout_t . v_t2 - D_t)
//   dq_t = sum_t2 ds k_t2 / sqrt(hs);  dk_t2 = sum_t ds q_t / sqrt(hs);  dv_t2 = sum_t p dout_t
#include <cstdint>

#include "base/bf16.h"
#include "contract/op_fwd.h"

namespace wb {

// The arguments of attention_backward (Float = float) and of its bf16 twin (Float =
// bf16): every tensor on the storage Float but lse, fp32 in both.
template <class Float>
struct AttentionBackwardArgsOn {
  Float* dqkv;        // (B, T, 3C), written (every element)
  const Float* dout;  // (B, T, C)
  const Float* qkv;   // (B, T, 3C)
  const Float* out;   // (B, T, C) as written by the forward op of the same storage
  const float* lse;   // (B, NH, T) as written by the forward op of the same storage
  int B, T, C, NH;
};
using AttentionBackwardArgs = AttentionBackwardArgsOn<float>;

const OpSpec& attention_backward_op();

// attention_backward_bf16: the same on bf16 storage (dqkv, dout, qkv, out), lse in fp32:
// the probabilities recomputed from lse, every sum in fp32 on the widened values, each
// gradient rounded once. Its twin is attention_backward. Tolerances: the twin's (dqkv
// summed over T), plus half an ulp of bf16 at the reference. Measured
// (tools/bf16_error_study.sh: the emulated CUDA ladder and the CPU port, the 5 check
// shapes, seeds 1-10): dqkv uses at most 98.3% of its tolerance -- the CPU port too: a
// near tie, the rounding itself -- with a mean signed error within 0.014 ulp. cuda/1
// edited to round its sums to bf16 at every addition (a bf16 accumulator) failed on
// every check shape (tried once, not kept as a planted variant).
using AttentionBackwardBf16Args = AttentionBackwardArgsOn<bf16>;

const OpSpec& attention_backward_bf16_op();

}  // namespace wb
