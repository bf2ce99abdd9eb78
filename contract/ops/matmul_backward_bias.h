#pragma once
// matmul_backward_bias: the bias gradient of matmul_forward on its own, so that its
// reduction gets a ladder of its own.
//   dbias[o] += sum over the B*T rows of dout[:, o]
#include <cstdint>

#include "base/bf16.h"
#include "contract/op_fwd.h"

namespace wb {

struct MatmulBackwardBiasArgs {
  float* dbias;       // (OC), accumulated
  const float* dout;  // (B, T, OC)
  int B, T, OC;
};

const OpSpec& matmul_backward_bias_op();

// matmul_backward_bias_bf16: the same on bf16 storage (llm.c keeps dout and the bias
// gradient in bf16): the column sums of the widened dout in fp32, then each dbias
// becomes its old value widened plus the sum, rounded once to nearest even. Its twin is
// matmul_backward_bias. Tolerance: matmul_backward_bias's (summed over the B*T rows)
// plus half an ulp of bf16 at the reference. Measured (tools/bf16_error_study.sh: the
// emulated CUDA ladder and the CPU port, the 5 check shapes, seeds 1-10): at most 99.5%
// of the tolerance (a half-ulp tie), and a mean signed error within 0.029 ulp (the bias
// test needs 256 elements: the shapes with OC >= 256).
struct MatmulBackwardBiasBf16Args {
  bf16* dbias;       // (OC), accumulated
  const bf16* dout;  // (B, T, OC)
  int B, T, OC;
};

const OpSpec& matmul_backward_bias_bf16_op();

}  // namespace wb
