#pragma once
// matmul_gelu_forward: the MLP's first linear layer and its GELU in one op.
//   pre = inp @ weight^T + bias,  out = gelu(pre)  (gelu_forward's tanh approximation)
// pre is written too: it is what gelu_backward reads in the backward pass.
#include <cstdint>

#include "base/bf16.h"
#include "contract/op_fwd.h"

namespace wb {

struct MatmulGeluForwardArgs {
  float* out;           // (B, T, OC) gelu(pre)
  float* pre;           // (B, T, OC) the linear layer's output, before the GELU
  const float* inp;     // (B, T, C)
  const float* weight;  // (OC, C)
  const float* bias;    // (OC), may be null (no bias)
  int B, T, C, OC;
};

const OpSpec& matmul_gelu_forward_op();

// matmul_gelu_forward_bf16: the same on bf16 storage, as llm.c's bf16 step runs it
// (cuBLASLt's GELU_AUX_BIAS epilogue): the sum in fp32 with the bias; pre is that sum
// rounded once, out the GELU of the unrounded fp32 sum rounded once (not of the
// rounded pre: that would round twice). Its twin is matmul_gelu_forward, whose
// tolerances it keeps plus half an ulp of bf16 for each. Measured (tools/bf16_error_study.sh: the emulated CUDA
// ladder and the CPU port, the 5 check shapes, seeds 1-10): out uses at most 99.2% of its tolerance and pre
// 99.3%, mean signed errors within 0.026 and 0.016 ulp.
struct MatmulGeluForwardBf16Args {
  bf16* out;           // (B, T, OC) gelu(pre)
  bf16* pre;           // (B, T, OC)
  const bf16* inp;     // (B, T, C)
  const bf16* weight;  // (OC, C)
  const bf16* bias;    // (OC), may be null (no bias)
  int B, T, C, OC;
};

const OpSpec& matmul_gelu_forward_bf16_op();

}  // namespace wb
