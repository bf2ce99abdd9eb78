#include "workbench/cli/output.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace wb {

Progress::Progress(std::size_t total) : total_(total), tty_(isatty(STDERR_FILENO) != 0) {}

Progress::~Progress() {
  if (tty_ && done_ > 0) std::fprintf(stderr, "\r\033[K");
}

void Progress::step(const std::string& what) {
  ++done_;
  if (tty_) {
    std::fprintf(stderr, "\r\033[K[%zu/%zu] %s", done_, total_, what.c_str());
  } else {
    std::fprintf(stderr, "[%zu/%zu] %s\n", done_, total_, what.c_str());
  }
  std::fflush(stderr);
}

}  // namespace wb

namespace wb::cli {

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

std::string format_counters(const Counters& c, double model_bytes) {
  const CounterTotals t = c.totals();
  std::vector<std::string> parts;
  if (t.global_requests)
    parts.push_back(fmt::format("global {:.1f} sectors/request (ideal {:.1f}){}", t.sectors_per_request(),
                                t.ideal_sectors_per_request(),
                                model_bytes > 0 && !c.sampled()
                                    ? fmt::format(", {:.2f}x the byte model", double(t.sectors) * 32 / model_bytes)
                                    : ""));
  if (t.shared_requests)
    parts.push_back(fmt::format("shared {:.2f} wavefronts/request (ideal {:.2f})",
                                double(t.wavefronts) / double(t.shared_requests),
                                double(t.ideal_wavefronts) / double(t.shared_requests)));
  if (t.global_requests + t.shared_requests)
    parts.push_back(fmt::format("{:.1f} active lanes/request", t.lanes_per_request()));
  else
    parts.push_back("no memory requests counted");
  if (t.collectives) parts.push_back(fmt::format("collectives {:.1f} active lanes", t.lanes_per_collective()));
  std::string line;
  for (const std::string& p : parts) line += (line.empty() ? "" : ", ") + p;
  std::string occupancy;
  for (int cc : {80, 90}) {
    bool known = false;
    for (const KernelCount& k : c.kernels)
      for (const Occupancy& o : k.occupancy) known = known || o.compute_capability == cc;
    if (known) occupancy += fmt::format("{}sm_{} {:.0f}%", occupancy.empty() ? "" : ", ", cc, 100 * c.occupancy(cc));
  }
  // An occupancy left out says why: a build without nvcc has no table of the kernels'
  // resources, though --counters advertises occupancy.
  const std::string not_computed = c.occupancy_not_computed();
  if (!occupancy.empty())
    line += "; occupancy " + occupancy + (not_computed.empty() ? "" : " (not computed for some kernels: " + not_computed + ")");
  else if (!not_computed.empty())
    line += "; occupancy: not computed (" + not_computed + ")";
  if (c.sampled()) {
    uint64_t counted = 0, blocks = 0;
    for (const KernelCount& k : c.kernels)
      if (!k.library) counted += k.counted_blocks, blocks += k.blocks;
    line += fmt::format("; sampled: {} of {} blocks counted", counted, blocks);
  }
  std::string library;
  for (const KernelCount& k : c.kernels)
    if (k.library) library += (library.empty() ? "" : ", ") + k.kernel;
  if (!library.empty()) line += "; not counted: " + library + " (emulated library calls)";
  return line;
}

void print_counters(std::ostream& out, const std::string& where, const Counters& c, double model_bytes,
                    std::size_t worst) {
  out << "COUNTERS " << where << ": " << format_counters(c, model_bytes) << "\n";
  for (const SiteCount* s : worst_sites(c, worst)) out << "  " << s->site << " " << s->kind() << " " << s->verdict() << "\n";
}

}  // namespace wb::cli
