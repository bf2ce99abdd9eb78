// Whole-file reads and writes with errors that name the file, and little-endian packing.
#include "tokenizer/io.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

#include "base/files.h"
#include "tokenizer/common.h"

namespace wb::tokenizer {
namespace {

std::string reason() { return std::strerror(errno); }

}  // namespace

std::string read_file(const std::filesystem::path& path, std::string_view what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw error("cannot read " + std::string(what) + " " + path.string() + ": it is a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error("cannot read " + std::string(what) + " " + path.string() + ": " + reason());
  std::string bytes;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size > 0) {
    bytes.resize(static_cast<std::size_t>(size));
    in.read(bytes.data(), size);
  }
  if (!in) throw error("cannot read " + std::string(what) + " " + path.string() + ": read failed");
  return bytes;
}

void write_file(const std::filesystem::path& path, std::string_view bytes) {
  try {
    write_file_atomically(path, bytes);
  } catch (const FileError& e) {
    throw error(e.what());
  }
}

std::array<std::int32_t, 256> llmc_header(std::string_view bytes, const FileHeaderFormat& format,
                                          const std::string& where) {
  try {
    return parse_file_header<std::int32_t>(bytes, format, where);
  } catch (const UsageError& e) {
    throw error(e.what());
  }
}

std::string escape_bytes(std::string_view bytes) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (const char ch : bytes) {
    const auto b = static_cast<unsigned char>(ch);
    if (ch == '\\' || ch == '\'') {
      out += '\\';
      out += ch;
    } else if (ch == '\n') {
      out += "\\n";
    } else if (ch == '\r') {
      out += "\\r";
    } else if (ch == '\t') {
      out += "\\t";
    } else if (b >= 0x20 && b < 0x7f) {
      out += ch;
    } else {
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 0xf];
    }
  }
  return out;
}

void append_le32(std::string& out, std::int32_t value) {
  const auto u = static_cast<std::uint32_t>(value);
  for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<char>((u >> shift) & 0xff));
}

void append_le16(std::string& out, std::uint16_t value) {
  out.push_back(static_cast<char>(value & 0xff));
  out.push_back(static_cast<char>(value >> 8));
}

std::int32_t load_le32(const char* p) {
  const auto* b = reinterpret_cast<const unsigned char*>(p);
  const std::uint32_t u =
      std::uint32_t{b[0]} | (std::uint32_t{b[1]} << 8) | (std::uint32_t{b[2]} << 16) | (std::uint32_t{b[3]} << 24);
  return static_cast<std::int32_t>(u);
}

std::uint16_t load_le16(const char* p) {
  const auto* b = reinterpret_cast<const unsigned char*>(p);
  return static_cast<std::uint16_t>(b[0] | (b[1] << 8));
}

}  // namespace wb::tokenizer
