// The token-file reader (tokenizer/token_file.h: parse_token_file, what the
// trainer's read_tokens and `prepare_data decode` run on a file's bytes). Tokens it
// reads are uint16 values, and written back they give the same bytes.
#include <string>

#include "tests/fuzz/fuzz_check.h"
#include "tokenizer/io.h"
#include "tokenizer/token_file.h"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  using namespace wb::tokenizer;
  const std::string_view bytes = wb::fuzz::as_text(data, size);
  const auto ids = wb::fuzz::unless_refused<error>([&] { return parse_token_file(bytes, "tokens.bin"); });
  if (!ids) return 0;  // not a version-1 token file of the size it says: exit 2 in the tools
  std::string tokens;
  for (const token_id id : *ids) {
    wb::fuzz::fuzz_require(id >= 0 && id <= 0xffff, "a token read does not fit in uint16");
    append_le16(tokens, static_cast<std::uint16_t>(id));
  }
  wb::fuzz::fuzz_require(bytes.substr(kHeaderInts * 4) == tokens, "tokens read are not the file's tokens");
  return 0;
}
