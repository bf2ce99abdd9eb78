#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "kernels/errors.h"
#include "workbench/cli/pipeline_timing.h"
#include "workbench/cli/commands.h"
#include "workbench/runtime/rng.h"

namespace wb::cli {

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
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(start, comma - start);
    start = comma + 1;
    int v = 0;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size())
      throw UsageError(what + ": '" + item + "' is not an integer (give a list such as 1,3,5 or 'all')");
    out.push_back(v);
  }
  return out;
}

uint64_t resolve_seed(const std::optional<uint64_t>& given) { return given ? *given : fresh_seed() % 1000000000ull; }

std::string format_time(double seconds) {
  if (seconds < 1e-3) return fmt::format("{:.2f} us", seconds * 1e6);
  if (seconds < 1) return fmt::format("{:.3f} ms", seconds * 1e3);
  return fmt::format("{:.3f} s", seconds);
}

std::string format_errors(const Record& r) {
  double worst = 0;
  for (const auto& c : r.errors) worst = std::max(worst, c.max_abs_err);
  return r.errors.empty() ? "-" : fmt::format("{:.1e}", worst);
}

std::string format_deterministic(const Record& r) {
  if (!r.deterministic) return "-";
  return *r.deterministic ? "yes" : "no";
}

std::vector<const Variant*> select_variants(const Registry& reg, const OpSpec& op, Backend b, const std::string& ids) {
  if (ids.empty() || ids == "all") return reg.variants(op.name, b);
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

TimingOptions timing_options(const std::optional<int>& repetitions, const std::optional<double>& min_time_s,
                             bool no_flush) {
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

std::function<TimingStats(const std::function<void()>&, const std::string&)> timer_for(Executor& ex,
                                                                                       const TimingOptions& options) {
  return [&ex, options](const std::function<void()>& launch, const std::string& name) {
    return measure(ex, launch, options, name);
  };
}

}  // namespace wb::cli
