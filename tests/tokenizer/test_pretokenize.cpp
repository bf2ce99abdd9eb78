// The pre-tokenizer against its definition: hand-picked cases for each alternative of
// GPT-2's regex, then a real regex engine (ICU's) as the oracle on TinyShakespeare, on
// the tokenizer cases, and on random strings of letters, numbers, spaces and symbols
// from many scripts, with and without bytes that are not UTF-8.
#include <gtest/gtest.h>
#include <unicode/regex.h>
#include <unicode/unistr.h>
#include <unicode/utf16.h>
#include <unicode/utf8.h>

#include <random>
#include <string>
#include <vector>

#include "tests/tokenizer/test_common.h"
#include "tokenizer/pretokenize.h"
#include "tokenizer/unicode.h"

namespace wb::tokenizer::test {
namespace {

std::vector<std::string> pieces(std::string_view text) {
  std::vector<std::string> out;
  for (const auto p : pretokenize(text)) out.emplace_back(p);
  return out;
}

using strings = std::vector<std::string>;

TEST(Pretokenize, Words) {
  EXPECT_EQ(pieces("Hello world"), (strings{"Hello", " world"}));
  EXPECT_EQ(pieces("Hello, world!"), (strings{"Hello", ",", " world", "!"}));
  EXPECT_EQ(pieces(""), strings{});
  EXPECT_EQ(pieces("mixed123abc"), (strings{"mixed", "123", "abc"}));
  EXPECT_EQ(pieces("3.14 42"), (strings{"3", ".", "14", " 42"}));
  EXPECT_EQ(pieces("!!!???... (x)"), (strings{"!!!???...", " (", "x", ")"}));
}

TEST(Pretokenize, Contractions) {
  EXPECT_EQ(pieces("I'm you're he's we'll they've I'd don't"),
            (strings{"I", "'m", " you", "'re", " he", "'s", " we", "'ll", " they", "'ve", " I", "'d", " don", "'t"}));
  EXPECT_EQ(pieces("'tis"), (strings{"'t", "is"}));
  EXPECT_EQ(pieces("x 's"), (strings{"x", " '", "s"}));  // the space goes with the apostrophe
  EXPECT_EQ(pieces("it''s"), (strings{"it", "''", "s"}));
  EXPECT_EQ(pieces("I'M"), (strings{"I", "'", "M"}));  // case-sensitive
  EXPECT_EQ(pieces("'l"), (strings{"'", "l"}));
  EXPECT_EQ(pieces("'"), (strings{"'"}));
}

TEST(Pretokenize, WhiteSpace) {
  EXPECT_EQ(pieces("  two"), (strings{" ", " two"}));
  EXPECT_EQ(pieces("end  "), (strings{"end", "  "}));
  EXPECT_EQ(pieces("a\n\nb"), (strings{"a", "\n", "\n", "b"}));
  EXPECT_EQ(pieces("a\n\n"), (strings{"a", "\n\n"}));
  EXPECT_EQ(pieces("\t\tx"), (strings{"\t", "\t", "x"}));
  EXPECT_EQ(pieces("a \n b"), (strings{"a", " \n", " b"}));
  EXPECT_EQ(pieces(" "), (strings{" "}));
  // Unicode white space: no-break space, ideographic space, next line (U+0085).
  EXPECT_EQ(pieces("a \u00a0b"), (strings{"a", " ", "\u00a0", "b"}));
  EXPECT_EQ(pieces("x\u3000y"), (strings{"x", "\u3000", "y"}));
  EXPECT_EQ(pieces("x\u0085\u0085y"), (strings{"x", "\u0085", "\u0085", "y"}));
  EXPECT_EQ(pieces("x\u00a0 y"), (strings{"x", "\u00a0", " y"}));
}

TEST(Pretokenize, UnicodeClasses) {
  EXPECT_EQ(pieces("naïve café"), (strings{"naïve", " café"}));
  EXPECT_EQ(pieces("日本語のテキスト"), (strings{"日本語のテキスト"}));
  EXPECT_EQ(pieces("e\u0301"), (strings{"e", "\u0301"}));                            // a combining mark is not a letter
  EXPECT_EQ(pieces("\u0663\u2165\u00bd x"), (strings{"\u0663\u2165\u00bd", " x"}));  // Nd, Nl, No
  EXPECT_EQ(pieces("emoji 😀 and"), (strings{"emoji", " 😀", " and"}));
  EXPECT_EQ(classify(U'\u00aa'), char_class::letter);  // Lo
  EXPECT_EQ(classify(U'\u02b0'), char_class::letter);  // Lm
  EXPECT_EQ(classify(U'\u2028'), char_class::space);   // line separator
  EXPECT_EQ(classify(U'\ufeff'), char_class::other);   // not White_Space
  EXPECT_EQ(classify(U'\u000b'), char_class::space);   // vertical tab
  EXPECT_EQ(classify(U'\u001c'), char_class::other);   // not White_Space
}

TEST(Pretokenize, InvalidUtf8BytesAreSymbols) {
  EXPECT_EQ(pieces("a\xff\xfe b"), (strings{"a", "\xff\xfe", " b"}));
  EXPECT_EQ(pieces(" \xff!"), (strings{" \xff!"}));
  EXPECT_EQ(pieces("x\xe6\x97"), (strings{"x", "\xe6\x97"}));      // truncated sequence
  EXPECT_EQ(pieces("x\xe6\x97\xa5"), (strings{"x\xe6\x97\xa5"}));  // the complete one is a letter
  EXPECT_EQ(pieces("\xc0\xaf"
                   "a"),
            (strings{"\xc0\xaf", "a"}));  // overlong
  EXPECT_EQ(pieces("\xed\xa0\x80"
                   "1"),
            (strings{"\xed\xa0\x80", "1"}));                             // a surrogate
  EXPECT_EQ(pieces("\xf4\x90\x80\x80"), (strings{"\xf4\x90\x80\x80"}));  // above U+10FFFF
}

// ---- ICU's regex engine as the oracle -------------------------------------------
//
// GPT-2's pattern with \s spelled \p{White_Space} (ICU's own \s leaves out \v and
// U+0085, which Python's regex and Unicode count as white space). Bytes that are not
// UTF-8 enter the oracle as lone surrogates U+DC80..U+DCFF (Python's surrogateescape,
// decoded by ICU's U8_NEXT, not by the code under test); a surrogate is neither
// letter, number nor space, so the pattern treats it as a symbol.

constexpr const char* kPattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\p{White_Space}\p{L}\p{N}]+)"
                                 R"(|\p{White_Space}+(?!\P{White_Space})|\p{White_Space}+)";

icu::UnicodeString escape_decode(const std::string& bytes) {
  icu::UnicodeString out;
  const auto* s = reinterpret_cast<const uint8_t*>(bytes.data());
  const auto length = static_cast<int32_t>(bytes.size());
  for (int32_t i = 0; i < length;) {
    const int32_t start = i;
    UChar32 c = 0;
    U8_NEXT(s, i, length, c);
    if (c < 0) {
      for (int32_t k = start; k < i; ++k) out.append(static_cast<UChar>(0xdc00 + s[k]));
    } else {
      out.append(c);
    }
  }
  return out;
}

std::string escape_encode(const icu::UnicodeString& text) {
  std::string out;
  for (int32_t i = 0; i < text.length();) {
    const UChar32 c = text.char32At(i);
    i += U16_LENGTH(c);
    if (c >= 0xdc80 && c <= 0xdcff) {
      out.push_back(static_cast<char>(c - 0xdc00));
    } else {
      icu::UnicodeString one(c);
      one.toUTF8String(out);
    }
  }
  return out;
}

strings oracle(const std::string& text) {
  UErrorCode status = U_ZERO_ERROR;
  static const icu::RegexPattern* pattern = [] {
    UErrorCode s = U_ZERO_ERROR;
    UParseError parse_error;
    auto* p = icu::RegexPattern::compile(icu::UnicodeString::fromUTF8(kPattern), 0, parse_error, s);
    if (U_FAILURE(s)) throw std::runtime_error(std::string("ICU regex: ") + u_errorName(s));
    return p;
  }();
  const icu::UnicodeString input = escape_decode(text);
  std::unique_ptr<icu::RegexMatcher> m(pattern->matcher(input, status));
  strings out;
  int32_t covered = 0;
  while (m->find(status) && U_SUCCESS(status)) {
    const int32_t start = m->start(status), end = m->end(status);
    EXPECT_EQ(start, covered) << "the regex skipped something";
    out.push_back(escape_encode(input.tempSubStringBetween(start, end)));
    covered = end;
  }
  EXPECT_TRUE(U_SUCCESS(status)) << u_errorName(status);
  EXPECT_EQ(covered, input.length());
  return out;
}

TEST(PretokenizeOracle, TinyShakespeare) {
  WB_REQUIRE_DATA();
  const strings got = pieces(shakespeare());
  const strings want = oracle(shakespeare());
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t k = 0; k < got.size(); ++k) ASSERT_EQ(got[k], want[k]) << "piece " << k;
}

TEST(PretokenizeOracle, TokenizerCases) {
  WB_REQUIRE_DATA();
  for (const auto& c : cases()) EXPECT_EQ(pieces(c.text), oracle(c.text)) << c.text;
}

// Characters that exercise every class and every alternative of the pattern.
const std::vector<std::string>& alphabet() {
  static const std::vector<std::string> chars = [] {
    std::vector<std::string> out;
    for (const char* s : {"a", "Z", "s", "t", "r",  "e",  "v",  "m",  "l",  "d", "'", "'", "'", "0",
                          "7", " ", " ", " ", "\n", "\t", "\r", "\v", "\f", ".", "!", "_", "-", "\x1c"}) {
      out.emplace_back(s);
    }
    for (const char32_t cp :
         {0xe9,   0xdf,  0x3a9,  0x43b,  0x5d0,   0x627,   0x905,  0x3042,  0x65e5, 0xac00,  // letters
          0x2b0,  0x1c5, 0xaa,                                                               // Lm, Lt, Lo
          0x663,  0x966, 0xff11, 0x2165, 0xbd,    0x2460,                                    // numbers
          0xa0,   0x85,  0x1680, 0x2003, 0x2028,  0x2029,  0x202f, 0x3000,  0x200b,          // spaces, ZWSP
          0xfeff, 0x301, 0x20ac, 0xa9,   0x1f600, 0x1f44d, 0xe000, 0x10ffff}) {
      icu::UnicodeString one(static_cast<UChar32>(cp));
      std::string utf8;
      one.toUTF8String(utf8);
      out.push_back(utf8);
    }
    return out;
  }();
  return chars;
}

TEST(PretokenizeOracle, RandomUnicode) {
  std::mt19937 rng(20240520);
  std::uniform_int_distribution<std::size_t> pick(0, alphabet().size() - 1), length(0, 24);
  for (int trial = 0; trial < 4000; ++trial) {
    std::string text;
    for (std::size_t k = length(rng); k > 0; --k) text += alphabet()[pick(rng)];
    ASSERT_EQ(pieces(text), oracle(text)) << "text: " << text;
  }
}

TEST(PretokenizeOracle, RandomBytes) {
  std::mt19937 rng(20240328);
  std::uniform_int_distribution<std::size_t> pick(0, alphabet().size() - 1), length(0, 24);
  std::uniform_int_distribution<int> byte(0, 255), coin(0, 3);
  for (int trial = 0; trial < 4000; ++trial) {
    std::string text;
    for (std::size_t k = length(rng); k > 0; --k) {
      if (coin(rng) == 0) {
        text.push_back(static_cast<char>(byte(rng)));
      } else {
        text += alphabet()[pick(rng)];
      }
    }
    std::size_t covered = 0;
    for (const auto& p : pieces(text)) covered += p.size();
    ASSERT_EQ(covered, text.size()) << "pieces must cover every byte";
    ASSERT_EQ(pieces(text), oracle(text)) << "trial " << trial;
  }
}

}  // namespace
}  // namespace wb::tokenizer::test
