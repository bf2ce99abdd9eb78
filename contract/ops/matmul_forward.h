#pragma once
// matmul_forward: a linear layer over B*T rows.
//   out = inp @ weight^T + bias,  weight of shape (OC, C)
#include <cstdint>

#include "base/bf16.h"
#include "contract/op_fwd.h"

namespace wb {

// The arguments of matmul_forward (Float = float) and of its bf16 twin (Float = bf16).
template <class Float>
struct MatmulForwardArgsOn {
  Float* out;           // (B, T, OC)
  const Float* inp;     // (B, T, C)
  const Float* weight;  // (OC, C)
  const Float* bias;    // (OC), may be null (no bias)
  int B, T, C, OC;
};
using MatmulForwardArgs = MatmulForwardArgsOn<float>;

const OpSpec& matmul_forward_op();

// matmul_forward_bf16: the same on bf16 storage, as llm.c's bf16 step runs its linear
// layers: the products of bf16 inputs (exact in fp32) summed in fp32 with the bias,
// each output rounded once to nearest even. Its twin is matmul_forward. Tolerance of
// out: matmul_forward's (a sum over C in fp32) plus half an ulp of bf16 at the
// reference. Measured (tools/bf16_error_study.sh: the emulated CUDA
// ladder and the CPU port, the 5 check shapes, seeds 1-10): at most 99.3% of the tolerance, mean signed
// error within 0.016 ulp.
using MatmulForwardBf16Args = MatmulForwardArgsOn<bf16>;

const OpSpec& matmul_forward_bf16_op();

}  // namespace wb
