#pragma once
// Turning a corpus into llm.c's training and validation token files. TinyShakespeare:
// the text is cut at every blank line ("\n\n"); each section gets the end-of-text token
// before it and is encoded with its "\n\n" put back (all but the last); the first
// 32,768 tokens are the validation split, the rest the training split.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/bpe.h"
#include "tokenizer/common.h"

namespace wb::tokenizer {

constexpr std::size_t kTinyShakespeareValTokens = 32768;
constexpr const char* kTinyShakespeareUrl =
    "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt";

// The sections of a text cut at every non-overlapping `separator`, left to right (as
// Python's str.split does); the separators are not part of the sections.
std::vector<std::string_view> split_sections(std::string_view text, std::string_view separator);

struct token_split {
  std::vector<token_id> val;
  std::vector<token_id> train;
};

// All tokens of the text as described above, then split. Throws error when the
// vocabulary has no end-of-text token or the text gives no training tokens.
token_split tinyshakespeare_tokens(std::string_view text, bpe_tokenizer& tokenizer,
                                   std::size_t val_tokens = kTinyShakespeareValTokens);

}  // namespace wb::tokenizer
