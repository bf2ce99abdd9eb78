#pragma once
// What every part of the tokenizer library shares: the id type and the error type.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace wb::tokenizer {

using token_id = std::int32_t;

// Bad input: a missing, unreadable or malformed vocabulary or token file, an id outside
// the vocabulary, an output that cannot be written. The message says which file and
// what is wrong; the command line turns it into exit code 2.
struct error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The index of `id` in a vocabulary of `size` tokens; throws error for an id outside it.
inline std::size_t vocabulary_index(token_id id, std::size_t size) {
  if (id < 0 || static_cast<std::size_t>(id) >= size)
    throw error("token id " + std::to_string(id) + " is outside the vocabulary (0.." + std::to_string(size - 1) + ")");
  return static_cast<std::size_t>(id);
}

}  // namespace wb::tokenizer
