// llm.c's file formats: the token file and the tokenizer file, written and read back,
// their headers checked byte by byte, and the readers' errors on damaged files; the
// TinyShakespeare section split.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/tokenizer/test_common.h"
#include "tokenizer/dataset.h"
#include "tokenizer/io.h"
#include "tokenizer/token_file.h"
#include "tokenizer/tokenizer_file.h"

namespace wb::tokenizer::test {
namespace {

std::int32_t header_int(const std::string& bytes, std::size_t k) { return load_le32(bytes.data() + 4 * k); }

TEST(TokenFile, RoundTripAndHeader) {
  const temp_dir dir;
  const std::vector<token_id> ids = {50256, 0, 1, 65535, 258, 13};
  write_token_file(dir / "t.bin", ids);
  const std::string bytes = read_bytes(dir / "t.bin");
  ASSERT_EQ(bytes.size(), 1024u + 2 * ids.size());
  EXPECT_EQ(header_int(bytes, 0), 20240520);
  EXPECT_EQ(header_int(bytes, 1), 1);
  EXPECT_EQ(header_int(bytes, 2), 6);
  for (std::size_t k = 3; k < 256; ++k) EXPECT_EQ(header_int(bytes, k), 0) << "header int " << k;
  EXPECT_EQ(static_cast<unsigned char>(bytes[1024]), 50256 & 0xff);  // little-endian uint16
  EXPECT_EQ(static_cast<unsigned char>(bytes[1025]), 50256 >> 8);
  EXPECT_EQ(read_token_file(dir / "t.bin"), ids);
  EXPECT_FALSE(fs::exists(dir / "t.bin.tmp"));

  write_token_file(dir / "empty.bin", {});
  EXPECT_TRUE(read_token_file(dir / "empty.bin").empty());
}

TEST(TokenFile, Errors) {
  const temp_dir dir;
  EXPECT_THROW(write_token_file(dir / "big.bin", {65536}), error);
  EXPECT_THROW(write_token_file(dir / "neg.bin", {-1}), error);
  EXPECT_FALSE(fs::exists(dir / "big.bin"));
  EXPECT_THROW(write_token_file(dir / "no" / "such" / "folder.bin", {1}), error);
  EXPECT_THROW(read_token_file(dir / "missing.bin"), error);

  write_token_file(dir / "t.bin", {1, 2, 3});
  std::string bytes = read_bytes(dir / "t.bin");
  write_bytes(dir / "short.bin", bytes.substr(0, bytes.size() - 1));
  EXPECT_THROW(read_token_file(dir / "short.bin"), error);
  write_bytes(dir / "header.bin", bytes.substr(0, 100));
  EXPECT_THROW(read_token_file(dir / "header.bin"), error);
  bytes[0] = 'x';
  write_bytes(dir / "magic.bin", bytes);
  EXPECT_THROW(read_token_file(dir / "magic.bin"), error);
}

TEST(TokenizerFile, WrittenFromGpt2AndReadBack) {
  WB_REQUIRE_DATA();
  const temp_dir dir;
  write_tokenizer_file(dir / "gpt2_tokenizer.bin", gpt2());
  const std::string bytes = read_bytes(dir / "gpt2_tokenizer.bin");
  EXPECT_EQ(header_int(bytes, 0), 20240328);
  EXPECT_EQ(header_int(bytes, 1), 2);
  EXPECT_EQ(header_int(bytes, 2), static_cast<std::int32_t>(gpt2().vocab_size()));
  EXPECT_EQ(header_int(bytes, 3), *gpt2().end_of_text());
  for (std::size_t k = 4; k < 256; ++k) EXPECT_EQ(header_int(bytes, k), 0) << "header int " << k;
  // Token 0 is "!": one length byte, then the byte.
  EXPECT_EQ(bytes[1024], 1);
  EXPECT_EQ(bytes[1025], '!');
  std::size_t expected_size = 1024;
  for (std::size_t id = 0; id < gpt2().vocab_size(); ++id) {
    expected_size += 1 + gpt2().token_bytes(static_cast<token_id>(id)).size();
  }
  EXPECT_EQ(bytes.size(), expected_size);

  const token_table table = token_table::read(dir / "gpt2_tokenizer.bin");
  ASSERT_EQ(table.size(), gpt2().vocab_size());
  EXPECT_EQ(table.end_of_text(), *gpt2().end_of_text());
  for (std::size_t id = 0; id < table.size(); ++id) {
    ASSERT_EQ(table.bytes(static_cast<token_id>(id)), gpt2().token_bytes(static_cast<token_id>(id))) << id;
  }
  for (const auto& c : cases()) EXPECT_EQ(table.decode(c.ids), c.text);
  EXPECT_THROW(table.bytes(static_cast<token_id>(table.size())), error);
}

TEST(TokenizerFile, ReaderErrors) {
  WB_REQUIRE_DATA();
  const temp_dir dir;
  EXPECT_THROW(token_table::read(dir / "missing.bin"), error);
  write_tokenizer_file(dir / "good.bin", gpt2());
  const std::string good = read_bytes(dir / "good.bin");
  const auto expect_rejected = [&](const std::string& bytes, const std::string& message) {
    write_bytes(dir / "bad.bin", bytes);
    try {
      token_table::read(dir / "bad.bin");
      ADD_FAILURE() << "expected an error containing '" << message << "'";
    } catch (const error& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  };
  expect_rejected(good.substr(0, 1000), "too short");
  expect_rejected(good.substr(0, good.size() - 3), "truncated");
  expect_rejected(good + "x", "after the last token");
  std::string bad = good;
  bad[0] = 0;
  expect_rejected(bad, "not a tokenizer file");
  bad = good;
  bad[4] = 1;
  expect_rejected(bad, "version 1");
  bad = good;
  bad[12] = bad[13] = bad[14] = bad[15] = '\x7f';
  expect_rejected(bad, "bad header");
}

// Found by tests/fuzz/fuzz_tokenizer_file: a header counting 2^31 - 1 tokens made the
// reader reserve room for all of them (tens of GB) before it read one.
TEST(TokenizerFile, CountBeyondTheFileIsRefusedBeforeAllocating) {
  std::string bytes;
  append_le32(bytes, kTokenizerFileMagic);
  append_le32(bytes, kTokenizerFileVersion);
  append_le32(bytes, 0x7fffffff);  // vocabulary size
  append_le32(bytes, 0);           // end of text
  bytes.resize(kHeaderInts * 4, '\0');
  bytes += std::string("\x01" "a" "\x01" "b");  // two one-byte tokens
  try {
    token_table::parse(bytes, "huge.bin");
    ADD_FAILURE() << "a count of 2^31 - 1 tokens in 4 bytes was accepted";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("hold at most 2"), std::string::npos) << e.what();
  }
  bytes.replace(8, 4, std::string("\x02\0\0\0", 4));  // two tokens: the same bytes read
  const token_table table = token_table::parse(bytes, "two.bin");
  EXPECT_EQ(table.decode({1, 0}), "ba");
}

TEST(Dataset, SplitSections) {
  using views = std::vector<std::string_view>;
  EXPECT_EQ(split_sections("a\n\nb", "\n\n"), (views{"a", "b"}));
  EXPECT_EQ(split_sections("a\n\n\nb", "\n\n"), (views{"a", "\nb"}));
  EXPECT_EQ(split_sections("a\n\n\n\nb\n", "\n\n"), (views{"a", "", "b\n"}));
  EXPECT_EQ(split_sections("\n\n", "\n\n"), (views{"", ""}));
  EXPECT_EQ(split_sections("", "\n\n"), (views{""}));
}

TEST(Dataset, SectionsGetEndOfTextAndTheirBlankLineBack) {
  WB_REQUIRE_DATA();
  const token_id eot = *gpt2().end_of_text();
  const token_split split = tinyshakespeare_tokens("A:\nhi\n\nB:\nyo", gpt2(), 2);
  std::vector<token_id> all = split.val;
  all.insert(all.end(), split.train.begin(), split.train.end());
  std::vector<token_id> want = {eot};
  for (const token_id id : gpt2().encode("A:\nhi\n\n")) want.push_back(id);
  want.push_back(eot);
  for (const token_id id : gpt2().encode("B:\nyo")) want.push_back(id);
  EXPECT_EQ(all, want);
  EXPECT_EQ(split.val.size(), 2u);
  EXPECT_THROW(tinyshakespeare_tokens("tiny", gpt2()), error);  // fewer tokens than the validation split
}

}  // namespace
}  // namespace wb::tokenizer::test
