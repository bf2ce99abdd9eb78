#pragma once
// SHA-256 (FIPS 180-4), to check a downloaded or cached data file against the checksum
// pinned for it (tokenizer/data_files.h). Written here, a hundred lines, rather than
// taken from OpenSSL: wb links no crypto library, and this is the only hash it needs.
#include <string>
#include <string_view>

namespace wb::tokenizer {

// The digest of the bytes as 64 lowercase hexadecimal digits.
std::string sha256_hex(std::string_view bytes);

// Whether text is a SHA-256 in hexadecimal (64 digits, either case).
bool is_sha256_hex(std::string_view text);

}  // namespace wb::tokenizer
