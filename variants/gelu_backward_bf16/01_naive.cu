// gelu_backward_bf16, CUDA variant 1: one thread per element, the naive port.
//
// Idea: thread i widens inp[i] and dout[i], computes gelu'(inp) * dout in fp32
// (variants/gelu/gelu.cuh) and rounds it once to nearest even.
// Why: the baseline of the bf16 ladder; already coalesced.
// Limits: one 16-bit access per tensor and element.
#include "contract/ops/gelu_backward.h"
#include "variants/gelu/gelu_elementwise.cuh"

namespace wb::variants {

Variant gelu_backward_bf16_cuda_1() {
  return cuda::gelu_elementwise::rung<GeluBackwardBf16Args, cuda::gelu_elementwise::Kernel::naive>(
      "one thread per element: widen, gelu'(x) * dout in fp32, round once");
}

}  // namespace wb::variants
