#pragma once
// Splitting the comma lists wb reads from its users (shapes, --shapes, --block-sizes,
// --variants): one rule for all of them.
#include <string>
#include <string_view>
#include <vector>

namespace wb {

// "a,b,,c": the items between commas, empty ones kept (for the parser to refuse).
inline std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    items.emplace_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

}  // namespace wb
