// wb sweep: every (variant, launch configuration) of one op, of all ops at one
// shape, or of every call of a trainer workloads file, validated and timed, into a
// report; a table per (op, shape), fastest first. --shard K/N: only the K-th of N
// round-robin slices of those units (sweep_shards.h).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <numeric>
#include <set>

#include "base/errors.h"
#include "workbench/cli/commands.h"
#include "workbench/cli/for_device.h"
#include "workbench/cli/options.h"
#include "workbench/cli/output.h"
#include "workbench/cli/pipeline.h"
#include "workbench/cli/pipeline_timing.h"
#include "workbench/cli/sweep_shards.h"
#include "workbench/runtime/block_sizes.h"
#include "workbench/runtime/context.h"
#include "workbench/runtime/harness.h"
#include "workbench/runtime/report.h"
#include "workbench/runtime/table.h"
#include "workbench/runtime/workloads.h"

namespace wb::cli {
namespace {

struct SweepOptions {
  OpChoice ops;
  std::string backend;
  std::string block_sizes = "all";
  std::string shape = "gpt2-124m";
  std::string workloads;  // trainer --dump-workloads file
  std::optional<uint64_t> seed;
  std::string out;
  TimingFlags timing;
  bool isolate = false;                           // each (variant, shape) in a child process (pipeline_isolate.h)
  bool isolated_child = false;                    // internal: a child of --isolate (measures no ceilings)
  std::string configurations;                     // internal: a child's (pipeline.h, keep_configurations)
  std::optional<std::string> shard;               // "K/N": only the K-th of N slices of the units (sweep_shards.h)
  std::string predict_for;                        // emu: check, then predict the times on this device (for_device.h)
  uint64_t sample_blocks = kDefaultSampleBlocks;  // with --predict-for: blocks counted per launch
  std::string command;
};

// The dims of a shape as --shape takes them ("B=2,T=8,C=32"): how a child is told it.
std::string dims_arg(const OpSpec& op, const Shape& shape) {
  std::string dims;
  for (const std::string& d : op.dims) dims += (dims.empty() ? "" : ",") + d + "=" + std::to_string(shape.get(d));
  return dims;
}

// The jobs: every op at the --shape, or the calls of a workloads file; each its own
// group under --isolate, all at one seed.
std::vector<Job> sweep_jobs(const SweepOptions& o, const Registry& reg) {
  std::vector<std::pair<const OpSpec*, Shape>> problems;
  if (!o.workloads.empty()) {
    if (o.ops.all || !o.ops.op.empty()) throw UsageError("--workloads names the ops itself: give no op and no --all");
    if (o.ops.some_variants()) throw UsageError("--variants selects ids of one op; with --workloads leave it out");
    for (const Workload& w : read_workloads(o.workloads, reg)) problems.emplace_back(&reg.op(w.op), w.shape);
  } else {
    if (o.ops.all == !o.ops.op.empty()) throw UsageError("give one op, --all or --workloads FILE");
    const std::vector<const OpSpec*> ops = o.ops.ops(reg);
    const Shape shape = parse_shape(o.shape);
    for (const OpSpec* op : ops) {
      op->check_shape(shape);
      problems.emplace_back(op, shape);
    }
  }
  std::vector<Job> jobs;
  for (const auto& [op, shape] : problems) jobs.push_back({op, shape, 0, false, 0, jobs.size(), dims_arg(*op, shape)});
  return jobs;
}

// The units: per job, per selected variant, its configurations at the chosen block
// sizes (workbench/runtime/block_sizes.h).
void plan_units(Plan& plan, const Registry& reg, Backend b, const SweepOptions& o) {
  const std::optional<std::vector<int>> sizes = parse_block_sizes(o.block_sizes);
  std::vector<const Variant*> selected;
  for (std::size_t j = 0; j < plan.jobs.size(); ++j)
    for (const Variant* v : select_variants(reg, *plan.jobs[j].op, b, o.ops.variants)) {
      selected.push_back(v);
      for (const ParamValues& p : configurations_at(*v, sizes)) plan.units.push_back({j, v, p, ""});
    }
  if (sizes) check_block_sizes(*sizes, selected);
  if (!o.configurations.empty()) keep_configurations(plan, o.configurations);
}

// --shard: keeps the units of this shard only; returns what identifies the whole sweep
// to wb merge.
ShardInfo keep_shard(Plan& plan, const ShardSpec& shard, uint64_t seed) {
  std::vector<std::string> keys;
  std::set<std::string> seen;
  for (const Unit& unit : plan.units) {
    const Job& job = plan.jobs[unit.job];
    keys.push_back(unit_key(record_for(*job.op, *unit.variant, unit.params, job.shape)));
    if (!seen.insert(keys.back()).second)
      throw UsageError("the sweep measures " + keys.back() +
                       " twice (a variant or a workload given twice?): its shards could not be merged");
  }
  const ShardInfo info{shard.index, shard.count, int64_t(plan.units.size()), plan_fingerprint(keys), seed};
  std::vector<Unit> mine;
  for (std::size_t unit = 0; unit < plan.units.size(); ++unit)
    if (in_shard(int64_t(unit), shard)) mine.push_back(plan.units[unit]);
  plan.units = std::move(mine);
  return info;
}

// The command line of the child that sweeps one variant on one job: the same seed, and
// the configurations it is sent (all of the variant's the plan holds, then those a
// fault left unmeasured).
std::vector<std::string> child_args(const SweepOptions& o, Backend b, const Plan& plan,
                                    const std::vector<std::size_t>& units, const std::string& out) {
  const Unit& first = plan.units[units.front()];
  const Job& job = plan.jobs[first.job];
  std::vector<std::string> args{"sweep",           job.op->name,
                                "--backend",       std::string(to_string(b)),
                                "--variants",      std::to_string(first.variant->id),
                                "--shape",         job.shape_arg,
                                "--seed",          std::to_string(job.seed),
                                "--out",           out,
                                "--isolated-child"};
  const std::vector<std::string> configurations = configurations_args(plan, units);
  args.insert(args.end(), configurations.begin(), configurations.end());
  o.timing.pass_to(args);
  return args;
}
// The ceilings again after the records, each rate the faster of the two measurements
// (ceilings.h, faster_of), when the records took long enough for a shared host's
// bandwidth to drift (it does over a sweep's minutes) or one of them reads above the
// roofline with more bytes than the last-level cache holds (the ceilings were measured
// low). Not after every sweep: a measurement costs seconds (it first-touches buffers of
// 256 MiB to 1 GiB), and a campaign runs dozens of sweeps of a few seconds each.
void measure_again_if_needed(Report& report, Executor& ex, double records_s) {
  constexpr double kDriftSeconds = 30;  // records that took longer: measure again
  const bool above = std::any_of(report.records.begin(), report.records.end(), [&](const Record& r) {
    return r.timing &&
           above_ceiling(r.percent(report.context.ceilings).roofline, r.bytes, report.context.device.l2_bytes);
  });
  if (records_s > kDriftSeconds || above)
    report.context.ceilings = faster_of(report.context.ceilings, ex.measure_ceilings(),
                                        "; measured again after the sweep's records, each rate the faster of the "
                                        "two measurements");
}

// The records per job, in the order of the plan, the timed ones fastest first.
std::vector<const Record*> ranked(const Plan& plan, const std::vector<Record>& records) {
  std::vector<std::size_t> order(records.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    if (plan.units[x].job != plan.units[y].job) return plan.units[x].job < plan.units[y].job;
    const Record &a = records[x], &c = records[y];
    const bool ta = bool(a.timing), tc = bool(c.timing);
    if (ta != tc) return ta;
    return ta && a.timing->median_s < c.timing->median_s;
  });
  std::vector<const Record*> sorted;
  for (std::size_t i : order) sorted.push_back(&records[i]);
  return sorted;
}

// The lines above the tables: device, seed, ceilings, the shard.
void print_heading(const Report& report, const std::string& device, Backend b, uint64_t seed, std::size_t units) {
  const Ceilings& ceil = report.context.ceilings;
  std::cout << "sweep on " << device << " (" << to_string(b) << ", seed " << seed << "); ceilings: copy "
            << fmt::format("{:.1f} GB/s, fp32 GEMM {:.2f} TFLOP/s", ceil.copy_gbps, ceil.fp32_tflops)
            << (ceil.memory_gbps > 0 ? fmt::format("; memory {:.1f} GB/s (read {:.1f}, update {:.1f})",
                                                   ceil.memory_gbps, ceil.read_gbps, ceil.update_gbps)
                                     : std::string())
            << "\n";
  if (const auto& shard = report.context.shard)
    std::cout << fmt::format("shard {}/{}: {} of the sweep's {} units (plan {}){}\n", shard->index, shard->count, units,
                             shard->units, shard->plan,
                             units == 0 ? ": an empty shard, nothing to measure (no ceilings either)" : "");
  std::cout << "% peak: of the roofline, min(memory bandwidth x flops/byte, GEMM throughput of the numeric class)\n";
}

// A table per (op, shape) of the ranked records.
void print_tables(const std::vector<const Record*>& sorted, const Ceilings& ceilings) {
  std::string current;  // op and shape of the table being filled
  std::unique_ptr<TextTable> table;
  for (const Record* r : sorted) {
    if (r->op + " " + r->shape_text() != current) {
      if (table) table->print(std::cout, "  ");
      current = r->op + " " + r->shape_text();
      std::cout << r->op << "  " << r->shape_text() << "\n";
      table = std::make_unique<TextTable>(std::vector<std::string>{"variant", "launch", "status", "median", "min", "cv",
                                                                   "GB/s", "TFLOP/s", "% peak", "max err", "note"});
    }
    const bool t = bool(r->timing);
    table->add({r->variant_label(), r->params.describe(), std::string(to_string(r->status)),
                t ? format_time(r->timing->median_s) : "-", t ? format_time(r->timing->min_s) : "-",
                t ? fmt::format("{:.1f}%", 100 * r->timing->cv) : "-", t ? fmt::format("{:.1f}", r->gbps()) : "-",
                t ? fmt::format("{:.3f}", r->tflops()) : "-",
                t ? fmt::format("{:.1f}%", r->percent(ceilings).roofline) : "-", format_errors(*r), r->reason});
  }
  if (table) table->print(std::cout, "  ");
}

// Above the roofline with more bytes than the last-level cache holds: the ceiling is
// wrong (or the byte model is), not the variant fast; said here, flagged in the report.
void warn_above_roofline(const std::vector<const Record*>& sorted, const ReportContext& context) {
  const Ceilings& ceil = context.ceilings;
  const int64_t llc = context.device.l2_bytes;
  int above = 0;
  for (const Record* r : sorted) {
    if (!r->timing || !above_ceiling(r->percent(ceil).roofline, r->bytes, llc)) continue;
    ++above;
    std::cout << fmt::format(
        "WARNING: {} {} {} at {}: {:.0f}% of the roofline while moving {:.1f} MB, more than the last-level cache "
        "({:.1f} MB): the ceiling is below what the op reaches; flagged above_ceiling in the report\n",
        r->op, r->variant_label(), r->params.describe(), r->shape_text(), r->percent(ceil).roofline, r->bytes * 1e-6,
        double(llc) * 1e-6);
  }
  if (above)
    std::cout << above << " records above the roofline beyond the last-level cache: ceilings " << ceil.method << "\n";
}

// The records of a predicted sweep per job, the predicted ones fastest first, then the
// others in the order of the plan.
std::vector<const Record*> ranked_by_prediction(const Plan& plan, const std::vector<Record>& records) {
  std::vector<std::size_t> order(records.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    if (plan.units[x].job != plan.units[y].job) return plan.units[x].job < plan.units[y].job;
    const Record &a = records[x], &c = records[y];
    if (bool(a.predicted) != bool(c.predicted)) return bool(a.predicted);
    return a.predicted && a.predicted->seconds < c.predicted->seconds;
  });
  std::vector<const Record*> sorted;
  for (std::size_t i : order) sorted.push_back(&records[i]);
  return sorted;
}

// wb sweep --backend emu --predict-for DEVICE: every configuration checked in emulation
// (as wb check checks it, once), and each that passed predicted on the device; the
// report holds the predictions apart from any timing and names the device
// (context.predicted_for), so that wb best can make a predicted section of it.
int sweep_predicted(const SweepOptions& o, Plan& plan, Backend b, uint64_t seed, const TimingOptions& timing) {
  if (o.isolate || o.isolated_child || o.shard)
    throw UsageError("--predict-for sweeps in one process, whole: give it without --isolate and --shard");
  DevicePredictor predictor(o.predict_for, b, o.sample_blocks);
  auto ex = make_executor(b);
  for (const Job& job : plan.jobs) check_session_fits(*job.op, job.shape, *ex);
  Report report{make_context(*ex, timing, o.command), {}};
  report.context.predicted_for = predictor.predicted_for();
  Execution how;
  how.eval.check_launches = 1;  // each emulated launch costs milliseconds
  report.records = execute(registry(), plan, *ex, how);
  predictor.predict(report.records, registry());

  std::cout << "sweep checked on " << ex->device().name << " (" << to_string(b) << ", seed " << seed
            << "), nothing timed; " << predictor.heading() << "\n";
  std::string current;
  std::unique_ptr<TextTable> table;
  for (const Record* r : ranked_by_prediction(plan, report.records)) {
    if (r->op + " " + r->shape_text() != current) {
      if (table) table->print(std::cout, "  ");
      current = r->op + " " + r->shape_text();
      std::cout << r->op << "  " << r->shape_text() << "\n";
      table = std::make_unique<TextTable>(
          std::vector<std::string>{"variant", "launch", "status", "predicted", "bound", "max err", "note"});
    }
    table->add({r->variant_label(), r->params.describe(), std::string(to_string(r->status)),
                r->predicted ? format_time(r->predicted->seconds) : "-", r->predicted ? r->predicted->bound : "-",
                format_errors(*r), r->reason});
  }
  if (table) table->print(std::cout, "  ");
  const StatusCounts n(report.records);
  const std::size_t predicted =
      std::count_if(report.records.begin(), report.records.end(), [](const Record& r) { return bool(r.predicted); });
  const std::string path = output_path(o.out, predictor.device().slug);
  write_report(report, path);
  std::cout << "wrote " << path << " (" << report.records.size() << " records, " << predicted << " predicted, "
            << n.incorrect << " incorrect; times predicted for " << predictor.device().model.name
            << ", never measured)\n";
  return n.incorrect ? kCheckFailed : kOk;
}

int sweep(const SweepOptions& o) {
  std::optional<ShardSpec> shard;
  if (o.shard) {
    shard = parse_shard(*o.shard);
    if (!o.seed)
      throw UsageError("--shard needs --seed: every shard must draw the same inputs for their reports to merge");
  }
  Plan plan;
  plan.jobs = sweep_jobs(o, registry());
  const TimingOptions timing = o.timing.resolve();
  const Backend b = resolve_backend(o.backend);
  if (b == Backend::emu && o.predict_for.empty())
    throw UsageError(
        "wb sweep times variants, and the emu backend is never timed; check them with wb check --backend emu, or "
        "predict their times on a device with --predict-for DEVICE");
  if (b != Backend::emu && !o.predict_for.empty())
    throw UsageError("--predict-for predicts from the emulator's counts: give it with --backend emu, not " +
                     std::string(to_string(b)));
  plan_units(plan, registry(), b, o);
  const uint64_t seed = resolve_seed(o.seed);
  for (Job& job : plan.jobs) job.seed = seed;
  if (b == Backend::emu) return sweep_predicted(o, plan, b, seed, timing);
  std::optional<ShardInfo> shard_info;
  if (shard) shard_info = keep_shard(plan, *shard, seed);

  auto ex = make_executor(b);
  for (const Job& job : plan.jobs) check_session_fits(*job.op, job.shape, *ex);  // before the ceilings are measured
  Report report{make_context(*ex, timing, o.command), {}};
  report.context.shard = shard_info;
  // A child of --isolate leaves the ceilings to its parent, which measures them once;
  // an empty shard measures nothing.
  if (!o.isolated_child && !plan.units.empty()) report.context.ceilings = ex->measure_ceilings();
  Execution how;
  how.eval.timer = timer_for(*ex, timing);
  how.isolate = o.isolate;
  how.child_args = [&](const Plan& p, const std::vector<std::size_t>& units, const std::string& out) {
    return child_args(o, b, p, units, out);
  };
  const auto records_start = std::chrono::steady_clock::now();
  report.records = execute(registry(), plan, *ex, how);
  const double records_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - records_start).count();
  if (!o.isolated_child && !ex->lost()) measure_again_if_needed(report, *ex, records_s);

  print_heading(report, ex->device().name, b, seed, plan.units.size());
  const std::vector<const Record*> sorted = ranked(plan, report.records);
  print_tables(sorted, report.context.ceilings);
  warn_above_roofline(sorted, report.context);
  const StatusCounts n(report.records);
  print_device_lost(std::cout, *ex, n.not_run);
  const std::string path = write_report_for(report, o.out, *ex);
  std::cout << "wrote " << path << " (" << report.records.size() << " records, " << n.incorrect << " incorrect"
            << (n.not_run ? fmt::format(", {} not run", n.not_run) : "")
            << (shard_info ? fmt::format("; shard {}/{}", shard_info->index, shard_info->count) : "") << ")\n";
  return n.incorrect || n.not_run ? kCheckFailed : kOk;
}

void add_options(CLI::App& cmd, SweepOptions& o) {
  add_op_choice(cmd, o.ops, "sweep");
  add_backend_option(cmd, o.backend);
  add_block_sizes_option(cmd, o.block_sizes, "e.g. 128,256, or all")->capture_default_str();
  add_shape_option(cmd, o.shape);
  cmd.add_option("--workloads", o.workloads, "sweep every (op, shape) of a trainer --dump-workloads file instead");
  add_seed_option(cmd, o.seed);
  cmd.add_option("--out", o.out,
                 "where to write the wb.report report ({device}: the device's slug; with --predict-for, the "
                 "predicted device's)")
      ->required();
  add_timing_options(cmd, o.timing);
  add_isolate_flag(cmd, o.isolate);
  cmd.add_flag("--isolated-child", o.isolated_child, "internal: run as a child of --isolate")->group("");
  add_configurations_option(cmd, o.configurations);
  cmd.add_option("--shard", o.shard,
                 "K/N: measure only the K-th of N round-robin slices of the sweep's units, K from 1 to N "
                 "(needs --seed; wb merge joins the shards' reports)");
  add_predict_for_option(cmd, o.predict_for);
  cmd.add_option("--sample-blocks", o.sample_blocks,
                 "with --predict-for: blocks counted (and run) per launch for the prediction; 0: every block")
      ->capture_default_str();
}

}  // namespace

Command add_sweep_command(CLI::App& app, const std::string& command_line) {
  return new_command(app, command_line, "sweep",
                     "validate and time every (variant, block size) of an op at one shape; write a report", add_options,
                     sweep);
}

}  // namespace wb::cli
