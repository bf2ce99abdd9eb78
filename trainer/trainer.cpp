// The trainer's phases in order: options, model source, data, kernel plan (built once),
// log, step loop, model file, summary.
#include "trainer/trainer.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <optional>
#include <vector>

#include "base/cpu_isa.h"
#include "base/errors.h"
#include "base/exit_codes.h"
#include "trainer/gpt2.h"
#include "trainer/model.h"
#include "trainer/output.h"
#include "trainer/phases.h"
#include "trainer/resume.h"
#include "trainer/state.h"
#include "trainer/step_loop.h"
#include "workbench/runtime/kernel_plan.h"
#include "workbench/runtime/workloads.h"

namespace wb::trainer {
namespace {

using program::kBadInput;
using program::kFailed;
using program::kOk;

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
  Loop loop{o, config, model, plan, *kernels.ex, graph, *data, log, peak, first_step, plan_fingerprint, resumed};
  const StepTotals totals = train_steps(loop);
  if (!o.save.empty()) save_model(o, config, model, source.params);
  print_summary(o, config, model, plan, peak, totals);
  return kOk;
}

int main(int argc, char** argv) {
  CLI::App app{
      "trainer: GPT-2 training on the kernels of the wb registry, each op with the variant named in best.json"};
  Options o;
  add_options(app, o);
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
