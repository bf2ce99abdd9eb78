// wb best: the best variant per op and shape from one device's reports, into best.json.
#include "workbench/runtime/best.h"

#include <fmt/format.h>

#include <iostream>

#include "kernels/errors.h"
#include "workbench/cli/commands.h"
#include "workbench/runtime/table.h"

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

}  // namespace wb::cli
