// The tokenizer-file reader (tokenizer/tokenizer_file.h: token_table::parse,
// what `trainer` and `prepare_data decode` run on gpt2_tokenizer.bin). A table it reads
// has its end-of-text id inside the vocabulary, decodes every id to some bytes and
// refuses the id one past its end.
#include <string>

#include "tests/fuzz/fuzz_check.h"
#include "tokenizer/tokenizer_file.h"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  using namespace wb::tokenizer;
  using wb::fuzz::fuzz_require;
  const auto parsed = wb::fuzz::unless_refused<error>(
      [&] { return token_table::parse(wb::fuzz::as_text(data, size), "gpt2_tokenizer.bin"); });
  if (!parsed) return 0;  // not a version-2 tokenizer file: exit 2 in the tools
  const token_table& table = *parsed;
  fuzz_require(table.end_of_text() >= 0 && std::size_t(table.end_of_text()) < table.size(),
               "the end-of-text id is outside the vocabulary");
  for (std::size_t id = 0; id < table.size(); ++id)
    fuzz_require(!table.bytes(token_id(id)).empty(), "a token decodes to no bytes");
  fuzz_require(!wb::fuzz::unless_refused<error>([&] { return table.bytes(token_id(table.size())); }),
               "an id outside the vocabulary decoded");
  return 0;
}
