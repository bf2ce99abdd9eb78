#pragma once
// encoder_backward: scatter the output gradient into the embedding gradients.
//   dwte[inp[b,t], :] += dout[b,t,:];  dwpe[t, :] += dout[b,t,:]
#include <cstdint>

#include "base/bf16.h"
#include "contract/op_fwd.h"

namespace wb {

struct EncoderBackwardArgs {
  float* dwte;         // (V, C), accumulated
  float* dwpe;         // (T, C), accumulated
  const float* dout;   // (B, T, C)
  const int32_t* inp;  // (B, T) token ids in [0, V)
  int B, T, C;
};

const OpSpec& encoder_backward_op();

// encoder_backward_bf16: the same on bf16 storage (dwte, dwpe and dout), as llm.c's
// bf16 step keeps it. The contributions to one element (every position of one token,
// or the B positions of one t) are summed in fp32 and the element rounded once from
// old + sum: a bf16 atomicAdd per position would round at every addition. Its twin is
// encoder_backward. Tolerances: the twin's plus half an ulp of bf16. Measured (tools/bf16_error_study.sh: the emulated CUDA
// ladder and the CPU port, the 5 check shapes, seeds 1-10): dwte uses at most 99.0% of its tolerance and
// dwpe 99.4%, mean signed errors within 0.008 and 0.017 ulp.
struct EncoderBackwardBf16Args {
  bf16* dwte;          // (V, C), accumulated
  bf16* dwpe;          // (T, C), accumulated
  const bf16* dout;    // (B, T, C)
  const int32_t* inp;  // (B, T) token ids in [0, V)
  int B, T, C;
};

const OpSpec& encoder_backward_bf16_op();

}  // namespace wb
