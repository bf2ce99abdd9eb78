#include "base/file_header.h"

#include <type_traits>

#include "base/errors.h"

namespace wb {

template <class Slot>
std::array<Slot, kFileHeaderBytes / sizeof(Slot)> parse_file_header(std::string_view bytes,
                                                                     const FileHeaderFormat& f,
                                                                     const std::string& where) {
  if (bytes.size() < kFileHeaderBytes)
    throw UsageError(where + ": truncated " + f.kind + " (no complete 1024-byte header: " + std::to_string(bytes.size()) +
                     " bytes, too short)");
  std::array<Slot, kFileHeaderBytes / sizeof(Slot)> slots{};
  using Bits = std::make_unsigned_t<Slot>;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    Bits value = 0;
    for (std::size_t b = 0; b < sizeof(Slot); ++b)
      value |= Bits(static_cast<unsigned char>(bytes[i * sizeof(Slot) + b])) << (8 * b);
    slots[i] = static_cast<Slot>(value);
  }
  if (int64_t(slots[0]) != f.magic)
    throw UsageError(where + ": not " + f.a_kind + " (magic " + std::to_string(slots[0]) + ", expected " +
                     std::to_string(f.magic) + f.foreign_hint + ")");
  if (int64_t(slots[1]) != f.version)
    throw UsageError(where + ": " + f.kind + " version " + std::to_string(slots[1]) + ", expected version " +
                     std::to_string(f.version) + f.version_note);
  return slots;
}

template <class Slot>
std::array<Slot, kFileHeaderBytes / sizeof(Slot)> read_file_header(std::istream& in, const FileHeaderFormat& f,
                                                                    const std::string& where) {
  std::string bytes(kFileHeaderBytes, '\0');
  in.read(bytes.data(), std::streamsize(bytes.size()));
  bytes.resize(std::size_t(in.gcount()));
  return parse_file_header<Slot>(bytes, f, where);
}

template std::array<int32_t, 256> parse_file_header<int32_t>(std::string_view, const FileHeaderFormat&,
                                                             const std::string&);
template std::array<uint64_t, 128> parse_file_header<uint64_t>(std::string_view, const FileHeaderFormat&,
                                                               const std::string&);
template std::array<int32_t, 256> read_file_header<int32_t>(std::istream&, const FileHeaderFormat&,
                                                            const std::string&);
template std::array<uint64_t, 128> read_file_header<uint64_t>(std::istream&, const FileHeaderFormat&,
                                                              const std::string&);

}  // namespace wb
