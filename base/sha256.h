#pragma once
// SHA-256 (FIPS 180-4) of bytes, as 64 lowercase hex digits: the identity of a variant's
// code (base/source_identity.h) and the checksums of the data files prepare_data finds
// or downloads (tokenizer/data_files.h). Written here: wb links no crypto library.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace wb {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t bytes);
  void update(std::string_view text) { update(text.data(), text.size()); }
  // The digest as hex; the object is spent afterwards.
  std::string hex();

 private:
  void block(const unsigned char* p);
  std::uint32_t h_[8];
  unsigned char buffer_[64];
  std::size_t buffered_ = 0;
  std::uint64_t total_ = 0;
};

std::string sha256_hex(std::string_view text);

// Whether text is a SHA-256 in hexadecimal (64 digits, either case).
bool is_sha256_hex(std::string_view text);

}  // namespace wb
