// UTF-8 stepping and character classes for the pre-tokenizer: a table for ASCII, ICU's
// character properties (general category, White_Space) for everything above it.
#include "tokenizer/unicode.h"

#include <unicode/uchar.h>

#include <array>

namespace wb::tokenizer {
namespace {

constexpr std::array<char_class, 128> make_ascii_table() {
  std::array<char_class, 128> table{};
  for (int c = 0; c < 128; ++c) {
    char_class cls = char_class::other;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) cls = char_class::letter;
    if (c >= '0' && c <= '9') cls = char_class::number;
    if ((c >= 0x09 && c <= 0x0d) || c == ' ') cls = char_class::space;  // \t \n \v \f \r and space
    table[static_cast<std::size_t>(c)] = cls;
  }
  return table;
}

constexpr std::array<char_class, 128> kAsciiClass = make_ascii_table();

bool is_continuation(unsigned char b) { return (b & 0xc0) == 0x80; }

}  // namespace

char_class classify(char32_t code_point) {
  if (code_point < 128) return kAsciiClass[code_point];
  const auto c = static_cast<UChar32>(code_point);
  const std::uint32_t category = U_MASK(u_charType(c));
  if (category & U_GC_L_MASK) return char_class::letter;
  if (category & U_GC_N_MASK) return char_class::number;
  if (u_isUWhiteSpace(c)) return char_class::space;
  return char_class::other;
}

std::size_t decode_utf8(std::string_view text, std::size_t pos, char32_t& code_point) {
  const std::size_t left = text.size() - pos;
  const auto* s = reinterpret_cast<const unsigned char*>(text.data() + pos);
  const unsigned char b0 = s[0];
  if (b0 < 0x80) {
    code_point = b0;
    return 1;
  }
  // The second byte's legal range depends on the first (no overlong forms, no
  // surrogates, nothing above U+10FFFF); later bytes are plain continuation bytes.
  std::size_t length = 0;
  unsigned char lo = 0x80, hi = 0xbf;
  char32_t value = 0;
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    length = 2;
    value = b0 & 0x1f;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    length = 3;
    value = b0 & 0x0f;
    if (b0 == 0xe0) lo = 0xa0;
    if (b0 == 0xed) hi = 0x9f;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    length = 4;
    value = b0 & 0x07;
    if (b0 == 0xf0) lo = 0x90;
    if (b0 == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (left < length || s[1] < lo || s[1] > hi) return 0;
  value = (value << 6) | (s[1] & 0x3f);
  for (std::size_t k = 2; k < length; ++k) {
    if (!is_continuation(s[k])) return 0;
    value = (value << 6) | (s[k] & 0x3f);
  }
  code_point = value;
  return length;
}

utf8_char next_char(std::string_view text, std::size_t pos) {
  const auto b0 = static_cast<unsigned char>(text[pos]);
  if (b0 < 0x80) return {1, kAsciiClass[b0]};
  char32_t code_point = 0;
  const std::size_t length = decode_utf8(text, pos, code_point);
  if (length == 0) return {1, char_class::other};
  return {length, classify(code_point)};
}

}  // namespace wb::tokenizer
