// wb best: the best variant per op and shape from each device's reports, into that
// device's section of best.json; wb best --show: the sections of a best.json.
#include "workbench/runtime/best.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include "base/errors.h"
#include "base/files.h"
#include "workbench/cli/commands.h"
#include "workbench/cli/output.h"
#include "workbench/runtime/table.h"

namespace wb::cli {
namespace {

struct BestOptions {
  std::vector<std::string> reports;
  std::string out;
  std::string show;
  bool replace = false;
  bool deterministic = false;
  std::string precision = "fp32";
};

int show(const std::string& path) {
  const BestFile b = read_best(path);
  std::cout << path << ": " << b.sections.size() << " section(s)" << (b.from_v1 ? " (an old wb.best/1 file)" : "")
            << "\n";
  TextTable t({"backend", "device", "slug", "architecture", "created", "precision", "ops", "entries", "from"});
  for (const auto& s : b.sections) {
    std::map<std::string, int> ops;
    for (const auto& e : s.entries) ++ops[e.op];
    std::string reports;
    for (const auto& r : s.reports) reports += (reports.empty() ? "" : ", ") + r;
    t.add({std::string(to_string(s.backend)), s.device_name, s.device_slug,
           s.architecture.empty() ? "-" : s.architecture, s.created,
           std::string(to_string(s.precision)) + (s.deterministic_only ? ", deterministic" : ""),
           std::to_string(ops.size()), std::to_string(s.entries.size()), reports.empty() ? "-" : reports});
  }
  t.print(std::cout, "  ");
  for (const auto& s : b.sections)
    if (const std::size_t predicted = s.predicted_entries())
      std::cout << fmt::format("  {}: {} of {} entries predicted ({}), not measured\n", s.key(), predicted,
                               s.entries.size(), s.predicted_model);
  return kOk;
}

void print_section(const BestSection& s, std::size_t report_count) {
  std::cout << fmt::format("best {}{} variants on {} ({}) from {} report(s)\n", to_string(s.precision),
                           s.deterministic_only ? " deterministic" : "", s.device_name, s.key(), report_count);
  TextTable t({"op", "shape", "variant", "launch", "median", "note"});
  for (const auto& e : s.entries)
    t.add({e.op, e.shape_text(),
           std::string(to_string(s.backend)) + "/" + std::to_string(e.variant) + " " + e.variant_name,
           e.params.describe(), format_time(e.median_s) + (e.predicted ? " predicted" : ""), e.note});
  t.print(std::cout, "  ");
  if (s.entries.empty()) std::cout << "  no correct, timed record of an allowed numeric class in these reports\n";
  if (s.torch_records)
    std::cout << fmt::format(
        "  {} records of PyTorch rungs (torch_eager, torch_compile) are no candidates: they need Python at run "
        "time, which the trainer never runs\n",
        s.torch_records);
  if (const std::size_t predicted = s.predicted_entries())
    std::cout << fmt::format(
        "  {} of {} entries PREDICTED ({}, {}{}), not measured: a trainer running them says so; a measured report "
        "of the device replaces them\n",
        predicted, s.entries.size(), s.predicted_model, s.predicted_description,
        s.predicted_device_measured ? "" : ", a device wb never measured");
}

// The reports, read and checked before anything is written, with a warning for a part
// of a sweep: it is chosen from as it is, but not silently.
std::vector<std::pair<std::string, Report>> read_reports(const std::vector<std::string>& paths) {
  std::vector<std::pair<std::string, Report>> reports;
  for (const auto& path : paths) reports.emplace_back(path, read_report(path, registry()));
  for (const auto& [path, report] : reports) {
    if (const auto& s = report.context.shard)
      std::cerr << fmt::format(
          "wb: warning: {} is shard {}/{} of a sweep: only its {} units are chosen from "
          "(wb merge joins the shards' reports)\n",
          path, s->index, s->count, report.records.size());
    if (const auto& m = report.context.merged; m && !m->missing.empty())
      std::cerr << fmt::format("wb: warning: {} was merged without {} of the sweep's {} shards\n", path,
                               m->missing.size(), m->count);
  }
  return reports;
}

int best(const BestOptions& o) {
  if (!o.show.empty()) {
    if (!o.reports.empty() || !o.out.empty() || o.replace)
      throw UsageError("--show only lists a best.json; give it no reports, --out or --replace");
    return show(o.show);
  }
  if (o.reports.empty()) throw UsageError("wb best needs at least one report (or --show FILE)");
  if (o.out.empty()) throw UsageError("wb best needs --out: the best.json to update");
  const NumericClass precision = parse_numeric_class(o.precision);
  for (const auto& path : o.reports)
    if (same_file(path, o.out))
      throw UsageError("--out " + o.out + " is one of the reports; write best.json elsewhere");

  // Read everything before writing anything: a bad report or a broken --out leaves
  // the file as it was.
  BestFile file;
  if (!o.replace && std::filesystem::exists(o.out)) file = read_best(o.out);
  std::vector<std::pair<std::string, Report>> reports = read_reports(o.reports);

  // One section per device, in the order the reports name them.
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::pair<std::string, Report>>> per_device;
  for (auto& [path, report] : reports) {
    const DeviceInfo d = device_of(report);  // a predicted report: the device predicted for
    const std::string key = std::string(to_string(d.backend)) + "/" + d.slug;
    if (!per_device.count(key)) order.push_back(key);
    per_device[key].emplace_back(path, std::move(report));
  }
  std::size_t kept = 0;
  for (const auto& key : order) {
    BestSection s = choose_best(per_device[key], precision, o.deterministic);
    s.created = utc_now();
    print_section(s, per_device[key].size());
    kept += file.merge(std::move(s));
  }
  write_best(file, o.out);
  std::cout << "wrote " << o.out << ": " << order.size() << " section(s) from these reports";
  if (kept) std::cout << " (with " << kept << " entries of other ops or shapes kept from before)";
  if (file.sections.size() > order.size())
    std::cout << ", " << file.sections.size() - order.size() << " of other devices kept";
  std::cout << "\n";
  return kOk;
}

void add_options(CLI::App& cmd, BestOptions& o) {
  cmd.add_option("reports", o.reports, "wb.report files (each device's reports make its section)");
  cmd.add_option("--out", o.out, "the best.json to update (the other devices' sections are kept)");
  cmd.add_flag("--replace", o.replace, "start --out afresh: only the sections of these reports");
  cmd.add_option("--show", o.show, "list the sections of this best.json (device, date, ops) and exit");
  cmd.add_option("--precision", o.precision, "fp32 (fp32 variants only), tf32 (fp32 and tf32) or bf16 (all)")
      ->capture_default_str();
  cmd.add_flag("--deterministic", o.deterministic,
               "choose only among records whose two runs gave bitwise equal outputs");
}

}  // namespace

Command add_best_command(CLI::App& app) {
  return new_command(app, "best",
                     "the best variant per op and shape from reports, into the section of their device in best.json",
                     add_options, best);
}

}  // namespace wb::cli
