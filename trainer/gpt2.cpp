#include "trainer/gpt2.h"

#include <cmath>
#include <numeric>
#include <stdexcept>
#include <type_traits>

#include "base/errors.h"
#include "contract/ops/all.h"  // every op's argument struct

namespace wb::trainer {
namespace {

enum : int { wte, wpe, ln1w, ln1b, qkvw, qkvb, attprojw, attprojb, ln2w, ln2b, fcw, fcb, fcprojw, fcprojb, lnfw, lnfb };

// The shapes of the trainer's op calls.
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

Storage storage_of(NumericClass precision) { return precision == NumericClass::bf16 ? Storage::bf16 : Storage::fp32; }

const char* op_suffix(Storage s) { return s == Storage::bf16 ? "_bf16" : ""; }

std::string why_the_step_skips(const std::string& name) {
  // The same reasons for the bf16 forms.
  const std::string op =
      name.size() > 5 && name.compare(name.size() - 5, 5, "_bf16") == 0 ? name.substr(0, name.size() - 5) : name;
  if (op == "residual_forward") return "the step runs fused_residual_layernorm_forward, which adds the residual itself";
  if (op == "gelu_forward")
    return "the step runs matmul_gelu_forward, which applies the GELU as the MLP's first layer writes its output";
  if (op == "softmax_forward" || op == "crossentropy_forward" || op == "crossentropy_softmax_backward")
    return "the step runs fused_classifier (softmax, loss and its gradient in one op) instead";
  return "";
}

namespace {

// What tells the two storages apart: the type of the tensors that llm.c keeps in bf16
// (parameters, gradients, activations), the name of every op the step calls and its
// argument struct. Layernorm statistics, attention's lse, the losses, the gradient
// norm, AdamW's moments and (bf16) the master weights are fp32 in both.
template <class F>
struct StepOn {
  using Float = F;
  static constexpr Storage storage = std::is_same_v<F, float> ? Storage::fp32 : Storage::bf16;
  // An op's argument struct on this storage: the fp32 op's, or its bf16 twin's.
  template <class Fp32Args, class Bf16Args>
  using Args = std::conditional_t<storage == Storage::fp32, Fp32Args, Bf16Args>;
  using EncoderForward = Args<EncoderForwardArgs, EncoderForwardBf16Args>;
  using LayernormForward = Args<LayernormForwardArgs, LayernormForwardBf16Args>;
  using MatmulForward = Args<MatmulForwardArgs, MatmulForwardBf16Args>;
  using AttentionForward = Args<AttentionForwardArgs, AttentionForwardBf16Args>;
  using FusedResidualLayernormForward = Args<FusedResidualLayernormForwardArgs, FusedResidualLayernormForwardBf16Args>;
  using MatmulGeluForward = Args<MatmulGeluForwardArgs, MatmulGeluForwardBf16Args>;
  using FusedClassifier = Args<FusedClassifierArgs, FusedClassifierBf16Args>;
  using MatmulBackward = Args<MatmulBackwardArgs, MatmulBackwardBf16Args>;
  using LayernormBackward = Args<LayernormBackwardArgs, LayernormBackwardBf16Args>;
  using MatmulBackwardBias = Args<MatmulBackwardBiasArgs, MatmulBackwardBiasBf16Args>;
  using GeluBackward = Args<GeluBackwardArgs, GeluBackwardBf16Args>;
  using AttentionBackward = Args<AttentionBackwardArgs, AttentionBackwardBf16Args>;
  using EncoderBackward = Args<EncoderBackwardArgs, EncoderBackwardBf16Args>;
  using GlobalNorm = Args<GlobalNormArgs, GlobalNormBf16Args>;
};
using Fp32Step = StepOn<float>;
using Bf16Step = StepOn<bf16>;

// AdamW's values that change from step to step, in one device buffer that set_update
// writes with one copy (contract/ops/adamw.h: read from device memory).
struct StepValues {
  float lr;
  int32_t step;
  int32_t seed;  // the bits of the uint32 rounding seed
};

template <class Step>
class Model final : public Gpt2 {
  using Float = typename Step::Float;

 public:
  Model(const Config& c, int B, int T, Executor& ex, KernelPlan& plan);
  // A recording model: it allocates nothing and has no executor or plan; its step's op
  // calls only append their (op, shape) to `calls` (step_workloads).
  Model(const Config& c, int B, int T, std::vector<Workload>& calls)
      : c_(c), B_(B), T_(T), recorded_(&calls), layout_(c) {}

  const Config& config() const override { return c_; }
  Storage storage() const override { return Step::storage; }
  void load_params(const float* host) override;
  void save_params(float* host) const override;
  void load_bf16_params(const bf16* host) override;
  void save_bf16_params(bf16* host) const override;
  void load_moments(const float* m, const float* v) override {
    ex_->to_device(m_, m, layout_.total * sizeof(float));
    ex_->to_device(v_, v, layout_.total * sizeof(float));
  }
  void save_moments(float* m, float* v) const override {
    ex_->to_host(m, m_, layout_.total * sizeof(float));
    ex_->to_host(v, v_, layout_.total * sizeof(float));
  }
  std::size_t bytes_allocated() const override { return bytes_; }
  void set_batch(const int32_t* inputs, const int32_t* targets) override {
    const int64_t BT = int64_t(B_) * T_;
    ex_->to_device(inputs_, inputs, BT * sizeof(int32_t));
    if (targets) ex_->to_device(targets_, targets, BT * sizeof(int32_t));
  }
  void forward_launches(bool with_targets) override;
  float loss() override;
  void backward() override;
  void set_update(const UpdateSettings& u) override {
    const StepValues values{u.lr, u.step, int32_t(u.rounding_seed)};
    ex_->to_device(step_values_, &values, sizeof values);
  }
  void norm_launch() override;
  void adamw_launch(const UpdateSettings& u) override;
  StepResults results() override {
    const int64_t BT = int64_t(B_) * T_;
    ex_->to_host(host_losses_.data(), losses_, (BT + 1) * sizeof(float));  // the losses, then the norm
    return {mean_loss(), host_losses_[BT]};
  }
  void copy_gradients(float* host) const override { to_host_widened(host, grads_, layout_.total); }

 private:
  void layer_forward(int l);   // the op calls of layer l in the forward pass
  void layer_backward(int l);  // and in the backward pass
  template <class U>
  U* alloc(int64_t count) {
    buffers_.emplace_back(*ex_, std::size_t(count) * sizeof(U));
    bytes_ += buffers_.back().bytes();
    return static_cast<U*>(buffers_.back().data());
  }
  float mean_loss() const {  // of the first B*T entries of host_losses_
    const int64_t BT = int64_t(B_) * T_;
    double sum = 0;
    for (int64_t i = 0; i < BT; ++i) sum += host_losses_[i];
    return float(sum / double(BT));
  }
  std::string op(const char* name) const { return std::string(name) + op_suffix(Step::storage); }
  // Every op call of the step goes through here, so that the step's workloads are its
  // calls: a launching model runs the call through the plan; a recording one counts it
  // under its (op, shape), in the order of first call, and never calls `args`, which
  // builds the argument struct from buffers that a recording model does not have.
  template <class MakeArgs>
  void call(const char* name, const Shape& shape, MakeArgs&& args) {
    if (!recorded_) return plan_->run(op(name), shape, args());
    const std::string o = op(name);
    for (Workload& w : *recorded_)
      if (w.op == o && w.shape == shape) return void(++w.calls);
    recorded_->push_back({o, shape, 1});
  }
  void to_host_widened(float* host, const Float* x, int64_t n) const {
    if constexpr (std::is_same_v<Float, float>) {
      ex_->to_host(host, x, std::size_t(n) * sizeof(float));
    } else {
      std::vector<Float> narrow(n);
      ex_->to_host(narrow.data(), x, std::size_t(n) * sizeof(Float));
      for (int64_t i = 0; i < n; ++i) host[i] = to_float(narrow[i]);  // exact
    }
  }

  Config c_;
  int B_, T_;
  // A launching model has both; a recording one neither, nor any buffer.
  Executor* ex_ = nullptr;
  KernelPlan* plan_ = nullptr;
  std::vector<Workload>* recorded_ = nullptr;  // a recording model's calls
  ParamLayout layout_;
  std::vector<Buffer> buffers_;
  std::size_t bytes_ = 0;

  // Null in a recording model.
  Float *params_ = nullptr, *grads_ = nullptr;
  float *master_ = nullptr, *m_ = nullptr, *v_ = nullptr;  // master_: bf16 only
  int32_t *inputs_ = nullptr, *targets_ = nullptr;
  // Activations: per layer l at offset l * size.
  Float *encoded_ = nullptr, *ln1_ = nullptr, *qkv_ = nullptr, *atty_ = nullptr, *attproj_ = nullptr,
        *residual2_ = nullptr, *ln2_ = nullptr, *fch_ = nullptr, *fch_gelu_ = nullptr, *fcproj_ = nullptr,
        *residual3_ = nullptr, *lnf_ = nullptr, *logits_ = nullptr;
  float *ln1_mean_ = nullptr, *ln1_rstd_ = nullptr, *lse_ = nullptr, *ln2_mean_ = nullptr, *ln2_rstd_ = nullptr,
        *lnf_mean_ = nullptr, *lnf_rstd_ = nullptr, *losses_ = nullptr, *norm_ = nullptr;
  StepValues* step_values_ = nullptr;  // AdamW's values of this step, from set_update
  // Gradients of activations, reused across layers.
  Float *dresidual_ = nullptr, *dbtc_ = nullptr, *dfch_gelu_ = nullptr, *dfch_ = nullptr, *dqkv_ = nullptr;
  std::vector<float> host_losses_;
};

template <class Step>
Model<Step>::Model(const Config& c, int B, int T, Executor& ex, KernelPlan& plan)
    : c_(c), B_(B), T_(T), ex_(&ex), plan_(&plan), layout_(c) {
  c.validate();
  if (B <= 0 || T <= 0) throw UsageError("batch size and sequence length must be positive");
  if (T > c.maxT)
    throw UsageError("sequence length " + std::to_string(T) + " is longer than the model's maxT " +
                     std::to_string(c.maxT));
  const int64_t N = layout_.total, BT = int64_t(B) * T, C = c.C, L = c.L;
  params_ = alloc<Float>(N);
  grads_ = alloc<Float>(N);
  m_ = alloc<float>(N);
  v_ = alloc<float>(N);
  if constexpr (Step::storage == Storage::bf16) master_ = alloc<float>(N);
  ex_->zero(m_, N * sizeof(float));
  ex_->zero(v_, N * sizeof(float));
  inputs_ = alloc<int32_t>(BT);
  targets_ = alloc<int32_t>(BT);
  encoded_ = alloc<Float>(BT * C);
  ln1_ = alloc<Float>(L * BT * C);
  ln1_mean_ = alloc<float>(L * BT);
  ln1_rstd_ = alloc<float>(L * BT);
  qkv_ = alloc<Float>(L * BT * 3 * C);
  atty_ = alloc<Float>(L * BT * C);
  lse_ = alloc<float>(L * BT * c.NH);
  attproj_ = alloc<Float>(L * BT * C);
  residual2_ = alloc<Float>(L * BT * C);
  ln2_ = alloc<Float>(L * BT * C);
  ln2_mean_ = alloc<float>(L * BT);
  ln2_rstd_ = alloc<float>(L * BT);
  fch_ = alloc<Float>(L * BT * 4 * C);
  fch_gelu_ = alloc<Float>(L * BT * 4 * C);
  fcproj_ = alloc<Float>(L * BT * C);
  residual3_ = alloc<Float>(L * BT * C);
  lnf_ = alloc<Float>(BT * C);
  lnf_mean_ = alloc<float>(BT);
  lnf_rstd_ = alloc<float>(BT);
  logits_ = alloc<Float>(BT * c.Vp);
  losses_ = alloc<float>(BT + 1);  // the norm follows the losses: one read-back for both
  norm_ = losses_ + BT;
  step_values_ = alloc<StepValues>(1);
  set_update(UpdateSettings{});  // never read uninitialised
  dresidual_ = alloc<Float>(BT * C);
  dbtc_ = alloc<Float>(BT * C);
  dfch_gelu_ = alloc<Float>(BT * 4 * C);
  dfch_ = alloc<Float>(BT * 4 * C);
  dqkv_ = alloc<Float>(BT * 3 * C);
  host_losses_.resize(BT + 1);
}

template <class Step>
void Model<Step>::load_params(const float* host) {
  const int64_t N = layout_.total;
  if constexpr (Step::storage == Storage::fp32) {
    ex_->to_device(params_, host, N * sizeof(float));
  } else {
    ex_->to_device(master_, host, N * sizeof(float));
    std::vector<bf16> rounded(N);
    for (int64_t i = 0; i < N; ++i) rounded[i] = to_bf16(host[i]);
    ex_->to_device(params_, rounded.data(), N * sizeof(bf16));
  }
}

template <class Step>
void Model<Step>::save_params(float* host) const {
  if constexpr (Step::storage == Storage::fp32)
    ex_->to_host(host, params_, layout_.total * sizeof(float));
  else
    ex_->to_host(host, master_, layout_.total * sizeof(float));
}

template <class Step>
void Model<Step>::load_bf16_params(const bf16* host) {
  if constexpr (Step::storage == Storage::fp32) throw std::logic_error("an fp32 model has no bf16 parameters");
  ex_->to_device(params_, host, layout_.total * sizeof(bf16));
}

template <class Step>
void Model<Step>::save_bf16_params(bf16* host) const {
  if constexpr (Step::storage == Storage::fp32) throw std::logic_error("an fp32 model has no bf16 parameters");
  ex_->to_host(host, params_, layout_.total * sizeof(bf16));
}

// Layer l's activations are at l * btc (statistics at l * bt) in each buffer; the
// pointers are formed inside the argument builders only, which a recording model never
// calls.
template <class Step>
void Model<Step>::layer_forward(int l) {
  const int B = B_, T = T_, C = c_.C, L = c_.L;
  const int64_t BT = int64_t(B) * T;
  auto p = [&](int tensor) { return params_ + layout_.offset[tensor]; };
  NvtxRange layer("layer");
  const int64_t btc = l * BT * C, bt = l * BT;
  auto residual = [&] { return l == 0 ? encoded_ : residual3_ + btc - BT * C; };
  call("matmul_forward", matmul_shape(B, T, C, 3 * C), [&] {
    return typename Step::MatmulForward{
        qkv_ + 3 * btc, ln1_ + btc, p(qkvw) + l * 3 * C * C, p(qkvb) + l * 3 * C, B, T, C, 3 * C};
  });
  call("attention_forward", attention_shape(c_, B, T),
       [&] { return typename Step::AttentionForward{atty_ + btc, lse_ + bt * c_.NH, qkv_ + 3 * btc, B, T, C, c_.NH}; });
  call("matmul_forward", matmul_shape(B, T, C, C), [&] {
    return typename Step::MatmulForward{
        attproj_ + btc, atty_ + btc, p(attprojw) + l * C * C, p(attprojb) + l * C, B, T, C, C};
  });
  call("fused_residual_layernorm_forward", shape_btc(B, T, C), [&] {
    return typename Step::FusedResidualLayernormForward{residual2_ + btc,
                                                        ln2_ + btc,
                                                        ln2_mean_ + bt,
                                                        ln2_rstd_ + bt,
                                                        residual(),
                                                        attproj_ + btc,
                                                        p(ln2w) + l * C,
                                                        p(ln2b) + l * C,
                                                        B,
                                                        T,
                                                        C};
  });
  // The MLP's first layer and its GELU in one op; fch (before the GELU) is kept for gelu_backward.
  call("matmul_gelu_forward", matmul_shape(B, T, C, 4 * C), [&] {
    return typename Step::MatmulGeluForward{
        fch_gelu_ + 4 * btc, fch_ + 4 * btc, ln2_ + btc, p(fcw) + l * 4 * C * C, p(fcb) + l * 4 * C, B, T, C, 4 * C};
  });
  call("matmul_forward", matmul_shape(B, T, 4 * C, C), [&] {
    return typename Step::MatmulForward{
        fcproj_ + btc, fch_gelu_ + 4 * btc, p(fcprojw) + l * C * 4 * C, p(fcprojb) + l * C, B, T, 4 * C, C};
  });
  // The residual, and the next layer's first layernorm (or the final one), in one op.
  call("fused_residual_layernorm_forward", shape_btc(B, T, C), [&] {
    if (l == L - 1)
      return typename Step::FusedResidualLayernormForward{
          residual3_ + btc, lnf_, lnf_mean_, lnf_rstd_, residual2_ + btc, fcproj_ + btc, p(lnfw), p(lnfb), B, T, C};
    return typename Step::FusedResidualLayernormForward{residual3_ + btc,
                                                        ln1_ + btc + BT * C,
                                                        ln1_mean_ + bt + BT,
                                                        ln1_rstd_ + bt + BT,
                                                        residual2_ + btc,
                                                        fcproj_ + btc,
                                                        p(ln1w) + (l + 1) * C,
                                                        p(ln1b) + (l + 1) * C,
                                                        B,
                                                        T,
                                                        C};
  });
}

template <class Step>
void Model<Step>::forward_launches(bool targets) {
  NvtxRange range("forward");
  const int B = B_, T = T_, C = c_.C, L = c_.L;
  const int64_t BT = int64_t(B) * T;
  auto p = [&](int tensor) { return params_ + layout_.offset[tensor]; };

  call("encoder_forward", vocab_shape(c_, B, T),
       [&] { return typename Step::EncoderForward{encoded_, inputs_, p(wte), p(wpe), B, T, C}; });
  call("layernorm_forward", shape_btc(B, T, C), [&] {
    return typename Step::LayernormForward{ln1_, ln1_mean_, ln1_rstd_, encoded_, p(ln1w), p(ln1b), B, T, C};
  });
  for (int l = 0; l < L; ++l) layer_forward(l);
  call("matmul_forward", matmul_shape(B, T, C, c_.Vp),
       [&] { return typename Step::MatmulForward{logits_, lnf_, p(wte), nullptr, B, T, C, c_.Vp}; });
  if (!recorded_ && (capture_ || !targets)) {
    captured_.resize(BT * c_.Vp);
    to_host_widened(captured_.data(), logits_, BT * c_.Vp);
  }
  if (!targets) return;
  // The loss in fp32 in both storages; bf16 dlogits over the bf16 logits.
  call("fused_classifier", vocab_shape(c_, B, T),
       [&] { return typename Step::FusedClassifier{logits_, losses_, targets_, 1.0f / float(BT), B, T, c_.V, c_.Vp}; });
}

template <class Step>
float Model<Step>::loss() {
  const int64_t BT = int64_t(B_) * T_;
  ex_->to_host(host_losses_.data(), losses_, BT * sizeof(float));
  return mean_loss();
}

// Layer l's backward pass: dresidual_ holds the gradient of the residual stream after
// layer l on entry, before it on return.
template <class Step>
void Model<Step>::layer_backward(int l) {
  const int B = B_, T = T_, C = c_.C;
  const int64_t BT = int64_t(B) * T;
  auto p = [&](int tensor) { return params_ + layout_.offset[tensor]; };
  auto g = [&](int tensor) { return grads_ + layout_.offset[tensor]; };
  using MatmulBackward = typename Step::MatmulBackward;
  using MatmulBackwardBias = typename Step::MatmulBackwardBias;
  using LayernormBackward = typename Step::LayernormBackward;
  NvtxRange layer("layer");
  const int64_t btc = l * BT * C, bt = l * BT;
  auto residual = [&] { return l == 0 ? encoded_ : residual3_ + btc - BT * C; };
  // The backward of the layer's two layernorms (weight w, bias b): into dresidual_, which
  // it accumulates, from dbtc_; input builds the pointer to the layernorm's input.
  auto layernorm_backward = [&](int w, int b, auto input, float* mean, float* rstd) {
    call("layernorm_backward", shape_btc(B, T, C), [&] {
      return LayernormBackward{
          dresidual_, g(w) + l * C, g(b) + l * C, dbtc_, input(), p(w) + l * C, mean + bt, rstd + bt, B, T, C};
    });
  };
  call("matmul_backward", matmul_shape(B, T, 4 * C, C), [&] {
    return MatmulBackward{dfch_gelu_,
                          g(fcprojw) + l * C * 4 * C,
                          dresidual_,
                          fch_gelu_ + 4 * btc,
                          p(fcprojw) + l * C * 4 * C,
                          B,
                          T,
                          4 * C,
                          C};
  });
  call("matmul_backward_bias", bias_shape(B, T, C), [&] {
    return MatmulBackwardBias{g(fcprojb) + l * C, dresidual_, B, T, C};
  });
  call("gelu_backward", shape_btc(B, T, 4 * C), [&] {
    return typename Step::GeluBackward{dfch_, fch_ + 4 * btc, dfch_gelu_, BT * 4 * C};
  });
  call("matmul_backward", matmul_shape(B, T, C, 4 * C), [&] {
    return MatmulBackward{dbtc_, g(fcw) + l * 4 * C * C, dfch_, ln2_ + btc, p(fcw) + l * 4 * C * C, B, T, C, 4 * C};
  });
  call("matmul_backward_bias", bias_shape(B, T, 4 * C), [&] {
    return MatmulBackwardBias{g(fcb) + l * 4 * C, dfch_, B, T, 4 * C};
  });
  layernorm_backward(
      ln2w, ln2b, [&] { return residual2_ + btc; }, ln2_mean_, ln2_rstd_);
  call("matmul_backward", matmul_shape(B, T, C, C), [&] {
    return MatmulBackward{dbtc_, g(attprojw) + l * C * C, dresidual_, atty_ + btc, p(attprojw) + l * C * C, B, T, C, C};
  });
  call("matmul_backward_bias", bias_shape(B, T, C), [&] {
    return MatmulBackwardBias{g(attprojb) + l * C, dresidual_, B, T, C};
  });
  call("attention_backward", attention_shape(c_, B, T), [&] {
    return
        typename Step::AttentionBackward{dqkv_, dbtc_, qkv_ + 3 * btc, atty_ + btc, lse_ + bt * c_.NH, B, T, C, c_.NH};
  });
  call("matmul_backward", matmul_shape(B, T, C, 3 * C), [&] {
    return MatmulBackward{dbtc_, g(qkvw) + l * 3 * C * C, dqkv_, ln1_ + btc, p(qkvw) + l * 3 * C * C, B, T, C, 3 * C};
  });
  call("matmul_backward_bias", bias_shape(B, T, 3 * C), [&] {
    return MatmulBackwardBias{g(qkvb) + l * 3 * C, dqkv_, B, T, 3 * C};
  });
  layernorm_backward(ln1w, ln1b, residual, ln1_mean_, ln1_rstd_);
}

template <class Step>
void Model<Step>::backward() {
  NvtxRange range("backward");
  const int B = B_, T = T_, C = c_.C, L = c_.L;
  const int64_t BT = int64_t(B) * T, N = layout_.total;
  auto p = [&](int tensor) { return params_ + layout_.offset[tensor]; };
  auto g = [&](int tensor) { return grads_ + layout_.offset[tensor]; };
  memsets_ = {};
  auto zero = [&](Float* x, int64_t count) {
    if (recorded_) return;  // a recording model has no buffers
    ex_->zero(x, std::size_t(count) * sizeof(Float));
    ++memsets_.count;
    memsets_.bytes += std::size_t(count) * sizeof(Float);
  };
  zero(grads_, N);

  // matmul_backward overwrites dinp (dbtc_, dfch_gelu_ need no zeroing) and
  // accumulates dweight; the bias gradients are matmul_backward_bias calls on the same
  // dout. The classifier (tied to wte, no bias); dlogits sit in the logits buffer.
  // In bf16 every parameter gradient accumulates across the ops of the step into its
  // bf16 buffer, as llm.c's do (each op's own sum runs in fp32 and is rounded once as
  // it adds into the buffer); so does the residual-gradient buffer.
  using MatmulBackward = typename Step::MatmulBackward;
  using LayernormBackward = typename Step::LayernormBackward;
  call("matmul_backward", matmul_shape(B, T, C, c_.Vp),
       [&] { return MatmulBackward{dbtc_, g(wte), logits_, lnf_, p(wte), B, T, C, c_.Vp}; });
  zero(dresidual_, BT * C);
  call("layernorm_backward", shape_btc(B, T, C), [&] {
    return LayernormBackward{dresidual_, g(lnfw), g(lnfb), dbtc_, residual3_ + (L - 1) * BT * C, p(lnfw), lnf_mean_,
                             lnf_rstd_,  B,       T,       C};
  });
  // dresidual holds the gradient of the residual stream after layer l, on entry to it.
  for (int l = L - 1; l >= 0; --l) layer_backward(l);
  call("encoder_backward", vocab_shape(c_, B, T),
       [&] { return typename Step::EncoderBackward{g(wte), g(wpe), dresidual_, inputs_, B, T, C}; });
}

// The norm in fp32 (of the widened bf16 gradients in bf16), left in norm_; AdamW reads
// it there and scales each gradient by its clipping scale in fp32 (clip_scale, as
// torch.nn.utils.clip_grad_norm_), so that the host never waits for it.
template <class Step>
void Model<Step>::norm_launch() {
  NvtxRange range("norm");
  call("global_norm", params_shape(c_), [&] { return typename Step::GlobalNorm{norm_, grads_, layout_.total}; });
}

template <>
void Model<Fp32Step>::adamw_launch(const UpdateSettings& u) {
  NvtxRange range("update");
  call("adamw", params_shape(c_), [&] {
    const AdamwConstants& a = u.adamw;
    return AdamwArgs{params_,       m_,      v_,      grads_, norm_,          &step_values_->lr, &step_values_->step,
                     layout_.total, a.beta1, a.beta2, a.eps,  a.weight_decay, a.grad_clip};
  });
}

// The fp32 master weights, m and v take the update; the bf16 parameters are the new
// master weights rounded stochastically with the step's seed (the same bits on every
// backend and launch configuration, and on a resumed run, which derives the same seed),
// or, with --rounding nearest, to nearest even.
template <>
void Model<Bf16Step>::adamw_launch(const UpdateSettings& u) {
  NvtxRange range("update");
  call("adamw", params_shape(c_), [&] {
    const AdamwConstants& a = u.adamw;
    return AdamwBf16Args{params_,
                         master_,
                         m_,
                         v_,
                         grads_,
                         norm_,
                         &step_values_->lr,
                         &step_values_->step,
                         &step_values_->seed,
                         layout_.total,
                         a.beta1,
                         a.beta2,
                         a.eps,
                         a.weight_decay,
                         a.grad_clip,
                         u.stochastic_rounding ? 1 : 0};
  });
}

// A recording model's step: every op call of a training step -- forward with targets,
// backward, norm, AdamW -- as the launching step makes them.
template <class Step>
std::vector<Workload> record_step(const Config& c, int B, int T) {
  std::vector<Workload> calls;
  Model<Step> model(c, B, T, calls);
  model.forward_launches(true);
  model.backward();
  model.norm_launch();
  model.adamw_launch(UpdateSettings{});
  return calls;
}

}  // namespace

std::vector<Workload> step_workloads(const Config& c, int B, int T, Storage storage) {
  return storage == Storage::bf16 ? record_step<Bf16Step>(c, B, T) : record_step<Fp32Step>(c, B, T);
}

std::unique_ptr<Gpt2> make_gpt2(const Config& c, int B, int T, Executor& ex, KernelPlan& plan, Storage storage) {
  if (storage == Storage::bf16) return std::make_unique<Model<Bf16Step>>(c, B, T, ex, plan);
  return std::make_unique<Model<Fp32Step>>(c, B, T, ex, plan);
}

}  // namespace wb::trainer
