#pragma once
// GPT-2's pre-tokenizer: cuts a text into the pieces that byte-pair encoding then
// works on, one at a time. It gives exactly the matches of the regex
//
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// (leftmost alternative first, greedy), with \s the Unicode White_Space property, as a
// hand-written scanner: one pass, no backtracking beyond one character. Bytes that are
// not well-formed UTF-8 count as characters of the last class ([^\s\p{L}\p{N}]), so
// the pieces always cover the text, byte for byte.
#include <cstddef>
#include <string_view>
#include <vector>

namespace wb::tokenizer {

class pretokenizer {
 public:
  explicit pretokenizer(std::string_view text) : text_(text) {}

  // The next piece; false at the end of the text.
  bool next(std::string_view& piece);

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

// All pieces of a text, in order.
std::vector<std::string_view> pretokenize(std::string_view text);

}  // namespace wb::tokenizer
