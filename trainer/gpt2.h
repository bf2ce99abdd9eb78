#pragma once
// GPT-2 on an executor (host memory or a CUDA device): parameters, gradients, AdamW
// state and activations in executor memory, and a training step -- forward, backward,
// update -- in which every op call goes through the kernel plan. One model for both
// storages: fp32, and llm.c's bf16 mixed precision (bf16 parameters, gradients and
// activations; fp32 master weights, AdamW moments, layernorm statistics and losses).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/bf16.h"
#include "trainer/model.h"
#include "trainer/options.h"
#include "workbench/runtime/buffers.h"
#include "workbench/runtime/executor.h"
#include "workbench/runtime/kernel_plan.h"

namespace wb::trainer {

// Which storage the step's tensors have (--precision): fp32 (and tf32, whose variants
// read and write fp32), or llm.c's mixed precision, bf16 (README "Precision").
enum class Storage { fp32, bf16 };
Storage storage_of(NumericClass precision);
const char* op_suffix(Storage s);  // "" or "_bf16": the name of the op the step calls

// Every op call of one step (forward with targets, backward, update), with its shape
// and its count per step: the fp32 ops, or their _bf16 forms, in the order of their
// first call. They are the step's own calls, recorded: the step runs once on a model
// that allocates nothing and launches nothing, each call adding itself to the list, so
// that no call can lack its workload or a workload its call (what the kernel plan is
// built from, --print-plan shows, --dump-workloads writes and --op-times reports).
std::vector<Workload> step_workloads(const Config& c, int B, int T, Storage storage = Storage::fp32);

// Why the step never calls an op that best.json may hold: it runs a fused form
// instead. Empty for the ops the step calls (PlanOptions::why_not_called).
std::string why_the_step_skips(const std::string& op);

// One AdamW step. lr, step and rounding_seed change from step to step and reach AdamW
// through device memory (set_update); the others are the run's and are passed by value
// (a captured step bakes them in).
struct UpdateSettings {
  float lr = 3e-4f;
  AdamwConstants adamw;
  int step = 1;                     // from 1
  uint32_t rounding_seed = 0;       // bf16: the seed of this step's stochastic rounding of the parameters
  bool stochastic_rounding = true;  // bf16: false rounds the master weights to nearest even (--rounding nearest)
};

// The model, whatever its storage; make_gpt2 builds one.
class Gpt2 {
 public:
  virtual ~Gpt2() = default;

  virtual const Config& config() const = 0;
  virtual Storage storage() const = 0;
  // The fp32 weights: the parameters (fp32), or the master weights (bf16), whose
  // loading also sets the bf16 parameters, rounded to nearest even.
  virtual void load_params(const float* host) = 0;
  virtual void save_params(float* host) const = 0;
  // bf16 only: the bf16 parameters the forward pass reads (after an update, the master
  // weights rounded stochastically: not what load_params rounds them to). A resume
  // loads them after load_params; --save writes them. std::logic_error on fp32.
  virtual void load_bf16_params(const bf16* host) = 0;
  virtual void save_bf16_params(bf16* host) const = 0;
  // AdamW's first and second moments (m, v), each as many floats as the parameters:
  // with the parameters and the step, all the update carries from one step to the next.
  virtual void load_moments(const float* m, const float* v) = 0;
  virtual void save_moments(float* m, float* v) const = 0;
  virtual std::size_t bytes_allocated() const = 0;

  // Forward pass on B*T tokens; with targets, also the losses and the logits' gradient
  // (written over the logits), left on the device: loss() reads them. Nothing of a
  // training step (forward, backward, update) reads back from the device or waits for
  // it, so that the step runs as one stream of launches (and can be captured as one
  // CUDA graph); the step's loss and norm are read after it.
  void forward(const int32_t* inputs, const int32_t* targets) {
    set_batch(inputs, targets);
    forward_launches(targets != nullptr);
  }
  // The two halves of forward(): the batch copied to the device (before a captured step
  // replays: a graph reads the device buffers, which keep their addresses), and the
  // launches of the forward pass on it.
  virtual void set_batch(const int32_t* inputs, const int32_t* targets) = 0;
  virtual void forward_launches(bool with_targets) = 0;
  // The mean loss of the last forward pass with targets (reads it back: synchronises).
  virtual float loss() = 0;
  // The logits of the last forward pass without targets, or before the classifier ran
  // when capture_logits was set (host copy, B*T*Vp, widened to float).
  void capture_logits_next(bool on) { capture_ = on; }
  const std::vector<float>& captured_logits() const { return captured_; }

  virtual void backward() = 0;  // after forward with targets
  // Buffers the last backward pass zeroed (every other buffer is overwritten by the op
  // that writes it first: the backward ops declare overwrite or accumulate).
  struct Memsets {
    int count = 0;
    std::size_t bytes = 0;
  };
  Memsets memsets() const { return memsets_; }
  // The gradient norm, then AdamW with the gradients scaled by its clipping scale, both
  // on the device.
  void update(const UpdateSettings& u) {
    set_update(u);
    norm_launch();
    adamw_launch(u);
  }
  // Its parts. set_update copies the step's learning rate, step number and rounding seed
  // to the device (before a captured step replays, like set_batch); norm_launch and
  // adamw_launch take nothing that changes from step to step, so that both can be
  // captured with the step's graph: adamw_launch passes u's fixed settings (betas, eps,
  // weight decay, clipping norm, rounding mode) by value and reads the rest where
  // set_update left it.
  virtual void set_update(const UpdateSettings& u) = 0;
  virtual void norm_launch() = 0;
  virtual void adamw_launch(const UpdateSettings& u) = 0;
  // The step's results -- its mean loss (as loss()) and the gradient norm before
  // clipping -- in one read-back, the one wait of a training step.
  struct StepResults {
    float loss = 0, grad_norm = 0;
  };
  virtual StepResults results() = 0;
  virtual void copy_gradients(float* host) const = 0;  // widened to float

 protected:
  bool capture_ = false;
  Memsets memsets_;
  std::vector<float> captured_;
};

// Allocates everything for batches of B x T; throws UsageError when T > maxT.
std::unique_ptr<Gpt2> make_gpt2(const Config& c, int B, int T, Executor& ex, KernelPlan& plan, Storage storage);

}  // namespace wb::trainer
