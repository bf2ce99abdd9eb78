#include "trainer/options.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <utility>

#include "base/errors.h"
#include "base/files.h"
#include "contract/registry.h"
#include "trainer/gpt2.h"

namespace wb::trainer {
namespace {

// The options in four groups, each added in --help's order.
void add_kernel_options(CLI::App& app, Options& o) {
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
}

void add_model_options(CLI::App& app, Options& o) {
  app.add_option("--model", o.model,
                 "llm.c model file: version 3 (fp32) or 5 (bf16), converted to the run's precision");
  app.add_option("--init", o.init, "initialise from scratch: d12, d24, d36, d48, or L,C,NH");
  app.add_option("--train", o.train, "training tokens (llm.c token file)");
  app.add_option("--val", o.val, "validation tokens (llm.c token file)");
  app.add_option("-b,--batch", o.batch, "batch size B")->capture_default_str();
  app.add_option("-t,--seq-len", o.seq_len, "sequence length T")->capture_default_str();
  app.add_option("--steps", o.steps, "training steps")->capture_default_str();
}

void add_optimiser_options(CLI::App& app, Options& o) {
  app.add_option("--lr", o.lr, "peak learning rate")->capture_default_str();
  app.add_option("--weight-decay", o.adamw.weight_decay, "AdamW weight decay")->capture_default_str();
  app.add_option("--grad-clip", o.adamw.grad_clip, "clip the global gradient norm to this (0 = off)")
      ->capture_default_str();
  app.add_option("--beta1", o.adamw.beta1, "AdamW beta1")->capture_default_str();
  app.add_option("--beta2", o.adamw.beta2, "AdamW beta2")->capture_default_str();
  app.add_option("--eps", o.adamw.eps, "AdamW epsilon")->capture_default_str();
  app.add_option("--warmup", o.warmup, "linear warm-up steps")->capture_default_str();
  app.add_option("--schedule", o.schedule, "learning rate after warm-up: const or cosine")->capture_default_str();
  app.add_option("--final-lr-frac", o.final_lr_frac, "cosine: final learning rate as a fraction of --lr")
      ->capture_default_str();
}

// Validation, samples, outputs, state and resume, and how the step runs.
void add_run_options(CLI::App& app, Options& o) {
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
  app.add_option(
      "--cuda-graph", o.cuda_graph,
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
}

}  // namespace

void add_options(CLI::App& app, Options& o) {
  add_kernel_options(app, o);
  add_model_options(app, o);
  add_optimiser_options(app, o);
  add_run_options(app, o);
}

// Every message names its flag. Output files are checked to be writable now rather
// than found unwritable after the training.
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
  if (!std::isfinite(o.adamw.weight_decay) || o.adamw.weight_decay < 0)
    fail("--weight-decay", o.adamw.weight_decay, "must be finite and not negative");
  if (!std::isfinite(o.adamw.grad_clip) || o.adamw.grad_clip < 0)
    fail("--grad-clip", o.adamw.grad_clip, "give the largest gradient norm, or 0 for no clipping");
  if (!(o.adamw.beta1 >= 0 && o.adamw.beta1 < 1)) fail("--beta1", o.adamw.beta1, "must lie in [0, 1)");
  if (!(o.adamw.beta2 >= 0 && o.adamw.beta2 < 1)) fail("--beta2", o.adamw.beta2, "must lie in [0, 1)");
  if (!std::isfinite(o.adamw.eps) || o.adamw.eps <= 0) fail("--eps", o.adamw.eps, "must be finite and above 0");
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

float learning_rate(const Options& o, int step) {
  if (o.warmup > 0 && step <= o.warmup) return o.lr * float(step) / float(o.warmup);
  if (o.schedule == "const") return o.lr;
  const double progress = double(step - o.warmup) / std::max(1, o.steps - o.warmup);
  const double low = o.lr * o.final_lr_frac;
  return float(low + 0.5 * (o.lr - low) * (1.0 + std::cos(M_PI * std::min(1.0, progress))));
}

}  // namespace wb::trainer
