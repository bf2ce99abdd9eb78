#include "trainer/resume.h"

#include <fmt/format.h>

#include "base/errors.h"
#include "trainer/model.h"

namespace wb::trainer {
namespace {

// A resume repeats the options of the run that wrote the state: any other value would
// make the later steps those of another run. Each difference is refused, naming its
// flag. --steps may change under the constant schedule (to train on), not under the
// cosine one, whose every learning rate depends on it.
void check_resume_options(const TrainState& state, const Options& o) {
  const StateSettings given = settings_of(o), saved = state.settings;
  auto refuse = [&](const std::string& flag, const auto& value, const auto& saved_value) {
    throw UsageError(
        fmt::format("{} {} differs from {} in the state {}: a resume must repeat the options of the run "
                    "that wrote it",
                    flag, value, saved_value, o.resume));
  };
  if (given.B != saved.B) refuse("--batch", given.B, saved.B);
  if (given.T != saved.T) refuse("--seq-len", given.T, saved.T);
  if (given.lr != saved.lr) refuse("--lr", given.lr, saved.lr);
  if (given.adamw.weight_decay != saved.adamw.weight_decay)
    refuse("--weight-decay", given.adamw.weight_decay, saved.adamw.weight_decay);
  if (given.adamw.grad_clip != saved.adamw.grad_clip)
    refuse("--grad-clip", given.adamw.grad_clip, saved.adamw.grad_clip);
  if (given.adamw.beta1 != saved.adamw.beta1) refuse("--beta1", given.adamw.beta1, saved.adamw.beta1);
  if (given.adamw.beta2 != saved.adamw.beta2) refuse("--beta2", given.adamw.beta2, saved.adamw.beta2);
  if (given.adamw.eps != saved.adamw.eps) refuse("--eps", given.adamw.eps, saved.adamw.eps);
  if (given.warmup != saved.warmup) refuse("--warmup", given.warmup, saved.warmup);
  if (given.schedule != saved.schedule) refuse("--schedule", given.schedule, saved.schedule);
  if (given.final_lr_frac != saved.final_lr_frac) refuse("--final-lr-frac", given.final_lr_frac, saved.final_lr_frac);
  if (given.seed != saved.seed) refuse("--seed", given.seed, saved.seed);
  if (given.shuffle != saved.shuffle)
    throw UsageError(
        fmt::format("--shuffle is {} here and {} in the state {}: a resume must repeat the options of the "
                    "run that wrote it",
                    given.shuffle ? "given" : "not given", saved.shuffle ? "given" : "not given", o.resume));
  if (given.nearest_rounding != saved.nearest_rounding)
    refuse("--rounding", given.nearest_rounding ? "nearest" : "stochastic",
           saved.nearest_rounding ? "nearest" : "stochastic");
  if (given.schedule == "cosine" && given.steps != saved.steps)
    throw UsageError(
        fmt::format("--steps {} differs from {} in the state {}: the cosine schedule's learning rates "
                    "depend on it (the constant schedule may train on)",
                    given.steps, saved.steps, o.resume));
  if (given.steps <= state.step)
    throw UsageError(
        fmt::format("--steps {}: the state {} has trained {} steps already", given.steps, o.resume, state.step));
}

// With --resume the model is the state's; a --model or --init given beside it (the
// first run's command line, repeated) must describe the same configuration.
void check_resume_model(const Config& saved, const Options& o) {
  Config given;
  std::string flag;
  if (!o.init.empty()) given = config_from_init(o.init), flag = "--init " + o.init;
  if (!o.model.empty()) given = read_checkpoint(o.model).config, flag = "--model " + o.model;
  if (!flag.empty() && given.describe() != saved.describe())
    throw UsageError(
        fmt::format("{} describes {}, the state {} holds {}", flag, given.describe(), o.resume, saved.describe()));
}

}  // namespace

StateSettings settings_of(const Options& o) {
  StateSettings s;
  s.B = o.batch, s.T = o.seq_len, s.steps = o.steps;
  s.lr = o.lr, s.adamw = o.adamw;
  s.warmup = o.warmup, s.schedule = o.schedule, s.final_lr_frac = o.final_lr_frac;
  s.seed = o.seed, s.shuffle = o.shuffle;
  s.nearest_rounding = o.rounding == "nearest";
  return s;
}

std::optional<TrainState> resumed_state(const Options& o) {
  if (o.resume.empty()) return std::nullopt;
  TrainState state = read_state(o.resume);
  check_resume_options(state, o);
  check_resume_model(state.config, o);
  return state;
}

}  // namespace wb::trainer
