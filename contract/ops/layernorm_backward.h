#pragma once
// layernorm_backward: gradients of layernorm_forward from the saved mean and rstd.
//   n = (x - mean) * rstd, g = weight * dout
//   dinp += (g - mean(g) - n * mean(g * n)) * rstd;  dweight += sum_bt n * dout;  dbias += sum_bt dout
#include <cstdint>

#include "base/bf16.h"
#include "contract/op_fwd.h"

namespace wb {

struct LayernormBackwardArgs {
  float* dinp;          // (B, T, C), accumulated
  float* dweight;       // (C), accumulated
  float* dbias;         // (C), accumulated
  const float* dout;    // (B, T, C)
  const float* inp;     // (B, T, C)
  const float* weight;  // (C)
  const float* mean;    // (B, T) as written by layernorm_forward
  const float* rstd;    // (B, T)
  int B, T, C;
};

const OpSpec& layernorm_backward_op();

// layernorm_backward_bf16: the same on bf16 storage, as llm.c's bf16 step keeps it:
// dinp, dweight, dbias, dout, inp and weight in bf16, the saved mean and rstd in fp32
// (layernorm_forward_bf16's). Every sum accumulates in fp32, and each accumulated
// gradient is rounded once: its new value is bf16(old, widened, + the fp32 sum). Its
// twin is layernorm_backward. Tolerances: the twin's plus half an ulp of bf16.
// Measured (tools/bf16_error_study.sh: the emulated CUDA
// ladder and the CPU port, the 5 check shapes, seeds 1-10): dinp uses at most 97.5% of its tolerance,
// dweight 99.0%, dbias 99.4%; mean signed errors within 0.025, 0.017 and 0.024 ulp.
struct LayernormBackwardBf16Args {
  bf16* dinp;          // (B, T, C), accumulated
  bf16* dweight;       // (C), accumulated
  bf16* dbias;         // (C), accumulated
  const bf16* dout;    // (B, T, C)
  const bf16* inp;     // (B, T, C)
  const bf16* weight;  // (C)
  const float* mean;   // (B, T) as written by layernorm_forward_bf16
  const float* rstd;   // (B, T)
  int B, T, C;
};

const OpSpec& layernorm_backward_bf16_op();

}  // namespace wb
