// wb compare: two reports record by record; exit 1 on a regression (for CI).
#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <iostream>
#include <memory>

#include "base/errors.h"
#include "workbench/cli/commands.h"
#include "workbench/cli/compare_reports.h"

namespace wb::cli {
namespace {

double parse_percent(const std::string& text, const char* option) {
  std::string digits = text;
  if (!digits.empty() && digits.back() == '%') digits.pop_back();
  double v = -1;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  // from_chars reads "nan" and "inf" too: neither is a slowdown a gate can allow.
  if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size() || !std::isfinite(v) || v < 0)
    throw UsageError(std::string(option) + " '" + text + "' is not a percentage of 0 or more (e.g. 5%)");
  return v / 100.0;
}

struct CompareOptions {
  std::string base, now;
  std::string max_slowdown = "5%";
  std::string max_counter_increase = "0%";
  std::string format = "text";
};

int compare(const CompareOptions& o) {
  const double max_slowdown = parse_percent(o.max_slowdown, "--max-slowdown");
  const double max_counter_increase = parse_percent(o.max_counter_increase, "--max-counter-increase");
  if (o.format != "text" && o.format != "markdown")
    throw UsageError("--format '" + o.format + "' is not known (legal: text, markdown)");
  const Report base = read_report(o.base, registry());
  const Report now = read_report(o.now, registry());
  const CompareResult r = compare_reports(base, now, max_slowdown, max_counter_increase);
  std::cout << (o.format == "markdown" ? format_markdown(r) : format_text(r));
  return r.passed() ? kOk : kCheckFailed;
}

void add_options(CLI::App& cmd, CompareOptions& o) {
  cmd.add_option("base", o.base, "the baseline report")->required();
  cmd.add_option("new", o.now, "the new report")->required();
  cmd.add_option("--max-slowdown", o.max_slowdown, "slowdown beyond the noise that fails, e.g. 5%")
      ->capture_default_str();
  cmd.add_option("--max-counter-increase", o.max_counter_increase,
                 "records with the emulator's counters: how much worse sectors/request, bank conflicts per request "
                 "or lost occupancy may get before it fails (counts have no noise)")
      ->capture_default_str();
  cmd.add_option("--format", o.format, "text or markdown")->capture_default_str();
}

}  // namespace

Command add_compare_command(CLI::App& app) {
  return new_command(app, "compare", "compare two reports record by record; exit 1 on a regression (for CI)",
                     add_options, compare);
}

}  // namespace wb::cli
