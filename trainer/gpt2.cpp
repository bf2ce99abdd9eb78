#include "trainer/gpt2.h"

#include <cmath>
#include <numeric>

#include "kernels/errors.h"
#include "kernels/ops/all.h"  // every op's argument struct

namespace wb::trainer {
namespace {

enum : int { wte, wpe, ln1w, ln1b, qkvw, qkvb, attprojw, attprojb, ln2w, ln2b, fcw, fcb, fcprojw, fcprojb, lnfw, lnfb };

// The shapes of the trainer's op calls, in one place so that the plan and the calls
// agree.
Shape shape_btc(int B, int T, int C) {
  Shape s;
  s.B = B, s.T = T, s.C = C;
  return s;
}
Shape matmul_shape(int B, int T, int C, int OC) {
  Shape s = shape_btc(B, T, C);
  s.OC = OC;
  return s;
}
Shape bias_shape(int B, int T, int OC) {  // matmul_backward_bias: dims B, T, OC
  Shape s;
  s.B = B, s.T = T, s.OC = OC;
  return s;
}
Shape attention_shape(const Config& c, int B, int T) {
  Shape s = shape_btc(B, T, c.C);
  s.NH = c.NH;
  return s;
}
Shape vocab_shape(const Config& c, int B, int T) {
  Shape s = shape_btc(B, T, c.C);
  s.V = c.V, s.Vp = c.Vp;
  return s;
}
Shape params_shape(const Config& c) {
  Shape s;
  s.N = num_params(c);
  return s;
}

}  // namespace

std::string why_the_step_skips(const std::string& op) {
  if (op == "residual_forward") return "the step runs fused_residual_layernorm_forward, which adds the residual itself";
  if (op == "gelu_forward")
    return "the step runs matmul_gelu_forward, which applies the GELU as the MLP's first layer writes its output";
  if (op == "softmax_forward" || op == "crossentropy_forward" || op == "crossentropy_softmax_backward")
    return "the step runs fused_classifier (softmax, loss and its gradient in one op) instead";
  return "";
}

std::vector<Workload> step_workloads(const Config& c, int B, int T) {
  const int L = c.L, C = c.C;
  return {
      {"encoder_forward", vocab_shape(c, B, T), 1},
      {"layernorm_forward", shape_btc(B, T, C), 1},
      {"matmul_forward", matmul_shape(B, T, C, 3 * C), L},
      {"attention_forward", attention_shape(c, B, T), L},
      {"matmul_forward", matmul_shape(B, T, C, C), L},
      {"fused_residual_layernorm_forward", shape_btc(B, T, C), 2 * L},
      {"matmul_gelu_forward", matmul_shape(B, T, C, 4 * C), L},
      {"matmul_forward", matmul_shape(B, T, 4 * C, C), L},
      {"matmul_forward", matmul_shape(B, T, C, c.Vp), 1},
      {"fused_classifier", vocab_shape(c, B, T), 1},
      {"matmul_backward", matmul_shape(B, T, C, c.Vp), 1},
      {"layernorm_backward", shape_btc(B, T, C), 2 * L + 1},
      {"matmul_backward", matmul_shape(B, T, 4 * C, C), L},
      {"matmul_backward_bias", bias_shape(B, T, C), 2 * L},  // fcproj and attproj
      {"gelu_backward", shape_btc(B, T, 4 * C), L},
      {"matmul_backward", matmul_shape(B, T, C, 4 * C), L},
      {"matmul_backward_bias", bias_shape(B, T, 4 * C), L},
      {"matmul_backward", matmul_shape(B, T, C, C), L},
      {"attention_backward", attention_shape(c, B, T), L},
      {"matmul_backward", matmul_shape(B, T, C, 3 * C), L},
      {"matmul_backward_bias", bias_shape(B, T, 3 * C), L},
      {"encoder_backward", vocab_shape(c, B, T), 1},
      {"global_norm", params_shape(c), 1},
      {"adamw", params_shape(c), 1},
  };
}

float* Gpt2::alloc(int64_t floats) {
  buffers_.emplace_back(ex_, std::size_t(floats) * sizeof(float));
  bytes_ += buffers_.back().bytes();
  return static_cast<float*>(buffers_.back().data());
}

int32_t* Gpt2::alloc_tokens(int64_t count) { return reinterpret_cast<int32_t*>(alloc(count)); }

Gpt2::Gpt2(const Config& c, int B, int T, Executor& ex, KernelPlan& plan)
    : c_(c), B_(B), T_(T), ex_(ex), plan_(plan), layout_(c) {
  c.validate();
  if (B <= 0 || T <= 0) throw UsageError("batch size and sequence length must be positive");
  if (T > c.maxT)
    throw UsageError("sequence length " + std::to_string(T) + " is longer than the model's maxT " +
                     std::to_string(c.maxT));
  const int64_t N = layout_.total, BT = int64_t(B) * T, C = c.C, L = c.L;
  params_ = alloc(N);
  grads_ = alloc(N);
  m_ = alloc(N);
  v_ = alloc(N);
  ex_.zero(m_, N * sizeof(float));
  ex_.zero(v_, N * sizeof(float));
  inputs_ = alloc_tokens(BT);
  targets_ = alloc_tokens(BT);
  encoded_ = alloc(BT * C);
  ln1_ = alloc(L * BT * C);
  ln1_mean_ = alloc(L * BT);
  ln1_rstd_ = alloc(L * BT);
  qkv_ = alloc(L * BT * 3 * C);
  atty_ = alloc(L * BT * C);
  lse_ = alloc(L * BT * c.NH);
  attproj_ = alloc(L * BT * C);
  residual2_ = alloc(L * BT * C);
  ln2_ = alloc(L * BT * C);
  ln2_mean_ = alloc(L * BT);
  ln2_rstd_ = alloc(L * BT);
  fch_ = alloc(L * BT * 4 * C);
  fch_gelu_ = alloc(L * BT * 4 * C);
  fcproj_ = alloc(L * BT * C);
  residual3_ = alloc(L * BT * C);
  lnf_ = alloc(BT * C);
  lnf_mean_ = alloc(BT);
  lnf_rstd_ = alloc(BT);
  logits_ = alloc(BT * c.Vp);
  losses_ = alloc(BT);
  norm_ = alloc(1);
  dresidual_ = alloc(BT * C);
  dbtc_ = alloc(BT * C);
  dfch_gelu_ = alloc(BT * 4 * C);
  dfch_ = alloc(BT * 4 * C);
  dqkv_ = alloc(BT * 3 * C);
  host_losses_.resize(BT);
}

void Gpt2::load_params(const float* host) { ex_.to_device(params_, host, layout_.total * sizeof(float)); }

void Gpt2::save_params(float* host) const { ex_.to_host(host, params_, layout_.total * sizeof(float)); }

void Gpt2::load_moments(const float* m, const float* v) {
  ex_.to_device(m_, m, layout_.total * sizeof(float));
  ex_.to_device(v_, v, layout_.total * sizeof(float));
}

void Gpt2::save_moments(float* m, float* v) const {
  ex_.to_host(m, m_, layout_.total * sizeof(float));
  ex_.to_host(v, v_, layout_.total * sizeof(float));
}

void Gpt2::copy_gradients(float* host) const { ex_.to_host(host, grads_, layout_.total * sizeof(float)); }

float Gpt2::forward(const int32_t* inputs, const int32_t* targets) {
  NvtxRange range("forward");
  const int B = B_, T = T_, C = c_.C, L = c_.L;
  const int64_t BT = int64_t(B) * T;
  auto p = [&](int tensor) { return params_ + layout_.offset[tensor]; };
  ex_.to_device(inputs_, inputs, BT * sizeof(int32_t));
  if (targets) ex_.to_device(targets_, targets, BT * sizeof(int32_t));

  plan_.run("encoder_forward", vocab_shape(c_, B, T), EncoderForwardArgs{encoded_, inputs_, p(wte), p(wpe), B, T, C});
  plan_.run("layernorm_forward", shape_btc(B, T, C),
            LayernormForwardArgs{ln1_, ln1_mean_, ln1_rstd_, encoded_, p(ln1w), p(ln1b), B, T, C});
  for (int l = 0; l < L; ++l) {
    NvtxRange layer("layer");
    const int64_t btc = l * BT * C, bt = l * BT;
    const float* residual = l == 0 ? encoded_ : residual3_ + btc - BT * C;
    float* ln1 = ln1_ + btc;
    float* qkv = qkv_ + 3 * btc;
    float* atty = atty_ + btc;
    float* attproj = attproj_ + btc;
    float* residual2 = residual2_ + btc;
    float* ln2 = ln2_ + btc;
    float* fch = fch_ + 4 * btc;
    float* fch_gelu = fch_gelu_ + 4 * btc;
    float* fcproj = fcproj_ + btc;
    float* residual3 = residual3_ + btc;
    plan_.run("matmul_forward", matmul_shape(B, T, C, 3 * C),
              MatmulForwardArgs{qkv, ln1, p(qkvw) + l * 3 * C * C, p(qkvb) + l * 3 * C, B, T, C, 3 * C});
    plan_.run("attention_forward", attention_shape(c_, B, T),
              AttentionForwardArgs{atty, lse_ + bt * c_.NH, qkv, B, T, C, c_.NH});
    plan_.run("matmul_forward", matmul_shape(B, T, C, C),
              MatmulForwardArgs{attproj, atty, p(attprojw) + l * C * C, p(attprojb) + l * C, B, T, C, C});
    plan_.run("fused_residual_layernorm_forward", shape_btc(B, T, C),
              FusedResidualLayernormForwardArgs{residual2, ln2, ln2_mean_ + bt, ln2_rstd_ + bt, residual, attproj,
                                                p(ln2w) + l * C, p(ln2b) + l * C, B, T, C});
    // The MLP's first layer and its GELU in one op; fch (before the GELU) is kept for gelu_backward.
    plan_.run("matmul_gelu_forward", matmul_shape(B, T, C, 4 * C),
              MatmulGeluForwardArgs{fch_gelu, fch, ln2, p(fcw) + l * 4 * C * C, p(fcb) + l * 4 * C, B, T, C, 4 * C});
    plan_.run("matmul_forward", matmul_shape(B, T, 4 * C, C),
              MatmulForwardArgs{fcproj, fch_gelu, p(fcprojw) + l * C * 4 * C, p(fcprojb) + l * C, B, T, 4 * C, C});
    // The residual, and the next layer's first layernorm (or the final one), in one op.
    const bool last = l == L - 1;
    float* next_ln = last ? lnf_ : ln1_ + btc + BT * C;
    float* next_mean = last ? lnf_mean_ : ln1_mean_ + bt + BT;
    float* next_rstd = last ? lnf_rstd_ : ln1_rstd_ + bt + BT;
    const float* next_w = last ? p(lnfw) : p(ln1w) + (l + 1) * C;
    const float* next_b = last ? p(lnfb) : p(ln1b) + (l + 1) * C;
    plan_.run("fused_residual_layernorm_forward", shape_btc(B, T, C),
              FusedResidualLayernormForwardArgs{residual3, next_ln, next_mean, next_rstd, residual2, fcproj, next_w,
                                                next_b, B, T, C});
  }
  plan_.run("matmul_forward", matmul_shape(B, T, C, c_.Vp),
            MatmulForwardArgs{logits_, lnf_, p(wte), nullptr, B, T, C, c_.Vp});
  if (capture_ || !targets) {
    captured_.resize(BT * c_.Vp);
    ex_.to_host(captured_.data(), logits_, captured_.size() * sizeof(float));
  }
  if (!targets) return 0.0f;
  plan_.run("fused_classifier", vocab_shape(c_, B, T),
            FusedClassifierArgs{logits_, losses_, targets_, 1.0f / float(BT), B, T, c_.V, c_.Vp});
  ex_.to_host(host_losses_.data(), losses_, BT * sizeof(float));
  double sum = 0;
  for (float x : host_losses_) sum += x;
  return float(sum / double(BT));
}

void Gpt2::backward() {
  NvtxRange range("backward");
  const int B = B_, T = T_, C = c_.C, L = c_.L;
  const int64_t BT = int64_t(B) * T, N = layout_.total;
  auto p = [&](int tensor) { return params_ + layout_.offset[tensor]; };
  auto g = [&](int tensor) { return grads_ + layout_.offset[tensor]; };
  memsets_ = {};
  auto zero = [&](float* x, int64_t floats) {
    ex_.zero(x, std::size_t(floats) * sizeof(float));
    ++memsets_.count;
    memsets_.bytes += std::size_t(floats) * sizeof(float);
  };
  zero(grads_, N);

  // matmul_backward overwrites dinp (dbtc_, dfch_gelu_ need no zeroing) and
  // accumulates dweight; the bias gradients are matmul_backward_bias calls on the same
  // dout. The classifier (tied to wte, no bias); dlogits sit in the logits buffer.
  plan_.run("matmul_backward", matmul_shape(B, T, C, c_.Vp),
            MatmulBackwardArgs{dbtc_, g(wte), logits_, lnf_, p(wte), B, T, C, c_.Vp});
  zero(dresidual_, BT * C);
  plan_.run("layernorm_backward", shape_btc(B, T, C),
            LayernormBackwardArgs{dresidual_, g(lnfw), g(lnfb), dbtc_, residual3_ + (L - 1) * BT * C, p(lnfw),
                                  lnf_mean_, lnf_rstd_, B, T, C});
  // dresidual holds the gradient of the residual stream after layer l, on entry to it.
  for (int l = L - 1; l >= 0; --l) {
    NvtxRange layer("layer");
    const int64_t btc = l * BT * C, bt = l * BT;
    const float* residual = l == 0 ? encoded_ : residual3_ + btc - BT * C;
    plan_.run("matmul_backward", matmul_shape(B, T, 4 * C, C),
              MatmulBackwardArgs{dfch_gelu_, g(fcprojw) + l * C * 4 * C, dresidual_, fch_gelu_ + 4 * btc,
                                 p(fcprojw) + l * C * 4 * C, B, T, 4 * C, C});
    plan_.run("matmul_backward_bias", bias_shape(B, T, C),
              MatmulBackwardBiasArgs{g(fcprojb) + l * C, dresidual_, B, T, C});
    plan_.run("gelu_backward", shape_btc(B, T, 4 * C), GeluBackwardArgs{dfch_, fch_ + 4 * btc, dfch_gelu_, BT * 4 * C});
    plan_.run(
        "matmul_backward", matmul_shape(B, T, C, 4 * C),
        MatmulBackwardArgs{dbtc_, g(fcw) + l * 4 * C * C, dfch_, ln2_ + btc, p(fcw) + l * 4 * C * C, B, T, C, 4 * C});
    plan_.run("matmul_backward_bias", bias_shape(B, T, 4 * C),
              MatmulBackwardBiasArgs{g(fcb) + l * 4 * C, dfch_, B, T, 4 * C});
    plan_.run("layernorm_backward", shape_btc(B, T, C),
              LayernormBackwardArgs{dresidual_, g(ln2w) + l * C, g(ln2b) + l * C, dbtc_, residual2_ + btc,
                                    p(ln2w) + l * C, ln2_mean_ + bt, ln2_rstd_ + bt, B, T, C});
    plan_.run("matmul_backward", matmul_shape(B, T, C, C),
              MatmulBackwardArgs{dbtc_, g(attprojw) + l * C * C, dresidual_, atty_ + btc, p(attprojw) + l * C * C, B, T,
                                 C, C});
    plan_.run("matmul_backward_bias", bias_shape(B, T, C),
              MatmulBackwardBiasArgs{g(attprojb) + l * C, dresidual_, B, T, C});
    plan_.run("attention_backward", attention_shape(c_, B, T),
              AttentionBackwardArgs{dqkv_, dbtc_, qkv_ + 3 * btc, atty_ + btc, lse_ + bt * c_.NH, B, T, C, c_.NH});
    plan_.run(
        "matmul_backward", matmul_shape(B, T, C, 3 * C),
        MatmulBackwardArgs{dbtc_, g(qkvw) + l * 3 * C * C, dqkv_, ln1_ + btc, p(qkvw) + l * 3 * C * C, B, T, C, 3 * C});
    plan_.run("matmul_backward_bias", bias_shape(B, T, 3 * C),
              MatmulBackwardBiasArgs{g(qkvb) + l * 3 * C, dqkv_, B, T, 3 * C});
    plan_.run("layernorm_backward", shape_btc(B, T, C),
              LayernormBackwardArgs{dresidual_, g(ln1w) + l * C, g(ln1b) + l * C, dbtc_, residual, p(ln1w) + l * C,
                                    ln1_mean_ + bt, ln1_rstd_ + bt, B, T, C});
  }
  plan_.run("encoder_backward", vocab_shape(c_, B, T),
            EncoderBackwardArgs{g(wte), g(wpe), dresidual_, inputs_, B, T, C});
}

float Gpt2::update(const UpdateSettings& u) {
  NvtxRange range("update");
  const int64_t N = layout_.total;
  plan_.run("global_norm", params_shape(c_), GlobalNormArgs{norm_, grads_, N});
  float norm = 0;
  ex_.to_host(&norm, norm_, sizeof(float));
  // As torch.nn.utils.clip_grad_norm_: scale by clip / (norm + 1e-6) when that is below 1.
  float scale = 1.0f;
  if (u.grad_clip > 0) scale = std::min(1.0f, u.grad_clip / (norm + 1e-6f));
  plan_.run("adamw", params_shape(c_),
            AdamwArgs{params_, m_, v_, grads_, N, u.lr, u.beta1, u.beta2, u.eps, u.weight_decay, scale, u.step});
  return norm;
}

}  // namespace wb::trainer
