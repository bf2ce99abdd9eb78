#pragma once
// A progress line on stderr while a long command works: rewritten in place on a
// terminal, one line per step otherwise.
#include <string>

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
