#pragma once
// What several suites share: running a command as a user does (exit code and output),
// whether a text holds a part, the message of the UsageError an action throws, and a
// temporary folder.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>

#include "base/errors.h"

namespace wb::testing {

struct Result {
  int code = -1;
  std::string output;  // stdout and stderr together
};

// A shell command line's exit code and standard output (where the line does not send
// it elsewhere); -1 when it could not run or did not exit.
inline Result run_shell(const std::string& line) {
  FILE* pipe = popen(line.c_str(), "r");
  Result r;
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline Result run_command(const std::string& binary, const std::string& args) {
  return run_shell(binary + " " + args + " 2>&1");
}

// Whether `part` stands somewhere in `text` (a message, a command's output).
inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The message of the UsageError f throws, or "no error".
inline std::string usage_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

// A fresh folder under the system's temporary one, removed with everything in it.
class TempDir {
 public:
  TempDir()
      : path_(std::filesystem::temp_directory_path() /
              ("wb_test_" + std::to_string(::getpid()) + "_" + std::to_string(n_++))) {
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  static inline int n_ = 0;
  std::filesystem::path path_;
};

}  // namespace wb::testing

#define EXPECT_EXIT_WITH(result, expected_code, text)                                                       \
  do {                                                                                                      \
    const ::wb::testing::Result r_ = (result);                                                              \
    EXPECT_EQ(r_.code, expected_code) << r_.output;                                                         \
    EXPECT_NE(r_.output.find(text), std::string::npos) << "expected '" << (text) << "' in:\n" << r_.output; \
  } while (0)
