#pragma once
// global_norm: the L2 norm of all gradients, for clipping.
//   out[0] = sqrt(sum_i grads[i]^2)
#include <cstdint>

#include "base/bf16.h"
#include "contract/op_fwd.h"

namespace wb {

struct GlobalNormArgs {
  float* out;          // (1)
  const float* grads;  // (N)
  int64_t N;
};

const OpSpec& global_norm_op();

// global_norm_bf16: the same over bf16 gradients, the sum of squares in fp32 and the
// norm in fp32, as llm.c's bf16 step clips. Its twin is global_norm, whose tolerance
// (1e-4 relative) it keeps: the inputs are exact in fp32 and there is no bf16 output.
// Measured (tools/bf16_error_study.sh: the emulated CUDA
// ladder and the CPU port, the 5 check shapes, seeds 1-10): at most 0.5% of the tolerance.
struct GlobalNormBf16Args {
  float* out;         // (1)
  const bf16* grads;  // (N)
  int64_t N;
};

const OpSpec& global_norm_bf16_op();

}  // namespace wb
