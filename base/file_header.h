#pragma once
// The 1024-byte header that opens llm.c's files (model, token and tokenizer files: 256
// little-endian int32) and the trainer's state file (128 little-endian uint64): slot 0
// holds the magic number, slot 1 the version. One reader for all of them, so that a
// short, foreign or newer file gets the same checks and the same words everywhere.
#include <array>
#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>

namespace wb {

inline constexpr std::size_t kFileHeaderBytes = 1024;

struct FileHeaderFormat {
  std::string kind;          // "token file": "<file>: token file version 3, ..."
  std::string a_kind;        // "a token file": "<file>: not a token file (magic ...)"
  int64_t magic = 0;
  int64_t version = 0;
  std::string version_note;  // after the version read: " (fp32, padded vocabulary)"
  std::string foreign_hint;  // after the magic expected: "; --save writes a model file"
};

// The header's slots from the first 1024 bytes of `bytes`. Throws UsageError naming
// `where` when there are fewer than 1024 bytes ("truncated <kind> (no complete 1024-byte
// header: N bytes, too short)"), when slot 0 is not the magic ("not <a_kind> (magic X, expected Y)") or slot
// 1 not the version ("<kind> version X, expected version Y").
template <class Slot>
std::array<Slot, kFileHeaderBytes / sizeof(Slot)> parse_file_header(std::string_view bytes,
                                                                     const FileHeaderFormat& format,
                                                                     const std::string& where);

// The same, reading the header from the stream's current position.
template <class Slot>
std::array<Slot, kFileHeaderBytes / sizeof(Slot)> read_file_header(std::istream& in, const FileHeaderFormat& format,
                                                                    const std::string& where);

extern template std::array<int32_t, 256> parse_file_header<int32_t>(std::string_view, const FileHeaderFormat&,
                                                                    const std::string&);
extern template std::array<uint64_t, 128> parse_file_header<uint64_t>(std::string_view, const FileHeaderFormat&,
                                                                      const std::string&);
extern template std::array<int32_t, 256> read_file_header<int32_t>(std::istream&, const FileHeaderFormat&,
                                                                   const std::string&);
extern template std::array<uint64_t, 128> read_file_header<uint64_t>(std::istream&, const FileHeaderFormat&,
                                                                     const std::string&);

}  // namespace wb
