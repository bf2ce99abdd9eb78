#pragma once
// matmul_backward: the input and weight gradients of matmul_forward.
//   dinp = dout @ weight  (overwritten);  dweight += dout^T @ inp  (accumulated)
// The bias gradient is the separate op matmul_backward_bias.
#include <cstdint>

#include "base/bf16.h"
#include "contract/op_fwd.h"

namespace wb {

struct MatmulBackwardArgs {
  float* dinp;          // (B, T, C), overwritten
  float* dweight;       // (OC, C), accumulated
  const float* dout;    // (B, T, OC)
  const float* inp;     // (B, T, C)
  const float* weight;  // (OC, C)
  int B, T, C, OC;
};

const OpSpec& matmul_backward_op();

// matmul_backward_bf16: the same on bf16 storage, as llm.c's bf16 step runs it: dout,
// inp, weight and both gradients in bf16. The products of bf16 values (exact in fp32)
// are summed in fp32; dinp is rounded once to nearest even; dweight, a gradient that
// accumulates across the step in bf16 (llm.c's scheme), becomes the old value widened
// plus the fp32 sum, rounded once. Its twin is matmul_backward. Tolerances:
// matmul_backward's (dinp summed over OC, dweight over the B*T rows) plus half an ulp
// of bf16 at the reference. Measured (tools/bf16_error_study.sh: the emulated CUDA
// ladder and the CPU port, the 5 check shapes, seeds 1-10): dinp uses at most 99.2% of
// its tolerance and dweight 99.3% (half-ulp ties: the rounding itself), with mean
// signed errors within 0.026 and 0.006 ulp.
struct MatmulBackwardBf16Args {
  bf16* dinp;          // (B, T, C), overwritten
  bf16* dweight;       // (OC, C), accumulated
  const bf16* dout;    // (B, T, OC)
  const bf16* inp;     // (B, T, C)
  const bf16* weight;  // (OC, C)
  int B, T, C, OC;
};

const OpSpec& matmul_backward_bf16_op();

}  // namespace wb
