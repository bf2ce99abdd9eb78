#pragma once
// Reports: versioned JSON ("schema": "wb.report/2", documented in docs/formats.md)
// with the context of the run and one record per (op, variant, launch parameters,
// shape).
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "workbench/runtime/context.h"
#include "workbench/runtime/record.h"

namespace wb {

class Registry;

// Written: version 2 (the emu backend, statuses not_emulated and not_run). Read: 2 and 1.
inline constexpr const char* kReportSchema = "wb.report/2";
inline constexpr const char* kReportSchemaV1 = "wb.report/1";

struct Report {
  ReportContext context;
  std::vector<Record> records;
};

nlohmann::json to_json(const Report& r);
// With the ceilings of its report, a timed record also gets its percentages of peak, and
// with the device's last-level cache (0: unknown) the above_ceiling flag (ceilings.h).
nlohmann::json to_json(const Record& r, const Ceilings& ceilings = {}, int64_t llc_bytes = 0);
// Throws UsageError naming `origin` and what is wrong when the JSON is not a report.
Report report_from_json(const nlohmann::json& j, const std::string& origin);

void write_report(const Report& r, const std::string& path);  // creates parent folders
// A report's text: JSON, then report_from_json. Throws UsageError naming `origin`.
Report parse_report(std::string_view text, const std::string& origin);
// A report file (report_file.cpp): parse_report, then a UsageError naming any op,
// variant or launch parameter the registry does not know.
Report read_report(const std::string& path, const Registry& registry);

}  // namespace wb
