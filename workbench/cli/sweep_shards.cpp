#include "workbench/cli/sweep_shards.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <set>

#include "base/errors.h"

namespace wb {
namespace {

// A decimal integer and nothing else (no sign, no spaces).
bool read_count(const std::string& text, int& out) {
  if (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

std::string describe(const ShardInfo& s) { return fmt::format("shard {}/{}", s.index, s.count); }

std::string describe_device(const DeviceInfo& d) {
  return fmt::format("{} ({}, {})", d.name, to_string(d.backend), d.slug);
}

// What two shards must share for their records to be one sweep's, field by field:
// (what differs, in words; the value).
std::vector<std::pair<std::string, std::string>> measured_under(const ReportContext& c) {
  const DeviceInfo& d = c.device;
  const BuildInfo& b = c.build;
  const TimingOptions& t = c.timing;
  return {
      {"sweeps (shard count N, units, plan)",
       fmt::format("N={}, {} units, plan {}", c.shard->count, c.shard->units, c.shard->plan)},
      {"devices", describe_device(d)},
      {"device architectures", d.architecture},
      {"compute capabilities", d.compute_capability},
      {"multiprocessor (core) counts", std::to_string(d.multiprocessors)},
      {"L2 (last-level cache) sizes", std::to_string(d.l2_bytes)},
      {"emulation flavours", d.emulation_flavour},
      {"source commits", c.source.commit + (c.source.dirty ? " with uncommitted changes" : "")},
      {"wb versions", b.wb_version},
      {"build types", b.build_type},
      {"C++ compilers", b.cxx_compiler},
      {"C++ flags", b.cxx_flags},
      {"CUDA compilers", b.cuda_compiler},
      {"CUDA flags", b.cuda_flags},
      {"CUDA architectures", b.cuda_architectures},
      {"timing engines", b.benchmark_engine},
      {"BLAS libraries", b.blas},
      {"seeds", std::to_string(c.shard->seed)},
      {"timed repetitions", std::to_string(t.repetitions)},
      {"minimum times per repetition", fmt::format("{} s", t.min_time_s)},
      {"warm-ups", fmt::format("{} s", t.warmup_s)},
      {"cache flushes", t.flush_cache ? fmt::format("{} bytes before every timed launch", t.flush_bytes) : "none"},
  };
}

}  // namespace

ShardSpec parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  ShardSpec s;
  if (slash == std::string::npos || !read_count(text.substr(0, slash), s.index) ||
      !read_count(text.substr(slash + 1), s.count))
    throw UsageError("--shard '" + text +
                     "' is not K/N: give the K-th of N slices of the sweep, K from 1 to N (e.g. 2/4)");
  if (s.count < 1) throw UsageError("--shard " + text + ": N, the number of shards, must be at least 1");
  if (s.index < 1 || s.index > s.count)
    throw UsageError(fmt::format("--shard {}: K must be from 1 to {} (shards are numbered from 1)", text, s.count));
  return s;
}

int64_t shard_size(int64_t units, const ShardSpec& s) {
  // Units s.index - 1, s.index - 1 + N, ... below `units`.
  return units >= s.index ? (units - s.index) / s.count + 1 : 0;
}

std::string unit_key(const Record& r) {
  return fmt::format("{} {}/{} {} {}", r.op, to_string(r.backend), r.variant, r.params.describe(), r.shape_text());
}

std::string plan_fingerprint(const std::vector<std::string>& unit_keys) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a, 64 bits
  auto add = [&](char c) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  };
  for (const std::string& key : unit_keys) {
    for (char c : key) add(c);
    add('\n');
  }
  return fmt::format("{:016x}", h);
}

namespace {

using Shards = std::vector<std::pair<std::string, Report>>;  // (file name, report)

// Throws UsageError unless every report is a shard's (and no merge), and everything
// that decides what was measured is the same in every shard.
void check_one_sweep(const Shards& shards) {
  if (shards.empty()) throw UsageError("wb merge needs the reports of the shards to merge");
  for (const auto& [path, r] : shards) {
    if (r.context.merged)
      throw UsageError(path + " is a merged report already; merge the shards' own reports (its context.merged_from " +
                       "names them)");
    if (!r.context.shard) throw UsageError(path + " is not the report of a shard (made without wb sweep --shard K/N)");
  }
  const std::string& first_path = shards[0].first;
  const auto first = measured_under(shards[0].second.context);
  for (std::size_t i = 1; i < shards.size(); ++i) {
    const auto other = measured_under(shards[i].second.context);
    for (std::size_t f = 0; f < first.size(); ++f)
      if (first[f].second != other[f].second)
        throw UsageError(fmt::format("cannot merge {} and {}: they differ in their {} ('{}' and '{}')", first_path,
                                     shards[i].first, first[f].first, first[f].second, other[f].second));
  }
}

// Each shard once, each unit once, each variant with one source, each shard whole;
// returns the shards by index (shard -> its place in `shards`) and counts the units.
std::map<int, std::size_t> check_shards_whole(const Shards& shards, std::size_t& units_measured) {
  std::map<int, std::size_t> by_index;
  std::map<std::string, std::string> unit_in;                          // unit -> the file that measured it
  std::map<std::string, std::pair<std::string, std::string>> hash_of;  // variant -> (source hash, file)
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const auto& [path, r] = shards[i];
    const ShardInfo& s = *r.context.shard;
    const auto [at, fresh] = by_index.emplace(s.index, i);
    if (!fresh)
      throw UsageError(fmt::format("{} is given twice: {} and {}", describe(s), shards[at->second].first, path));
    const int64_t expected = shard_size(s.units, {s.index, s.count});
    if (int64_t(r.records.size()) != expected)
      throw UsageError(
          fmt::format("{} holds {} records, but {} of a sweep of {} units holds {}: it is not a whole "
                      "shard's report",
                      path, r.records.size(), describe(s), s.units, expected));
    for (const Record& rec : r.records) {
      const std::string key = unit_key(rec);
      if (rec.seed != s.seed)
        throw UsageError(
            fmt::format("{}: the record of {} has seed {}, its shard seed {}", path, key, rec.seed, s.seed));
      const auto [unit, added] = unit_in.emplace(key, path);
      if (!added)
        throw UsageError("the unit " + key + " is measured twice: in " + unit->second + " and in " + path +
                         " (overlapping shards)");
      const std::string variant =
          rec.op + " " + std::string(to_string(rec.backend)) + "/" + std::to_string(rec.variant);
      const auto [known, first_seen] = hash_of.emplace(variant, std::make_pair(rec.source_hash, path));
      if (!first_seen && known->second.first != rec.source_hash)
        throw UsageError("cannot merge " + known->second.second + " and " + path + ": " + variant +
                         " was built from different sources in them (source hash " + known->second.first.substr(0, 12) +
                         " and " + rec.source_hash.substr(0, 12) + ")");
    }
  }
  units_measured = unit_in.size();
  return by_index;
}

// The shards missing from `by_index` into info.missing; throws UsageError naming them
// unless allow_missing, else returns the warning.
std::optional<std::string> note_missing(MergeInfo& info, const std::map<int, std::size_t>& by_index,
                                        std::size_t units_measured, bool allow_missing) {
  for (int k = 1; k <= info.count; ++k)
    if (!by_index.count(k)) info.missing.push_back(k);
  if (info.missing.empty()) return std::nullopt;
  std::string list;  // "2, 5-7"
  for (std::size_t a = 0, b; a < info.missing.size(); a = b + 1) {
    for (b = a; b + 1 < info.missing.size() && info.missing[b + 1] == info.missing[b] + 1;) ++b;
    list += (list.empty() ? "" : ", ") + std::to_string(info.missing[a]) +
            (b > a ? "-" + std::to_string(info.missing[b]) : "");
  }
  const std::string what = fmt::format("shard(s) {} of {} missing ({} of {} units not measured)", list, info.count,
                                       info.units - int64_t(units_measured), info.units);
  if (!allow_missing)
    throw UsageError(what + ": give every shard's report, or --allow-missing to merge the shards there are");
  return what + ": the merged report holds only the shards given";
}

// The context of the first shard, with the latest creation time, every host, and the
// ceilings of the first shard that measured them (an empty shard measures none); the
// shards into info.
ReportContext merged_context(const Shards& shards, const std::map<int, std::size_t>& by_index, MergeInfo& info,
                             const std::string& command) {
  ReportContext merged = shards[by_index.begin()->second].second.context;
  merged.command = command;
  merged.shard.reset();
  std::vector<std::string> hosts;
  bool have_ceilings = false;
  for (const auto& [index, i] : by_index) {
    const auto& [path, r] = shards[i];
    merged.created = std::max(merged.created, r.context.created);
    if (std::find(hosts.begin(), hosts.end(), r.context.host) == hosts.end()) hosts.push_back(r.context.host);
    if (!have_ceilings && !r.records.empty()) {
      merged.ceilings = r.context.ceilings;
      have_ceilings = true;
    }
    info.shards.push_back(
        {index, path, r.context.host, r.context.created, r.context.command, int64_t(r.records.size())});
  }
  merged.host.clear();
  for (const std::string& h : hosts) merged.host += (merged.host.empty() ? "" : ", ") + h;
  return merged;
}

// Record j of shard K is unit (K - 1) + j * N: the records back in the plan's order.
std::vector<Record> in_plan_order(const Shards& shards, const std::map<int, std::size_t>& by_index, int count) {
  std::vector<std::pair<int64_t, const Record*>> units;
  for (const auto& [index, i] : by_index) {
    const std::vector<Record>& records = shards[i].second.records;
    for (std::size_t j = 0; j < records.size(); ++j)
      units.emplace_back(int64_t(index - 1) + int64_t(j) * count, &records[j]);
  }
  std::sort(units.begin(), units.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Record> out;
  for (const auto& [unit, rec] : units) out.push_back(*rec);
  return out;
}

}  // namespace

MergeResult merge_shards(const Shards& shards, bool allow_missing, const std::string& command) {
  check_one_sweep(shards);
  const ShardInfo& sweep = *shards[0].second.context.shard;
  std::size_t units_measured = 0;
  const std::map<int, std::size_t> by_index = check_shards_whole(shards, units_measured);

  MergeResult out;
  MergeInfo info;
  info.count = sweep.count;
  info.units = sweep.units;
  info.plan = sweep.plan;
  info.seed = sweep.seed;
  if (auto warning = note_missing(info, by_index, units_measured, allow_missing)) out.warnings.push_back(*warning);

  Report& merged = out.report;
  merged.context = merged_context(shards, by_index, info, command);
  merged.records = in_plan_order(shards, by_index, sweep.count);
  if (info.missing.empty()) {
    std::vector<std::string> keys;
    for (const Record& rec : merged.records) keys.push_back(unit_key(rec));
    if (plan_fingerprint(keys) != sweep.plan)
      throw UsageError("the shards' records, put in the sweep's order, do not make its plan (fingerprint " +
                       plan_fingerprint(keys) + ", the shards say " + sweep.plan +
                       "): a shard's report was changed, or its records reordered");
  }
  merged.context.merged = std::move(info);
  return out;
}

}  // namespace wb
