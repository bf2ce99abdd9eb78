#pragma once
// What the tokenizer tests share: where the data is (skip with a reason when it is
// absent), the GPT-2 tokenizer loaded once per process, temporary folders, and running
// prepare_data as a user runs it.
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tokenizer/bpe.h"

namespace wb::tokenizer::test {

namespace fs = std::filesystem;

inline fs::path data_dir() { return WB_DATA_DIR; }
inline fs::path vocab_dir() { return data_dir() / "gpt2"; }

// Why the offline data (WB_DATA_DIR, by default ../shared/data) cannot be used, or
// nothing. Tests that need the real vocabulary or text skip with this reason.
std::optional<std::string> missing_data();

#define WB_REQUIRE_DATA()                                          \
  do {                                                             \
    if (const auto why_ = ::wb::tokenizer::test::missing_data()) { \
      GTEST_SKIP() << "needs the offline data: " << *why_;         \
    }                                                              \
  } while (0)

bpe_tokenizer& gpt2();
const std::string& shakespeare();

struct tokenizer_case {
  std::string text;
  std::vector<token_id> ids;
};
const std::vector<tokenizer_case>& cases();

// The id of the token whose bytes are exactly `bytes` (looked up in the vocabulary).
token_id id_of_bytes(const bpe_tokenizer& t, const std::string& bytes);

// A fresh folder, removed with everything in it at the end of the scope.
class temp_dir {
 public:
  temp_dir();
  ~temp_dir();
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

void write_bytes(const fs::path& path, const std::string& bytes);
std::string read_bytes(const fs::path& path);

struct run_result {
  int code = -1;
  std::string out;  // standard output
  std::string err;  // standard error
};

// Runs prepare_data with the arguments (shell syntax, so "< file" works), under
// `environment` when given: a prefix such as "env -u WB_DATA" or "WB_DATA=/x".
run_result prepare_data(const std::string& args, const std::string& environment = "");

// Quotes a path for the shell.
std::string q(const fs::path& path);

}  // namespace wb::tokenizer::test
