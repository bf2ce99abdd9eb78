#pragma once
// gelu_backward: dinp = gelu'(inp) * dout, elementwise over N = B*T*C values.
#include <cstdint>

#include "base/bf16.h"
#include "contract/op_fwd.h"

namespace wb {

// The arguments of gelu_backward (Float = float) and of its bf16 twin (Float = bf16).
template <class Float>
struct GeluBackwardArgsOn {
  Float* dinp;        // (N), written
  const Float* inp;   // (N)
  const Float* dout;  // (N)
  int64_t N;
};
using GeluBackwardArgs = GeluBackwardArgsOn<float>;

const OpSpec& gelu_backward_op();

// gelu_backward_bf16: the same on bf16 storage (llm.c keeps the pre-activation and the
// gradients in bf16): gelu'(inp) * dout in fp32 on the widened values, rounded once to
// nearest even. Its twin is gelu_backward. Tolerance: gelu_backward's (1e-5 + 1e-5
// |ref|) plus half an ulp of bf16 at the reference. Measured
// (tools/bf16_error_study.sh: the emulated CUDA ladder and the CPU port, the 5 check
// shapes, seeds 1-20): at most 99.5% of the tolerance (a half-ulp tie), and a mean
// signed error within 0.037 ulp.
using GeluBackwardBf16Args = GeluBackwardArgsOn<bf16>;

const OpSpec& gelu_backward_bf16_op();

}  // namespace wb
