#pragma once
// UTF-8 stepping and the four character classes of GPT-2's pre-tokenizer: letters
// (\p{L}), numbers (\p{N}), white space (\s, the Unicode White_Space property) and
// everything else. Bytes that are not part of well-formed UTF-8 are never dropped:
// each such byte counts as one character of class `other`, the class a lone
// surrogate (Python's surrogateescape) would have in the regex.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace wb::tokenizer {

enum class char_class : std::uint8_t { letter, number, space, other };

// One character of a UTF-8 text: its length in bytes (1 to 4) and its class.
struct utf8_char {
  std::size_t length;
  char_class cls;
};

// The class of a Unicode code point (U+0000 to U+10FFFF).
char_class classify(char32_t code_point);

// The well-formed UTF-8 sequence starting at text[pos] (pos < text.size()) and its
// class; a byte that does not start one is a single `other` character.
utf8_char next_char(std::string_view text, std::size_t pos);

// Decodes the well-formed UTF-8 sequence at text[pos]; returns its length (1 to 4) and
// sets code_point, or returns 0 when text[pos] does not start one.
std::size_t decode_utf8(std::string_view text, std::size_t pos, char32_t& code_point);

}  // namespace wb::tokenizer
