// Preparing TinyShakespeare's token splits.
#include "tokenizer/dataset.h"

namespace wb::tokenizer {

std::vector<std::string_view> split_sections(std::string_view text, std::string_view separator) {
  std::vector<std::string_view> sections;
  std::size_t start = 0;
  for (std::size_t at; (at = text.find(separator, start)) != std::string_view::npos; start = at + separator.size()) {
    sections.push_back(text.substr(start, at - start));
  }
  sections.push_back(text.substr(start));
  return sections;
}

token_split tinyshakespeare_tokens(std::string_view text, bpe_tokenizer& tokenizer, std::size_t val_tokens) {
  const auto eot = tokenizer.end_of_text();
  if (!eot) throw error("the vocabulary has no <|endoftext|> token");
  constexpr std::string_view blank_line = "\n\n";
  const std::vector<std::string_view> sections = split_sections(text, blank_line);
  std::vector<token_id> all;
  all.reserve(text.size() / 3);
  std::string section;
  for (std::size_t k = 0; k < sections.size(); ++k) {
    all.push_back(*eot);
    section.assign(sections[k]);
    if (k + 1 < sections.size()) section += blank_line;
    tokenizer.encode(section, all);
  }
  if (all.size() <= val_tokens) {
    throw error("the text gives " + std::to_string(all.size()) + " tokens, not more than the " +
                std::to_string(val_tokens) + " of the validation split: nothing is left for training");
  }
  token_split split;
  split.val.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(val_tokens));
  split.train.assign(all.begin() + static_cast<std::ptrdiff_t>(val_tokens), all.end());
  return split;
}

}  // namespace wb::tokenizer
