#pragma once
// The pipeline that wb check and wb sweep go through (wb run, with one record and no
// plan, shares its child of --isolate, records_from_child, and its report writer):
//   plan     the records to make, each a unit: (variant, launch parameters) on a job,
//            a job being one problem (op, shape, seed, with or without its optional
//            tensors, misaligned or not); the command decides which (its selection
//            rules, its shards);
//   execute  each unit in the plan's order, here on this process's device, or with
//            --isolate in a child process per (job group, variant) (pipeline_isolate.h);
//            after a fault lost the device, what is left comes back not run;
//   table    the command's own (check tallies, sweep ranks);
//   summary  the counts, the DEVICE LOST lines, and the report written atomically.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "contract/registry.h"
#include "workbench/runtime/executor.h"
#include "workbench/runtime/harness.h"
#include "workbench/runtime/report.h"

namespace wb::cli {

// One problem of a plan: an op at a shape, its inputs drawn from `seed`.
struct Job {
  const OpSpec* op = nullptr;
  Shape shape;
  uint64_t seed = 0;
  bool omit_optional = false;  // the optional tensors (a bias) passed as null
  std::size_t misalign = 0;    // bytes every tensor starts off a 16-byte boundary
  // Jobs of one group share their children under --isolate: one child per (group,
  // variant) measures the units of all of them (check's two passes of a shape).
  std::size_t group = 0;
  std::string shape_arg;  // the shape as a child of --isolate is told it (--shape, check's --shapes)

  std::vector<std::string> omitted() const;  // the names of the tensors left out
  std::string shape_text() const;            // "B=2 T=8 C=32 without bias"
};

// One record to make: a configuration of a variant on a job.
struct Unit {
  std::size_t job = 0;
  const Variant* variant = nullptr;
  ParamValues params;
  std::string skip;  // non-empty: not run, for this reason (a skipped record)

  std::string describe(const std::vector<Job>& jobs) const;  // "cpu/2 threads=4 B=2 T=8 C=32" (progress)
};

struct Plan {
  std::vector<Job> jobs;
  std::vector<Unit> units;  // in the order of their records

  // The record of `unit` before it is made: its identity, the job's seed and omissions.
  Record blank_record(const Unit& unit) const;
};

// The command line of a child of --isolate that measures `units` (indices into the
// plan, one job group and one variant, none skipped) and writes its report to `out`.
using ChildArgs = std::function<std::vector<std::string>(const Plan& plan, const std::vector<std::size_t>& units,
                                                         const std::string& out)>;

// What a child of --isolate measuring `units` is told of their launch parameters:
// {"--configurations", "block_size=64,unroll=1;block_size=64,unroll=2"}, each as
// ParamValues::describe() writes it ("-" for a variant without any), so that a child
// sent the configurations a fault left unrun checks those and no others, whatever the
// variant's axes (the child plans as usual, then keep_configurations narrows it).
std::vector<std::string> configurations_args(const Plan& plan, const std::vector<std::size_t>& units);

// A child's --configurations (options.h): keeps the units whose
// configuration is listed (a list configurations_args wrote); throws UsageError naming
// a listed configuration the plan does not hold (a parent and child that disagree).
void keep_configurations(Plan& plan, const std::string& list);

struct Execution {
  EvalOptions eval;
  bool isolate = false;
  ChildArgs child_args;  // with isolate
  // Called with each record as it is made (wb check --verbose prints it).
  std::function<void(const Unit&, const Record&)> made;
};

// The records of the plan, one per unit in its order; a progress line on stderr counts
// them. Never throws for a variant's own failure (harness.h).
std::vector<Record> execute(const Registry& reg, const Plan& plan, Executor& ex, const Execution& how);

// How many records of each status.
struct StatusCounts {
  int ok = 0, skipped = 0, incorrect = 0, not_emulated = 0, not_run = 0;
  StatusCounts() = default;
  explicit StatusCounts(const std::vector<Record>& records);
  void add(Status s);  // one record more
};

// After a fault lost the device: what it was, and how many configurations after it were
// not run; nothing while the device is not lost.
void print_device_lost(std::ostream& out, Executor& ex, int not_run);

// Writes the report to `path` ({device}: the device's slug), atomically; returns the path.
std::string write_report_for(const Report& report, const std::string& path, const Executor& ex);

}  // namespace wb::cli
