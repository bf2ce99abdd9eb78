#pragma once
// llm.c's tokenizer file (gpt2_tokenizer.bin), what a trainer needs to turn ids back
// into text: a header of 256 little-endian int32 (magic 20240328, version 2, vocabulary
// size, end-of-text id, the rest zero), then every token in id order as one length byte
// followed by its bytes.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/bpe.h"
#include "tokenizer/common.h"

namespace wb::tokenizer {

constexpr std::int32_t kTokenizerFileMagic = 20240328;
constexpr std::int32_t kTokenizerFileVersion = 2;

// Writes the tokenizer's vocabulary; throws error when it has no end-of-text token, a
// token is longer than 255 bytes, or the file cannot be written.
void write_tokenizer_file(const std::filesystem::path& path, const bpe_tokenizer& tokenizer);

// The decoding side only, read from a tokenizer file.
class token_table {
 public:
  // Throws error when the file is missing, truncated, or not a version-2 tokenizer file.
  static token_table read(const std::filesystem::path& path);
  // The same from the file's bytes; `where` names them in the message of the error.
  static token_table parse(std::string_view bytes, const std::string& where);

  std::size_t size() const { return tokens_.size(); }
  token_id end_of_text() const { return end_of_text_; }
  // Throws error for an id outside the vocabulary.
  const std::string& bytes(token_id id) const;
  std::string decode(const std::vector<token_id>& ids) const;

 private:
  std::vector<std::string> tokens_;
  token_id end_of_text_ = 0;
};

}  // namespace wb::tokenizer
