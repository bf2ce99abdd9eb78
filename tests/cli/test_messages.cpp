// What wb prints: every table column has its header.
#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>

#include "tests/support/test_helpers.h"
#include "workbench/cli/output.h"
#include "workbench/runtime/counters.h"
#include "workbench/runtime/table.h"

namespace wb {
namespace {

using testing::Result;

Result wb(const std::string& args) { return testing::run_command(WB_BINARY, args); }

// The counters line says why occupancy is missing (a build without nvcc has no table of
// the kernels' resources) instead of leaving it out without a word.
TEST(CountersLine, SaysWhenOccupancyCouldNotBeComputed) {
  KernelCount k;
  k.kernel = "k";
  k.threads = 32;
  k.launches = k.blocks = k.counted_blocks = k.warps = k.counted_warps = 1;
  SiteCount load;
  load.site = "variants/x/01_x.cu:1";
  load.bytes = 4;
  load.requests = 1;
  load.active_lanes = 32;
  load.sectors = load.ideal_sectors = 4;
  k.sites.push_back(load);
  k.occupancy_not_computed = "no resource table: this build had no nvcc";
  Counters c;
  c.kernels.push_back(k);
  const std::string none = cli::format_counters(c);
  EXPECT_TRUE(testing::contains(none, "; occupancy: not computed (no resource table: this build had no nvcc)")) << none;

  c.kernels[0].occupancy_not_computed.clear();
  c.kernels[0].occupancy.push_back(Occupancy{90, 2, 2, 64, "blocks"});
  const std::string known = cli::format_counters(c);
  EXPECT_TRUE(testing::contains(known, "; occupancy sm_90 ")) << known;
  EXPECT_FALSE(testing::contains(known, "not computed")) << known;
}

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
         "--variants no-torch --out /dev/null");
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
