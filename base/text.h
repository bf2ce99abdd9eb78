#pragma once
// Splitting the lists wb reads from its users (shapes, --shapes, --block-sizes,
// --variants: commas; a child's --configurations: semicolons): one rule for all of them.
#include <string>
#include <string_view>
#include <vector>

namespace wb {

// "a,b,,c": the items between separators, empty ones kept (for the parser to refuse).
inline std::vector<std::string> split_list(std::string_view text, char separator = ',') {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(separator, start);
    if (end == std::string_view::npos) end = text.size();
    items.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return items;
}

}  // namespace wb
