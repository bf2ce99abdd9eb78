#pragma once
// Plain-text tables with aligned columns, for the terminal.
#include <ostream>
#include <string>
#include <vector>

namespace wb {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  // Throws std::logic_error unless the row has a cell for every header: a column
  // without a header would shift every column after it.
  void add(std::vector<std::string> row);
  bool empty() const { return rows_.empty(); }
  // Columns padded to their widest cell; the last column is not padded.
  void print(std::ostream& out, const std::string& indent = "") const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace wb
