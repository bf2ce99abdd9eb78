// Shared helpers of the tokenizer tests (see test_common.h).
#include "tests/tokenizer/test_common.h"

#include <stdlib.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/test_helpers.h"
#include "tokenizer/io.h"

namespace wb::tokenizer::test {

std::optional<std::string> missing_data() {
  for (const fs::path& p : {data_dir() / "tinyshakespeare.txt", vocab_dir() / "encoder.json", vocab_dir() / "vocab.bpe",
                            vocab_dir() / "tokenizer_cases.json"}) {
    if (!fs::is_regular_file(p)) return p.string() + " is absent (configure with -DWB_DATA_DIR=DIR to use a copy)";
  }
  return std::nullopt;
}

bpe_tokenizer& gpt2() {
  static bpe_tokenizer t = bpe_tokenizer::load(vocab_dir());
  return t;
}

const std::string& shakespeare() {
  static const std::string text = read_file(data_dir() / "tinyshakespeare.txt");
  return text;
}

const std::vector<tokenizer_case>& cases() {
  static const std::vector<tokenizer_case> all = [] {
    const auto json = nlohmann::json::parse(read_file(vocab_dir() / "tokenizer_cases.json"));
    std::vector<tokenizer_case> out;
    for (const auto& c : json.at("cases")) {
      out.push_back({c.at("text").get<std::string>(), c.at("ids").get<std::vector<token_id>>()});
    }
    return out;
  }();
  return all;
}

token_id id_of_bytes(const bpe_tokenizer& t, const std::string& bytes) {
  for (std::size_t id = 0; id < t.vocab_size(); ++id) {
    if (t.token_bytes(static_cast<token_id>(id)) == bytes) return static_cast<token_id>(id);
  }
  ADD_FAILURE() << "no token with the bytes '" << bytes << "'";
  return -1;
}

temp_dir::temp_dir() {
  std::string pattern = (fs::temp_directory_path() / "wb_tokenizer_test_XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

temp_dir::~temp_dir() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::string read_bytes(const fs::path& path) { return read_file(path); }

std::string q(const fs::path& path) {
  std::string quoted = "'";
  for (const char c : path.string()) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

run_result prepare_data(const std::string& args, const std::string& environment) {
  const temp_dir dir;
  const fs::path err = dir / "stderr";
  const std::string command = (environment.empty() ? "" : environment + " ") + q(PREPARE_DATA);
  const wb::testing::Result r = wb::testing::run_shell(command + " " + args + " 2>" + q(err));
  return {r.code, r.output, read_bytes(err)};
}

}  // namespace wb::tokenizer::test
