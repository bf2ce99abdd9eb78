// The tokenizer (tokenizer/: pre-tokenizer, byte-level BPE) on any bytes, UTF-8
// or not, with a small vocabulary built here: the 256 byte tokens, a few merges (ASCII
// and a two-byte UTF-8 character) and <|endoftext|>. Properties: decoding the ids gives
// back the exact bytes, every id is in the vocabulary, the cached encoding equals the
// uncached one, and the plain merge loop and the priority queue give the same ids for
// every pre-tokenized piece.
#include <string>
#include <utility>
#include <vector>

#include "tests/fuzz/fuzz_check.h"
#include "tokenizer/bpe.h"
#include "tokenizer/pretokenize.h"

namespace {

using namespace wb::tokenizer;

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xc0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3f));
  } else {  // GPT-2's alphabet stays below U+0400
    out += char(0xe0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3f));
    out += char(0x80 | (cp & 0x3f));
  }
}

// Raw bytes as encoder.json and vocab.bpe write them, in GPT-2's byte alphabet.
std::string mapped(const std::string& raw) {
  std::string out;
  for (const char ch : raw) append_utf8(out, byte_to_code_point(static_cast<unsigned char>(ch)));
  return out;
}

std::string json_string(const std::string& utf8) {
  std::string out = "\"";
  for (const char ch : utf8) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

bpe_tokenizer small_vocabulary() {
  const std::vector<std::pair<std::string, std::string>> merges{
      {"t", "h"},  {"h", "e"},  {"th", "e"}, {" ", "t"},  {" t", "he"}, {"i", "n"},        {"in", "g"},  {"e", "r"},
      {" ", "a"},  {"a", "n"},  {"o", "n"},  {"e", "e"},   {"ee", "ee"},      {"\n", "\n"}, {" ", " "},
      {"  ", "  "}, {"1", "2"}, {"12", "3"}, {"'", "s"},   {"\xc3", "\xa9"},  {" ", "\xc3\xa9"}};
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.push_back(std::string(1, char(b)));
  for (const auto& [left, right] : merges) tokens.push_back(left + right);
  std::string encoder = "{";
  for (std::size_t id = 0; id < tokens.size(); ++id)
    encoder += json_string(mapped(tokens[id])) + ":" + std::to_string(id) + ",";
  encoder += "\"<|endoftext|>\":" + std::to_string(tokens.size()) + "}";
  std::string vocab = "#version: 0.2\n";
  for (const auto& [left, right] : merges) vocab += mapped(left) + " " + mapped(right) + "\n";
  return bpe_tokenizer::parse(encoder, vocab);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  using wb::fuzz::fuzz_require;
  static bpe_tokenizer tokenizer = small_vocabulary();
  const std::string_view text = wb::fuzz::as_text(data, size);
  const std::vector<token_id> ids = tokenizer.encode(text);
  for (const token_id id : ids)
    fuzz_require(id >= 0 && std::size_t(id) < tokenizer.vocab_size(), "an id outside the vocabulary");
  fuzz_require(tokenizer.decode(ids) == text, "decoding the ids does not give the text back");
  fuzz_require(tokenizer.encode(text) == ids, "the cached encoding differs from the first one");
  std::vector<token_id> by_piece;
  for (const std::string_view piece : pretokenize(text)) {
    const std::vector<token_id> queued = tokenizer.encode_piece(piece, false);
    fuzz_require(tokenizer.encode_piece(piece, true) == queued, "the two merge algorithms disagree");
    by_piece.insert(by_piece.end(), queued.begin(), queued.end());
  }
  fuzz_require(by_piece == ids, "encoding piece by piece differs from encoding the text");
  tokenizer.clear_cache();  // memory stays flat over millions of inputs
  return 0;
}
