// GPT-2's pre-tokenizer as a scanner. At each position the regex's alternatives are
// tried in order, which comes down to looking at the first one or two characters:
//   1. an apostrophe followed by s, t, re, ve, m, ll or d: the contraction;
//   2-4. an optional space, then a run of letters, of numbers, or of other symbols;
//   5. a run of white space: all of it at the end of the text, else all but its last
//      character (which then starts the next piece, e.g. " word");
//   6. a single white-space character before a non-space (5 cannot match there).
#include "tokenizer/pretokenize.h"

#include "tokenizer/unicode.h"

namespace wb::tokenizer {
namespace {

// Length of the contraction at text[pos] (an apostrophe), or 0.
std::size_t contraction_length(std::string_view text, std::size_t pos) {
  const std::string_view rest = text.substr(pos + 1, 2);
  if (rest.empty()) return 0;
  switch (rest[0]) {
    case 's':
    case 't':
    case 'm':
    case 'd':
      return 2;
    default:
      break;
  }
  if (rest == "re" || rest == "ve" || rest == "ll") return 3;
  return 0;
}

// End of the run of characters of class cls that starts at pos.
std::size_t run_end(std::string_view text, std::size_t pos, char_class cls) {
  while (pos < text.size()) {
    const utf8_char c = next_char(text, pos);
    if (c.cls != cls) break;
    pos += c.length;
  }
  return pos;
}

}  // namespace

bool pretokenizer::next(std::string_view& piece) {
  const std::string_view text = text_;
  const std::size_t start = pos_;
  if (start >= text.size()) return false;

  std::size_t end = 0;
  const utf8_char first = next_char(text, start);
  const std::size_t contraction = text[start] == '\'' ? contraction_length(text, start) : 0;
  if (contraction > 0) {
    end = start + contraction;
  } else if (first.cls != char_class::space) {
    end = run_end(text, start + first.length, first.cls);
  } else {
    const utf8_char second = start + 1 < text.size() ? next_char(text, start + 1) : utf8_char{0, char_class::space};
    if (text[start] == ' ' && second.cls != char_class::space) {
      // " ?\p{L}+", " ?\p{N}+" or " ?[^\s\p{L}\p{N}]+" with its optional space.
      end = run_end(text, start + 1 + second.length, second.cls);
    } else {
      // A run of white space; remember where its last character starts.
      std::size_t last = start;
      end = start + first.length;
      while (end < text.size()) {
        const utf8_char c = next_char(text, end);
        if (c.cls != char_class::space) break;
        last = end;
        end += c.length;
      }
      if (end < text.size() && last > start) end = last;
    }
  }
  piece = text.substr(start, end - start);
  pos_ = end;
  return true;
}

std::vector<std::string_view> pretokenize(std::string_view text) {
  std::vector<std::string_view> pieces;
  pretokenizer p(text);
  std::string_view piece;
  while (p.next(piece)) pieces.push_back(piece);
  return pieces;
}

}  // namespace wb::tokenizer
