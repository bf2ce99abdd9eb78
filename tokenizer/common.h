#pragma once
// What every part of the tokenizer library shares: the id type and the error type.
#include <cstdint>
#include <stdexcept>

namespace wb::tokenizer {

using token_id = std::int32_t;

// Bad input: a missing, unreadable or malformed vocabulary or token file, an id outside
// the vocabulary, an output that cannot be written. The message says which file and
// what is wrong; the command line turns it into exit code 2.
struct error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace wb::tokenizer
