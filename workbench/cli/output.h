#pragma once
// What several commands print: a progress line on stderr while a long command works
// (rewritten in place on a terminal, one line per step otherwise), and times and errors
// in the tables.
#include <string>

#include "workbench/runtime/record.h"

namespace wb {

class Progress {
 public:
  explicit Progress(std::size_t total);
  ~Progress();
  void step(const std::string& what);

 private:
  std::size_t total_, done_ = 0;
  bool tty_;
};

}  // namespace wb

namespace wb::cli {

std::string format_time(double seconds);     // "12.3 us", "4.56 ms"
std::string format_errors(const Record& r);  // worst max abs error over the checked tensors
std::string format_deterministic(const Record& r);

}  // namespace wb::cli
