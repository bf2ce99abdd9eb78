#pragma once
// llm.c's token file (e.g. tiny_shakespeare_train.bin): a header of 256 little-endian
// int32 (magic 20240520, version 1, token count, the rest zero), then the tokens as
// little-endian uint16.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/common.h"

namespace wb::tokenizer {

constexpr std::int32_t kTokenFileMagic = 20240520;
constexpr std::int32_t kTokenFileVersion = 1;
constexpr std::size_t kHeaderInts = 256;

// Throws error when an id does not fit in uint16 or the file cannot be written.
void write_token_file(const std::filesystem::path& path, const std::vector<token_id>& ids);

// Throws error when the file is missing, its header is not a version-1 token file, or
// its size does not match the count in the header.
std::vector<token_id> read_token_file(const std::filesystem::path& path);
// The same from the file's bytes; `where` names them in the message of the error.
std::vector<token_id> parse_token_file(std::string_view bytes, const std::string& where);

}  // namespace wb::tokenizer
