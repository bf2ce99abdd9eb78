// wb run: one variant, validated (twice, for determinism), timed, validated again.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "base/errors.h"
#include "workbench/cli/commands.h"
#include "workbench/cli/for_device.h"
#include "workbench/cli/options.h"
#include "workbench/cli/output.h"
#include "workbench/cli/pipeline.h"
#include "workbench/cli/pipeline_isolate.h"
#include "workbench/cli/pipeline_timing.h"
#include "workbench/runtime/context.h"
#include "workbench/runtime/harness.h"
#include "workbench/runtime/report.h"

namespace wb::cli {
namespace {

ParamValues parse_params(const Variant& v, const std::optional<int>& block_size,
                         const std::vector<std::string>& given) {
  ParamValues p;
  if (block_size) p.set("block_size", *block_size);
  for (const auto& item : given) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) throw UsageError("--param '" + item + "' is not of the form NAME=VALUE");
    const std::vector<int> value = parse_int_list(item.substr(eq + 1), "--param " + item.substr(0, eq));
    if (value.size() != 1) throw UsageError("--param " + item + ": give one value");
    p.set(item.substr(0, eq), value.front());
  }
  v.check_params(p);
  return v.complete(p);
}

void print_record(const Record& r, const Ceilings& ceilings) {
  std::cout << r.op << " " << r.variant_label() << "  [" << to_string(r.numeric) << "]\n";
  std::cout << "  shape   " << r.shape_text() << "  (seed " << r.seed << ")\n";
  std::cout << "  launch  " << r.params.describe() << "\n";
  if (r.status == Status::skipped || r.status == Status::not_emulated) {
    std::cout << "  " << (r.status == Status::skipped ? "SKIPPED " : "NOT EMULATED ") << r.reason << "\n";
    return;
  }
  if (r.status == Status::incorrect) std::cout << "  INCORRECT " << r.reason << "\n";
  std::string checks;
  for (const auto& c : r.errors) checks += (checks.empty() ? "" : "; ") + c.describe();
  if (!checks.empty()) std::cout << "  check   " << checks << "\n";
  if (r.deterministic) std::cout << "  deterministic " << format_deterministic(r) << "\n";
  if (r.timing) {
    const TimingStats& t = *r.timing;
    std::cout << fmt::format("  time    median {}, min {}, mean {}, cv {:.1f}% over {} repetitions of {} launches\n",
                             format_time(t.median_s), format_time(t.min_s), format_time(t.mean_s), 100 * t.cv,
                             t.repetitions, t.iterations);
    const PercentOfPeak pct = r.percent(ceilings);
    std::cout << fmt::format(
        "  rate    {:.1f} GB/s ({:.1f}% of copy), {:.3f} TFLOP/s ({:.1f}% of {} GEMM); {:.1f}% of the roofline\n",
        r.gbps(), pct.copy, r.tflops(), pct.matmul, to_string(r.numeric), pct.roofline);
    std::cout << fmt::format("  models  {:.4g} bytes, {:.4g} flops\n", r.bytes, r.flops);
  }
}

struct RunOptions {
  std::string op;
  int variant = 0;
  std::string backend;
  std::optional<int> block_size;
  std::vector<std::string> params;  // name=value
  std::string shape = "gpt2-124m";
  std::optional<uint64_t> seed;
  std::string json;
  TimingFlags timing;
  bool isolate = false;      // in a child process (pipeline_isolate.h)
  bool strict_sync = false;  // emu: a barrier after threads of the block exited is a fault
  CounterFlags counters;
  std::string predict_for;  // emu: predict the configuration's time on this device (for_device.h)
  std::string command;

  // The counters' flags as the executor and a child of --isolate take them: with
  // --predict-for and without --counters, --sample-blocks is the prediction's alone.
  CounterFlags counting() const {
    CounterFlags c = counters;
    if (!predict_for.empty() && !c.on) c.sample_blocks = 0;
    return c;
  }
};

// What wb run measures: one configuration of one variant on one problem.
struct RunTarget {
  const OpSpec& op;
  const Variant& variant;
  ParamValues params;
  Shape shape;
  uint64_t seed;
  TimingOptions timing;
};

// The record, made here (its context this process's, the ceilings measured after a
// timed record).
Record run_here(const RunTarget& t, Executor& ex, const std::string& command, ReportContext& context) {
  Session session(registry(), t.op, t.shape, t.seed, ex);
  EvalOptions eval;
  if (ex.timed()) {
    eval.timer = timer_for(ex, t.timing);
  } else {
    eval.check_launches = 1;
  }
  Record r = session.evaluate(t.variant, t.params, eval);
  context = make_context(ex, t.timing, command);
  if (r.timing) context.ceilings = ex.measure_ceilings();
  return r;
}

// The record, made by the same command narrowed to nothing else in a child: its report
// (context and ceilings included) stands for this run's, or its death is the variant's
// failure.
Record run_isolated(const RunTarget& t, const RunOptions& o, Executor& ex, ReportContext& context) {
  check_session_fits(t.op, t.shape, ex);
  IsolationDir isolation;
  const std::string out = isolation.next_file("report");
  std::vector<std::string> args{"run",       t.op.name,
                                "--variant", std::to_string(t.variant.id),
                                "--backend", std::string(to_string(ex.backend())),
                                "--shape",   o.shape,
                                "--seed",    std::to_string(t.seed),
                                "--json",    out};
  for (const auto& [name, value] : t.params.items())
    args.insert(args.end(), {"--param", name + "=" + std::to_string(value)});
  o.timing.pass_to(args);
  if (o.strict_sync) args.push_back("--strict-sync");
  o.counting().pass_to(args);
  Record wanted = record_for(t.op, t.variant, t.params, t.shape);
  wanted.seed = t.seed;
  ChildRecords child = records_from_child(args, out, {wanted}, isolation);
  context = child.context ? *child.context : make_context(ex, t.timing, o.command);
  context.command = o.command;
  return child.records.front();
}

int run(const RunOptions& o) {
  const Registry& reg = registry();
  const OpSpec& op = reg.op(o.op);
  const Shape shape = parse_shape(o.shape);
  op.check_shape(shape);
  const TimingOptions timing = o.timing.resolve();
  const Backend b = resolve_backend(o.backend);
  const Variant& v = reg.variant(op.name, b, o.variant);
  const RunTarget target{op, v, parse_params(v, o.block_size, o.params), shape, resolve_seed(o.seed), timing};
  std::optional<DevicePredictor> predictor;
  if (!o.predict_for.empty())
    predictor.emplace(o.predict_for, b, o.counters.sample_blocks ? o.counters.sample_blocks : kDefaultSampleBlocks);

  auto ex = make_executor(b);
  ex->set_strict_sync(o.strict_sync);
  o.counting().apply(*ex);
  ReportContext context;
  std::vector<Record> records{o.isolate ? run_isolated(target, o, *ex, context)
                                        : run_here(target, *ex, o.command, context)};
  if (predictor) {
    predictor->predict(records, reg);
    context.predicted_for = predictor->predicted_for();
  }
  const Record& r = records.front();
  print_record(r, context.ceilings);
  for (const std::string& n : r.notes) std::cout << "  note    " << n << "\n";
  if (!ex->timed() && r.status == Status::ok)
    std::cout << "  time    not measured: emulation checks logic (bounds, barriers, races), never speed\n";
  if (predictor)
    std::cout << "  predicted " << format_predicted(r) << ", " << predictor->heading()
              << (r.predicted ? "" : ": none, the configuration did not pass") << "\n";
  if (r.counters)
    print_counters(std::cout, r.op + " " + r.variant_label() + " " + r.params.describe(), *r.counters, r.bytes, 8);
  if (!o.json.empty()) std::cout << "wrote " << write_report_for(Report{context, {r}}, o.json, *ex) << "\n";
  return r.status == Status::incorrect ? kCheckFailed : kOk;
}

void add_options(CLI::App& cmd, RunOptions& o) {
  cmd.add_option("op", o.op, "the op, e.g. layernorm_forward")->required();
  cmd.add_option("--variant,-v", o.variant, "variant id")->required();
  add_backend_option(cmd, o.backend);
  cmd.add_option("--block-size", o.block_size, "block size (default: the variant's)");
  cmd.add_option("--param", o.params, "other launch parameter, NAME=VALUE (repeatable)");
  add_shape_option(cmd, o.shape);
  add_seed_option(cmd, o.seed);
  add_json_option(cmd, o.json);
  add_timing_options(cmd, o.timing);
  add_strict_sync_flag(cmd, o.strict_sync);
  add_isolate_flag(cmd, o.isolate);
  add_counter_options(cmd, o.counters);
  add_predict_for_option(cmd, o.predict_for);
}

}  // namespace

Command add_run_command(CLI::App& app, const std::string& command_line) {
  return new_command(app, command_line, "run", "validate one variant, then time it", add_options, run);
}

}  // namespace wb::cli
