#pragma once
// GPT-2 on an executor (host memory or a CUDA device): parameters, gradients, AdamW
// state and activations in executor memory, and a training step -- forward, backward,
// update -- in which every op call goes through the kernel plan.
#include <cstdint>
#include <string>
#include <vector>

#include "trainer/model.h"
#include "workbench/runtime/buffers.h"
#include "workbench/runtime/executor.h"
#include "workbench/runtime/kernel_plan.h"

namespace wb::trainer {

// Every op call of one step (forward with targets, backward, update), with its shape.
std::vector<Workload> step_workloads(const Config& c, int B, int T);

// Why the step never calls an op that best.json may hold: it runs a fused form
// instead. Empty for the ops the step calls (PlanOptions::why_not_called).
std::string why_the_step_skips(const std::string& op);

struct UpdateSettings {
  float lr = 3e-4f;
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
  float weight_decay = 0.0f;
  float grad_clip = 0.0f;  // 0 = off
  int step = 1;            // from 1
};

class Gpt2 {
 public:
  // Allocates everything for batches of B x T; throws UsageError when T > maxT.
  Gpt2(const Config& c, int B, int T, Executor& ex, KernelPlan& plan);

  const Config& config() const { return c_; }
  void load_params(const float* host);
  void save_params(float* host) const;
  // AdamW's first and second moments (m, v), each as many floats as the parameters:
  // with the parameters and the step, all the update carries from one step to the next.
  void load_moments(const float* m, const float* v);
  void save_moments(float* m, float* v) const;
  std::size_t bytes_allocated() const { return bytes_; }

  // Forward pass on B*T tokens; with targets, also the loss and the logits' gradient
  // (written over the logits). Returns the mean loss (0 without targets).
  float forward(const int32_t* inputs, const int32_t* targets);
  // The logits of the last forward pass without targets, or before the classifier ran
  // when capture_logits was set (host copy, B*T*Vp).
  void capture_logits_next(bool on) { capture_ = on; }
  const std::vector<float>& captured_logits() const { return captured_; }

  void backward();  // after forward with targets
  // Buffers the last backward pass zeroed (every other buffer is overwritten by the op
  // that writes it first: the backward ops declare overwrite or accumulate).
  struct Memsets {
    int count = 0;
    std::size_t bytes = 0;
  };
  Memsets memsets() const { return memsets_; }
  float update(const UpdateSettings& u);  // returns the gradient norm before clipping
  void copy_gradients(float* host) const;

 private:
  float* alloc(int64_t floats);
  int32_t* alloc_tokens(int64_t count);

  Config c_;
  int B_, T_;
  Executor& ex_;
  KernelPlan& plan_;
  ParamLayout layout_;
  std::vector<Buffer> buffers_;
  std::size_t bytes_ = 0;
  bool capture_ = false;
  Memsets memsets_;
  std::vector<float> captured_;

  float *params_, *grads_, *m_, *v_;
  int32_t *inputs_, *targets_;
  // Activations: per layer l at offset l * size.
  float *encoded_, *ln1_, *ln1_mean_, *ln1_rstd_, *qkv_, *atty_, *lse_, *attproj_, *residual2_, *ln2_, *ln2_mean_,
      *ln2_rstd_, *fch_, *fch_gelu_, *fcproj_, *residual3_, *lnf_, *lnf_mean_, *lnf_rstd_, *logits_, *losses_, *norm_;
  // Gradients of activations, reused across layers.
  float *dresidual_, *dbtc_, *dfch_gelu_, *dfch_, *dqkv_;
  std::vector<float> host_losses_;
};

}  // namespace wb::trainer
