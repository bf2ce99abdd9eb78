// wb merge: the reports of the shards of one sweep (wb sweep --shard K/N) into the
// report of the whole sweep (sweep_shards.h), written atomically.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "base/errors.h"
#include "base/files.h"
#include "workbench/cli/commands.h"
#include "workbench/cli/options.h"
#include "workbench/cli/sweep_shards.h"

namespace wb::cli {
namespace {

struct MergeOptions {
  std::vector<std::string> shards;  // the shards' reports
  std::string out;
  bool allow_missing = false;
  std::string command;
};

int merge(const MergeOptions& o) {
  if (o.shards.empty()) throw UsageError("wb merge needs the reports of the shards to merge");
  if (o.out.empty()) throw UsageError("wb merge needs --out: the merged report to write");

  // Everything is read and checked before anything is written.
  std::vector<std::pair<std::string, Report>> shards;
  for (const auto& path : o.shards) shards.emplace_back(path, read_report(path, registry()));
  const MergeResult m = merge_shards(shards, o.allow_missing, o.command);
  const std::string out = output_path(o.out, m.report.context.device.slug);
  for (const auto& path : o.shards)
    if (same_file(path, out))
      throw UsageError("--out " + out + " is one of the shards' reports; write the merged report elsewhere");
  for (const auto& w : m.warnings) std::cerr << "wb: warning: " << w << "\n";

  write_report(m.report, out);
  const MergeInfo& info = *m.report.context.merged;
  std::cout << fmt::format("wrote {}: {} of {} shards of the sweep on {} ({} of {} units, seed {})\n", out,
                           info.shards.size(), info.count, m.report.context.device.name, m.report.records.size(),
                           info.units, info.seed);
  return kOk;
}

void add_options(CLI::App& cmd, MergeOptions& o) {
  cmd.add_option("shards", o.shards, "the shards' reports, one per shard")->required();
  cmd.add_option("--out", o.out, "the merged report to write ({device}: the device's slug)")->required();
  cmd.add_flag("--allow-missing", o.allow_missing,
               "merge even when shards are missing (with a warning; the report names the missing ones)");
}

}  // namespace

Command add_merge_command(CLI::App& app, const std::string& command_line) {
  return new_command(
      app, command_line, "merge",
      "join the reports of the shards of one sweep (wb sweep --shard K/N) into the report of the whole sweep",
      add_options, merge);
}

}  // namespace wb::cli
