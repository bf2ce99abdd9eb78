#pragma once
// residual_forward: out = inp1 + inp2, elementwise over N = B*T*C values.
#include <cstdint>

#include "base/bf16.h"
#include "contract/op_fwd.h"

namespace wb {

struct ResidualForwardArgs {
  float* out;         // (N)
  const float* inp1;  // (N)
  const float* inp2;  // (N)
  int64_t N;
};

const OpSpec& residual_forward_op();

// residual_forward_bf16: the same on bf16 storage, out = bf16(inp1 + inp2) with the sum
// in fp32 rounded once to nearest even. Its twin is residual_forward.
// Tolerance: residual_forward's (1e-5 + 1e-5 |ref|) plus half an ulp of bf16 at the
// reference -- one rounding of the exact fp32 sum. Measured (tools/bf16_error_study.sh:
// the emulated CUDA ladder and the CPU port, the 5 check shapes, seeds 1-20): at most
// 99.5% of the tolerance, an exact tie (half an ulp, the rounding itself), and a mean
// signed error within 0.020 ulp.
struct ResidualForwardBf16Args {
  bf16* out;         // (N)
  const bf16* inp1;  // (N)
  const bf16* inp2;  // (N)
  int64_t N;
};

const OpSpec& residual_forward_bf16_op();

}  // namespace wb
