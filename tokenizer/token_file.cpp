// llm.c's token file: writer and reader.
#include "tokenizer/token_file.h"

#include <limits>
#include <string>

#include "tokenizer/io.h"

namespace wb::tokenizer {

void write_token_file(const std::filesystem::path& path, const std::vector<token_id>& ids) {
  if (ids.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    throw error("cannot write " + path.string() + ": too many tokens for the header");
  }
  std::string bytes;
  bytes.reserve(kHeaderInts * 4 + ids.size() * 2);
  append_le32(bytes, kTokenFileMagic);
  append_le32(bytes, kTokenFileVersion);
  append_le32(bytes, static_cast<std::int32_t>(ids.size()));
  bytes.resize(kHeaderInts * 4, '\0');
  for (const token_id id : ids) {
    if (id < 0 || id > std::numeric_limits<std::uint16_t>::max()) {
      throw error("cannot write " + path.string() + ": token id " + std::to_string(id) + " does not fit in uint16");
    }
    append_le16(bytes, static_cast<std::uint16_t>(id));
  }
  write_file(path, bytes);
}

std::vector<token_id> read_token_file(const std::filesystem::path& path) {
  return parse_token_file(read_file(path, "token file"), path.string());
}

std::vector<token_id> parse_token_file(std::string_view bytes, const std::string& where) {
  const std::int32_t count = llmc_header(bytes, {"token file", "a token file", kTokenFileMagic, kTokenFileVersion, "", ""},
                                         where)[2];
  if (count < 0 || bytes.size() != kHeaderInts * 4 + static_cast<std::size_t>(count) * 2) {
    throw error(where + ": the header says " + std::to_string(count) + " tokens but the file has " +
                std::to_string(bytes.size()) + " bytes");
  }
  std::vector<token_id> ids(static_cast<std::size_t>(count));
  for (std::size_t k = 0; k < ids.size(); ++k) ids[k] = load_le16(bytes.data() + kHeaderInts * 4 + 2 * k);
  return ids;
}

}  // namespace wb::tokenizer
