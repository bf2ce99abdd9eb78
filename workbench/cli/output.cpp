#include "workbench/cli/output.h"

#include <unistd.h>

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
