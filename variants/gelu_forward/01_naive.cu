// gelu_forward, CUDA variant 1: one thread per element, the naive port.
//
// Idea: thread i reads inp[i] and writes gelu(inp[i]) (tanh approximation, tanhf).
// Why: the baseline the ladder starts from. Already coalesced, since neighbouring
// threads touch neighbouring floats.
// Limits: one 32-bit load and store instruction per element and 64-bit index
// arithmetic per element.
#include "contract/ops/gelu_forward.h"
#include "variants/gelu/gelu_elementwise.cuh"

namespace wb::variants {

Variant gelu_forward_cuda_1() {
  return cuda::gelu_elementwise::rung<GeluForwardArgs, cuda::gelu_elementwise::Kernel::naive>(
      "one thread per element, tanhf");
}

}  // namespace wb::variants
