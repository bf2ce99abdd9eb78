#include "trainer/step_loop.h"

#include <fmt/format.h>

#include <array>
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <vector>

#include "base/files.h"
#include "base/stochastic_rounding.h"
#include "trainer/resume.h"
#include "trainer/sampler.h"
#include "workbench/runtime/nvtx.h"

namespace wb::trainer {
namespace {

// Debug state: header of 256 int32 (magic 20261121, version 1, B, T, V, Vp, number of
// parameters), then the logits (B, T, Vp), the mean loss, the gradients of every
// parameter: all float32, in llm.c's parameter order.
void write_debug_state(const std::string& path, const Config& c, int B, int T, const std::vector<float>& logits,
                       float loss, const std::vector<float>& grads) {
  std::array<int32_t, 256> header{};
  header[0] = 20261121;
  header[1] = 1;
  header[2] = B;
  header[3] = T;
  header[4] = c.V;
  header[5] = c.Vp;
  header[6] = int32_t(grads.size());
  AtomicFile out(path);
  out.write(header.data(), sizeof(header));
  out.write(logits.data(), logits.size() * sizeof(float));
  out.write(&loss, sizeof(float));
  out.write(grads.data(), grads.size() * sizeof(float));
  out.commit();
}

// The seed of a step's stochastic rounding of the bf16 parameters: a function of
// --seed and the step alone, so that a resumed run rounds as the uninterrupted one did.
uint32_t rounding_seed(uint64_t seed, int step) {
  return mix32(uint32_t(seed) ^ mix32(uint32_t(seed >> 32) ^ mix32(uint32_t(step) + 0x5bd1e995u)));
}

// The loop's state across steps: the batch buffers, the sampler and its generator, the
// training state's buffers, the captured graph and the totals.
class StepLoop {
 public:
  explicit StepLoop(Loop& l);
  StepTotals run();

 private:
  UpdateSettings update_settings(int step) const;
  bool replay(int step, const UpdateSettings& u);  // true when this step was captured
  void launch(int step, const UpdateSettings& u);
  void add_to_totals(int step, double seconds, double outside_seconds);
  float validation_loss();
  void make_state();
  void save_state(int step);
  void after_step(StepRecord& r);

  Loop& l_;
  const Options& o_;
  const int B_, T_;
  const int64_t n_params_;
  std::vector<int32_t> inputs_, targets_;
  Rng sampler_rng_;
  std::optional<Sampler> sampler_;
  std::optional<TrainState> state_;  // --state: its buffers allocated once, refilled at every checkpoint
  std::unique_ptr<CapturedGraph> graph_;
  StepTotals totals_;
};

StepLoop::StepLoop(Loop& l)
    : l_(l),
      o_(l.o),
      B_(l.o.batch),
      T_(l.o.seq_len),
      n_params_(num_params(l.config)),
      inputs_(int64_t(B_) * T_),
      targets_(int64_t(B_) * T_),
      sampler_rng_(l.o.seed, "sampler") {
  if (l_.resumed) sampler_rng_.restore(l_.resumed->sampler);
  if (o_.sample_every > 0) sampler_.emplace(o_, l_.config, sampler_rng_);
  make_state();
  l_.resumed.reset();  // its parameters and moments are on the model now
}

void StepLoop::make_state() {
  if (o_.state.empty()) return;
  state_.emplace();
  state_->config = l_.config;
  state_->settings = settings_of(o_);
  state_->train_tokens = l_.data.train_file.tokens.size();
  state_->train_hash = l_.data.train_hash;
  state_->plan_hash = l_.plan_fingerprint;
  state_->params.resize(n_params_);
  state_->m.resize(n_params_);
  state_->v.resize(n_params_);
  if (l_.model.storage() == Storage::bf16) state_->bf16_params.resize(n_params_);
}

void StepLoop::save_state(int step) {
  l_.log.flush();  // the log holds every step the state does, should a kill follow
  state_->step = step;
  state_->data = l_.data.train->position();
  state_->sampler = sampler_rng_.state();
  l_.model.save_params(state_->params.data());
  l_.model.save_moments(state_->m.data(), state_->v.data());
  if (!state_->bf16_params.empty()) l_.model.save_bf16_params(state_->bf16_params.data());
  write_state(o_.state, *state_);
}

float StepLoop::validation_loss() {
  l_.data.val->reset();
  const int64_t batches = std::min<int64_t>(o_.val_batches, l_.data.val->batches_per_pass());
  double sum = 0;
  for (int64_t i = 0; i < batches; ++i) {
    l_.data.val->next(inputs_.data(), targets_.data());
    l_.model.forward(inputs_.data(), targets_.data());
    sum += l_.model.loss();
  }
  return float(sum / double(batches));
}

UpdateSettings StepLoop::update_settings(int step) const {
  UpdateSettings u;
  u.lr = learning_rate(o_, step);
  u.adamw = o_.adamw;
  u.step = step;
  u.rounding_seed = rounding_seed(o_.seed, step);
  u.stochastic_rounding = o_.rounding == "stochastic";
  return u;
}

// --cuda-graph: the whole step -- forward, backward, gradient norm and AdamW --
// captured once, at the run's second step, and replayed at every step after the batch
// and AdamW's values of the step (learning rate, step number, rounding seed) are
// copied in: a graph bakes its arguments in, so what changes lives in device memory.
// The first step is launched: it builds what the variants build on first use (cuBLASLt
// heuristics, cuDNN graphs and plans), which a capture could not allocate, and it is
// the one step that may write --debug-state, which reads back mid-step. The host waits for
// nothing until the step's loss and norm are read at its end. The graph's buffers keep
// their addresses (the model allocates them once) and the plan's workspace is
// allocated before the capture, which may not allocate.
bool StepLoop::replay(int step, const UpdateSettings& u) {
  // What changes from step to step goes to the device before the replay; the graph
  // reads it there (the rest of u is the run's, baked in at the capture).
  l_.model.set_batch(inputs_.data(), targets_.data());
  l_.model.set_update(u);
  const bool captured_now = !graph_;
  if (captured_now) {
    l_.ex.begin_capture();
    l_.model.forward_launches(true);
    l_.model.backward();
    l_.model.norm_launch();
    l_.model.adamw_launch(u);
    graph_ = l_.ex.end_capture();
    std::cout << fmt::format(
        "captured the step (forward, backward, gradient norm, AdamW) as one CUDA graph{} at step {}\n",
        graph_->size() ? fmt::format(" of {} operations", graph_->size()) : std::string(), step);
  }
  l_.ex.replay(*graph_);
  return captured_now;
}

void StepLoop::launch(int step, const UpdateSettings& u) {
  l_.model.forward(inputs_.data(), targets_.data());
  l_.model.backward();
  if (step == 1 && !o_.debug_state.empty()) {
    const float loss = l_.model.loss();
    std::vector<float> grads(n_params_);
    l_.model.copy_gradients(grads.data());
    write_debug_state(o_.debug_state, l_.config, B_, T_, l_.model.captured_logits(), loss, grads);
  }
  l_.model.update(u);
}

void StepLoop::add_to_totals(int step, double seconds, double outside_seconds) {
  if (step < totals_.first_timed) return;
  totals_.seconds += seconds;
  totals_.outside_seconds += outside_seconds;
  for (std::size_t i = 0; i < totals_.selection_seconds.size(); ++i)
    totals_.selection_seconds[i] += l_.plan.selection_seconds()[i];
  ++totals_.timed_steps;
}

// After the step's line: a sample, the buffers zeroed (step 1), the log line and a
// checkpoint of the training state.
void StepLoop::after_step(StepRecord& r) {
  const int step = r.step;
  if (sampler_ && step % o_.sample_every == 0)
    std::cout << "sample at step " << step << ":\n" << sampler_->sample(l_.model, B_, T_) << "\n---\n";
  if (step == 1)
    std::cout << fmt::format("buffers zeroed per step: {} memsets, {:.1f} MiB\n", l_.model.memsets().count,
                             l_.model.memsets().bytes / double(1 << 20));
  r.memsets = l_.model.memsets().count;
  l_.log.write(r);
  if (state_ && ((o_.checkpoint_every > 0 && step % o_.checkpoint_every == 0) || step == o_.steps)) {
    save_state(step);
    std::cout << "saved the training state after step " << step << " to " << o_.state << "\n";
  }
}

StepTotals StepLoop::run() {
  const double flops_per_token = 6.0 * double(n_params_) + 6.0 * l_.config.L * l_.config.C * T_;
  // The first step warms up; with --cuda-graph the second is captured (and instantiated)
  // as it runs: the timed steps are the replayed ones, where the run has any.
  const int warmup_steps = l_.cuda_graph ? 2 : 1;
  totals_.first_timed = std::min(l_.first_step + warmup_steps, o_.steps);
  totals_.selection_seconds.assign(l_.plan.selections().size(), 0.0);
  for (int step = l_.first_step; step <= o_.steps; ++step) {
    NvtxRange range("step");
    l_.data.train->next(inputs_.data(), targets_.data());
    const auto start = std::chrono::steady_clock::now();
    l_.plan.begin_op_times();
    l_.model.capture_logits_next(step == 1 && !o_.debug_state.empty());
    const UpdateSettings u = update_settings(step);
    const bool replayed = l_.cuda_graph && step > l_.first_step;
    const bool captured_now = replayed && replay(step, u);  // this step's time includes the capture
    if (!replayed) launch(step, u);
    // The step's results, read after it: the first reads wait for the whole step.
    const auto [loss, norm] = l_.model.results();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // The ops' times, read now that the read-back waited for the step; the rest of the
    // step is outside them: buffer zeroing, host plumbing, the gaps between the calls
    // (on cuda: between and around the kernels, the end-of-step read-back included).
    l_.plan.collect_op_times();
    const double op_s = l_.plan.op_seconds(), outside_s = seconds - op_s;
    if (!std::isfinite(loss)) throw TrainingFailed("the loss is not finite at step " + std::to_string(step));
    totals_.loss = loss;
    add_to_totals(step, seconds, outside_s);
    StepRecord r;
    r.step = step, r.loss = loss, r.grad_norm = norm, r.lr = u.lr, r.seconds = seconds;
    r.tokens_per_s = double(B_) * T_ / seconds;
    r.mfu = l_.peak_tflops > 0 ? 100.0 * flops_per_token * B_ * T_ / seconds / (l_.peak_tflops * 1e12) : 0.0;
    if (l_.data.val && ((o_.val_every > 0 && step % o_.val_every == 0) || step == o_.steps))
      r.val_loss = validation_loss();
    if (l_.cuda_graph) r.graph = step == l_.first_step ? "launched" : captured_now ? "captured" : "replayed";
    if (l_.plan.times_ops()) r.op_seconds = op_s, r.outside_seconds = outside_s;
    print_step(o_, r);
    after_step(r);
  }
  return totals_;
}

}  // namespace

StepTotals train_steps(Loop& l) { return StepLoop(l).run(); }

}  // namespace wb::trainer
