// prepare_data as a user runs it: the TinyShakespeare files checked against the format
// and the preparation rules (the expected tokens are assembled here from the spec, the
// first ones also from the reference encoder's ids in tokenizer_cases.json), encode and
// decode through files and standard input, and exit code 2 with a clear message on
// every kind of bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "tests/tokenizer/test_common.h"
#include "tokenizer/io.h"
#include "tokenizer/token_file.h"
#include "tokenizer/tokenizer_file.h"

namespace wb::tokenizer::test {
namespace {

#define EXPECT_FAILS_WITH(result, text)                                                               \
  do {                                                                                                \
    const run_result r_ = (result);                                                                   \
    EXPECT_EQ(r_.code, 2) << r_.out << r_.err;                                                        \
    EXPECT_NE(r_.err.find(text), std::string::npos) << "expected '" << (text) << "' in:\n" << r_.err; \
  } while (0)

std::string vocab_arg() { return "--vocab " + q(vocab_dir()); }
std::string input_arg() { return "--input " + q(data_dir() / "tinyshakespeare.txt"); }

// The tokens of the spec, assembled here: cut at every "\n\n", the end-of-text token
// before each section, each section encoded with its "\n\n" except the last.
std::vector<token_id> expected_tokens(const std::string& text) {
  const token_id eot = *gpt2().end_of_text();
  std::vector<token_id> all;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = text.find("\n\n", start);
    all.push_back(eot);
    if (at == std::string::npos) {
      gpt2().encode(text.substr(start), all);
      break;
    }
    gpt2().encode(text.substr(start, at + 2 - start), all);
    start = at + 2;
  }
  return all;
}

TEST(PrepareData, TinyShakespeareFiles) {
  WB_REQUIRE_DATA();
  const temp_dir out;
  const run_result r = prepare_data("tinyshakespeare " + input_arg() + " " + vocab_arg() + " --out " + q(out.path()));
  ASSERT_EQ(r.code, 0) << r.out << r.err;

  const std::vector<token_id> all = expected_tokens(shakespeare());
  ASSERT_GT(all.size(), 32768u);
  const std::size_t train_count = all.size() - 32768;
  EXPECT_NE(r.out.find("tiny_shakespeare_val.bin: 32768 tokens"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tiny_shakespeare_train.bin: " + std::to_string(train_count) + " tokens"), std::string::npos)
      << r.out;

  // Headers and sizes, read raw.
  for (const auto& [name, count] : {std::pair<std::string, std::size_t>{"tiny_shakespeare_val.bin", 32768},
                                    {"tiny_shakespeare_train.bin", train_count}}) {
    const std::string bytes = read_bytes(out / name);
    ASSERT_EQ(bytes.size(), 1024 + 2 * count) << name;
    EXPECT_EQ(load_le32(bytes.data()), 20240520) << name;
    EXPECT_EQ(load_le32(bytes.data() + 4), 1) << name;
    EXPECT_EQ(load_le32(bytes.data() + 8), static_cast<std::int32_t>(count)) << name;
  }

  // Every token: the first 32,768 are validation, the rest training.
  const std::vector<token_id> val = read_token_file(out / "tiny_shakespeare_val.bin");
  const std::vector<token_id> train = read_token_file(out / "tiny_shakespeare_train.bin");
  EXPECT_TRUE(std::equal(val.begin(), val.end(), all.begin()));
  EXPECT_TRUE(std::equal(train.begin(), train.end(), all.begin() + 32768));

  // The first tokens from the reference encoder: the text opens with the case that
  // starts "First Citizen:"; its first section ends at the first blank line, where the
  // section's "\n\n" is one token (the case, encoded whole, has "\n" "\n" there).
  const token_id eot = *gpt2().end_of_text();
  const token_id blank_line = id_of_bytes(gpt2(), "\n\n");
  const tokenizer_case* opening = nullptr;
  for (const auto& c : cases()) {
    if (shakespeare().compare(0, c.text.size(), c.text) == 0) opening = &c;
  }
  ASSERT_NE(opening, nullptr) << "no tokenizer case opens TinyShakespeare";
  const std::string first_section = shakespeare().substr(0, shakespeare().find("\n\n"));
  std::vector<token_id> want = {eot};
  std::string decoded;
  for (const token_id id : opening->ids) {
    if (decoded.size() >= first_section.size()) break;
    want.push_back(id);
    decoded += gpt2().token_bytes(id);
  }
  ASSERT_EQ(decoded, first_section);
  want.push_back(blank_line);
  want.push_back(eot);
  ASSERT_GE(val.size(), want.size());
  EXPECT_EQ(std::vector<token_id>(val.begin(), val.begin() + static_cast<std::ptrdiff_t>(want.size())), want);

  // The tokenizer file beside them decodes the validation split back to the text.
  const token_table table = token_table::read(out / "gpt2_tokenizer.bin");
  EXPECT_EQ(table.size(), 50257u);
  EXPECT_EQ(table.end_of_text(), eot);
  std::string text;
  for (const token_id id : val) {
    if (id != eot) text += table.bytes(id);
  }
  EXPECT_EQ(shakespeare().compare(0, text.size(), text), 0);
}

TEST(PrepareData, TokenizerCommand) {
  WB_REQUIRE_DATA();
  const temp_dir out;
  const run_result r = prepare_data("tokenizer " + vocab_arg() + " --out " + q(out / "sub"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("50257 tokens, end of text 50256"), std::string::npos) << r.out;
  EXPECT_EQ(token_table::read(out / "sub" / "gpt2_tokenizer.bin").size(), 50257u);
}

TEST(PrepareData, EncodeAndDecode) {
  WB_REQUIRE_DATA();
  const temp_dir dir;
  const tokenizer_case& c = cases().at(8);  // contractions
  write_bytes(dir / "text.txt", c.text);
  std::string ids;
  for (const token_id id : c.ids) ids += (ids.empty() ? "" : " ") + std::to_string(id);

  run_result r = prepare_data("encode " + q(dir / "text.txt") + " " + vocab_arg());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, ids + "\n");
  r = prepare_data("encode " + vocab_arg() + " < " + q(dir / "text.txt"));
  EXPECT_EQ(r.out, ids + "\n");

  write_bytes(dir / "ids.txt", ids + "\n");
  r = prepare_data("decode " + q(dir / "ids.txt") + " " + vocab_arg());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, c.text);
  write_bytes(dir / "ids.json", "[15496, 995]");
  r = prepare_data("tokenizer " + vocab_arg() + " --out " + q(dir.path()));
  ASSERT_EQ(r.code, 0) << r.err;
  r = prepare_data("decode --tokenizer " + q(dir / "gpt2_tokenizer.bin") + " < " + q(dir / "ids.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "Hello world");
}

TEST(PrepareData, InvalidUtf8RoundTrips) {
  WB_REQUIRE_DATA();
  const temp_dir dir;
  const std::string text = "caf\xe9 \xff\xfe ok \xe6\x97 end\n";
  write_bytes(dir / "bad.txt", text);
  const run_result enc = prepare_data("encode " + q(dir / "bad.txt") + " " + vocab_arg());
  ASSERT_EQ(enc.code, 0) << enc.err;
  write_bytes(dir / "ids.txt", enc.out);
  const run_result dec = prepare_data("decode " + q(dir / "ids.txt") + " " + vocab_arg());
  ASSERT_EQ(dec.code, 0) << dec.err;
  EXPECT_EQ(dec.out, text);
}

TEST(PrepareDataErrors, Usage) {
  EXPECT_FAILS_WITH(prepare_data(""), "A subcommand is required");
  EXPECT_FAILS_WITH(prepare_data("tinyshakespeare --vocab x"), "--out is required");
  EXPECT_FAILS_WITH(prepare_data("frobnicate"), "unknown command 'frobnicate' (commands: tinyshakespeare");
  EXPECT_FAILS_WITH(prepare_data("decode --vocab x --tokenizer y < /dev/null"),
                    "decode takes one of --vocab DIR and --tokenizer FILE, not both");
  EXPECT_EQ(prepare_data("--help").code, 0);
}

TEST(PrepareDataErrors, MissingVocabulary) {
  const temp_dir dir;
  EXPECT_FAILS_WITH(prepare_data("encode " + q(dir / "x") + " --vocab " + q(dir / "nope")),
                    "vocabulary folder " + (dir / "nope").string() + " does not exist");
  write_bytes(dir / "encoder.json", "{}");
  EXPECT_FAILS_WITH(prepare_data("tokenizer --vocab " + q(dir.path()) + " --out " + q(dir / "o")),
                    "cannot read GPT-2 merge list " + (dir / "vocab.bpe").string());
}

TEST(PrepareDataErrors, MalformedJson) {
  WB_REQUIRE_DATA();
  const temp_dir dir;
  write_bytes(dir / "encoder.json", "{\"!\": 0, \"\\\"\": 1,");
  write_bytes(dir / "vocab.bpe", read_bytes(vocab_dir() / "vocab.bpe"));
  EXPECT_FAILS_WITH(
      prepare_data("tinyshakespeare " + input_arg() + " --vocab " + q(dir.path()) + " --out " + q(dir / "o")),
      (dir / "encoder.json").string() + ": malformed JSON");
  EXPECT_FALSE(fs::exists(dir / "o" / "tiny_shakespeare_val.bin"));
}

TEST(PrepareDataErrors, MissingInput) {
  WB_REQUIRE_DATA();
  const temp_dir dir;
  EXPECT_FAILS_WITH(
      prepare_data("tinyshakespeare --input " + q(dir / "none.txt") + " " + vocab_arg() + " --out " + q(dir / "o")),
      "cannot read text " + (dir / "none.txt").string());
  EXPECT_FAILS_WITH(prepare_data("encode " + q(dir / "none.txt") + " " + vocab_arg()), "cannot read input");
}

TEST(PrepareDataErrors, UnwritableOutput) {
  WB_REQUIRE_DATA();
  const temp_dir dir;
  write_bytes(dir / "file", "not a folder");
  EXPECT_FAILS_WITH(
      prepare_data("tinyshakespeare " + input_arg() + " " + vocab_arg() + " --out " + q(dir / "file" / "sub")),
      "cannot create the output folder");
  fs::create_directories(dir / "out" / "tiny_shakespeare_val.bin");  // a folder where the file must go
  EXPECT_FAILS_WITH(prepare_data("tinyshakespeare " + input_arg() + " " + vocab_arg() + " --out " + q(dir / "out")),
                    "cannot write " + (dir / "out" / "tiny_shakespeare_val.bin").string());
  EXPECT_FAILS_WITH(prepare_data("tokenizer " + vocab_arg() + " --out " + q(dir / "file")),
                    "cannot create the output folder " + (dir / "file").string());
}

TEST(PrepareDataErrors, DownloadFails) {
  WB_REQUIRE_DATA();
  // Nothing listens on the loopback's port 9: as when there is no network, the command
  // must say so and say how to work offline (test_data_files.cpp has the rest).
  const temp_dir dir;
  EXPECT_FAILS_WITH(prepare_data("tinyshakespeare " + vocab_arg() + " --out " + q(dir.path()) +
                                 " --url https://127.0.0.1:9/input.txt"),
                    "or pass --input FILE and --vocab DIR");
  EXPECT_FALSE(fs::exists(dir / "tinyshakespeare.txt"));
}

TEST(PrepareData, ReusesTheDownloadedText) {
  WB_REQUIRE_DATA();
  const temp_dir dir;
  write_bytes(dir / "tinyshakespeare.txt", shakespeare());
  const run_result r = prepare_data("tinyshakespeare " + vocab_arg() + " --out " + q(dir.path()) +
                                    " --url https://127.0.0.1:9/input.txt");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("downloaded before"), std::string::npos) << r.out;
  EXPECT_EQ(read_token_file(dir / "tiny_shakespeare_val.bin").size(), 32768u);
}

TEST(PrepareDataErrors, BadIds) {
  WB_REQUIRE_DATA();
  const temp_dir dir;
  write_bytes(dir / "ids.txt", "15496 99999");
  EXPECT_FAILS_WITH(prepare_data("decode " + q(dir / "ids.txt") + " " + vocab_arg()),
                    "token id 99999 is outside the vocabulary");
  write_bytes(dir / "ids.txt", "15496 hello");
  EXPECT_FAILS_WITH(prepare_data("decode " + q(dir / "ids.txt") + " " + vocab_arg()), "'hello' is not a token id");
  write_bytes(dir / "tok.bin", "garbage");
  EXPECT_FAILS_WITH(prepare_data("decode --tokenizer " + q(dir / "tok.bin") + " < " + q(dir / "ids.txt")), "too short");
}

// The ids may be any bytes: the offending ones are shown escaped, at their offset.
TEST(PrepareDataErrors, BadIdsAreShownEscapedAtTheirByteOffset) {
  WB_REQUIRE_DATA();
  const temp_dir dir;
  write_bytes(dir / "ids.txt", std::string("15496 995\n\xff\x01x\tz 11", 17));
  EXPECT_FAILS_WITH(prepare_data("decode " + q(dir / "ids.txt") + " " + vocab_arg()),
                    "byte 10 of the ids: '\\xff\\x01x' is not a token id");
  write_bytes(dir / "ids.txt", "[15496, 995, 50257]");
  EXPECT_FAILS_WITH(prepare_data("decode " + q(dir / "ids.txt") + " " + vocab_arg()),
                    "byte 13 of the ids: token id 50257 is outside the vocabulary (0..50256)");
}

TEST(Io, EscapedBytes) {
  EXPECT_EQ(escape_bytes("plain text"), "plain text");
  EXPECT_EQ(escape_bytes(std::string("a\0b\n\t\\'\x7f\xc3\xa9", 10)), "a\\x00b\\n\\t\\\\\\'\\x7f\\xc3\\xa9");
}

}  // namespace
}  // namespace wb::tokenizer::test
