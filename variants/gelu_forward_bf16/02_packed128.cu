// gelu_forward_bf16, CUDA variant 2: eight elements per thread, 128-bit accesses.
//
// Idea: thread i < N/8 loads inp[8i..8i+7] with one 128-bit streaming load, takes the
// eight GELUs in fp32 and stores the rounded results with one 128-bit streaming store;
// thread N/8 takes the N % 8 tail with scalar accesses.
// Why it should beat variant 1: an eighth of the memory instructions, eight independent
// tanhf per thread to hide their latency.
// Limits: out and inp 16-byte aligned (the launcher checks).
#include "contract/ops/gelu_forward.h"
#include "variants/gelu/gelu_elementwise.cuh"

namespace wb::variants {

Variant gelu_forward_bf16_cuda_2() {
  return cuda::gelu_elementwise::rung<GeluForwardBf16Args, cuda::gelu_elementwise::Kernel::packed>(
      "eight bf16 per thread, 128-bit streaming loads and stores, scalar tail for N % 8");
}

}  // namespace wb::variants
