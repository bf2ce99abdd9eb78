#pragma once
// The CPU reference of every op: plain loops, accumulating in double, the ground
// truth every variant is validated against (and which is itself checked against
// PyTorch, tests/python/test_reference.py). Each file registers its references as CPU
// variant 1 of their ops through one function, wb::references::<file stem>(), that
// the generated registry table lists (cmake/GenerateRegistry.cmake).
#include <vector>

#include "contract/ops/all.h"
#include "contract/variant.h"

namespace wb::reference {

// Elements of float or bf16 storage, read as double; results stored rounded once (for
// the references written once for both storages).
inline double value(float x) { return x; }
inline double value(bf16 x) { return to_float(x); }
inline void store(float& to, double x) { to = float(x); }
inline void store(bf16& to, double x) { to = to_bf16(x); }

void encoder_forward(const EncoderForwardArgs& a);
void encoder_backward(const EncoderBackwardArgs& a);
void layernorm_forward(const LayernormForwardArgs& a);
void layernorm_backward(const LayernormBackwardArgs& a);
void fused_residual_layernorm_forward(const FusedResidualLayernormForwardArgs& a);
void matmul_forward(const MatmulForwardArgs& a);
void matmul_gelu_forward(const MatmulGeluForwardArgs& a);
void matmul_backward(const MatmulBackwardArgs& a);
void matmul_backward_bias(const MatmulBackwardBiasArgs& a);
void attention_forward(const AttentionForwardArgs& a);
void attention_backward(const AttentionBackwardArgs& a);
void gelu_forward(const GeluForwardArgs& a);
void gelu_backward(const GeluBackwardArgs& a);
void residual_forward(const ResidualForwardArgs& a);
void softmax_forward(const SoftmaxForwardArgs& a);
void crossentropy_forward(const CrossentropyForwardArgs& a);
void crossentropy_softmax_backward(const CrossentropySoftmaxBackwardArgs& a);
void fused_classifier(const FusedClassifierArgs& a);
void adamw(const AdamwArgs& a);
void global_norm(const GlobalNormArgs& a);

// The ops on bf16 storage: ports of the fp32 references (the fp32 arithmetic on the
// widened inputs, each output rounded once), their ops' CPU variant 1; the ground truth
// of those ops is their fp32 twin's reference (OpSpec::fp32_twin).
// GELU, tanh approximation, in double (gelu_forward's, and the fused ops').
double gelu(double x);

void encoder_forward_bf16(const EncoderForwardBf16Args& a);
void encoder_backward_bf16(const EncoderBackwardBf16Args& a);
void matmul_forward_bf16(const MatmulForwardBf16Args& a);
void matmul_gelu_forward_bf16(const MatmulGeluForwardBf16Args& a);
void attention_forward_bf16(const AttentionForwardBf16Args& a);
void attention_backward_bf16(const AttentionBackwardBf16Args& a);
void fused_classifier_bf16(const FusedClassifierBf16Args& a);
void matmul_backward_bf16(const MatmulBackwardBf16Args& a);
void matmul_backward_bias_bf16(const MatmulBackwardBiasBf16Args& a);
void residual_forward_bf16(const ResidualForwardBf16Args& a);
void layernorm_forward_bf16(const LayernormForwardBf16Args& a);
void fused_residual_layernorm_forward_bf16(const FusedResidualLayernormForwardBf16Args& a);
void layernorm_backward_bf16(const LayernormBackwardBf16Args& a);
// The truths of the ops on bf16 storage with no fp32 twin (OpSpec::own_truth,
// Variant::truth), on their tensors widened to fp32.
void fused_residual_layernorm_forward_bf16_truth(const TensorTable& t);
void global_norm_bf16(const GlobalNormBf16Args& a);
void adamw_bf16(const AdamwBf16Args& a);
void adamw_bf16_truth(const TensorTable& t);
void gelu_forward_bf16(const GeluForwardBf16Args& a);
void gelu_backward_bf16(const GeluBackwardBf16Args& a);

}  // namespace wb::reference

// The registry entry of reference::<op> as the CPU variant 1 of the op of that name:
// the name is written once, so an entry cannot register one op's reference under
// another's name. _PORT for the ops on bf16 storage, _PORT_WITH_TRUTH for those that
// state their own truth (reference::<op>_truth).
#define WB_REFERENCE(op) ::wb::Variant::reference(#op, &::wb::reference::op)
#define WB_REFERENCE_PORT(op) ::wb::Variant::reference_port(#op, &::wb::reference::op)
#define WB_REFERENCE_PORT_WITH_TRUTH(op) \
  ::wb::Variant::reference_port(#op, &::wb::reference::op, &::wb::reference::op##_truth)
