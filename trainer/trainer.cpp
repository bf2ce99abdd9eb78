// The training loop: model and data from files, kernels from best.json, the step
// timed and logged.
#include "trainer/trainer.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "base/cpu_isa.h"
#include "base/errors.h"
#include "base/exit_codes.h"
#include "base/files.h"
#include "base/stochastic_rounding.h"
#include "contract/registry.h"
#include "tokenizer/tokenizer_file.h"
#include "trainer/data.h"
#include "trainer/gpt2.h"
#include "trainer/model.h"
#include "trainer/state.h"
#include "workbench/runtime/best.h"
#include "workbench/runtime/executor.h"
#include "workbench/runtime/kernel_plan.h"
#include "workbench/runtime/nvtx.h"
#include "workbench/runtime/workloads.h"

namespace wb::trainer {
namespace {

using program::kBadInput;
using program::kFailed;
using program::kOk;

// The training itself failed (a non-finite loss): exit 1, apart from internal errors.
struct TrainingFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace

float learning_rate(const Options& o, int step) {
  if (o.warmup > 0 && step <= o.warmup) return o.lr * float(step) / float(o.warmup);
  if (o.schedule == "const") return o.lr;
  const double progress = double(step - o.warmup) / std::max(1, o.steps - o.warmup);
  const double low = o.lr * o.final_lr_frac;
  return float(low + 0.5 * (o.lr - low) * (1.0 + std::cos(M_PI * std::min(1.0, progress))));
}

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

// Samples text from the model: generation starts from the end-of-text token, every
// next token drawn from the softmax of row 0's logits at the last position (a full
// forward pass per token, like llm.c's trainer), decoded through llm.c's tokenizer
// file when there is one, printed as ids otherwise.
class Sampler {
 public:
  // rng: the sampler's generator, owned by the loop so that the training state holds it.
  Sampler(const Options& o, const Config& c, Rng& rng) : len_(std::min(o.sample_len, o.seq_len)), rng_(rng) {
    std::string path = o.tokenizer;
    if (path.empty() && !o.train.empty()) {
      const auto guess = std::filesystem::path(o.train).parent_path() / "gpt2_tokenizer.bin";
      if (std::filesystem::exists(guess)) path = guess.string();
    }
    if (!path.empty()) {
      try {
        table_ = tokenizer::token_table::read(path);
      } catch (const tokenizer::error& e) {
        throw UsageError(e.what());
      }
      if (table_->size() != std::size_t(c.V))
        throw UsageError(path + " holds " + std::to_string(table_->size()) + " tokens, the model's vocabulary is " +
                         std::to_string(c.V));
      eot_ = table_->end_of_text();
    } else {
      std::cout << "no tokenizer file (--tokenizer, or gpt2_tokenizer.bin beside --train): samples are printed as "
                   "token ids\n";
      eot_ = c.V > 50256 ? 50256 : c.V - 1;
    }
  }

  std::string sample(Gpt2& model, int B, int T) {
    const Config& c = model.config();
    std::vector<int32_t> tokens(int64_t(B) * T, eot_);
    std::vector<tokenizer::token_id> out;
    for (int t = 1; t < len_; ++t) {
      model.forward(tokens.data(), nullptr);
      const float* logits = model.captured_logits().data() + int64_t(t - 1) * c.Vp;  // row 0
      double max = logits[0];
      for (int i = 1; i < c.V; ++i) max = std::max(max, double(logits[i]));
      double sum = 0;
      for (int i = 0; i < c.V; ++i) sum += std::exp(logits[i] - max);
      double coin = rng_.uniform(0.0, sum), acc = 0;
      int next = c.V - 1;
      for (int i = 0; i < c.V; ++i) {
        acc += std::exp(logits[i] - max);
        if (coin < acc) {
          next = i;
          break;
        }
      }
      tokens[t] = next;
      out.push_back(next);
    }
    if (table_) return table_->decode(out);
    std::string ids;
    for (auto id : out) ids += (ids.empty() ? "" : " ") + std::to_string(id);
    return ids;
  }

 private:
  int len_;
  Rng& rng_;
  std::optional<tokenizer::token_table> table_;
  int eot_ = 0;
};

// The options that need no file and no model, checked before any work; every message
// names its flag. Output files are checked to be writable now rather than found
// unwritable after the training.
void validate_options(const Options& o) {
  auto fail = [](const std::string& flag, double value, const std::string& what) {
    throw UsageError(fmt::format("{} {}: {}", flag, value, what));
  };
  if (o.resume.empty() && o.model.empty() == o.init.empty())
    throw UsageError("give --model FILE or --init d12|L,C,NH (one of them)");
  if (!o.resume.empty() && !o.model.empty() && !o.init.empty())
    throw UsageError("give --model FILE or --init d12|L,C,NH (one of them; with --resume, neither is needed)");
  if (o.steps <= 0) fail("--steps", o.steps, "give at least 1 step");
  if (o.batch <= 0) fail("--batch", o.batch, "give at least 1 sequence per batch");
  if (o.seq_len <= 0) fail("--seq-len", o.seq_len, "give at least 1 token per sequence");
  if (!std::isfinite(o.lr) || o.lr < 0) fail("--lr", o.lr, "the learning rate must be finite and not negative");
  if (!std::isfinite(o.weight_decay) || o.weight_decay < 0)
    fail("--weight-decay", o.weight_decay, "must be finite and not negative");
  if (!std::isfinite(o.grad_clip) || o.grad_clip < 0)
    fail("--grad-clip", o.grad_clip, "give the largest gradient norm, or 0 for no clipping");
  if (!(o.beta1 >= 0 && o.beta1 < 1)) fail("--beta1", o.beta1, "must lie in [0, 1)");
  if (!(o.beta2 >= 0 && o.beta2 < 1)) fail("--beta2", o.beta2, "must lie in [0, 1)");
  if (!std::isfinite(o.eps) || o.eps <= 0) fail("--eps", o.eps, "must be finite and above 0");
  if (o.warmup < 0) fail("--warmup", o.warmup, "give 0 or more warm-up steps");
  if (o.schedule != "const" && o.schedule != "cosine")
    throw UsageError("--schedule '" + o.schedule + "' is not known (legal: const, cosine)");
  if (!(o.final_lr_frac >= 0 && o.final_lr_frac <= 1)) fail("--final-lr-frac", o.final_lr_frac, "must lie in [0, 1]");
  if (o.val_every < 0) fail("--val-every", o.val_every, "give 0 (only after the last step) or a number of steps");
  if (o.val_batches <= 0) fail("--val-batches", o.val_batches, "give at least 1 batch");
  if (o.sample_every < 0) fail("--sample-every", o.sample_every, "give 0 (never) or a number of steps");
  if (o.sample_len <= 0) fail("--sample-len", o.sample_len, "give at least 1 token");
  if (o.checkpoint_every < 0)
    fail("--checkpoint-every", o.checkpoint_every, "give 0 (the state only after the last step) or a number of steps");
  if (o.checkpoint_every > 0 && o.state.empty()) throw UsageError("--checkpoint-every needs --state FILE to write to");
  if (!o.resume.empty() && !o.debug_state.empty())
    throw UsageError("--debug-state writes the first step, which a run resumed with --resume does not run");
  if (!std::isfinite(o.peak_tflops) || o.peak_tflops < 0)
    fail("--peak-tflops", o.peak_tflops, "give 0 (measure the device) or the peak in TFLOP/s");
  const NumericClass precision = parse_numeric_class(o.precision);  // UsageError naming the legal values
  if (o.rounding != "stochastic" && o.rounding != "nearest")
    throw UsageError("--rounding '" + o.rounding + "' is not known (legal: stochastic, nearest)");
  if (o.rounding == "nearest" && storage_of(precision) != Storage::bf16)
    throw UsageError("--rounding nearest rounds the bf16 parameters: it needs --precision bf16");
  if (o.strict_device && o.kernels.empty()) throw UsageError("--strict-device needs --kernels");
  for (const auto& [flag, path] :
       {std::pair{"--save", o.save}, std::pair{"--log", o.log}, std::pair{"--dump-workloads", o.dump_workloads},
        std::pair{"--debug-state", o.debug_state}, std::pair{"--state", o.state}})
    if (!path.empty()) check_writable(path, flag);
}

// What the batch and sequence sizes must respect once the model is known: its maxT, and
// the sizes the kernels can take at B x T (32-bit row counts, overflow-checked sizes).
void validate_sizes(const Registry& reg, const Config& config, int B, int T, const std::vector<Workload>& workloads) {
  if (T > config.maxT)
    throw UsageError("--seq-len " + std::to_string(T) + " is longer than the model's maxT " +
                     std::to_string(config.maxT));
  for (const Workload& w : workloads) {
    try {
      reg.op(w.op).check_shape(w.shape);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("--batch {} --seq-len {} is beyond what the kernels take for {}: {}", B, T,
                                   config.describe(), e.what()));
    }
  }
}

// The options a state file records (state.h): those that shape every later step.
StateSettings settings_of(const Options& o) {
  StateSettings s;
  s.B = o.batch, s.T = o.seq_len, s.steps = o.steps;
  s.lr = o.lr, s.weight_decay = o.weight_decay, s.grad_clip = o.grad_clip;
  s.beta1 = o.beta1, s.beta2 = o.beta2, s.eps = o.eps;
  s.warmup = o.warmup, s.schedule = o.schedule, s.final_lr_frac = o.final_lr_frac;
  s.seed = o.seed, s.shuffle = o.shuffle;
  s.nearest_rounding = o.rounding == "nearest";
  return s;
}

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
  if (given.weight_decay != saved.weight_decay) refuse("--weight-decay", given.weight_decay, saved.weight_decay);
  if (given.grad_clip != saved.grad_clip) refuse("--grad-clip", given.grad_clip, saved.grad_clip);
  if (given.beta1 != saved.beta1) refuse("--beta1", given.beta1, saved.beta1);
  if (given.beta2 != saved.beta2) refuse("--beta2", given.beta2, saved.beta2);
  if (given.eps != saved.eps) refuse("--eps", given.eps, saved.eps);
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

// A fingerprint of what runs each call: another plan (another device, best.json,
// precision) computes other bits, and a resume on it cannot match the first run.
uint64_t plan_hash(const KernelPlan& plan) {
  Hasher h;
  for (const Selection& s : plan.selections())
    h.add(s.op->name + " " + s.op->describe_shape(s.shape) + " " + s.variant->key() + " " + s.params.describe() + "\n");
  return h.value();
}

// On resume the log keeps the lines of the steps the state holds and drops those the
// killed run logged after it (and a line the kill cut short), so that it reads as one
// uninterrupted run.
void trim_log(const std::string& path, int64_t last_step) {
  std::ifstream in(path);
  if (!in) return;  // no log yet
  std::string kept;
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("step") && j["step"].is_number_integer() && j["step"].get<int64_t>() <= last_step)
      kept += line + "\n";
  }
  in.close();
  write_file_atomically(path, kept);
}

// The state a run resumes from (--resume), checked against the options before any work.
std::optional<TrainState> resumed_state(const Options& o) {
  if (o.resume.empty()) return std::nullopt;
  TrainState state = read_state(o.resume);
  check_resume_options(state, o);
  check_resume_model(state.config, o);
  return state;
}

// Where the model comes from: the resumed state, an llm.c model file, or --init (whose
// parameters are drawn once the batch and sequence sizes are known to fit).
// Either model file version loads into either storage: version 5's bf16 parameters
// widen exactly to the fp32 weights (or master weights); version 3's round to nearest
// even for a bf16 run's parameters (said at start).
struct ModelSource {
  Config config;
  std::vector<float> params;      // the fp32 weights (bf16: master); empty: --init, not drawn yet
  std::vector<bf16> bf16_params;  // a bf16 state's parameters, loaded over the rounded ones
};

ModelSource model_source(const Options& o, std::optional<TrainState>& resumed, Storage storage) {
  if (resumed) {
    if (resumed->bf16_params.empty() != (storage == Storage::fp32))
      std::cout << fmt::format("notice: the state {} holds {} parameters; this run's are {}\n", o.resume,
                               resumed->bf16_params.empty() ? "fp32" : "bf16 (with fp32 master)",
                               storage == Storage::bf16 ? "bf16, rounded to nearest from them" : "fp32");
    ModelSource source{resumed->config, std::move(resumed->params), {}};
    if (storage == Storage::bf16) source.bf16_params = std::move(resumed->bf16_params);
    return source;
  }
  if (!o.model.empty()) {
    Checkpoint ck = read_checkpoint(o.model);
    if (ck.bf16 != (storage == Storage::bf16))
      std::cout << fmt::format("notice: {} holds {} parameters (model file version {}); this run's are {}\n", o.model,
                               ck.bf16 ? "bf16" : "fp32", ck.bf16 ? 5 : 3,
                               storage == Storage::bf16 ? "bf16, rounded to nearest from them (fp32 master weights)"
                                                        : "fp32, widened from them");
    return {ck.config, std::move(ck.params), {}};
  }
  return {config_from_init(o.init), {}, {}};
}

// The seed of a step's stochastic rounding of the bf16 parameters: a function of
// --seed and the step alone, so that a resumed run rounds as the uninterrupted one did.
uint32_t rounding_seed(uint64_t seed, int step) {
  return mix32(uint32_t(seed) ^ mix32(uint32_t(seed >> 32) ^ mix32(uint32_t(step) + 0x5bd1e995u)));
}

// The training and validation tokens and their loaders (which refer to the files: the
// struct stays where it was made), positioned where a resumed state left them.
struct TrainingData {
  TokenFile train_file;
  std::unique_ptr<DataLoader> train;
  uint64_t train_hash = 0;  // of the training tokens, when a state is read or written
  std::optional<TokenFile> val_file;
  std::unique_ptr<DataLoader> val;
};

std::unique_ptr<TrainingData> load_data(const Options& o, const Config& config,
                                        const std::optional<TrainState>& resumed) {
  if (o.train.empty()) throw UsageError("give --train FILE (an llm.c token file)");
  auto d = std::make_unique<TrainingData>();
  d->train_file = read_tokens(o.train);
  d->train = std::make_unique<DataLoader>(d->train_file, o.batch, o.seq_len, config.V, o.shuffle, o.seed);
  d->train_hash = resumed || !o.state.empty() ? hash_tokens(d->train_file.tokens) : 0;
  if (resumed) {
    if (d->train_file.tokens.size() != resumed->train_tokens || d->train_hash != resumed->train_hash)
      throw UsageError(
          fmt::format("--train {}: not the tokens the state {} was trained on ({} tokens here, {} there{})", o.train,
                      o.resume, d->train_file.tokens.size(), resumed->train_tokens,
                      d->train_file.tokens.size() == resumed->train_tokens ? ", other values" : ""));
    try {
      d->train->restore(resumed->data);
    } catch (const UsageError& e) {
      throw UsageError(o.resume + ": corrupt state file: " + e.what());
    }
  }
  if (!o.val.empty()) {
    d->val_file = read_tokens(o.val);
    d->val = std::make_unique<DataLoader>(*d->val_file, o.batch, o.seq_len, config.V, false, o.seed);
  }
  return d;
}

// The executor and the kernel plan of the step: built once, for --print-plan and for
// training alike. The plan points into best.json's sections and runs on the executor,
// so the three live together, in place.
struct Kernels {
  Kernels(const Options& o, const Registry& reg, NumericClass precision, const std::vector<Workload>& workloads)
      : backend(o.backend.empty() ? default_backend() : parse_backend(o.backend)), ex(make_executor(backend)) {
    if (!o.kernels.empty()) best = read_best(o.kernels);
    PlanOptions options;
    options.precision = precision;
    options.strict_device = o.strict_device;
    options.deterministic = o.deterministic;
    options.why_not_called = why_the_step_skips;
    plan.emplace(reg, *ex, options, best ? &*best : nullptr, workloads, std::cout);
  }
  Kernels(const Kernels&) = delete;
  Kernels& operator=(const Kernels&) = delete;

  Backend backend;
  std::unique_ptr<Executor> ex;
  std::optional<BestFile> best;
  std::optional<KernelPlan> plan;
};

void print_plan(const Options& o, const Config& config, NumericClass precision, const Kernels& k) {
  std::cout << fmt::format("kernel plan of one step: GPT-2 {}, B={} T={}, {} backend on {}, precision {}\n",
                           config.describe(), o.batch, o.seq_len, to_string(k.backend), k.ex->device().name,
                           to_string(precision));
  if (k.plan->section()) std::cout << "kernels from " << o.kernels << ", " << k.plan->section_choice() << "\n";
  k.plan->print(std::cout);
  k.plan->print_unused(std::cout);
}

// What the run prints before its first step; returns the peak that MFU is taken
// against (given, or the measured GEMM ceiling of the precision).
double print_header(const Options& o, const Config& config, NumericClass precision, Kernels& k, const Gpt2& model) {
  std::cout << fmt::format("GPT-2 {} ({:.2f}M parameters), B={} T={}, {} backend on {}, precision {}\n",
                           config.describe(), num_params(config) / 1e6, o.batch, o.seq_len, to_string(k.backend),
                           k.ex->device().name, to_string(precision));
  std::cout << "kernels" << (k.best ? " from " + o.kernels : std::string(" (defaults: no --kernels given)"))
            << (k.plan->section() ? ", " + k.plan->section_choice() : std::string())
            << (o.deterministic ? ", deterministic variants only" : "") << ":\n";
  k.plan->print(std::cout);
  k.plan->print_unused(std::cout, /*all=*/false);  // --print-plan lists every one
  double peak = o.peak_tflops;
  std::string peak_origin = "given";
  if (peak <= 0) {
    // The precision's own ceiling only: an fp32 run never builds a bf16 matmul.
    const Ceilings c = k.ex->measure_matmul_ceiling(precision);
    peak = c.matmul_tflops(precision);
    const std::string absent = c.matmul_absent(precision);
    peak_origin =
        absent.empty() ? "measured " + std::string(to_string(precision)) + " GEMM" : "measured fp32 GEMM; " + absent;
  }
  std::cout << fmt::format("MFU against {:.2f} TFLOP/s ({}); memory allocated {:.1f} MiB\n", peak, peak_origin,
                           (model.bytes_allocated() + k.plan->workspace_bytes()) / double(1 << 20));
  return peak;
}

// The log (--log): one JSON object per step, written as the steps go (a killed run
// keeps its lines, and a resume trims them to its state); each line is flushed at once,
// and a failed write (a full disk, the file size limit) stops the run with exit 2
// instead of leaving a log that silently ends early.
class StepLog {
 public:
  StepLog(const Options& o, const std::optional<TrainState>& resumed) : path_(o.log) {
    if (path_.empty()) return;
    if (resumed) trim_log(path_, resumed->step);
    out_.open(path_, resumed ? std::ios::app : std::ios::trunc);
    if (!out_) throw UsageError("cannot write the log " + path_);
  }
  bool enabled() const { return !path_.empty(); }
  void write(const nlohmann::json& line) {
    out_ << line.dump() << '\n';
    flush();
  }
  void flush() {
    if (!enabled()) return;
    out_.flush();
    if (!out_) throw FileError("cannot write the log " + path_ + ": " + std::strerror(errno));
  }

 private:
  std::string path_;
  std::ofstream out_;
};

// What the timed steps add up to (the first step of a run warms up and is not timed,
// unless it is the only one).
struct StepTotals {
  int first_timed = 0;
  int timed_steps = 0;
  double seconds = 0, outside_seconds = 0;
  std::vector<double> selection_seconds;  // per selection of the plan
  float loss = 0;                         // of the last step
};

// Everything the step loop works with, made by the phases before it.
struct Loop {
  const Options& o;
  const Config& config;
  Gpt2& model;
  KernelPlan& plan;
  Executor& ex;
  bool cuda_graph;
  TrainingData& data;
  StepLog& log;
  double peak_tflops;
  int first_step;
  uint64_t plan_fingerprint;
  std::optional<TrainState>& resumed;  // the sampler generator's state; reset once on the model
};

StepTotals train_steps(Loop& l) {
  const Options& o = l.o;
  const int B = o.batch, T = o.seq_len;
  const int64_t n_params = num_params(l.config);
  const double flops_per_token = 6.0 * double(n_params) + 6.0 * l.config.L * l.config.C * T;
  std::vector<int32_t> inputs(int64_t(B) * T), targets(int64_t(B) * T);
  auto validation_loss = [&] {
    l.data.val->reset();
    const int64_t batches = std::min<int64_t>(o.val_batches, l.data.val->batches_per_pass());
    double sum = 0;
    for (int64_t i = 0; i < batches; ++i) {
      l.data.val->next(inputs.data(), targets.data());
      l.model.forward(inputs.data(), targets.data());
      sum += l.model.loss();
    }
    return float(sum / double(batches));
  };

  Rng sampler_rng(o.seed, "sampler");
  if (l.resumed) sampler_rng.restore(l.resumed->sampler);
  std::optional<Sampler> sampler;
  if (o.sample_every > 0) sampler.emplace(o, l.config, sampler_rng);

  // The training state, its buffers allocated once and refilled at every checkpoint.
  std::optional<TrainState> state;
  if (!o.state.empty()) {
    state.emplace();
    state->config = l.config;
    state->settings = settings_of(o);
    state->train_tokens = l.data.train_file.tokens.size();
    state->train_hash = l.data.train_hash;
    state->plan_hash = l.plan_fingerprint;
    state->params.resize(n_params);
    state->m.resize(n_params);
    state->v.resize(n_params);
    if (l.model.storage() == Storage::bf16) state->bf16_params.resize(n_params);
  }
  auto save_state = [&](int step) {
    l.log.flush();  // the log holds every step the state does, should a kill follow
    state->step = step;
    state->data = l.data.train->position();
    state->sampler = sampler_rng.state();
    l.model.save_params(state->params.data());
    l.model.save_moments(state->m.data(), state->v.data());
    if (!state->bf16_params.empty()) l.model.save_bf16_params(state->bf16_params.data());
    write_state(o.state, *state);
  };
  l.resumed.reset();  // its parameters and moments are on the model now

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
  std::unique_ptr<CapturedGraph> graph;
  StepTotals totals;
  // The first step warms up; with --cuda-graph the second is captured (and instantiated)
  // as it runs: the timed steps are the replayed ones, where the run has any.
  const int warmup_steps = l.cuda_graph ? 2 : 1;
  totals.first_timed = std::min(l.first_step + warmup_steps, o.steps);
  totals.selection_seconds.assign(l.plan.selections().size(), 0.0);
  for (int step = l.first_step; step <= o.steps; ++step) {
    NvtxRange range("step");
    l.data.train->next(inputs.data(), targets.data());
    const auto start = std::chrono::steady_clock::now();
    l.plan.begin_op_times();
    const bool debug = step == 1 && !o.debug_state.empty();
    l.model.capture_logits_next(debug);
    UpdateSettings u;
    u.lr = learning_rate(o, step);
    u.beta1 = o.beta1;
    u.beta2 = o.beta2;
    u.eps = o.eps;
    u.weight_decay = o.weight_decay;
    u.grad_clip = o.grad_clip;
    u.step = step;
    u.rounding_seed = rounding_seed(o.seed, step);
    u.stochastic_rounding = o.rounding == "stochastic";
    bool captured_now = false;  // this step was captured (its time includes the capture)
    if (l.cuda_graph && step > l.first_step) {
      // What changes from step to step goes to the device before the replay; the graph
      // reads it there (the rest of u is the run's, baked in at the capture).
      l.model.set_batch(inputs.data(), targets.data());
      l.model.set_update(u);
      if (!graph) {
        l.ex.begin_capture();
        l.model.forward_launches(true);
        l.model.backward();
        l.model.norm_launch();
        l.model.adamw_launch(u);
        graph = l.ex.end_capture();
        captured_now = true;
        std::cout << fmt::format(
            "captured the step (forward, backward, gradient norm, AdamW) as one CUDA graph{} at step {}\n",
            graph->size() ? fmt::format(" of {} operations", graph->size()) : std::string(), step);
      }
      l.ex.replay(*graph);
    } else {
      l.model.forward(inputs.data(), targets.data());
      l.model.backward();
      if (debug) {
        const float loss = l.model.loss();
        std::vector<float> grads(n_params);
        l.model.copy_gradients(grads.data());
        write_debug_state(o.debug_state, l.config, B, T, l.model.captured_logits(), loss, grads);
      }
      l.model.update(u);
    }
    // The step's results, read after it: the first reads wait for the whole step.
    const auto [loss, norm] = l.model.results();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // The ops' times, read now that the read-back waited for the step; the rest of the
    // step is outside them: buffer zeroing, host plumbing, the gaps between the calls
    // (on cuda: between and around the kernels, the end-of-step read-back included).
    l.plan.collect_op_times();
    const double op_s = l.plan.op_seconds(), outside_s = seconds - op_s;
    if (!std::isfinite(loss)) throw TrainingFailed("the loss is not finite at step " + std::to_string(step));
    totals.loss = loss;
    if (step >= totals.first_timed) {
      totals.seconds += seconds;
      totals.outside_seconds += outside_s;
      for (std::size_t i = 0; i < totals.selection_seconds.size(); ++i)
        totals.selection_seconds[i] += l.plan.selection_seconds()[i];
      ++totals.timed_steps;
    }
    const double tokens_per_s = double(B) * T / seconds;
    const double mfu = l.peak_tflops > 0 ? 100.0 * flops_per_token * B * T / seconds / (l.peak_tflops * 1e12) : 0.0;
    std::optional<float> val_loss;
    if (l.data.val && ((o.val_every > 0 && step % o.val_every == 0) || step == o.steps)) val_loss = validation_loss();
    std::cout << fmt::format(
        "step {:5d}/{} | loss {:.6f} | norm {:.4f} | lr {:.2e} | {:.2f} ms | {:.0f} tok/s | MFU {:.2f}%", step, o.steps,
        loss, norm, u.lr, seconds * 1e3, tokens_per_s, mfu);
    if (val_loss) std::cout << fmt::format(" | val loss {:.6f}", *val_loss);
    std::cout << "\n";
    if (sampler && step % o.sample_every == 0)
      std::cout << "sample at step " << step << ":\n" << sampler->sample(l.model, B, T) << "\n---\n";
    if (step == 1)
      std::cout << fmt::format("buffers zeroed per step: {} memsets, {:.1f} MiB\n", l.model.memsets().count,
                               l.model.memsets().bytes / double(1 << 20));
    if (l.log.enabled()) {
      nlohmann::json line{{"step", step},
                          {"loss", loss},
                          {"ms", seconds * 1e3},
                          {"tokens_per_s", tokens_per_s},
                          {"lr", u.lr},
                          {"grad_norm", norm},
                          {"memsets", l.model.memsets().count}};
      if (l.cuda_graph) line["graph"] = step == l.first_step ? "launched" : captured_now ? "captured" : "replayed";
      if (l.plan.times_ops()) {
        line["op_ms"] = op_s * 1e3;
        line["outside_ms"] = outside_s * 1e3;
      }
      if (val_loss) line["val_loss"] = *val_loss;
      l.log.write(line);
    }
    if (state && ((o.checkpoint_every > 0 && step % o.checkpoint_every == 0) || step == o.steps)) {
      save_state(step);
      std::cout << "saved the training state after step " << step << " to " << o.state << "\n";
    }
  }
  return totals;
}

void print_summary(const Options& o, const Config& config, const Gpt2& model, const KernelPlan& plan,
                   double peak_tflops, const StepTotals& t) {
  const int B = o.batch, T = o.seq_len;
  const double flops_per_token = 6.0 * double(num_params(config)) + 6.0 * config.L * config.C * T;
  const double mean_s = t.timed_steps ? t.seconds / t.timed_steps : 0;
  std::cout << fmt::format(
      "summary: {} steps, {:.2f} ms/step, {:.0f} tokens/s, MFU {:.2f}% (steps {}..{}), final loss {:.6f}, memory "
      "{:.1f} "
      "MiB\n",
      o.steps, mean_s * 1e3, mean_s > 0 ? double(B) * T / mean_s : 0.0,
      mean_s > 0 && peak_tflops > 0 ? 100.0 * flops_per_token * B * T / mean_s / (peak_tflops * 1e12) : 0.0,
      t.first_timed, o.steps, t.loss, (model.bytes_allocated() + plan.workspace_bytes()) / double(1 << 20));
  if (plan.times_ops() && t.timed_steps) {
    // On cuda an op's time is the GPU's, between markers on the stream, and the rest of
    // the step is what a launched step spends between and around its kernels; on cpu and
    // emu it is the host's time inside the calls, and the rest is outside them.
    const double op_seconds = t.seconds - t.outside_seconds;
    std::cout << fmt::format("op time: {:.2f} of {:.2f} ms/step ({:.1f}%); ", op_seconds / t.timed_steps * 1e3,
                             t.seconds / t.timed_steps * 1e3, 100.0 * op_seconds / t.seconds);
    const std::string rest = fmt::format("{:.2f} ms/step ({:.1f}% of the step", t.outside_seconds / t.timed_steps * 1e3,
                                         100.0 * t.outside_seconds / t.seconds);
    if (plan.backend() == Backend::cuda)
      std::cout << "between and around the kernels: " << rest
                << ": launch gaps and host work, which --cuda-graph on can close, and the end-of-step read-back)\n";
    else
      std::cout << "time outside the ops: " << rest << ")\n";
  }
  if (o.op_times && plan.times_ops() && t.timed_steps) {
    std::cout << fmt::format("time per op call site (steps {}..{}):\n", t.first_timed, o.steps);
    plan.print_times(std::cout, t.selection_seconds, t.timed_steps, t.seconds);
  }
}

// Whether the step runs as a CUDA graph (--cuda-graph, default on where the backend can
// capture and is a GPU, off with --op-times); UsageError for "on" where the backend
// cannot capture, or with --op-times.
bool use_cuda_graph(const Options& o, const Executor& ex) {
  if (o.cuda_graph.empty()) {
    const bool graph = ex.backend() == Backend::cuda && !ex.capture_unsupported();
    // A replayed step has no op calls to time. The graph is only the default and
    // --op-times a request, so the request wins, with a notice, rather than a refusal
    // that would make --op-times on a GPU always need a second flag; an explicit
    // --cuda-graph on with --op-times contradicts itself and is refused below.
    if (graph && o.op_times) {
      std::cout << "notice: --op-times launches the step op by op (as --cuda-graph off): a step replayed as a CUDA "
                   "graph has no op calls to time, and takes less time between its kernels\n";
      return false;
    }
    return graph;
  }
  if (o.cuda_graph == "off") return false;
  if (o.cuda_graph != "on") throw UsageError("--cuda-graph " + o.cuda_graph + ": give on or off");
  if (const auto why = ex.capture_unsupported()) throw UsageError("--cuda-graph on: " + *why);
  if (o.op_times) throw UsageError("--cuda-graph on: --op-times times op calls, and a replayed step has none");
  return true;
}

// The trainer's differences from wb's exit codes: its own TrainingFailed (a non-finite
// loss) is exit 1, and so is a failed backend call: for the trainer, the training failed.
program::ExitPolicy exit_policy() {
  program::ExitPolicy p;
  p.program = "trainer";
  p.backend_error_code = kFailed;
  p.backend_error_text = "failed: ";
  p.out_of_memory_hint = "a smaller model, --batch or --seq-len may fit";
  p.bug_text = "a bug in the trainer; please report it";
  p.own = [](const std::exception_ptr& e, std::ostream& err) -> std::optional<int> {
    try {
      std::rethrow_exception(e);
    } catch (const TrainingFailed& x) {
      err << "trainer: failed: " << x.what() << "\n";
      return kFailed;
    } catch (...) {
      return std::nullopt;
    }
  };
  return p;
}

}  // namespace

int run(const Options& o, const Registry& reg) {
  // Options.
  validate_options(o);
  const int B = o.batch, T = o.seq_len;
  const NumericClass precision = parse_numeric_class(o.precision);
  const Storage storage = storage_of(precision);
  std::optional<TrainState> resumed = resumed_state(o);
  const int first_step = int(resumed ? resumed->step : 0) + 1;

  // Model source, and the op calls of its step (the _bf16 ops in bf16).
  ModelSource source = model_source(o, resumed, storage);
  const Config& config = source.config;
  const std::vector<Workload> workloads = step_workloads(config, B, T, storage);
  validate_sizes(reg, config, B, T, workloads);
  if (source.params.empty()) source.params = init_params(config, o.seed);
  if (!o.dump_workloads.empty()) {
    write_workloads(o.dump_workloads, reg, config.describe(), B, T, workloads);
    std::cout << "wrote the workloads of one step to " << o.dump_workloads << "\n";
    if (o.train.empty()) return kOk;
  }

  // The data (a plan printed alone needs none), then the kernel plan, built once.
  std::unique_ptr<TrainingData> data;
  if (!o.print_plan) data = load_data(o, config, resumed);
  Kernels kernels(o, reg, precision, workloads);
  if (o.print_plan) {
    print_plan(o, config, precision, kernels);
    return kOk;
  }
  KernelPlan& plan = *kernels.plan;
  const bool graph = use_cuda_graph(o, *kernels.ex);
  // A replayed step has no op calls to time. On cuda the ops are timed only on request:
  // two CUDA events a call, and reading them after the step, cost the host time that a
  // step launched to be compared with a graph's should not carry.
  if (graph || (kernels.ex->backend() == Backend::cuda && !o.op_times)) plan.stop_timing_ops();
  const std::unique_ptr<Gpt2> built = make_gpt2(config, B, T, *kernels.ex, plan, storage);
  Gpt2& model = *built;
  model.load_params(source.params.data());
  if (!source.bf16_params.empty()) model.load_bf16_params(source.bf16_params.data());
  const uint64_t plan_fingerprint = plan_hash(plan);
  if (resumed) {
    model.load_moments(resumed->m.data(), resumed->v.data());
    std::cout << fmt::format("resuming from {} after step {}\n", o.resume, resumed->step);
    if (resumed->plan_hash != plan_fingerprint)
      std::cout << "warning: the kernel plan differs from the one that wrote the state (another device, best.json, "
                   "precision or launch parameters): the losses will not be bitwise those of an uninterrupted run\n";
  }
  const double peak = print_header(o, config, precision, kernels, model);

  // The log, the steps, the model file and the summary.
  StepLog log(o, resumed);
  Loop loop{o,   config, model,      plan,           *kernels.ex, graph, *data,
            log, peak,   first_step, plan_fingerprint, resumed};
  const StepTotals totals = train_steps(loop);
  if (!o.save.empty()) {
    // The parameters the forward pass reads: version 3 (fp32) or 5 (bf16, as llm.c
    // writes them; the master weights live in --state).
    if (storage == Storage::bf16) {
      std::vector<bf16> params(source.params.size());
      model.save_bf16_params(params.data());
      write_checkpoint(o.save, config, params.data());
    } else {
      model.save_params(source.params.data());
      write_checkpoint(o.save, config, source.params.data());
    }
    std::cout << "saved the model to " << o.save << "\n";
  }
  print_summary(o, config, model, plan, peak, totals);
  return kOk;
}

int main(int argc, char** argv) {
  CLI::App app{
      "trainer: GPT-2 training on the kernels of the wb registry, each op with the variant named in best.json"};
  Options o;
  app.add_option("--backend", o.backend,
                 "cpu, cuda, or emu (the CUDA variants on the emulator: checked, slow) (default: cuda when a device "
                 "is usable)");
  app.add_option("--kernels", o.kernels,
                 "best.json from `wb best`: its section for this device, else the closest (default: each op's "
                 "default variant)");
  app.add_flag("--strict-device", o.strict_device, "refuse a best.json without a section for this very device");
  app.add_flag("--deterministic", o.deterministic,
               "only variants whose outputs are bitwise repeatable (no float atomics), for reproducible runs");
  app.add_option("--precision", o.precision,
                 "fp32, tf32 to allow tf32 variants, or bf16: llm.c's mixed precision (bf16 parameters, "
                 "gradients and activations, fp32 master weights and AdamW moments)")
      ->capture_default_str();
  app.add_option("--rounding", o.rounding,
                 "bf16: how each step's updated fp32 master weights become the bf16 parameters: stochastic (seeded "
                 "by --seed and the step, as llm.c) or nearest (round to nearest even, for comparisons with a "
                 "deterministic reference)")
      ->capture_default_str();
  app.add_option("--model", o.model,
                 "llm.c model file: version 3 (fp32) or 5 (bf16), converted to the run's precision");
  app.add_option("--init", o.init, "initialise from scratch: d12, d24, d36, d48, or L,C,NH");
  app.add_option("--train", o.train, "training tokens (llm.c token file)");
  app.add_option("--val", o.val, "validation tokens (llm.c token file)");
  app.add_option("-b,--batch", o.batch, "batch size B")->capture_default_str();
  app.add_option("-t,--seq-len", o.seq_len, "sequence length T")->capture_default_str();
  app.add_option("--steps", o.steps, "training steps")->capture_default_str();
  app.add_option("--lr", o.lr, "peak learning rate")->capture_default_str();
  app.add_option("--weight-decay", o.weight_decay, "AdamW weight decay")->capture_default_str();
  app.add_option("--grad-clip", o.grad_clip, "clip the global gradient norm to this (0 = off)")->capture_default_str();
  app.add_option("--beta1", o.beta1, "AdamW beta1")->capture_default_str();
  app.add_option("--beta2", o.beta2, "AdamW beta2")->capture_default_str();
  app.add_option("--eps", o.eps, "AdamW epsilon")->capture_default_str();
  app.add_option("--warmup", o.warmup, "linear warm-up steps")->capture_default_str();
  app.add_option("--schedule", o.schedule, "learning rate after warm-up: const or cosine")->capture_default_str();
  app.add_option("--final-lr-frac", o.final_lr_frac, "cosine: final learning rate as a fraction of --lr")
      ->capture_default_str();
  app.add_option("--val-every", o.val_every, "validation loss every N steps (and at the last)")->capture_default_str();
  app.add_option("--val-batches", o.val_batches, "batches of the validation loss")->capture_default_str();
  app.add_option("--seed", o.seed, "seed of --init and --shuffle")->capture_default_str();
  app.add_flag("--shuffle", o.shuffle, "read the training batches in a shuffled order (per pass)");
  app.add_option("--save", o.save,
                 "write the model here after training (version 3, fp32; with --precision bf16 version 5)");
  app.add_option("--log", o.log, "one JSON object per step: step, loss, val_loss, ms, tokens_per_s");
  app.add_option("--peak-tflops", o.peak_tflops, "peak for MFU (default: measure the device's GEMM ceiling)");
  app.add_option("--dump-workloads", o.dump_workloads,
                 "write the shape of every op call of one step (for wb sweep --workloads)");
  app.add_option("--debug-state", o.debug_state, "write the logits, loss and gradients of the first step");
  app.add_flag("--op-times", o.op_times,
               "after the run, the time of every op call site per step (cuda: CUDA events around each call, "
               "and the step launched op by op, without --cuda-graph; cpu and emu: the host's clock)");
  app.add_option("--cuda-graph", o.cuda_graph,
                 "on: capture the step (forward, backward, gradient norm, AdamW) once as a CUDA graph and replay it each "
                 "step; off: launch op by op (default: on on cuda, off elsewhere; emu: on enforces the capture "
                 "rules: nothing in the step may allocate, synchronise or read back)");
  app.add_flag("--print-plan", o.print_plan,
               "print which variant runs each op call (and the best.json entries left unused), then stop");
  app.add_option("--sample-every", o.sample_every, "print a text sample every N steps (0 = never)")
      ->capture_default_str();
  app.add_option("--sample-len", o.sample_len, "tokens per sample (at most --seq-len)")->capture_default_str();
  app.add_option("--tokenizer", o.tokenizer,
                 "llm.c tokenizer file for samples (default: gpt2_tokenizer.bin beside --train)");
  app.add_option("--state", o.state,
                 "write the training state here (parameters, AdamW moments, step, data position, generators) after "
                 "the last step and every --checkpoint-every steps, for --resume");
  app.add_option("--checkpoint-every", o.checkpoint_every, "write --state every N steps too (0 = only at the end)")
      ->capture_default_str();
  app.add_option("--resume", o.resume,
                 "continue from a state file written by --state: the next step is its step + 1; the options that "
                 "shape the steps must be those of the run that wrote it");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "trainer: error: " << e.what() << "\nRun 'trainer --help' for the options.\n";
    return kBadInput;
  }
  return program::guarded_main(
      exit_policy(),
      [&] {
        cpu::check_isa_cap();  // a mistyped WB_CPU_ISA is bad input, not "no cap"
        return run(o, Registry::global());
      },
      std::cerr);
}

}  // namespace wb::trainer
