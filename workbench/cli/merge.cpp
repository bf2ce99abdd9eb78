// wb merge: the reports of the shards of one sweep (wb sweep --shard K/N) into the
// report of the whole sweep (sweep_shards.h), written atomically.
#include <fmt/format.h>

#include <iostream>

#include "kernels/errors.h"
#include "kernels/files.h"
#include "workbench/cli/commands.h"
#include "workbench/cli/sweep_shards.h"

namespace wb::cli {

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

}  // namespace wb::cli
