#include "trainer/output.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "base/files.h"

namespace wb::trainer {
namespace {

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

}  // namespace

void print_plan(const Options& o, const Config& config, NumericClass precision, const Kernels& k) {
  std::cout << fmt::format("kernel plan of one step: GPT-2 {}, B={} T={}, {} backend on {}, precision {}\n",
                           config.describe(), o.batch, o.seq_len, to_string(k.backend), k.ex->device().name,
                           to_string(precision));
  if (k.plan->section()) std::cout << "kernels from " << o.kernels << ", " << k.plan->section_choice() << "\n";
  k.plan->print(std::cout);
  k.plan->print_unused(std::cout);
}

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

void print_step(const Options& o, const StepRecord& r) {
  std::cout << fmt::format(
      "step {:5d}/{} | loss {:.6f} | norm {:.4f} | lr {:.2e} | {:.2f} ms | {:.0f} tok/s | MFU {:.2f}%", r.step, o.steps,
      r.loss, r.grad_norm, r.lr, r.seconds * 1e3, r.tokens_per_s, r.mfu);
  if (r.val_loss) std::cout << fmt::format(" | val loss {:.6f}", *r.val_loss);
  std::cout << "\n";
}

StepLog::StepLog(const Options& o, const std::optional<TrainState>& resumed) : path_(o.log) {
  if (path_.empty()) return;
  if (resumed) trim_log(path_, resumed->step);
  out_.open(path_, resumed ? std::ios::app : std::ios::trunc);
  if (!out_) throw UsageError("cannot write the log " + path_);
}

void StepLog::write(const StepRecord& r) {
  if (!enabled()) return;
  nlohmann::json line{
      {"step", r.step}, {"loss", r.loss},           {"ms", r.seconds * 1e3}, {"tokens_per_s", r.tokens_per_s},
      {"lr", r.lr},     {"grad_norm", r.grad_norm}, {"memsets", r.memsets}};
  if (r.graph) line["graph"] = r.graph;
  if (r.op_seconds) {
    line["op_ms"] = *r.op_seconds * 1e3;
    line["outside_ms"] = *r.outside_seconds * 1e3;
  }
  if (r.val_loss) line["val_loss"] = *r.val_loss;
  out_ << line.dump() << '\n';
  flush();
}

void StepLog::flush() {
  if (!enabled()) return;
  out_.flush();
  if (!out_) throw FileError("cannot write the log " + path_ + ": " + std::strerror(errno));
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

}  // namespace wb::trainer
