#include "workbench/cli/table_rows.h"

#include <fmt/format.h>

#include <map>
#include <regex>

#include "base/errors.h"
#include "contract/registry.h"
#include "workbench/cli/output.h"
#include "workbench/runtime/context.h"

namespace wb::cli {

const char* heading(RungKind k) {
  switch (k) {
    case RungKind::torch_eager:
      return "PyTorch eager";
    case RungKind::torch_compile:
      return "torch.compile";
    case RungKind::hand_written:
      return "best hand-written";
    case RungKind::triton:
      return "best Triton";
    case RungKind::library:
      return "best library";
  }
  return "?";
}

RungKind rung_kind(const Record& r) {
  if (is_torch_rung_file(r.source))
    return r.variant == kTorchCompileId ? RungKind::torch_compile : RungKind::torch_eager;
  static const std::regex triton(R"(/[0-9]+_triton_[a-z0-9_]+\.py$)");
  if (std::regex_search(r.source, triton)) return RungKind::triton;
  static const std::regex library("cublas|cudnn|openblas|onednn");
  if (std::regex_search(r.variant_name, library)) return RungKind::library;
  return RungKind::hand_written;
}

std::vector<TableRow> table_rows(const std::vector<std::pair<std::string, Report>>& reports) {
  if (reports.empty()) throw UsageError("wb table needs at least one report");
  const DeviceInfo& first = reports.front().second.context.device;
  std::vector<TableRow> rows;
  std::map<std::pair<std::string, std::string>, std::size_t> at;
  std::size_t timed = 0;
  for (const auto& [path, report] : reports) {
    const DeviceInfo& d = report.context.device;
    if (report.context.predicted_for)
      throw UsageError(path + " holds predicted times: the table compares measurements only");
    if (d.backend != first.backend || d.slug != first.slug)
      throw UsageError("one table per device: " + reports.front().first + " is from " + first.name + " (" +
                       std::string(to_string(first.backend)) + "/" + first.slug + "), " + path + " from " + d.name +
                       " (" + std::string(to_string(d.backend)) + "/" + d.slug + ")");
    for (const Record& r : report.records) {
      if (!r.omitted.empty()) continue;
      const auto key = std::make_pair(r.op, r.shape_text());
      auto it = at.find(key);
      if (it == at.end()) {
        it = at.emplace(key, rows.size()).first;
        rows.push_back({r.op, r.shape_text(), {}});
      }
      TableCell& cell = rows[it->second].cells[std::size_t(rung_kind(r))];
      ++cell.records;
      if (r.status == Status::ok && r.timing) {
        ++timed;
        if (!cell.best || r.timing->median_s < cell.best->timing->median_s) cell.best = &r;
      } else if (cell.why_none.empty()) {
        cell.why_none = std::string(to_string(r.status)) + (r.reason.empty() ? "" : ": " + r.reason);
      }
    }
  }
  if (timed == 0) throw UsageError("the reports hold no correct, timed record (wb table reads sweeps and runs)");
  return rows;
}

namespace {

// "12.3 us cpu/3 threads=2"; "-" without records; else why none was timed.
std::string cell_text(const TableCell& c) {
  if (c.best) {
    const Record& r = *c.best;
    const std::string params = r.params.describe();
    return format_time(r.timing->median_s) + " " + std::string(to_string(r.backend)) + "/" + std::to_string(r.variant) +
           (params == "-" ? "" : " " + params);
  }
  if (c.records == 0) return "-";
  std::string why = c.why_none;
  if (why.size() > 60) why = why.substr(0, 57) + "...";
  for (char& ch : why)
    if (ch == '|' || ch == '\n') ch = ' ';
  return why;
}

}  // namespace

std::string table_markdown(const std::vector<TableRow>& rows,
                           const std::vector<std::pair<std::string, Report>>& reports, const std::string& command) {
  const DeviceInfo& d = reports.front().second.context.device;
  std::string out = fmt::format("# The field's table on {} ({}/{})\n\n", d.name, to_string(d.backend), d.slug);
  out +=
      "Per op and shape, the fastest correct configuration of each kind of rung (median of the timed "
      "repetitions; docs/torch.md). Made by `" +
      command + "` on " + utc_now() + " from:\n\n";
  for (const auto& [path, report] : reports)
    out += fmt::format("- `{}` ({}, {} records, `{}`)\n", path, report.context.created, report.records.size(),
                       report.context.command);
  out += "\n| op | shape |";
  for (std::size_t k = 0; k < kRungKinds; ++k) out += std::string(" ") + heading(RungKind(k)) + " |";
  out += " fastest |\n| --- | --- |";
  for (std::size_t k = 0; k <= kRungKinds; ++k) out += " --- |";
  out += "\n";
  for (const TableRow& row : rows) {
    out += "| " + row.op + " | " + row.shape + " |";
    const TableCell* fastest = nullptr;
    std::size_t fastest_kind = 0;
    for (std::size_t k = 0; k < kRungKinds; ++k) {
      const TableCell& c = row.cells[k];
      out += " " + cell_text(c) + " |";
      if (c.best && (!fastest || c.best->timing->median_s < fastest->best->timing->median_s)) {
        fastest = &c;
        fastest_kind = k;
      }
    }
    const TableCell& eager = row.cells[std::size_t(RungKind::torch_eager)];
    std::string verdict = fastest ? heading(RungKind(fastest_kind)) : "-";
    if (fastest && eager.best && fastest != &eager)
      verdict += fmt::format(", {:.2f}x eager", eager.best->timing->median_s / fastest->best->timing->median_s);
    out += " " + verdict + " |\n";
  }
  return out;
}

}  // namespace wb::cli
