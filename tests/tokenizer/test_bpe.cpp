// Byte-level BPE: every case of tokenizer_cases.json (ids from the reference encoder),
// decode(encode(x)) == x on TinyShakespeare, invalid UTF-8 and random bytes, the two
// merge algorithms agreeing, long pieces, the byte alphabet, and every malformed
// vocabulary the loader must reject.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tests/tokenizer/test_common.h"
#include "tokenizer/bpe.h"
#include "tokenizer/pretokenize.h"

namespace wb::tokenizer::test {
namespace {

using ids_t = std::vector<token_id>;

TEST(Bpe, EveryTokenizerCase) {
  WB_REQUIRE_DATA();
  ASSERT_FALSE(cases().empty());
  for (const auto& c : cases()) {
    EXPECT_EQ(gpt2().encode(c.text), c.ids) << "text: " << c.text;
    EXPECT_EQ(gpt2().decode(c.ids), c.text);
  }
}

TEST(Bpe, Vocabulary) {
  WB_REQUIRE_DATA();
  EXPECT_EQ(gpt2().vocab_size(), 50257u);
  EXPECT_EQ(gpt2().merge_count(), 50000u);
  ASSERT_TRUE(gpt2().end_of_text().has_value());
  EXPECT_EQ(*gpt2().end_of_text(), 50256);
  EXPECT_EQ(gpt2().token_bytes(50256), "<|endoftext|>");
  // Ordinary encoding: the end-of-text text is not the end-of-text token.
  const ids_t ids = gpt2().encode("<|endoftext|>");
  EXPECT_GT(ids.size(), 1u);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 50256), 0);
  EXPECT_THROW(gpt2().decode({50257}), error);
  EXPECT_THROW(gpt2().decode({-1}), error);
}

TEST(Bpe, ByteAlphabet) {
  std::set<char32_t> seen;
  for (unsigned b = 0; b < 256; ++b) seen.insert(byte_to_code_point(static_cast<unsigned char>(b)));
  EXPECT_EQ(seen.size(), 256u);
  EXPECT_EQ(byte_to_code_point('!'), U'!');
  EXPECT_EQ(byte_to_code_point('~'), U'~');
  EXPECT_EQ(byte_to_code_point(0xff), U'\u00ff');
  EXPECT_EQ(byte_to_code_point(0), U'\u0100');
  EXPECT_EQ(byte_to_code_point(' '), U'\u0120');   // GPT-2's "Ġ"
  EXPECT_EQ(byte_to_code_point('\n'), U'\u010a');  // "Ċ"
  EXPECT_EQ(byte_to_code_point(0xad), U'\u0143');  // the last of the remapped bytes
}

TEST(Bpe, RoundTripTinyShakespeare) {
  WB_REQUIRE_DATA();
  const ids_t ids = gpt2().encode(shakespeare());
  EXPECT_LT(ids.size(), shakespeare().size() / 2);  // it compresses
  EXPECT_EQ(gpt2().decode(ids), shakespeare());
}

TEST(Bpe, InvalidUtf8IsEncodedByteLevelNeverDropped) {
  WB_REQUIRE_DATA();
  for (const std::string& text :
       {std::string("caf\xe9 au lait"), std::string("\xff\xfe\xfd"), std::string("ok \xed\xa0\x80 surrogate"),
        std::string("cut \xe6\x97"), std::string("\xc0\xaf overlong"), std::string("nul\0byte", 8),
        std::string("\x80\x80\x80 trail"), std::string(" \xf4\x90\x80\x80")}) {
    const ids_t ids = gpt2().encode(text);
    EXPECT_EQ(gpt2().decode(ids), text) << "text: " << text;
  }
  // A lone invalid byte is its one-byte token.
  EXPECT_EQ(gpt2().encode("\xff"), ids_t{id_of_bytes(gpt2(), "\xff")});
  EXPECT_EQ(gpt2().encode("\x80"), ids_t{id_of_bytes(gpt2(), "\x80")});
}

TEST(Bpe, RoundTripRandomBytes) {
  WB_REQUIRE_DATA();
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<std::size_t> length(0, 64);
  for (int trial = 0; trial < 500; ++trial) {
    std::string text;
    for (std::size_t k = length(rng); k > 0; --k) text.push_back(static_cast<char>(byte(rng)));
    ASSERT_EQ(gpt2().decode(gpt2().encode(text)), text);
  }
  std::string big(1 << 16, '\0');
  for (char& c : big) c = static_cast<char>(byte(rng));
  EXPECT_EQ(gpt2().decode(gpt2().encode(big)), big);
}

TEST(Bpe, MergeAlgorithmsAgree) {
  WB_REQUIRE_DATA();
  std::set<std::string_view> unique;
  for (const auto piece : pretokenize(shakespeare())) unique.insert(piece);
  std::vector<std::string> extra;
  for (const auto& c : cases()) {
    for (const auto piece : pretokenize(c.text)) extra.emplace_back(piece);
  }
  extra.push_back(std::string(300, ' '));
  extra.push_back(std::string(301, 'a'));
  extra.push_back(std::string(257, '\n'));
  std::string digits;
  for (int k = 0; k < 200; ++k) digits += std::to_string(k * 7919 % 1000);
  extra.push_back(digits);
  for (const auto& e : extra) unique.insert(e);
  for (const auto piece : unique) {
    ASSERT_EQ(gpt2().encode_piece(piece, true), gpt2().encode_piece(piece, false)) << "piece: " << piece;
  }
}

TEST(Bpe, LongPieces) {
  WB_REQUIRE_DATA();
  // One piece each of 200,000 bytes: the priority-queue merge keeps these fast.
  for (const char c : {'a', ' ', '7', '!'}) {
    const std::string text(200000, c);
    EXPECT_EQ(pretokenize(text).size(), 1u);
    EXPECT_EQ(gpt2().decode(gpt2().encode(text)), text);
  }
}

// ---- a tiny vocabulary, to pin down the merge semantics and the loader's errors ----

std::string mapped(const std::string& raw) {
  std::string out;
  for (const char ch : raw) {
    const char32_t cp = byte_to_code_point(static_cast<unsigned char>(ch));
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else {
      out.push_back(static_cast<char>(0xc0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    }
  }
  return out;
}

// The 256 bytes as ids 0..255, then the given merged tokens and <|endoftext|>.
nlohmann::json tiny_encoder(const std::vector<std::string>& merged) {
  nlohmann::json j = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) j[mapped(std::string(1, static_cast<char>(b)))] = b;
  int id = 256;
  for (const auto& m : merged) j[mapped(m)] = id++;
  j["<|endoftext|>"] = id;
  return j;
}

const std::string kTinyMerges = "#version: 0.2\na a\nb c\naa a\n";

bpe_tokenizer tiny() { return bpe_tokenizer::parse(tiny_encoder({"aa", "bc", "aaa"}).dump(), kTinyMerges); }

TEST(BpeTiny, MergeSemantics) {
  bpe_tokenizer t = tiny();
  EXPECT_EQ(t.vocab_size(), 260u);
  EXPECT_EQ(t.end_of_text(), 259);
  const token_id a = 'a', aa = 256, bc = 257, aaa = 258;
  // Lowest rank first, all its occurrences left to right, without overlap.
  EXPECT_EQ(t.encode("aa"), (ids_t{aa}));
  EXPECT_EQ(t.encode("aaa"), (ids_t{aaa}));        // (a a) then (aa a)
  EXPECT_EQ(t.encode("aaaa"), (ids_t{aa, aa}));    // (a a) twice, then no (aa aa)
  EXPECT_EQ(t.encode("aaaaa"), (ids_t{aa, aaa}));  // aa aa a -> aa aaa
  EXPECT_EQ(t.encode("abc"), (ids_t{a, bc}));
  EXPECT_EQ(t.encode("ab c"), (ids_t{a, 'b', ' ', 'c'}));
  for (const std::string piece : {"aaaaaaa", "aaabcaa", "bcbcaaaa", "abcaaa"}) {
    EXPECT_EQ(t.encode_piece(piece, true), t.encode_piece(piece, false)) << piece;
  }
  // CRLF line ends and a missing final newline are accepted.
  bpe_tokenizer crlf = bpe_tokenizer::parse(tiny_encoder({"aa", "bc", "aaa"}).dump(), "#version: 0.2\r\na a\r\nb c");
  EXPECT_EQ(crlf.merge_count(), 2u);
}

void expect_error(const std::string& encoder, const std::string& merges, const std::string& message) {
  try {
    bpe_tokenizer::parse(encoder, merges);
    ADD_FAILURE() << "expected an error containing '" << message << "'";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(BpeTiny, MalformedVocabularies) {
  const std::string good = tiny_encoder({"aa", "bc", "aaa"}).dump();
  expect_error("{\"a\": 1,", kTinyMerges, "malformed JSON");
  expect_error("[1, 2]", kTinyMerges, "expected a JSON object");
  expect_error("{}", kTinyMerges, "expected a JSON object");
  {
    auto j = tiny_encoder({"aa"});
    j["aa"] = "x";
    expect_error(j.dump(), "a a\n", "is not an integer");
  }
  {
    auto j = tiny_encoder({"aa"});
    j["aa"] = 1000;
    expect_error(j.dump(), "a a\n", "outside 0..");
  }
  {
    auto j = tiny_encoder({"aa"});
    j["aa"] = 5;  // the id of a byte token
    j["zz"] = 256;
    expect_error(j.dump(), "a a\n", "used twice");
  }
  {
    auto j = tiny_encoder({"aa"});
    j.erase(mapped("\n"));
    j["zz"] = 10;
    expect_error(j.dump(), "a a\n", "no token for the single byte 10");
  }
  expect_error(nlohmann::json{{"\xc8\x80", 0}}.dump(), "", "U+0200 is not one of GPT-2's 256 byte characters");
  expect_error(good, "#version: 0.2\na a\nbc\n", "line 3: expected two tokens");
  expect_error(good, "#version: 0.2\na  a\n", "line 2: expected two tokens");
  expect_error(good, "#version: 0.2\na a\nx y\n", "line 3: \"x y\" names a token that encoder.json does not have");
  expect_error(good, "#version: 0.2\na a\na a\n", "line 3: the merge \"a a\" is listed twice");
  expect_error(good, "#version: 0.2\n", "no merges");
}

TEST(BpeFiles, MissingFiles) {
  const temp_dir dir;
  EXPECT_THROW(bpe_tokenizer::load(dir / "nope"), error);
  try {
    bpe_tokenizer::load(dir.path());
    ADD_FAILURE() << "expected an error";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("encoder.json"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wb::tokenizer::test
