// llm.c's tokenizer file: writer (from the BPE vocabulary) and reader (token_table).
#include "tokenizer/tokenizer_file.h"

#include "tokenizer/io.h"
#include "tokenizer/token_file.h"

namespace wb::tokenizer {

void write_tokenizer_file(const std::filesystem::path& path, const bpe_tokenizer& tokenizer) {
  const auto eot = tokenizer.end_of_text();
  if (!eot) throw error("cannot write " + path.string() + ": the vocabulary has no <|endoftext|> token");
  std::string bytes;
  append_le32(bytes, kTokenizerFileMagic);
  append_le32(bytes, kTokenizerFileVersion);
  append_le32(bytes, static_cast<std::int32_t>(tokenizer.vocab_size()));
  append_le32(bytes, *eot);
  bytes.resize(kHeaderInts * 4, '\0');
  for (std::size_t id = 0; id < tokenizer.vocab_size(); ++id) {
    const std::string& token = tokenizer.token_bytes(static_cast<token_id>(id));
    if (token.empty() || token.size() > 255) {
      throw error("cannot write " + path.string() + ": token " + std::to_string(id) + " has " +
                  std::to_string(token.size()) + " bytes (1 to 255 fit the format)");
    }
    bytes.push_back(static_cast<char>(token.size()));
    bytes += token;
  }
  write_file(path, bytes);
}

token_table token_table::read(const std::filesystem::path& path) {
  return parse(read_file(path, "tokenizer file"), path.string());
}

token_table token_table::parse(std::string_view bytes, const std::string& where) {
  const auto header = llmc_header(
      bytes, {"tokenizer file", "a tokenizer file", kTokenizerFileMagic, kTokenizerFileVersion, "", ""}, where);
  const std::int32_t size = header[2];
  const std::int32_t eot = header[3];
  if (size <= 0 || eot < 0 || eot >= size) {
    throw error(where + ": bad header (vocabulary size " + std::to_string(size) + ", end of text " +
                std::to_string(eot) + ")");
  }
  // The header against the file's size before anything is allocated: every token takes
  // at least two bytes, and a corrupt count (2^31) would otherwise reserve gigabytes.
  const std::size_t at_most = (bytes.size() - kHeaderInts * 4) / 2;
  if (static_cast<std::size_t>(size) > at_most) {
    throw error(where + ": the header says " + std::to_string(size) + " tokens but the file's " +
                std::to_string(bytes.size()) + " bytes hold at most " + std::to_string(at_most));
  }
  token_table table;
  table.end_of_text_ = eot;
  table.tokens_.reserve(static_cast<std::size_t>(size));
  std::size_t pos = kHeaderInts * 4;
  for (std::int32_t id = 0; id < size; ++id) {
    if (pos >= bytes.size()) throw error(where + ": truncated at token " + std::to_string(id));
    const auto length = static_cast<unsigned char>(bytes[pos]);
    if (length == 0 || pos + 1 + length > bytes.size()) {
      throw error(where + ": truncated or corrupt at token " + std::to_string(id));
    }
    table.tokens_.emplace_back(bytes, pos + 1, length);
    pos += 1 + length;
  }
  if (pos != bytes.size())
    throw error(where + ": " + std::to_string(bytes.size() - pos) + " bytes after the last token");
  return table;
}

const std::string& token_table::bytes(token_id id) const { return tokens_[vocabulary_index(id, tokens_.size())]; }

std::string token_table::decode(const std::vector<token_id>& ids) const {
  std::string out;
  for (const token_id id : ids) out += bytes(id);
  return out;
}

}  // namespace wb::tokenizer
