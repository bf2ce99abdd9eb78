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
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "base/errors.h"
#include "base/files.h"
#include "workbench/cli/commands.h"
#include "workbench/cli/output.h"
#include "workbench/cli/predict_ahead.h"
#include "workbench/cli/predict_step.h"
#include "workbench/runtime/device_description.h"
#include "workbench/runtime/json_file.h"
#include "workbench/runtime/predict_score.h"
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
  std::vector<std::string> settings;   // --set NAME=VALUE
  std::string counts;                  // --counts: an earlier --format json's counts
  std::string scores_out;              // --scores-out: the scores, as JSON
  std::string plan;                    // --plan: a trainer's log whose step to predict
  ModelConstants constants;            // the prior, as --set changes it
  std::set<std::string> fixed;         // constants --set keeps out of the fit
  std::optional<double> shrinkage;     // --shrinkage: the fit's pull toward the prior, else chosen
  std::string out;
  std::string command;
};

struct Row {
  const Record* measured;
  std::optional<Counters> counters;  // nullopt: a library rung, predicted from the op's models
  std::string twin_hash = {};        // the emulated twin's identity, with what it counted
};

// The reports' device: its SMs, clock and ceilings as the reports measured them; what a
// report does not hold (L2, the SM's warp and block limits, the issue rates) from the
// device's description under results/devices/ where there is one (the file named after
// the device's slug), else the model's defaults (Hopper's published figures).
DeviceModel device_model(const ReportContext& c, const std::string& origin, std::string* rest_from) {
  if (c.device.backend != Backend::cuda || c.device.multiprocessors <= 0 || c.device.clock_khz <= 0 ||
      c.ceilings.copy_gbps <= 0)
    throw UsageError(origin + ": not a CUDA device's report with its SMs, clock and measured ceilings");
  DeviceModel d;
  const std::string slug = slugify(c.device.name);
  const std::vector<std::string> known = known_devices();
  if (std::find(known.begin(), known.end(), slug) != known.end()) {
    const DeviceDescription described = find_device_description(slug);
    d = described.model;
    d.source = described.path + ": " + described.model.source;
    *rest_from = described.path;
  } else {
    d.source = "Hopper's published figures (no description of this device under " + devices_dir() + ")";
    *rest_from = "the model's defaults, Hopper's published figures (no " + devices_dir() + "/" + slug + ".json)";
  }
  d.sms = c.device.multiprocessors;
  d.clock_hz = c.device.clock_khz * 1e3;
  d.compute_capability = compute_capability_number(c.device.compute_capability);
  d.ceilings = c.ceilings;
  d.name = c.device.name;
  d.measured = true;
  return d;
}

std::string label(const Record& r) { return r.variant_label() + " " + r.params.describe(); }

// --scores-out: the scores as wb.predict-scores/1 (docs/formats.md), what the prediction
// gate (tests/cli/test_predict_gate.cpp) holds a later model to.
void write_scores(const std::string& path, std::size_t configurations, const ModelConstants& fitted, double shrinkage,
                  const std::vector<std::pair<const char*, const Scores*>>& sets) {
  nlohmann::json j{{"schema", "wb.predict-scores/1"}, {"model", kPredictModel}, {"configurations", configurations}};
  for (const auto& [name, s] : sets) {
    nlohmann::json pairs = nlohmann::json::array();
    for (const PairScore& p : s->pairs)
      pairs.push_back({{"pair", p.pair},
                       {"mape", p.mape},
                       {"spearman", p.spearman ? nlohmann::json(*p.spearman) : nlohmann::json(nullptr)},
                       {"pick_ratio", p.pick_ratio},
                       {"best_in_top3", p.best_in_top3}});
    j[name] = {{"mape", s->mape},
               {"lowest_spearman", s->lowest_spearman},
               {"picks_within_5", s->picks_within_5},
               {"best_in_top3", s->best_in_top3},
               {"pairs", pairs}};
  }
  j["fitted"] = to_json(fitted);
  j["shrinkage"] = shrinkage;
  write_file_atomically(path, j.dump(2) + "\n");
}

// A finite number >= 0, as --set and --shrinkage take one; nullopt for anything else.
std::optional<double> non_negative(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !(v >= 0) || !std::isfinite(v)) return std::nullopt;
  return v;
}

// --set NAME=VALUE: a constant's prior, kept out of the fit.
void apply_settings(const std::vector<std::string>& settings, PredictOptions& o) {
  for (const std::string& s : settings) {
    const std::size_t eq = s.find('=');
    const std::string name = s.substr(0, eq);
    const ModelConstants::Named* found = nullptr;
    for (const ModelConstants::Named& c : ModelConstants::all())
      if (name == c.name) found = &c;
    if (eq == std::string::npos || !found) {
      std::string names;
      for (const ModelConstants::Named& c : ModelConstants::all())
        names += std::string(names.empty() ? "" : ", ") + c.name;
      throw UsageError("--set " + s + ": expected NAME=VALUE, NAME one of " + names);
    }
    const std::optional<double> v = non_negative(s.substr(eq + 1));
    if (!v) throw UsageError("--set " + s + ": the value is not a number >= 0");
    o.constants.*(found->value) = *v;
    o.fixed.insert(name);
  }
}

int predict(const PredictOptions& given) {
  PredictOptions o = given;
  apply_settings(o.settings, o);
  const Registry& reg = registry();
  std::vector<Report> reports;
  for (const std::string& path : o.reports) reports.push_back(read_report(path, reg));
  if (reports.empty()) throw UsageError("give the measured reports of one device");
  std::string rest_from;
  const DeviceModel device = device_model(reports.front().context, o.reports.front(), &rest_from);
  for (std::size_t i = 1; i < reports.size(); ++i)
    if (reports[i].context.device.name != reports.front().context.device.name)
      throw UsageError(o.reports[i] + " comes from " + reports[i].context.device.name + ", not " +
                       reports.front().context.device.name);
  if (o.workloads.empty() != o.out.empty()) throw UsageError("--workloads and --out go together");

  // --counts: what an earlier --format json counted, by (op, shape), configuration and
  // the emulated twin's identity (a changed variant is counted again).
  std::map<std::string, Counters> cached;
  if (!o.counts.empty()) {
    const nlohmann::json counts = read_json_file(o.counts);
    if (counts.is_object() && counts.value("schema", "") == "wb.predict-counts/1")
      throw UsageError(o.counts +
                       ": counted by an older wb (wb.predict-counts/1: two warps of a sampled block, atomics by "
                       "address); count again without --counts");
    if (!counts.is_object() || counts.value("schema", "") != kPredictCountsSchema || !counts.contains("rows") ||
        !counts.at("rows").is_array())
      throw UsageError(o.counts + ": not what wb predict --format json writes (" + kPredictCountsSchema + ")");
    for (const nlohmann::json& j : counts.at("rows"))
      if (j.is_object() && j.contains("counters") && j.contains("twin_hash"))
        cached[j.value("pair", "") + "|" + j.value("label", "") + "|" + j.value("twin_hash", "")] =
            counters_from_json(j.at("counters"), o.counts);
  }
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
      Row row{&r, std::nullopt};
      std::optional<Counters> counters;
      // A Triton rung launches no emulated kernel (it runs under the interpreter):
      // uncounted, like a library rung.
      if (twin && twin->not_emulated.empty() && !is_triton_rung(*twin) && r.omitted.empty()) {
        row.twin_hash = twin->source_hash;
        if (auto hit = cached.find(key + "|" + label(r) + "|" + twin->source_hash); hit != cached.end()) {
          row.counters = hit->second;
          pairs[key].push_back(row);
          continue;
        }
        if (!sessions.count(key)) {
          sessions.clear();  // one op's tensors at a time
          sessions[key] = std::make_unique<CountingSession>(reg, op, r.shape, o.seed, *emu);
        }
        counters = sessions[key]->count(*twin, r.params, o.sample_blocks);
      }
      row.counters = counters;
      pairs[key].push_back(row);
    }

  // The points in the pairs' order, and the three predictions of each: the prior
  // constants', those fitted to every point (in sample) and those fitted without the
  // point's op (out of sample).
  std::vector<ScoredPoint> points;
  std::vector<const Row*> point_rows;
  for (const std::string& key : order)
    for (const Row& x : pairs[key]) {
      const Record& r = *x.measured;
      points.push_back({r.op, key, x.counters, r.bytes, r.flops, r.numeric, r.timing->median_s,
                        library_class(reg.op(r.op), r.numeric)});
      point_rows.push_back(&x);
    }
  const ModelConstants prior = o.constants;
  // In sample: the shrinkage that scores best leave-one-op-out over every op, then every
  // point fitted at it. Out of sample, each op's shrinkage is chosen without it.
  const double shrinkage = o.shrinkage ? *o.shrinkage : choose_shrinkage(points, device, prior, o.fixed);
  const ModelConstants fitted = fit_constants(points, device, prior, o.fixed, shrinkage);
  auto predict_all = [&](const ModelConstants& m) {
    std::vector<double> out;
    for (const ScoredPoint& p : points)
      out.push_back(predict_time(p.counters, p.bytes, p.flops, p.numeric, p.library, device, m).seconds);
    return out;
  };
  const std::vector<double> at_prior = predict_all(prior), in_sample = predict_all(fitted),
                            out_of_sample = leave_one_op_out(points, device, prior, o.fixed, o.shrinkage);
  const Scores sp = score(points, at_prior), si = score(points, in_sample), so = score(points, out_of_sample);
  if (!o.scores_out.empty())
    write_scores(o.scores_out, points.size(), fitted, shrinkage,
                 {{"prior", &sp}, {"in_sample", &si}, {"out_of_sample", &so}});
  if (!o.plan.empty())  // a trainer's step, by the constants fitted to the reports
    return predict_step(device, {o.plan, o.sample_blocks, o.seed, fitted});
  if (!o.workloads.empty())  // what the reports never timed, by the constants fitted to what they did
    return predict_ahead(reports, device, {o.workloads, o.out, o.sample_blocks, o.seed, o.command, fitted});

  if (o.format == "json") {  // every point with its counts and predictions: for studying the model
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t i = 0; i < points.size(); ++i) {
      const Row& x = *point_rows[i];
      nlohmann::json j = {{"pair", points[i].pair},
                          {"op", points[i].op},
                          {"label", label(*x.measured)},
                          {"measured_s", points[i].measured_s},
                          {"prior_s", at_prior[i]},
                          {"in_sample_s", in_sample[i]},
                          {"out_of_sample_s", out_of_sample[i]},
                          {"bytes", points[i].bytes},
                          {"flops", points[i].flops},
                          {"numeric", std::string(to_string(points[i].numeric))}};
      if (x.counters) j["counters"] = to_json(*x.counters), j["twin_hash"] = x.twin_hash;
      rows.push_back(j);
    }
    const nlohmann::json counts{{"schema", kPredictCountsSchema}, {"model", kPredictModel}, {"rows", rows}};
    std::cout << counts.dump(1) << "\n";
    return kOk;
  }

  auto spearman = [](const PairScore& p) { return p.spearman ? fmt::format("{:.2f}", *p.spearman) : "-"; };
  auto yes = [](bool b) { return std::string(b ? "yes" : "no"); };
  const std::vector<std::string> header{
      "op and shape", "configs",      "MAPE prior",       "MAPE in",           "MAPE out",
      "Spearman in",  "Spearman out", "pick in (x best)", "pick out (x best)", "best in top 3 in/out"};
  TextTable table(header);
  std::ostringstream markdown;
  markdown << "|";
  for (const std::string& h : header) markdown << " " << h << " |";
  markdown << "\n| --- |";
  for (std::size_t i = 1; i < header.size(); ++i) markdown << " ---: |";
  markdown << "\n";
  for (std::size_t k = 0; k < si.pairs.size(); ++k) {
    const PairScore &p = sp.pairs[k], &in = si.pairs[k], &out = so.pairs[k];
    const std::vector<std::string> cells{in.pair,
                                         std::to_string(in.configurations),
                                         fmt::format("{:.0f}%", p.mape * 100),
                                         fmt::format("{:.0f}%", in.mape * 100),
                                         fmt::format("{:.0f}%", out.mape * 100),
                                         spearman(in) + " of " + std::to_string(in.distinct),
                                         spearman(out),
                                         fmt::format("{:.2f}", in.pick_ratio),
                                         fmt::format("{:.2f}", out.pick_ratio),
                                         yes(in.best_in_top3) + "/" + yes(out.best_in_top3)};
    table.add(cells);
    markdown << "|";
    for (const std::string& c : cells) markdown << " " << c << " |";
    markdown << "\n";
  }
  auto line = [&](const char* name, const Scores& s) {
    return fmt::format(
        "{:<14} MAPE {:5.1f}%, lowest Spearman {:.2f}, pick within 5% of the best in {} of {}, best in "
        "the predicted top 3 in {} of {}",
        name, s.mape * 100, s.lowest_spearman, s.picks_within_5, s.pairs.size(), s.best_in_top3, s.pairs.size());
  };
  std::ostringstream summary;
  summary << "over " << points.size() << " configurations (counted with --sample-blocks " << o.sample_blocks
          << ", seed " << o.seed << "; model " << kPredictModel << "):\n"
          << line("prior", sp) << "\n"
          << line("in sample", si) << "\n"
          << line("out of sample", so) << "  (each op by constants fitted without it)\n"
          << (o.shrinkage
                  ? fmt::format("fits shrink toward the prior: {:g} (--shrinkage), in and out of sample\n", shrinkage)
                  : fmt::format("fits shrink toward the prior: {:g} in sample (chosen leave-one-op-out over "
                                "every op), each op's own out of sample (chosen without it)\n",
                                shrinkage))
          << "device: " << device.name << ", its SMs, clock and ceilings from the reports, L2, the SM's limits and "
          << "the issue rates from " << rest_from << "\n"
          << "fitted to all:";
  for (const ModelConstants::Named& c : ModelConstants::all())
    summary << " " << c.name << "=" << fmt::format("{:.3g}", fitted.*c.value)
            << (o.fixed.count(c.name) || !c.fitted ? "(fixed)" : "");
  summary << "\n";
  if (o.format == "markdown") {
    std::cout << markdown.str() << "\n" << summary.str();
  } else {
    table.print(std::cout);
    std::cout << summary.str();
  }
  if (o.format == "rows")
    for (std::size_t i = 0; i < points.size(); ++i)
      std::cout << fmt::format(
          "{} | {} | measured {:.1f} us | prior {:.1f} | in sample {:.1f} ({}) | out of sample "
          "{:.1f}\n",
          points[i].pair, label(*point_rows[i]->measured), points[i].measured_s * 1e6, at_prior[i] * 1e6,
          in_sample[i] * 1e6,
          predict_time(points[i].counters, points[i].bytes, points[i].flops, points[i].numeric, points[i].library,
                       device, fitted)
              .bound,
          out_of_sample[i] * 1e6);
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
  cmd.add_option("--counts", o.counts,
                 "what an earlier run's --format json wrote: its counts are used where the configuration and its "
                 "emulated variant are unchanged, instead of counting again (minutes at these shapes)");
  cmd.add_option("--plan", o.plan,
                 "a trainer's log (or --print-plan output): predict its step from its kernel plan, call by call, "
                 "launched and as a CUDA graph, with the constants fitted to the reports, beside the step time the "
                 "log measured");
  cmd.add_option("--scores-out", o.scores_out,
                 "also write the prior's, in-sample and out-of-sample scores and the fitted constants to this JSON "
                 "file (wb.predict-scores/1)");
  cmd.add_option("--set", o.settings,
                 "NAME=VALUE: a model constant's value, kept out of the fit (e.g. same_sector_s=0 takes the "
                 "atomics term out; the names are printed with the fitted constants)");
  cmd.add_option("--shrinkage", o.shrinkage,
                 "the fits' pull toward the prior constants (docs/counters.md), in and out of sample; 0: a plain "
                 "fit. Without it, chosen leave-one-op-out among 0, 0.03, 0.1, 0.3 and 1 (out of sample, without "
                 "the held-out op)")
      ->check(CLI::Validator(
          [](const std::string& v) { return non_negative(v) ? std::string() : "not a number >= 0: " + v; },
          "NUMBER >= 0"));
  cmd.add_option("--out", o.out, "with --workloads: the wb.predictions/1 file to write (docs/formats.md)");
  cmd.add_option("--format", o.format,
                 "text, markdown, rows (text and every configuration's prediction), or json (every configuration with "
                 "its counts)")
      ->check(CLI::IsMember({"text", "markdown", "rows", "json"}))
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
