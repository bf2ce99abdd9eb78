#include "workbench/cli/options.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>

#include "base/errors.h"
#include "workbench/runtime/rng.h"

namespace wb::cli {

void add_op_choice(CLI::App& cmd, OpChoice& choice, const std::string& verb) {
  cmd.add_option("op", choice.op, "the op to " + verb);
  cmd.add_flag("--all", choice.all, verb + " every op");
  cmd.add_option("--variants", choice.variants,
                 "ids to " + verb +
                     ", e.g. 1,3; or 'torch' (the PyTorch rungs only) or 'no-torch' (all but "
                     "them), also with --all (default: all)");
}

std::vector<const OpSpec*> OpChoice::ops(const Registry& reg) const {
  if (all && some_variants()) throw UsageError("--variants selects ids of one op; with --all leave it out");
  return all ? reg.ops() : std::vector<const OpSpec*>{&reg.op(op)};
}

void add_backend_option(CLI::App& cmd, std::string& backend) {
  cmd.add_option("--backend", backend, "cpu, cuda or emu (default: cuda when a device is usable)");
}

void add_shape_option(CLI::App& cmd, std::string& shape) {
  cmd.add_option("--shape", shape, "a preset (gpt2-124m, llmc-dev), dims (B=8,T=1024,C=768), or both (llmc-dev,T=256)")
      ->capture_default_str();
}

void add_seed_option(CLI::App& cmd, std::optional<uint64_t>& seed, const std::string& help) {
  cmd.add_option("--seed", seed, help);
}

void add_seed_option(CLI::App& cmd, uint64_t& seed) {
  cmd.add_option("--seed", seed, "seed of the random inputs")->capture_default_str();
}

CLI::Option* add_block_sizes_option(CLI::App& cmd, std::string& block_sizes, const std::string& help) {
  return cmd.add_option("--block-sizes", block_sizes, help);
}

void add_isolate_flag(CLI::App& cmd, bool& isolate) {
  cmd.add_flag("--isolate", isolate,
               "run each variant in a child process, so that a crash or a device-losing fault costs that variant "
               "only");
}

void add_configurations_option(CLI::App& cmd, std::string& list) {
  cmd.add_option("--configurations", list, "internal: a child of --isolate checks these configurations only")
      ->group("");
}

void add_strict_sync_flag(CLI::App& cmd, bool& strict_sync) {
  cmd.add_flag("--strict-sync", strict_sync,
               "emu: a __syncthreads reached while threads of the block have exited is a synccheck fault "
               "(default: a note on the record)");
}

void CounterFlags::apply(Executor& ex) const {
  if (sample_blocks && !on)
    throw UsageError("--sample-blocks counts a sample of blocks: give it with --counters or --predict-for");
  if (on) ex.set_counting(true, sample_blocks);
}

void CounterFlags::pass_to(std::vector<std::string>& args) const {
  if (on) args.push_back("--counters");
  if (sample_blocks) args.insert(args.end(), {"--sample-blocks", std::to_string(sample_blocks)});
}

void add_counter_options(CLI::App& cmd, CounterFlags& flags) {
  cmd.add_flag("--counters", flags.on,
               "emu: count what each configuration's warps ask of memory, as Nsight Compute does (sectors per "
               "request, bank conflicts, active lanes; theoretical occupancy on sm_80 and sm_90), with the worst "
               "sites (docs/counters.md)");
  cmd.add_option("--sample-blocks", flags.sample_blocks,
                 "with --counters: count only this many blocks of each launch (the first, the last and evenly "
                 "between; every block still runs), so that large shapes stay affordable; with --predict-for: "
                 "the blocks counted (and run) per launch for the prediction (default 2)")
      ->check(CLI::PositiveNumber);
}

void add_json_option(CLI::App& cmd, std::string& json) {
  cmd.add_option("--json", json, "also write the results as a wb.report report");
}

void add_timing_options(CLI::App& cmd, TimingFlags& timing) {
  cmd.add_option("--repetitions", timing.repetitions, "timed repetitions (default: cuda 20, cpu 5)");
  cmd.add_option("--min-time", timing.min_time_s, "seconds per repetition (default: cuda 0.01, cpu 0.05)");
  cmd.add_flag("--no-flush", timing.no_flush,
               "time with warm caches (default: the last-level cache is flushed before every timed launch)");
}

TimingOptions TimingFlags::resolve() const {
  TimingOptions t;
  t.flush_cache = !no_flush;
  if (repetitions) {
    if (*repetitions <= 0)
      throw UsageError("--repetitions " + std::to_string(*repetitions) + ": give at least 1 timed repetition");
    t.repetitions = *repetitions;
  }
  if (min_time_s) {
    if (!std::isfinite(*min_time_s) || *min_time_s <= 0)
      throw UsageError(fmt::format("--min-time {}: give a finite number of seconds above 0 (e.g. 0.05)", *min_time_s));
    t.min_time_s = *min_time_s;
  }
  return t;
}

void TimingFlags::pass_to(std::vector<std::string>& args) const {
  if (repetitions) args.insert(args.end(), {"--repetitions", std::to_string(*repetitions)});
  if (min_time_s) args.insert(args.end(), {"--min-time", fmt::format("{}", *min_time_s)});
  if (no_flush) args.push_back("--no-flush");
}

Backend resolve_backend(const std::string& requested) {
  if (requested.empty()) return default_backend();
  const Backend b = parse_backend(requested);
  if (b == Backend::cuda) {
    if (auto why = cuda_unavailable_reason()) throw DeviceUnavailable("no usable CUDA device: " + *why);
  }
  return b;
}

std::vector<int> parse_int_list(const std::string& text, const std::string& what) {
  std::vector<int> out;
  for (const std::string& item : split_list(text)) {
    int v = 0;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size())
      throw UsageError(what + ": '" + item + "' is not an integer (give a list such as 1,3,5 or 'all')");
    out.push_back(v);
  }
  return out;
}

std::optional<std::vector<int>> parse_block_sizes(const std::string& text) {
  if (text.empty() || text == "all") return std::nullopt;
  return parse_int_list(text, "--block-sizes");
}

uint64_t resolve_seed(const std::optional<uint64_t>& given) { return given ? *given : fresh_seed() % 1000000000ull; }

std::vector<const Variant*> select_variants(const Registry& reg, const OpSpec& op, Backend b, const std::string& ids) {
  if (ids.empty() || ids == "all") return reg.variants(op.name, b);
  if (ids == "torch" || ids == "no-torch") {
    std::vector<const Variant*> out;
    for (const Variant* v : reg.variants(op.name, b))
      if (is_torch_rung(*v) == (ids == "torch")) out.push_back(v);
    return out;
  }
  std::vector<const Variant*> out;
  for (int id : parse_int_list(ids, "--variants")) out.push_back(&reg.variant(op.name, b, id));
  return out;
}

std::string command_line(int argc, char** argv) {
  std::string out = "wb";
  for (int i = 1; i < argc; ++i) out += std::string(" ") + argv[i];
  return out;
}

std::string output_path(const std::string& path, const std::string& slug) {
  std::string out = path;
  const std::string key = "{device}";
  for (auto at = out.find(key); at != std::string::npos; at = out.find(key, at)) out.replace(at, key.size(), slug);
  return out;
}

std::string output_path(const std::string& path, const Executor& ex) { return output_path(path, ex.device().slug); }

}  // namespace wb::cli
