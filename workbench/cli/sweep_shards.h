#pragma once
// Sharded sweeps: `wb sweep --shard K/N` measures the K-th of N slices of a sweep, so
// that N machines (a Slurm job array, a CI matrix) sweep one problem set together, and
// `wb merge` joins the shards' reports into the report of the whole sweep.
//
// A unit is one measurement of the sweep: one (variant, launch parameters, shape), one
// record of its report. The sweep's plan lists its units in a canonical order that
// follows from the command line and the build alone (the ops in the registry's order or
// the workloads file's calls, each op's variants by id, each variant's launch
// parameters in their declared order), never from timing, the seed or the machine.
// Unit i (counted from 0) belongs to shard i % N + 1: round robin, so that the shards
// differ by at most one unit and each gets its share of every op. Shards are numbered
// from 1 to N; with N above the number of units, the last shards are empty.
//
// A shard's report says so (context.shard: K, N, the sweep's unit count, a fingerprint
// of its plan, the seed). wb merge refuses shards of different sweeps (N, units, plan),
// devices, sources, builds, seeds or timing options, shards given twice and units
// measured twice, and by default missing shards.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "workbench/runtime/report.h"

namespace wb {

struct ShardSpec {
  int index = 1;  // K, 1-based
  int count = 1;  // N
};

// "K/N", e.g. "2/4". Throws UsageError naming --shard unless K and N are decimal
// integers with N >= 1 and 1 <= K <= N.
ShardSpec parse_shard(const std::string& text);

// Whether unit `unit` (0-based, in the plan's order) belongs to the shard.
inline bool in_shard(int64_t unit, const ShardSpec& s) { return unit % s.count + 1 == s.index; }
// How many of a sweep's `units` units the shard holds.
int64_t shard_size(int64_t units, const ShardSpec& s);

// The identity of a unit: op, backend/variant, launch parameters and shape (with the
// optional tensors left out), e.g. "layernorm_forward cuda/3 block_size=256 B=8 T=1024 C=768".
std::string unit_key(const Record& r);
// A plan's fingerprint: 64-bit FNV-1a over its unit keys in order, as 16 hex digits.
std::string plan_fingerprint(const std::vector<std::string>& unit_keys);

struct MergeResult {
  Report report;
  std::vector<std::string> warnings;  // missing shards (with allow_missing)
};

// The report of the whole sweep from the reports of its shards (file name, report):
// the records in the plan's order, the context of the first shard with the latest
// creation time, every host, the ceilings of the first shard that measured any, and
// context.merged_from naming the shards. Throws UsageError when a report is not a
// shard's (or is a merge already), when two reports differ in their sweep (N, units,
// plan), device, source commit, build, seed or timing options, when a shard is given
// twice or a unit is in two reports, when a variant's source hash differs between
// them, when a shard's record count is not its share of the units, and, unless
// allow_missing, when a shard is missing.
MergeResult merge_shards(const std::vector<std::pair<std::string, Report>>& shards, bool allow_missing,
                         const std::string& command);

}  // namespace wb
