#pragma once
// gelu_forward: GELU, tanh approximation, elementwise over N = B*T*C values.
//   out = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
#include <cstdint>

#include "base/bf16.h"
#include "contract/op_fwd.h"

namespace wb {

// The arguments of gelu_forward (Float = float) and of its bf16 twin (Float = bf16): one
// struct on either storage, so that the two ops still take distinct types.
template <class Float>
struct GeluForwardArgsOn {
  Float* out;        // (N)
  const Float* inp;  // (N)
  int64_t N;
};
using GeluForwardArgs = GeluForwardArgsOn<float>;

const OpSpec& gelu_forward_op();

// gelu_forward_bf16: the same on bf16 storage, the GELU in fp32 of the widened input,
// rounded once to nearest even. Its twin is gelu_forward. Tolerance: gelu_forward's
// (1e-5 + 1e-5 |ref|) plus half an ulp of bf16 at the reference. Measured
// (tools/bf16_error_study.sh: the emulated CUDA ladder and the CPU port, the 5 check
// shapes, seeds 1-20): at most 98.9% of the tolerance (a half-ulp tie), and a mean
// signed error within 0.072 ulp (0.049 over seeds 1-10 since the bias test counts only
// the elements where the rounding decides the error): at x near -4, 1 + tanh(u)
// cancels in fp32 and tanhf's last-bit errors there lean one way (an absolute 1e-8,
// inside atol, but many ulps of an output of 1e-4).
using GeluForwardBf16Args = GeluForwardArgsOn<bf16>;

const OpSpec& gelu_forward_bf16_op();

}  // namespace wb
