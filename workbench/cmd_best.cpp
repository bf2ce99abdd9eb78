// wb best: the best variant per op and shape from one device's reports, into best.json.
// wb compare: two reports record by record, exit 1 on a regression.
#include <fmt/format.h>

#include <charconv>
#include <iostream>

#include "kernels/errors.h"
#include "workbench/best.h"
#include "workbench/cli.h"
#include "workbench/compare.h"
#include "workbench/table.h"

namespace wb::cli {

int best(const BestOptions& o) {
  const NumericClass precision = parse_numeric_class(o.precision);
  std::vector<std::pair<std::string, Report>> reports;
  for (const auto& path : o.reports) reports.emplace_back(path, read_report(path));
  BestFile b = choose_best(reports, precision);
  b.created = utc_now();

  std::cout << fmt::format("best {} variants on {} ({}) from {} report(s)\n", to_string(precision), b.device_name,
                           to_string(b.backend), reports.size());
  TextTable t({"op", "shape", "variant", "launch", "median", "note"});
  for (const auto& e : b.entries)
    t.add({e.op, e.shape_text(),
           std::string(to_string(b.backend)) + "/" + std::to_string(e.variant) + " " + e.variant_name,
           e.params.describe(), format_time(e.median_s), e.note});
  t.print(std::cout, "  ");
  if (b.entries.empty()) std::cout << "  no correct, timed record of an allowed numeric class in these reports\n";
  write_best(b, o.out);
  std::cout << "wrote " << o.out << "\n";
  return kOk;
}

double parse_percent(const std::string& text) {
  std::string digits = text;
  if (!digits.empty() && digits.back() == '%') digits.pop_back();
  double v = -1;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size() || v < 0)
    throw UsageError("--max-slowdown '" + text + "' is not a percentage (e.g. 5%)");
  return v / 100.0;
}

int compare(const CompareOptions& o) {
  const double max_slowdown = parse_percent(o.max_slowdown);
  if (o.format != "text" && o.format != "markdown")
    throw UsageError("--format '" + o.format + "' is not known (legal: text, markdown)");
  const Report base = read_report(o.base);
  const Report now = read_report(o.now);
  const CompareResult r = compare_reports(base, now, max_slowdown);
  std::cout << (o.format == "markdown" ? format_markdown(r) : format_text(r));
  return r.regressions() ? kCheckFailed : kOk;
}

}  // namespace wb::cli
