#pragma once
// Plain-text tables with aligned columns, for the terminal.
#include <ostream>
#include <string>
#include <vector>

namespace wb {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  bool empty() const { return rows_.empty(); }
  // Columns padded to their widest cell; the last column is not padded.
  void print(std::ostream& out, const std::string& indent = "") const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace wb
