#pragma once
// The CPU reference of every op: plain loops, accumulating in double, the ground
// truth every variant is validated against (and which is itself checked against
// PyTorch, tests/python/test_reference.py). Registered as CPU variant 1 of each op.
#include "kernels/ops/adamw.h"
#include "kernels/ops/attention_backward.h"
#include "kernels/ops/attention_forward.h"
#include "kernels/ops/crossentropy_forward.h"
#include "kernels/ops/crossentropy_softmax_backward.h"
#include "kernels/ops/encoder_backward.h"
#include "kernels/ops/encoder_forward.h"
#include "kernels/ops/fused_classifier.h"
#include "kernels/ops/fused_residual_layernorm_forward.h"
#include "kernels/ops/gelu_backward.h"
#include "kernels/ops/gelu_forward.h"
#include "kernels/ops/global_norm.h"
#include "kernels/ops/layernorm_backward.h"
#include "kernels/ops/layernorm_forward.h"
#include "kernels/ops/matmul_backward.h"
#include "kernels/ops/matmul_backward_bias.h"
#include "kernels/ops/matmul_forward.h"
#include "kernels/ops/residual_forward.h"
#include "kernels/ops/softmax_forward.h"

namespace wb::reference {

void encoder_forward(const EncoderForwardArgs& a);
void encoder_backward(const EncoderBackwardArgs& a);
void layernorm_forward(const LayernormForwardArgs& a);
void layernorm_backward(const LayernormBackwardArgs& a);
void fused_residual_layernorm_forward(const FusedResidualLayernormForwardArgs& a);
void matmul_forward(const MatmulForwardArgs& a);
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

}  // namespace wb::reference
