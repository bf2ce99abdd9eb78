#pragma once
// fused_residual_layernorm_forward: the residual add followed by the next layernorm.
//   residual = inp1 + inp2;  normed = layernorm(residual) as layernorm_forward
#include <cstdint>

#include "base/bf16.h"
#include "contract/op_fwd.h"

namespace wb {

struct FusedResidualLayernormForwardArgs {
  float* residual;      // (B, T, C)
  float* normed;        // (B, T, C)
  float* mean;          // (B, T)
  float* rstd;          // (B, T)
  const float* inp1;    // (B, T, C)
  const float* inp2;    // (B, T, C)
  const float* weight;  // (C)
  const float* bias;    // (C)
  int B, T, C;
};

const OpSpec& fused_residual_layernorm_forward_op();

// fused_residual_layernorm_forward_bf16: the same on bf16 storage (statistics fp32), as
// llm.c's bf16 step does it: residual = bf16(inp1 + inp2), the sum in fp32 rounded once;
// then the layernorm of that stored bf16 residual -- the values layernorm_backward
// will read back -- with fp32 statistics and each output rounded once. No fp32 op
// rounds the residual before normalising it, so this op is its own truth: its
// reference computes the statistics and outputs in double on the rounded residual.
// Tolerances: residual as residual_forward_bf16's, normed as layernorm_forward_bf16's
// (half an ulp of bf16 beyond the fp32 ones); mean and rstd as layernorm_forward's.
// Measured (tools/bf16_error_study.sh: the emulated CUDA
// ladder and the CPU port, the 5 check shapes, seeds 1-10): normed uses at most 99.5% of its tolerance,
// mean signed error within 0.034 ulp; the residual is exact (0%), rstd 7.5%.
struct FusedResidualLayernormForwardBf16Args {
  bf16* residual;      // (B, T, C)
  bf16* normed;        // (B, T, C)
  float* mean;         // (B, T)
  float* rstd;         // (B, T)
  const bf16* inp1;    // (B, T, C)
  const bf16* inp2;    // (B, T, C)
  const bf16* weight;  // (C)
  const bf16* bias;    // (C)
  int B, T, C;
};

const OpSpec& fused_residual_layernorm_forward_bf16_op();

}  // namespace wb
