#pragma once
// layernorm_forward: normalise every row of C channels, then scale and shift.
//   out = (x - mean) * rstd * weight + bias,  rstd = 1 / sqrt(var + 1e-5) (biased var)
#include <cstdint>

#include "base/bf16.h"
#include "contract/op_fwd.h"

namespace wb {

constexpr float kLayernormEps = 1e-5f;

struct LayernormForwardArgs {
  float* out;           // (B, T, C)
  float* mean;          // (B, T)
  float* rstd;          // (B, T)
  const float* inp;     // (B, T, C)
  const float* weight;  // (C)
  const float* bias;    // (C)
  int B, T, C;
};

const OpSpec& layernorm_forward_op();

// layernorm_forward_bf16: the same on bf16 storage, as llm.c's bf16 step keeps it:
// inp, weight, bias and out in bf16, mean and rstd in fp32. The statistics accumulate
// in fp32; each output is rounded once to nearest even. Its twin is layernorm_forward.
// Tolerance of out: layernorm_forward's (2e-5 + 1e-5 |ref|) plus half an ulp of bf16
// at the reference (one rounding); mean and rstd: layernorm_forward's. Measured
// (tools/bf16_error_study.sh: the emulated CUDA ladder and the CPU port, the 5 check
// shapes, seeds 1-20): out uses at most 99.5% of its tolerance -- an exact tie, half an
// ulp, is the rounding itself -- with a mean signed error within 0.034 ulp; mean 0.5%
// and rstd 13% of theirs.
struct LayernormForwardBf16Args {
  bf16* out;           // (B, T, C)
  float* mean;         // (B, T)
  float* rstd;         // (B, T)
  const bf16* inp;     // (B, T, C)
  const bf16* weight;  // (C)
  const bf16* bias;    // (C)
  int B, T, C;
};

const OpSpec& layernorm_forward_bf16_op();

}  // namespace wb
