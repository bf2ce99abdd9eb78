#pragma once
// encoder_forward: token plus position embedding.
//   out[b,t,:] = wte[inp[b,t], :] + wpe[t, :]
#include <cstdint>

#include "base/bf16.h"
#include "contract/op_fwd.h"

namespace wb {

struct EncoderForwardArgs {
  float* out;          // (B, T, C)
  const int32_t* inp;  // (B, T) token ids in [0, V)
  const float* wte;    // (V, C) token embedding
  const float* wpe;    // (T, C) position embedding (the first T rows of maxT)
  int B, T, C;
};

const OpSpec& encoder_forward_op();

// encoder_forward_bf16: the same on bf16 storage (wte, wpe and out), as llm.c's bf16
// step keeps it: each sum taken in fp32 and rounded once to nearest even. Its twin is
// encoder_forward. Tolerance of out: encoder_forward's plus half an ulp of bf16 at the
// reference (one rounding: the sum of two bf16 is exact in fp32, so the only error is
// that rounding). Measured (tools/bf16_error_study.sh: the emulated CUDA
// ladder and the CPU port, the 5 check shapes, seeds 1-10): at most 99.5% of the tolerance (a half-ulp
// tie), mean signed error within 0.019 ulp.
struct EncoderForwardBf16Args {
  bf16* out;           // (B, T, C)
  const int32_t* inp;  // (B, T) token ids in [0, V)
  const bf16* wte;     // (V, C)
  const bf16* wpe;     // (T, C)
  int B, T, C;
};

const OpSpec& encoder_forward_bf16_op();

}  // namespace wb
