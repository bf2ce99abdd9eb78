#pragma once
// What the fuzz targets of tests/fuzz/ share. A target feeds libFuzzer's bytes to one
// reader. The reader's documented error for bad input (wb::UsageError, or
// wb::tokenizer::error in the tokenizer library) is an expected outcome and is caught
// by the target; anything else is a finding: a crash or a sanitizer report, another
// exception escaping (libFuzzer reports it as a deadly signal from std::terminate), or
// a broken property checked with fuzz_require.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>

namespace wb::fuzz {

// Aborts (a finding libFuzzer saves as a crash input) when a property does not hold.
inline void fuzz_require(bool holds, const char* what) {
  if (holds) return;
  std::fprintf(stderr, "fuzz property broken: %s\n", what);
  std::abort();
}

// What `read` returns, or nothing where it throws `Refusal`: the reader's documented
// answer to bad input, an expected outcome (the tools say why and exit 2), where any
// other exception escapes as a finding.
template <class Refusal, class Read>
auto unless_refused(Read&& read) -> std::optional<decltype(read())> {
  try {
    return read();
  } catch (const Refusal&) {
    return std::nullopt;
  }
}

inline std::string_view as_text(const unsigned char* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace wb::fuzz
