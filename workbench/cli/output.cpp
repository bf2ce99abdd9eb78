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

}  // namespace wb::cli
