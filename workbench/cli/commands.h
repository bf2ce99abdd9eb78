#pragma once
// The `wb` command line: list, run, check, sweep, merge, best, compare, device, dump.
// Exit codes: 0 ok, 1 a check failed (also: the device was lost to a variant's fault,
// and the configurations after it were not run), 2 bad usage or input (or more memory
// than the machine has), 3 no usable device, 4 an internal error (a bug in wb).
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "kernels/program.h"
#include "kernels/registry.h"
#include "workbench/runtime/executor.h"
#include "workbench/runtime/record.h"
#include "workbench/runtime/timing.h"

namespace wb::cli {

constexpr int kOk = program::kOk, kCheckFailed = program::kFailed, kBadUsage = program::kBadInput,
              kNoDevice = program::kNoDevice, kInternalError = program::kInternalError;

int main(int argc, char** argv);
// The same with another registry than Registry::global(): a test program that plants
// variants of its own (a kernel that faults) runs the commands over its registry.
int main(int argc, char** argv, const Registry& registry);

// The registry the commands read: Registry::global(), or the one given to main.
const Registry& registry();

// The exit code of an exception that escaped a command, after writing its message to
// `err` (kernels/program.h with wb's policy): bad input 2, running out of memory or
// another resource 2, no usable device or a device that failed 3, anything else 4 --
// an internal error never reads as a failed check.
int exit_code_for(const std::exception_ptr& e, std::ostream& err);

// Shared by the commands (options.cpp).
Backend resolve_backend(const std::string& requested);  // "" = default; throws DeviceUnavailable for cuda
std::vector<int> parse_int_list(const std::string& text, const std::string& what);  // "1,3,5"; throws UsageError
uint64_t resolve_seed(const std::optional<uint64_t>& given);
std::string format_time(double seconds);     // "12.3 us", "4.56 ms"
std::string format_errors(const Record& r);  // worst max abs error over the checked tensors
std::string format_deterministic(const Record& r);
// The selected variants of an op on a backend ("" or "all": every one).
std::vector<const Variant*> select_variants(const Registry& reg, const OpSpec& op, Backend b, const std::string& ids);
std::string command_line(int argc, char** argv);
// --repetitions and --min-time (absent: the backend's defaults); throws UsageError
// naming the flag on values the timing cannot take (zero, negative, nan, inf), so that
// they are refused before any work instead of aborting inside Google Benchmark.
TimingOptions timing_options(const std::optional<int>& repetitions, const std::optional<double>& min_time_s,
                             bool no_flush);
// The timer of EvalOptions: Google Benchmark on this executor with these options.
std::function<TimingStats(const std::function<void()>&, const std::string&)> timer_for(Executor& ex,
                                                                                       const TimingOptions& options);
// An output path with "{device}" replaced by the device's slug (results/{device}/x.json).
std::string output_path(const std::string& path, const Executor& ex);
std::string output_path(const std::string& path, const std::string& slug);  // the same, for a slug from reports

// The commands.
struct ListOptions {
  std::string op;
  std::string results_dir;
};
int list(const ListOptions& o);

struct RunOptions {
  std::string op;
  int variant = 0;
  std::string backend;
  std::optional<int> block_size;
  std::vector<std::string> params;  // name=value
  std::string shape = "gpt2-124m";
  std::optional<uint64_t> seed;
  std::string json;
  std::optional<int> repetitions;
  std::optional<double> min_time_s;
  bool no_flush = false;  // time with warm caches: no last-level cache flush between launches
  bool isolate = false;  // in a child process (pipeline_isolate.h)
  bool strict_sync = false;  // emu: a barrier after threads of the block exited is a fault
  std::string command;
};
int run(const RunOptions& o);

struct CheckOptions {
  std::string op;
  bool all = false;
  std::string backend;
  std::string variants;
  std::string block_sizes;  // "" or "all": every legal one
  std::string shapes;       // "" or "all": every check shape; else names, e.g. "tiny,odd"
  std::optional<uint64_t> seed;
  int misalign = 0;  // bytes every tensor starts off a 16-byte boundary: 0, 4, 8 or 12
  bool strict_sync = false;  // emu: a barrier after threads of the block exited is a fault
  bool verbose = false;
  std::string json;
  bool isolate = false;  // each (variant, shape) in a child process (pipeline_isolate.h)
  std::string command;
};
int check(const CheckOptions& o);

struct SweepOptions {
  std::string op;
  bool all = false;
  std::string backend;
  std::string variants = "all";
  std::string block_sizes = "all";
  std::string shape = "gpt2-124m";
  std::string workloads;  // trainer --dump-workloads file
  std::optional<uint64_t> seed;
  std::string out;
  std::optional<int> repetitions;
  std::optional<double> min_time_s;
  bool no_flush = false;  // time with warm caches: no last-level cache flush between launches
  bool isolate = false;         // each (variant, shape) in a child process (pipeline_isolate.h)
  bool isolated_child = false;  // internal: a child of --isolate (measures no ceilings)
  std::optional<std::string> shard;  // "K/N": only the K-th of N slices of the units (sweep_shards.h)
  std::string command;
};
int sweep(const SweepOptions& o);

struct DeviceOptions {
  std::string backend;
  bool slug_only = false;
  bool measure = true;
};
int device(const DeviceOptions& o);

struct BestOptions {
  std::vector<std::string> reports;
  std::string out;
  std::string show;
  bool replace = false;
  bool deterministic = false;
  std::string precision = "fp32";
};
int best(const BestOptions& o);

struct MergeOptions {
  std::vector<std::string> shards;  // the shards' reports
  std::string out;
  bool allow_missing = false;
  std::string command;
};
int merge(const MergeOptions& o);

struct CompareOptions {
  std::string base, now;
  std::string max_slowdown = "5%";
  std::string format = "text";
};
int compare(const CompareOptions& o);

struct DumpOptions {
  std::string op;
  std::string shape = "gpt2-124m";
  uint64_t seed = 1;
  std::string out;
};
int dump(const DumpOptions& o);

}  // namespace wb::cli
