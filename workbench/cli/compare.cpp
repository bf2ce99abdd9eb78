// wb compare: two reports record by record; exit 1 on a regression (for CI).
#include <charconv>
#include <cmath>
#include <iostream>

#include "kernels/errors.h"
#include "workbench/cli/commands.h"
#include "workbench/cli/compare_reports.h"

namespace wb::cli {
namespace {

double parse_percent(const std::string& text) {
  std::string digits = text;
  if (!digits.empty() && digits.back() == '%') digits.pop_back();
  double v = -1;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  // from_chars reads "nan" and "inf" too: neither is a slowdown a gate can allow.
  if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size() || !std::isfinite(v) || v < 0)
    throw UsageError("--max-slowdown '" + text + "' is not a percentage of 0 or more (e.g. 5%)");
  return v / 100.0;
}

}  // namespace

int compare(const CompareOptions& o) {
  const double max_slowdown = parse_percent(o.max_slowdown);
  if (o.format != "text" && o.format != "markdown")
    throw UsageError("--format '" + o.format + "' is not known (legal: text, markdown)");
  const Report base = read_report(o.base, registry());
  const Report now = read_report(o.now, registry());
  const CompareResult r = compare_reports(base, now, max_slowdown);
  std::cout << (o.format == "markdown" ? format_markdown(r) : format_text(r));
  return r.passed() ? kOk : kCheckFailed;
}

}  // namespace wb::cli
