// wb check: correctness only. Every variant of the backend, every legal launch
// configuration, every check shape (contract/shape.h), a fresh seed per shape; each
// configuration validated twice (determinism), launched a few times, validated again.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <memory>
#include <set>

#include "base/errors.h"
#include "workbench/cli/commands.h"
#include "workbench/cli/for_device.h"
#include "workbench/cli/options.h"
#include "workbench/cli/output.h"
#include "workbench/cli/pipeline.h"
#include "workbench/runtime/block_sizes.h"
#include "workbench/runtime/context.h"
#include "workbench/runtime/harness.h"
#include "workbench/runtime/report.h"
#include "workbench/runtime/table.h"

namespace wb::cli {
namespace {

// What the configurations of one variant on one shape came to.
struct Tally : StatusCounts {
  double worst_err = 0;
  int deterministic = 0, nondeterministic = 0;
  std::string note;  // first skip reason

  void add(const Record& r) {
    StatusCounts::add(r.status);
    if ((r.status == Status::skipped || r.status == Status::not_emulated) && note.empty()) note = r.reason;
    if (r.status == Status::not_run && note.empty()) note = "not run: device lost";
    if (r.status == Status::ok) {
      for (const auto& c : r.errors) worst_err = std::max(worst_err, c.max_abs_err);
      if (r.deterministic) ++(*r.deterministic ? deterministic : nondeterministic);
    }
  }
  std::string result() const {
    std::string s;
    auto part = [&](int n, const char* what) {
      if (n) s += (s.empty() ? "" : ", ") + std::to_string(n) + " " + what;
    };
    part(incorrect, "INCORRECT");
    part(ok, "ok");
    part(skipped, "skipped");
    part(not_emulated, "not emulated");
    part(not_run, "not run");
    return s;
  }
  std::string determinism() const {
    if (deterministic + nondeterministic == 0) return "-";
    return nondeterministic ? "no" : "yes";
  }
};

struct CheckOptions {
  OpChoice ops;
  std::string backend;
  std::string block_sizes;  // "" or "all": every legal one
  bool defaults = false;    // every launch parameter but the block size at the variant's default
  std::string shapes;       // "" or "all": every check shape; else names, e.g. "tiny,odd"
  std::optional<uint64_t> seed;
  int misalign = 0;          // bytes every tensor starts off a 16-byte boundary: 0, 4, 8 or 12
  bool strict_sync = false;  // emu: a barrier after threads of the block exited is a fault
  bool verbose = false;
  std::string json;
  bool isolate = false;        // each (variant, shape) in a child process (pipeline_isolate.h)
  std::string configurations;  // internal: a child of --isolate's (pipeline.h, keep_configurations)
  CounterFlags counters;
  std::string predict_for;  // emu: predict each passing configuration's time on this device (for_device.h)
  std::string command;

  // The counters' flags as the executor and a child of --isolate take them: with
  // --predict-for and without --counters, --sample-blocks is the prediction's alone.
  CounterFlags counting() const {
    CounterFlags c = counters;
    if (!predict_for.empty() && !c.on) c.sample_blocks = 0;
    return c;
  }
};

// The check shapes --shapes names ("" or "all": every one of the backend's).
std::vector<CheckShape> check_shapes(const std::string& names, Backend b) {
  const std::vector<CheckShape> named = named_check_shapes(b == Backend::emu);
  if (names.empty() || names == "all") return named;
  std::string known;
  for (const auto& n : named) known += (known.empty() ? "" : ", ") + n.name;
  std::vector<CheckShape> out;
  for (const std::string& name : split_list(names)) {
    auto it = std::find_if(named.begin(), named.end(), [&](const CheckShape& n) { return n.name == name; });
    if (it == named.end())
      throw UsageError("--shapes: unknown check shape '" + name + "' (the " + std::string(to_string(b)) +
                       " check shapes: " + known + ")");
    out.push_back(*it);
  }
  return out;
}

// What wb check works through, validated before any work.
struct CheckSetup {
  std::vector<const OpSpec*> ops;
  Backend backend;
  uint64_t seed;
  std::vector<CheckShape> shapes;
  std::optional<std::vector<int>> sizes;
};

CheckSetup setup(const CheckOptions& o) {
  if (o.ops.all == !o.ops.op.empty()) throw UsageError("give one op or --all");
  CheckSetup s;
  s.ops = o.ops.ops(registry());
  if (o.misalign != 0 && o.misalign != 4 && o.misalign != 8 && o.misalign != 12)
    throw UsageError("--misalign " + std::to_string(o.misalign) +
                     ": give 4, 8 or 12 bytes (tensors hold 4-byte elements)");
  s.backend = resolve_backend(o.backend);
  s.seed = resolve_seed(o.seed);
  s.shapes = check_shapes(o.shapes, s.backend);
  s.sizes = parse_block_sizes(o.block_sizes);
  return s;
}

// Under Triton's interpreter (a Triton rung on emu) num_warps and num_stages change
// nothing that runs: the interpreter executes each program instance as whole-block
// array operations, with no warps to divide it among and no pipeline to stage. A
// configuration with either away from the rung's default is the same interpreted
// program as the one with both at their defaults and the other values the same, so wb
// check runs that one and leaves the others to cuda (a named --configurations list is
// checked as given). The seven rungs' 900 configurations at the emulated check shapes
// are 270 then.
bool same_interpreted_program(const Variant& v, const ParamValues& p, Backend b, const CheckOptions& o) {
  if (b != Backend::emu || !is_triton_rung(v) || !o.configurations.empty()) return false;
  const ParamValues d = v.default_params();
  for (const char* launch_only : {"num_warps", "num_stages"})
    if (p.find(launch_only) != d.find(launch_only)) return true;
  return false;
}

// The plan: per op, per check shape that applies to it (seed: the base seed plus the
// shape's place), a job, and a second with the optional tensors null where the op has
// any; their units, the variants' configurations. Both passes of a shape are one group
// (one child of --isolate checks them).
Plan plan_check(const CheckOptions& o, const CheckSetup& s, std::size_t& interpreted_once) {
  Plan plan;
  std::vector<const Variant*> selected;
  for (const OpSpec* op : s.ops) {
    const auto variants = select_variants(registry(), *op, s.backend, o.ops.variants);
    selected.insert(selected.end(), variants.begin(), variants.end());
    const bool has_optional =
        std::any_of(op->tensors.begin(), op->tensors.end(), [](const TensorSpec& t) { return t.optional; });
    for (std::size_t si = 0; si < s.shapes.size(); ++si) {
      try {
        op->check_shape(s.shapes[si].shape);
      } catch (const UsageError&) {
        continue;  // this check shape does not apply to the op
      }
      const std::size_t group = plan.jobs.size();
      for (bool omit : {false, true}) {
        if (omit && !has_optional) continue;
        const std::size_t units = plan.units.size();
        for (const Variant* v : variants)
          for (const ParamValues& p : configurations_at(*v, s.sizes, o.defaults))
            if (same_interpreted_program(*v, p, s.backend, o))
              ++interpreted_once;
            else
              plan.units.push_back({plan.jobs.size(), v, p, ""});
        if (plan.units.size() == units) continue;
        plan.jobs.push_back(
            {op, s.shapes[si].shape, s.seed + si, omit, std::size_t(o.misalign), group, s.shapes[si].name});
      }
    }
  }
  if (s.sizes) check_block_sizes(*s.sizes, selected);
  if (!o.configurations.empty()) keep_configurations(plan, o.configurations);
  return plan;
}

// The command line of the child that checks one variant at one check shape, both
// passes, at the seed this process would have used: the configurations it is sent (all
// of the variant's the plan holds, then those a fault left unchecked).
std::vector<std::string> child_args(const CheckOptions& o, Backend b, const Plan& plan,
                                    const std::vector<std::size_t>& units, const std::string& out) {
  const Unit& unit = plan.units[units.front()];
  const Job& job = plan.jobs[unit.job];
  std::vector<std::string> args{
      "check",    job.op->name,  "--backend", std::string(to_string(b)), "--variants", std::to_string(unit.variant->id),
      "--shapes", job.shape_arg, "--seed",    std::to_string(job.seed),  "--json",     out};
  const std::vector<std::string> configurations = configurations_args(plan, units);
  args.insert(args.end(), configurations.begin(), configurations.end());
  if (o.defaults) args.push_back("--defaults");
  if (o.misalign) args.insert(args.end(), {"--misalign", std::to_string(o.misalign)});
  if (o.strict_sync) args.push_back("--strict-sync");
  o.counting().pass_to(args);
  return args;
}

// The table: a row per (job, variant), the tally of its configurations' records.
TextTable tally_table(const Plan& plan, const std::vector<Record>& records) {
  TextTable table({"op", "variant", "shape", "configurations", "max err", "deterministic", "note"});
  for (std::size_t i = 0; i < plan.units.size();) {
    const Unit& first = plan.units[i];
    Tally tally;
    for (; i < plan.units.size() && plan.units[i].job == first.job && plan.units[i].variant == first.variant; ++i)
      tally.add(records[i]);
    const Job& job = plan.jobs[first.job];
    table.add({job.op->name, first.variant->label(), job.shape_text(), tally.result(),
               tally.ok ? fmt::format("{:.1e}", tally.worst_err) : "-", tally.determinism(), tally.note});
  }
  return table;
}

// With --predict-for: a row per configuration that passed, its predicted time beside it.
void print_predictions(const Plan& plan, const std::vector<Record>& records, const DevicePredictor& predictor) {
  std::cout << predictor.heading() << "\n";
  TextTable table({"op", "variant", "launch", "shape", "verdict", "predicted", "bound"});
  for (std::size_t i = 0; i < records.size(); ++i) {
    const Record& r = records[i];
    const Job& job = plan.jobs[plan.units[i].job];
    if (!r.predicted && r.status == Status::ok && is_triton_rung(*plan.units[i].variant))
      table.add({job.op->name, plan.units[i].variant->label(), r.params.describe(), job.shape_text(),
                 std::string(to_string(r.status)), "-",
                 "not predicted: a Triton rung runs under the interpreter, no emulated kernel to count"});
    if (!r.predicted) continue;
    table.add({job.op->name, plan.units[i].variant->label(), r.params.describe(), job.shape_text(),
               std::string(to_string(r.status)), format_time(r.predicted->seconds), r.predicted->bound});
  }
  table.print(std::cout, "  ");
}

// "<op> <variant> <launch> at <shape>": where a NOTE or an INCORRECT line comes from.
std::string where(const Plan& plan, const Unit& unit) {
  const Job& job = plan.jobs[unit.job];
  return fmt::format("{} {} {} at {}", job.op->name, unit.variant->label(), unit.params.describe(), job.shape_text());
}

// Each note once, with the first configuration that noted it; then every incorrect
// configuration with its reason.
void print_notes_and_failures(const Plan& plan, const std::vector<Record>& records) {
  std::set<std::string> noted;
  for (std::size_t i = 0; i < records.size(); ++i)
    for (const std::string& n : records[i].notes)
      if (noted.insert(n).second) std::cout << "NOTE " << where(plan, plan.units[i]) << ": " << n << "\n";
  for (std::size_t i = 0; i < records.size(); ++i)
    if (records[i].status == Status::incorrect)
      std::cout << "INCORRECT " << where(plan, plan.units[i]) << ": " << records[i].reason << "\n";
}

int check(const CheckOptions& o) {
  const CheckSetup s = setup(o);
  std::size_t interpreted_once = 0;
  const Plan plan = plan_check(o, s, interpreted_once);
  std::optional<DevicePredictor> predictor;
  if (!o.predict_for.empty())
    predictor.emplace(o.predict_for, s.backend,
                      o.counters.sample_blocks ? o.counters.sample_blocks : kDefaultSampleBlocks);

  auto ex = make_executor(s.backend);
  ex->set_strict_sync(o.strict_sync);
  o.counting().apply(*ex);
  Report report{make_context(*ex, TimingOptions{}, o.command), {}};
  Execution how;
  if (s.backend == Backend::emu) how.eval.check_launches = 1;  // each emulated launch costs milliseconds
  how.isolate = o.isolate;
  how.child_args = [&](const Plan& p, const std::vector<std::size_t>& units, const std::string& out) {
    return child_args(o, s.backend, p, units, out);
  };
  if (o.verbose)
    how.made = [&](const Unit& unit, const Record& r) {
      const Job& job = plan.jobs[unit.job];
      std::cout << fmt::format("{} {} {} {}: {} {}\n", job.op->name, unit.variant->label(), unit.params.describe(),
                               job.shape_text(), to_string(r.status), r.reason);
    };
  report.records = execute(registry(), plan, *ex, how);
  if (predictor) {
    predictor->predict(report.records, registry());
    report.context.predicted_for = predictor->predicted_for();
  }

  tally_table(plan, report.records).print(std::cout);
  if (predictor) print_predictions(plan, report.records, *predictor);
  for (std::size_t i = 0; i < report.records.size(); ++i)
    if (const Record& r = report.records[i]; r.counters)
      print_counters(std::cout, where(plan, plan.units[i]), *r.counters, r.bytes);
  print_notes_and_failures(plan, report.records);
  const StatusCounts n(report.records);
  print_device_lost(std::cout, *ex, n.not_run);
  std::cout << fmt::format("{} backend on {}: {} configurations, {} ok, {} skipped, {}{} incorrect{} (seed {})\n",
                           to_string(s.backend), ex->device().name, report.records.size(), n.ok, n.skipped,
                           n.not_emulated ? fmt::format("{} not emulated, ", n.not_emulated) : "", n.incorrect,
                           n.not_run ? fmt::format(", {} not run", n.not_run) : "", s.seed);
  if (interpreted_once)
    std::cout << fmt::format(
        "{} configurations of Triton rungs left to cuda: they differ from one checked only in num_warps or "
        "num_stages, which change nothing under the interpreter\n",
        interpreted_once);
  if (!o.json.empty()) std::cout << "wrote " << write_report_for(report, o.json, *ex) << "\n";
  return n.incorrect == 0 && n.not_run == 0 ? kOk : kCheckFailed;
}

void add_options(CLI::App& cmd, CheckOptions& o) {
  add_op_choice(cmd, o.ops, "check");
  add_backend_option(cmd, o.backend);
  cmd.add_option("--shapes", o.shapes,
                 "only these check shapes: tiny, odd, gpt2 (emu: wide), long, vocab; emu also ragged, "
                 "ragged8, flash, flash_small (default: all)");
  add_block_sizes_option(cmd, o.block_sizes,
                         "only these block sizes, e.g. 32,128 (a variant with none of them checks its default "
                         "block size; default: all)");
  cmd.add_flag("--defaults", o.defaults,
               "every launch parameter but the block size at the variant's default (a variant without a "
               "block size: its default configuration)");
  add_seed_option(cmd, o.seed, "base seed (default: fresh)");
  cmd.add_option("--misalign", o.misalign,
                 "start every tensor this many bytes (4, 8 or 12) off a 16-byte boundary: variants with "
                 "vector accesses must skip or fall back, never fault");
  add_strict_sync_flag(cmd, o.strict_sync);
  cmd.add_flag("--verbose", o.verbose, "a line per launch configuration");
  add_json_option(cmd, o.json);
  add_isolate_flag(cmd, o.isolate);
  add_configurations_option(cmd, o.configurations);
  add_counter_options(cmd, o.counters);
  add_predict_for_option(cmd, o.predict_for);
}

}  // namespace

Command add_check_command(CLI::App& app, const std::string& command_line) {
  return new_command(app, command_line, "check",
                     "correctness only: every variant, every legal launch configuration, several shapes, fresh seeds",
                     add_options, check);
}

}  // namespace wb::cli
