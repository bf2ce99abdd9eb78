#pragma once
// Whole-file reads and writes for the tokenizer tools, with errors (wb::tokenizer::error)
// that name the file and the reason, and little-endian integer packing for the llm.c
// file formats.
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "base/file_header.h"

namespace wb::tokenizer {

// The bytes of a file; `what` says what the file is for in the message of the error.
std::string read_file(const std::filesystem::path& path, std::string_view what = "file");

// Writes bytes to path through base/files.h (a temporary file beside it, flushed and
// renamed into place), so that a failed write leaves no half-written file.
void write_file(const std::filesystem::path& path, std::string_view bytes);

// Bytes as printable text for an error message: printable ASCII as is, \\, \', \n, \r,
// \t, and every other byte as \xHH, so that binary or invalid UTF-8 input shows
// exactly which bytes were wrong.
std::string escape_bytes(std::string_view bytes);

// The 1024-byte header of an llm.c file (base/file_header.h), its errors as
// wb::tokenizer::error.
std::array<std::int32_t, 256> llmc_header(std::string_view bytes, const FileHeaderFormat& format,
                                          const std::string& where);

void append_le32(std::string& out, std::int32_t value);
void append_le16(std::string& out, std::uint16_t value);
std::int32_t load_le32(const char* p);
std::uint16_t load_le16(const char* p);

}  // namespace wb::tokenizer
