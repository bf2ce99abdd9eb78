#pragma once
// The loop of the element-wise SIMD rungs (residual_forward cpu/2, gelu_forward and
// gelu_backward cpu/3, and their bf16 twins, which differ from them only in the
// element): one `omp parallel for simd` loop, threads taking contiguous static chunks
// of the n elements and each chunk running in vector lanes.
//   out[i] = f(widen(in[i])...)   stored as out's element (a bf16 rounded once)
// The tensors are lanes() of the rung's storage (device/cpu/bf16_lanes.h): float, or
// bf16 read as its uint16_t bits and widened by a shift. There is no restrict: out[i]
// depends on the inputs at i alone, which is all `omp simd` needs, so an in-place call
// (the trainer accumulates gradients with residual_forward into one of its inputs) is
// safe. f is a lambda, not a function pointer, so that it is inlined into the outlined
// OpenMP loop and the loop stays in SIMD registers. A loop compiled for another target
// (WB_TARGET_X86_64_V3) cannot use this: the loop is compiled for this header's.
#include <cstdint>

#include "device/cpu/bf16_lanes.h"

namespace wb::cpu {

template <class Out, class F, class... In>
void elementwise_simd(Out* out, int64_t n, int threads, F f, const In*... in) {
#pragma omp parallel for simd num_threads(threads) schedule(static)
  for (int64_t i = 0; i < n; ++i) store(out[i], f(widen(in[i])...));
}

}  // namespace wb::cpu
