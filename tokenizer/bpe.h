#pragma once
// GPT-2's byte-level byte-pair encoding: the vocabulary (encoder.json: token -> id, its
// keys written in GPT-2's byte-to-unicode alphabet) and the ranked merges (vocab.bpe),
// encoding a text to ids (pre-tokenizer, then merges over each piece's bytes) and
// decoding ids back to bytes. Ordinary encoding: "<|endoftext|>" in a text is plain
// text; the end-of-text id is only ever inserted by the caller.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/common.h"

namespace wb::tokenizer {

// GPT-2's reversible map from the 256 byte values to printable code points: the
// printable Latin-1 bytes stand for themselves, the others for U+0100 upwards.
char32_t byte_to_code_point(unsigned char b);

class bpe_tokenizer {
 public:
  // Reads dir/encoder.json and dir/vocab.bpe.
  static bpe_tokenizer load(const std::filesystem::path& dir);
  static bpe_tokenizer load(const std::filesystem::path& encoder_json, const std::filesystem::path& vocab_bpe);
  // The same from the files' contents; the names are for error messages.
  static bpe_tokenizer parse(std::string_view encoder_json, std::string_view vocab_bpe,
                             const std::string& encoder_name = "encoder.json",
                             const std::string& vocab_name = "vocab.bpe");

  // Appends the ids of text to out. Not thread-safe: it keeps a cache of the pieces it
  // has encoded.
  void encode(std::string_view text, std::vector<token_id>& out);
  std::vector<token_id> encode(std::string_view text);

  // The ids of one pre-tokenized piece, without the cache. `quadratic` picks the plain
  // algorithm (rescan all pairs after every merge) over the priority queue that
  // encode() uses for long pieces; both give the same ids (a test checks it).
  std::vector<token_id> encode_piece(std::string_view piece, bool quadratic) const;

  // The bytes of ids, concatenated; throws error for an id outside the vocabulary.
  std::string decode(const std::vector<token_id>& ids) const;
  void decode(const token_id* ids, std::size_t n, std::string& out) const;

  std::size_t vocab_size() const { return token_bytes_.size(); }
  const std::string& token_bytes(token_id id) const;
  // The id of "<|endoftext|>", when the vocabulary has it.
  std::optional<token_id> end_of_text() const { return end_of_text_; }
  std::size_t merge_count() const { return merges_.size(); }

  void clear_cache() { cache_.clear(); }

 private:
  struct merge {
    std::uint32_t rank;
    token_id result;
  };

  bpe_tokenizer() = default;
  const merge* find_merge(token_id left, token_id right) const;
  void encode_piece_to(std::string_view piece, std::vector<token_id>& out) const;
  void merge_quadratic(std::vector<token_id>& ids) const;
  void merge_with_queue(std::vector<token_id>& ids) const;

  std::vector<std::string> token_bytes_;             // id -> raw bytes
  token_id byte_token_[256] = {};                    // byte value -> id of the one-byte token
  std::unordered_map<std::uint64_t, merge> merges_;  // (left id, right id) -> rank and result
  std::optional<token_id> end_of_text_;
  std::unordered_map<std::string, std::vector<token_id>> cache_;
};

}  // namespace wb::tokenizer
