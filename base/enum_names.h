#pragma once
// An enum's values and their names, written once in declaration order: to_string reads
// such a table one way, a parser the other, and a parser's error lists the names as the
// legal values.
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "base/errors.h"

namespace wb {

template <class E, std::size_t N>
using EnumNames = std::pair<E, std::string_view>[N];

// "?" for a value the table lacks.
template <class E, std::size_t N>
std::string_view name_in(const EnumNames<E, N>& names, E value) {
  for (const auto& [v, name] : names)
    if (v == value) return name;
  return "?";
}

// Throws UsageError naming what is parsed and the legal names:
// "unknown backend 'x' (legal: cpu, cuda, emu)".
template <class E, std::size_t N>
E parse_name(const EnumNames<E, N>& names, std::string_view s, const char* what) {
  std::string legal;
  for (const auto& [v, name] : names) {
    if (name == s) return v;
    legal += (legal.empty() ? "" : ", ") + std::string(name);
  }
  throw UsageError("unknown " + std::string(what) + " '" + std::string(s) + "' (legal: " + legal + ")");
}

}  // namespace wb
