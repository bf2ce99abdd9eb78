// What wb prints: every table column has its header.
#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>

#include "tests/support/test_helpers.h"
#include "workbench/runtime/table.h"

namespace wb {
namespace {

using testing::Result;

Result wb(const std::string& args) { return testing::run_command(WB_BINARY, args); }

TEST(TextTable, EveryCellHasAHeader) {
  TextTable t({"a", "b"});
  EXPECT_THROW(t.add({"1", "2", "3"}), std::logic_error);
  EXPECT_THROW(t.add({"1"}), std::logic_error);
  t.add({"10", "2"});
  std::ostringstream out;
  t.print(out);
  EXPECT_EQ(out.str(), "a   b\n10  2\n");
}

// The header line of the sweep's table names each column, so that every column of a row
// sits under its own header.
TEST(Sweep, TheTableHasAHeaderForEveryColumn) {
  const Result r =
      wb("sweep residual_forward --backend cpu --shape B=2,T=8,C=32 --repetitions 2 --min-time 0.001 "
         "--out /dev/null");
  ASSERT_EQ(r.code, 0) << r.output;
  std::istringstream lines(r.output);
  std::string line, header, row;
  while (std::getline(lines, line)) {
    if (line.find("  variant") == 0) header = line;
    if (header.size() && line.find("cpu/1 reference") != std::string::npos) row = line;
  }
  ASSERT_FALSE(header.empty()) << r.output;
  ASSERT_FALSE(row.empty()) << r.output;
  EXPECT_NE(header.find("% peak"), std::string::npos) << header;
  // The roofline percentage of the row sits under "% peak", the error under "max err".
  const std::size_t peak = header.find("% peak"), err = header.find("max err");
  ASSERT_LT(peak, err);
  EXPECT_EQ(row.substr(peak, row.find(' ', peak) - peak).back(), '%') << header << "\n" << row;
}

}  // namespace
}  // namespace wb
