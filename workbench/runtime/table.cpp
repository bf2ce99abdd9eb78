#include "workbench/runtime/table.h"

#include <algorithm>
#include <stdexcept>

namespace wb {

void TextTable::add(std::vector<std::string> row) {
  if (row.size() != header_.size())
    throw std::logic_error("table row of " + std::to_string(row.size()) + " cells under " +
                           std::to_string(header_.size()) + " headers");
  rows_.push_back(std::move(row));
}

void TextTable::print(std::ostream& out, const std::string& indent) const {
  std::vector<std::size_t> width(header_.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], row[i].size());
  };
  measure(header_);
  for (const auto& r : rows_) measure(r);
  auto line = [&](const std::vector<std::string>& row) {
    std::string s = indent;
    for (std::size_t i = 0; i < row.size(); ++i) {
      s += row[i];
      if (i + 1 < row.size()) s += std::string(width[i] - row[i].size() + 2, ' ');
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out << s << "\n";
  };
  line(header_);
  for (const auto& r : rows_) line(r);
}

}  // namespace wb
