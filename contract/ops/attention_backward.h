#pragma once
// attention_backward: gradient of attention_forward with respect to qkv, from q, k,
// v, the forward's out and lse, and dout. Probabilities are recomputed from lse:
//   p = exp(s - lse);  D_t = dout_t . out_t;  ds = p * (dout_t . v_t2 - D_t)
//   dq_t = sum_t2 ds k_t2 / sqrt(hs);  dk_t2 = sum_t ds q_t / sqrt(hs);  dv_t2 = sum_t p dout_t
#include <cstdint>

#include "base/bf16.h"
#include "contract/op_fwd.h"

namespace wb {

struct AttentionBackwardArgs {
  float* dqkv;        // (B, T, 3C), written (every element)
  const float* dout;  // (B, T, C)
  const float* qkv;   // (B, T, 3C)
  const float* out;   // (B, T, C) as written by attention_forward
  const float* lse;   // (B, NH, T) as written by attention_forward
  int B, T, C, NH;
};

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
struct AttentionBackwardBf16Args {
  bf16* dqkv;         // (B, T, 3C), written (every element)
  const bf16* dout;   // (B, T, C)
  const bf16* qkv;    // (B, T, 3C)
  const bf16* out;    // (B, T, C) as written by attention_forward_bf16
  const float* lse;   // (B, NH, T) as written by attention_forward_bf16
  int B, T, C, NH;
};

const OpSpec& attention_backward_bf16_op();

}  // namespace wb
