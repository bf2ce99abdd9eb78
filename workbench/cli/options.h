#pragma once
// The option groups that several commands share, each declared here once (its flag,
// its type, its help), and the parsing of their values. A command registers the groups
// it takes in its own file (add_run_command in run.cpp, ...); a flag of one command
// only stays with that command.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/text.h"
#include "contract/registry.h"
#include "workbench/runtime/executor.h"
#include "workbench/runtime/timing.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace wb::cli {

// op | --all, and --variants: what check and sweep work through. `verb` names the
// command in the help ("the op to check", "check every op").
struct OpChoice {
  std::string op;
  bool all = false;
  // "" or "all": every variant of the backend; "torch": the PyTorch rungs only;
  // "no-torch": all but those; else ids of one op.
  std::string variants;

  bool some_variants() const { return !variants.empty() && variants != "all" && !by_kind(); }
  bool by_kind() const { return variants == "torch" || variants == "no-torch"; }
  // The chosen ops; throws UsageError for an unknown op, or --variants with --all.
  std::vector<const OpSpec*> ops(const Registry& reg) const;
};
void add_op_choice(CLI::App& cmd, OpChoice& choice, const std::string& verb);

// --backend cpu|cuda|emu; "" is the default backend.
void add_backend_option(CLI::App& cmd, std::string& backend);
// --shape: a preset, dims, or both (parse_shape).
void add_shape_option(CLI::App& cmd, std::string& shape);
// --seed: absent, a fresh one (resolve_seed); `help` says what it seeds.
void add_seed_option(CLI::App& cmd, std::optional<uint64_t>& seed,
                     const std::string& help = "seed of the random inputs (default: fresh)");
void add_seed_option(CLI::App& cmd, uint64_t& seed);  // a fixed seed, its default shown
// --block-sizes LIST: "" or "all" is every legal one (parse_block_sizes); `help` says
// what the command does with a variant that has none of them.
CLI::Option* add_block_sizes_option(CLI::App& cmd, std::string& block_sizes, const std::string& help);
// --isolate: each variant in a child process (pipeline_isolate.h).
void add_isolate_flag(CLI::App& cmd, bool& isolate);
// --configurations LIST, hidden: what a child of --isolate is told to check
// (pipeline.h, configurations_args and keep_configurations).
void add_configurations_option(CLI::App& cmd, std::string& list);
// --strict-sync: emu's barrier after exited threads is a fault, not a note.
void add_strict_sync_flag(CLI::App& cmd, bool& strict_sync);

// --counters and --sample-blocks (emu): what the warps of each configuration's first
// validated run ask of memory (workbench/runtime/counters.h).
struct CounterFlags {
  bool on = false;
  uint64_t sample_blocks = 0;  // 0: every block
  // Turns counting on in ex when asked; UsageError for --sample-blocks without --counters.
  void apply(Executor& ex) const;
  void pass_to(std::vector<std::string>& args) const;  // to a child of --isolate
};
void add_counter_options(CLI::App& cmd, CounterFlags& flags);
// --json FILE: the results also as a wb.report report.
void add_json_option(CLI::App& cmd, std::string& json);

// --repetitions, --min-time and --no-flush: how run and sweep time.
struct TimingFlags {
  std::optional<int> repetitions;
  std::optional<double> min_time_s;
  bool no_flush = false;  // time with warm caches: no last-level cache flush between launches

  // The timing options (absent flags: the backend's defaults); throws UsageError naming
  // the flag on values the timing cannot take (zero, negative, nan, inf), so that they
  // are refused before any work instead of aborting inside Google Benchmark.
  TimingOptions resolve() const;
  // The same flags on the command line of a child of --isolate.
  void pass_to(std::vector<std::string>& args) const;
};
void add_timing_options(CLI::App& cmd, TimingFlags& timing);

// Parsing what the options hold.
Backend resolve_backend(const std::string& requested);  // "" = default; throws DeviceUnavailable for cuda
std::vector<int> parse_int_list(const std::string& text, const std::string& what);  // "1,3,5"; throws UsageError
std::optional<std::vector<int>> parse_block_sizes(const std::string& text);         // "" or "all": none (every one)
uint64_t resolve_seed(const std::optional<uint64_t>& given);
// The selected variants of an op on a backend ("" or "all": every one).
std::vector<const Variant*> select_variants(const Registry& reg, const OpSpec& op, Backend b, const std::string& ids);
std::string command_line(int argc, char** argv);
// An output path with "{device}" replaced by the device's slug (results/{device}/x.json).
std::string output_path(const std::string& path, const Executor& ex);
std::string output_path(const std::string& path, const std::string& slug);  // the same, for a slug from reports

}  // namespace wb::cli
