// gelu_forward_bf16, CUDA variant 1: one thread per element, the naive port.
//
// Idea: thread i widens inp[i], takes the GELU in fp32 (tanhf, variants/gelu/gelu.cuh)
// and rounds it once to nearest even.
// Why: the baseline of the bf16 ladder; already coalesced.
// Limits: one 16-bit load and store per element.
#include "contract/ops/gelu_forward.h"
#include "variants/gelu/gelu_elementwise.cuh"

namespace wb::variants {

Variant gelu_forward_bf16_cuda_1() {
  return cuda::gelu_elementwise::rung<GeluForwardBf16Args, cuda::gelu_elementwise::Kernel::naive>(
      "one thread per element: widen, GELU in fp32 (tanhf), round once");
}

}  // namespace wb::variants
