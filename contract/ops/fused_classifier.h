#pragma once
// fused_classifier: softmax, cross-entropy loss and its gradient in one pass over the
// logits, which are overwritten by dlogits (the logits are not needed afterwards):
//   p = softmax(logits[b,t,0:V]);  losses[b,t] = -log p[target]
//   logits[b,t,i] = (p[i] - (i == target)) * dloss  for i < V, and 0 for V <= i < Vp
#include <cstdint>

#include "base/bf16.h"
#include "contract/op_fwd.h"

namespace wb {

struct FusedClassifierArgs {
  float* logits;           // (B, T, Vp): in logits, out dlogits
  float* losses;           // (B, T)
  const int32_t* targets;  // (B, T) in [0, V)
  float dloss;             // gradient of the mean loss: 1 / (B*T)
  int B, T, V, Vp;
};

const OpSpec& fused_classifier_op();

// fused_classifier_bf16: the same with the logits (and so the dlogits written over
// them) in bf16, the losses in fp32, as llm.c's bf16 step runs its classifier: the
// softmax statistics in fp32 over the widened row, each dlogit rounded once. Its twin
// is fused_classifier. Tolerances: the twin's, plus half an ulp of bf16 for dlogits.
// The check's hard rows (moved by +-90) are bf16 values too: 0.5 apart up there.
// Measured (tools/bf16_error_study.sh: the emulated CUDA
// ladder and the CPU port, the 5 check shapes, seeds 1-10): dlogits use at most 97.4% of their
// tolerance, mean signed error within 0.008 ulp (over the distinct values); losses 14.9%.
struct FusedClassifierBf16Args {
  bf16* logits;            // (B, T, Vp): in logits, out dlogits
  float* losses;           // (B, T)
  const int32_t* targets;  // (B, T) in [0, V)
  float dloss;             // gradient of the mean loss: 1 / (B*T)
  int B, T, V, Vp;
};

const OpSpec& fused_classifier_bf16_op();

}  // namespace wb
