// wb table: the field's table of one device's reports (table_rows.h, docs/torch.md):
// per op and shape, PyTorch eager, torch.compile and the best hand-written, Triton and
// library rungs side by side.
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "base/errors.h"
#include "base/files.h"
#include "workbench/cli/commands.h"
#include "workbench/cli/table_rows.h"

namespace wb::cli {
namespace {

struct TableOptions {
  std::vector<std::string> reports;
  std::string out;
  std::string command;
};

int table(const TableOptions& o) {
  if (o.reports.empty()) throw UsageError("wb table needs at least one report");
  std::vector<std::pair<std::string, Report>> reports;
  for (const auto& path : o.reports) reports.emplace_back(path, read_report(path, registry()));
  const std::string text = table_markdown(table_rows(reports), reports, o.command);
  std::cout << text;
  if (!o.out.empty()) {
    write_file_atomically(o.out, text);
    std::cout << "wrote " << o.out << "\n";
  }
  return kOk;
}

void add_options(CLI::App& cmd, TableOptions& o) {
  cmd.add_option("reports", o.reports, "reports of one device (wb sweep, wb run)")->required();
  cmd.add_option("--out", o.out, "also write the table to this Markdown file");
}

}  // namespace

Command add_table_command(CLI::App& app, const std::string& command_line) {
  return new_command(app, command_line, "table",
                     "per op and shape: PyTorch eager, torch.compile and the best hand-written, Triton and library "
                     "rungs of one device's reports",
                     add_options, table);
}

}  // namespace wb::cli
