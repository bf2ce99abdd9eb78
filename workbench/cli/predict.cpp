// wb predict: the emulator's counters and a device's ceilings (workbench/runtime/
// predict.h) held against what that device measured. Every timed record of the given
// sweep reports (one device) is counted in emulation at its own shape and launch
// parameters and predicted; per (op, shape) the predicted-fastest configuration is set
// beside the measured fastest, and the ranks of predicted and measured times are
// correlated, per pair and over every configuration.
#include "workbench/runtime/predict.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "base/errors.h"
#include "workbench/cli/commands.h"
#include "workbench/cli/output.h"
#include "workbench/cli/predict_ahead.h"
#include "workbench/runtime/report.h"
#include "workbench/runtime/table.h"

namespace wb::cli {
namespace {

struct PredictOptions {
  std::vector<std::string> reports;
  uint64_t sample_blocks = 2;
  std::string format = "text";
  uint64_t seed = 1;
  std::vector<std::string> workloads;  // with --out: predict ahead (predict_ahead.h)
  std::string out;
  std::string command;
};

struct Row {
  const Record* measured;
  Prediction predicted;
  bool counted = false;  // false: a library rung, predicted from the op's models
};

DeviceModel device_model(const ReportContext& c, const std::string& origin) {
  DeviceModel d;
  d.sms = c.device.multiprocessors;
  d.clock_hz = c.device.clock_khz * 1e3;
  d.compute_capability = compute_capability_number(c.device.compute_capability);
  d.ceilings = c.ceilings;
  d.name = c.device.name;
  d.measured = true;
  d.source = "Hopper's published figures (no description of this device)";
  if (c.device.backend != Backend::cuda || d.sms <= 0 || d.clock_hz <= 0 || d.ceilings.copy_gbps <= 0)
    throw UsageError(origin + ": not a CUDA device's report with its SMs, clock and measured ceilings");
  return d;
}

std::string label(const Record& r) { return r.variant_label() + " " + r.params.describe(); }

int predict(const PredictOptions& o) {
  const Registry& reg = registry();
  std::vector<Report> reports;
  for (const std::string& path : o.reports) reports.push_back(read_report(path, reg));
  if (reports.empty()) throw UsageError("give the measured reports of one device");
  const DeviceModel device = device_model(reports.front().context, o.reports.front());
  for (std::size_t i = 1; i < reports.size(); ++i)
    if (reports[i].context.device.name != reports.front().context.device.name)
      throw UsageError(o.reports[i] + " comes from " + reports[i].context.device.name + ", not " +
                       reports.front().context.device.name);
  if (o.workloads.empty() != o.out.empty()) throw UsageError("--workloads and --out go together");
  if (!o.workloads.empty())
    return predict_ahead(reports, device, {o.workloads, o.out, o.sample_blocks, o.seed, o.command});

  auto emu = make_executor(Backend::emu);
  std::map<std::string, std::unique_ptr<CountingSession>> sessions;  // per (op, shape): its inputs, made once
  // Per (op, shape): the rows of its timed, correct records.
  std::map<std::string, std::vector<Row>> pairs;
  std::vector<std::string> order;
  std::size_t total = 0;
  for (const Report& rep : reports)
    for (const Record& r : rep.records) total += r.status == Status::ok && r.timing;
  Progress progress(total);
  for (const Report& rep : reports)
    for (const Record& r : rep.records) {
      if (r.status != Status::ok || !r.timing || r.backend != Backend::cuda) continue;
      const std::string key = r.op + " at " + r.shape_text();
      if (!pairs.count(key)) order.push_back(key);
      progress.step(r.op + " " + label(r));
      const OpSpec& op = reg.op(r.op);
      const Variant* twin = reg.find(r.op, Backend::emu, r.variant);
      Row row{&r, {}, false};
      std::optional<Counters> counters;
      if (twin && twin->not_emulated.empty() && r.omitted.empty()) {
        if (!sessions.count(key)) {
          sessions.clear();  // one op's tensors at a time
          sessions[key] = std::make_unique<CountingSession>(reg, op, r.shape, o.seed, *emu);
        }
        counters = sessions[key]->count(*twin, r.params, o.sample_blocks);
        row.counted = true;
      }
      row.predicted = predict_time(counters, r.bytes, r.flops, r.numeric, device);
      pairs[key].push_back(row);
    }

  TextTable table({"op and shape", "configs", "measured best", "us", "predicted best", "its measured us",
                   "same variant", "within 10%", "rank corr"});
  std::vector<double> all_predicted, all_measured;
  int hits = 0, variant_hits = 0;
  std::ostringstream markdown;
  markdown
      << "| op and shape | configurations | measured best | us | predicted best | its measured us | same variant | "
         "within 10% | rank correlation |\n| --- | ---: | --- | ---: | --- | ---: | --- | --- | ---: |\n";
  for (const std::string& key : order) {
    const std::vector<Row>& rows = pairs[key];
    auto measured_s = [](const Row& x) { return x.measured->timing->median_s; };
    const Row& best = *std::min_element(rows.begin(), rows.end(),
                                        [&](const Row& a, const Row& b) { return measured_s(a) < measured_s(b); });
    const Row& pick = *std::min_element(
        rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.predicted.seconds < b.predicted.seconds; });
    const bool hit = measured_s(pick) <= 1.1 * measured_s(best);
    const bool same_variant = pick.measured->variant == best.measured->variant;
    hits += hit;
    variant_hits += same_variant;
    std::vector<double> p, m;
    for (const Row& x : rows) {
      p.push_back(x.predicted.seconds);
      m.push_back(measured_s(x));
      all_predicted.push_back(x.predicted.seconds);
      all_measured.push_back(measured_s(x));
    }
    const double rho = rank_correlation(p, m);
    const std::vector<std::string> cells{key,
                                         std::to_string(rows.size()),
                                         label(*best.measured),
                                         fmt::format("{:.1f}", measured_s(best) * 1e6),
                                         label(*pick.measured) + " (" + pick.predicted.bound + ")",
                                         fmt::format("{:.1f}", measured_s(pick) * 1e6),
                                         same_variant ? "yes" : "no",
                                         hit ? "yes" : "no",
                                         fmt::format("{:.2f}", rho)};
    table.add(cells);
    markdown << "|";
    for (const std::string& c : cells) markdown << " " << c << " |";
    markdown << "\n";
  }
  const double rho = rank_correlation(all_predicted, all_measured);
  const std::string summary = fmt::format(
      "the predicted best is the measured best's variant in {} of {} (op, shape) pairs, and its measured "
      "time within 10% of the best in {}; rank correlation of predicted and measured times over all {} "
      "configurations: {:.2f} (counted with --sample-blocks {}, seed {})",
      variant_hits, order.size(), hits, all_measured.size(), rho, o.sample_blocks, o.seed);
  if (o.format == "markdown") {
    std::cout << markdown.str() << "\n" << summary << "\n";
  } else {
    table.print(std::cout);
    std::cout << summary << "\n";
  }
  if (o.format == "rows")
    for (const std::string& key : order)
      for (const Row& x : pairs[key])
        std::cout << fmt::format("{} | {} | predicted {:.1f} us ({}) | measured {:.1f} us\n", key, label(*x.measured),
                                 x.predicted.seconds * 1e6, x.predicted.bound, x.measured->timing->median_s * 1e6);
  return kOk;
}

void add_options(CLI::App& cmd, PredictOptions& o) {
  cmd.add_option("reports", o.reports, "the device's sweep reports (wb.report), e.g. results/nvidia-h200/sweep/*.json")
      ->required();
  cmd.add_option("--sample-blocks", o.sample_blocks,
                 "blocks counted (and run) per launch, the first and the last; 0: every block")
      ->capture_default_str();
  cmd.add_option("--seed", o.seed, "seed of the inputs the emulator counts on")->capture_default_str();
  cmd.add_option("--workloads", o.workloads,
                 "trainer --dump-workloads files: instead of scoring, predict every configuration of every CUDA "
                 "variant the reports never timed at these shapes, and each file's step (with --out)");
  cmd.add_option("--out", o.out, "with --workloads: the wb.predictions/1 file to write (docs/formats.md)");
  cmd.add_option("--format", o.format, "text, markdown, or rows (text and every configuration's prediction)")
      ->check(CLI::IsMember({"text", "markdown", "rows"}))
      ->capture_default_str();
}

}  // namespace

Command add_predict_command(CLI::App& app, const std::string& command_line) {
  return new_command(
      app, command_line, "predict",
      "predict each timed configuration of a device's sweep reports from the emulator's counters and the device's "
      "ceilings, and score the predictions against the measured times (docs/counters.md)",
      add_options, predict);
}

}  // namespace wb::cli
