#pragma once
// attention_forward: causal multi-head self-attention over the fused qkv.
//   q, k, v = qkv[..., 0:C], qkv[..., C:2C], qkv[..., 2C:3C]; head h uses channels
//   h*hs .. (h+1)*hs with hs = C / NH. For each (b, h, t):
//   s[t2] = q_t . k_t2 / sqrt(hs) for t2 <= t;  lse = log sum_t2 exp(s[t2]);
//   out_t = sum_t2 exp(s[t2] - lse) v_t2
#include <cstdint>

#include "base/bf16.h"
#include "contract/op_fwd.h"

namespace wb {

struct AttentionForwardArgs {
  float* out;        // (B, T, C)
  float* lse;        // (B, NH, T) log-sum-exp of each row of scaled scores
  const float* qkv;  // (B, T, 3C)
  int B, T, C, NH;
};

const OpSpec& attention_forward_op();

// attention_forward_bf16: the same on bf16 storage (qkv and out), lse in fp32, as llm.c's
// bf16 step (cuDNN's flash attention with its fp32 statistics): scores, softmax and the
// weighted sum of v in fp32 on the widened values, each output rounded once. Its twin
// is attention_forward. Tolerances: the twin's, plus half an ulp of bf16 for out.
// Measured (tools/bf16_error_study.sh: the emulated CUDA
// ladder and the CPU port, the 5 check shapes, seeds 1-10): out uses at most 97.0% of its tolerance,
// mean signed error within 0.031 ulp; lse 1.4%.
struct AttentionForwardBf16Args {
  bf16* out;        // (B, T, C)
  float* lse;       // (B, NH, T)
  const bf16* qkv;  // (B, T, 3C)
  int B, T, C, NH;
};

const OpSpec& attention_forward_bf16_op();

}  // namespace wb
