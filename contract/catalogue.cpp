#include "contract/catalogue.h"

#include "contract/ops/all.h"

namespace wb {

const std::vector<const OpSpec*>& all_ops() {
  static const std::vector<const OpSpec*> ops{
      // forward
      &encoder_forward_op(), &layernorm_forward_op(), &matmul_forward_op(), &attention_forward_op(),
      &residual_forward_op(), &fused_residual_layernorm_forward_op(), &gelu_forward_op(), &matmul_gelu_forward_op(),
      &softmax_forward_op(),
      &crossentropy_forward_op(), &fused_classifier_op(),
      // forward, on bf16 storage
      &encoder_forward_bf16_op(), &matmul_forward_bf16_op(), &matmul_gelu_forward_bf16_op(), &attention_forward_bf16_op(),
      &residual_forward_bf16_op(), &layernorm_forward_bf16_op(),
      &fused_residual_layernorm_forward_bf16_op(), &gelu_forward_bf16_op(), &fused_classifier_bf16_op(),
      // backward, on bf16 storage
      &matmul_backward_bf16_op(), &matmul_backward_bias_bf16_op(), &gelu_backward_bf16_op(),
      &attention_backward_bf16_op(), &layernorm_backward_bf16_op(), &encoder_backward_bf16_op(),
      // backward
      &crossentropy_softmax_backward_op(), &matmul_backward_op(), &matmul_backward_bias_op(), &gelu_backward_op(),
      &attention_backward_op(), &layernorm_backward_op(), &encoder_backward_op(),
      // update
      &global_norm_op(), &adamw_op(),
      // update, from bf16 gradients
      &global_norm_bf16_op(), &adamw_bf16_op()};
  return ops;
}

}  // namespace wb
