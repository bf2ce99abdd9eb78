// gelu_backward_bf16, CUDA variant 2: eight elements per thread, 128-bit accesses.
//
// Idea: thread i < N/8 loads eight inp and eight dout with one 128-bit streaming load
// each, computes the eight gelu'(x) * dout in fp32 and stores the rounded results with
// one 128-bit streaming store; thread N/8 takes the N % 8 tail. In place (dinp == dout,
// as llm.c runs it) is safe: each element is loaded, then stored, by the same thread.
// Why it should beat variant 1: an eighth of the memory instructions, eight independent
// tanhf per thread.
// Limits: the three pointers 16-byte aligned (the launcher checks).
#include "contract/ops/gelu_backward.h"
#include "variants/gelu/gelu_elementwise.cuh"

namespace wb::variants {

Variant gelu_backward_bf16_cuda_2() {
  return cuda::gelu_elementwise::rung<GeluBackwardBf16Args, cuda::gelu_elementwise::Kernel::packed>(
      "eight bf16 per thread, 128-bit streaming loads and stores, scalar tail for N % 8; safe in place");
}

}  // namespace wb::variants
