// gelu_backward, CUDA variant 1: the naive port, one thread per element.
//
// Idea: thread i computes dinp[i] = gelu'(inp[i]) * dout[i] in float, as the CPU loop
// does in double.
// Why: the baseline of the ladder. Neighbouring threads touch neighbouring floats, so
// every access already coalesces; this is close to what an elementwise op can do.
// Limits: one 32-bit load per tensor and thread: four times the load and store
// instructions of a 128-bit access, and one element of work per thread.
#include "contract/ops/gelu_backward.h"
#include "variants/gelu/gelu_elementwise.cuh"

namespace wb::variants {

Variant gelu_backward_cuda_1() {
  return cuda::gelu_elementwise::rung<GeluBackwardArgs, cuda::gelu_elementwise::Kernel::naive>(
      "one thread per element, gelu'(x) * dout in float");
}

}  // namespace wb::variants
