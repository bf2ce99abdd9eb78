// Numeric flags of wb: nan, inf, negative and (where meaningless) zero are refused
// before any work, exit 2, with a message naming the flag.
#include <gtest/gtest.h>

#include <string>

#include "test_helpers.h"

namespace wb {
namespace {

using testing::Result;

Result wb(const std::string& args) { return testing::run_command(WB_BINARY, args); }

constexpr const char* kRun = "run residual_forward --variant 1 --backend cpu --shape B=2,T=8,C=32 ";
constexpr const char* kSweep = "sweep residual_forward --backend cpu --shape B=2,T=8,C=32 --out /dev/null ";

TEST(TimingFlags, RunRefusesMeaninglessValues) {
  for (const char* value : {"nan", "inf", "0", "-1", "-inf"}) {
    const Result r = wb(std::string(kRun) + "--min-time=" + value);
    EXPECT_EQ(r.code, 2) << value << ": " << r.output;
    EXPECT_NE(r.output.find("--min-time"), std::string::npos) << r.output;
  }
  for (const char* value : {"0", "-3"}) {
    const Result r = wb(std::string(kRun) + "--repetitions=" + value);
    EXPECT_EQ(r.code, 2) << value << ": " << r.output;
    EXPECT_NE(r.output.find("--repetitions"), std::string::npos) << r.output;
  }
  EXPECT_EXIT_WITH(wb(std::string(kRun) + "--repetitions 2 --min-time 0.001"), 0, "over 2 repetitions");
}

TEST(TimingFlags, SweepRefusesThemBeforeMeasuringAnything) {
  for (const char* flag : {"--min-time=nan", "--min-time=inf", "--min-time=0", "--repetitions=0", "--repetitions=-1"}) {
    const Result r = wb(std::string(kSweep) + flag);
    EXPECT_EQ(r.code, 2) << flag << ": " << r.output;
    EXPECT_NE(r.output.find(std::string(flag).substr(0, std::string(flag).find('='))), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("ceilings"), std::string::npos) << "no work before the check: " << r.output;
  }
}

TEST(TimingFlags, CompareRefusesSlowdownsThatAreNotPercentages) {
  // Checked before the reports are read: these files do not exist.
  for (const char* value : {"nan", "nan%", "inf%", "-5%", "infinity"}) {
    const Result r = wb(std::string("compare /nonexistent/a.json /nonexistent/b.json --max-slowdown=") + value);
    EXPECT_EQ(r.code, 2) << value << ": " << r.output;
    EXPECT_NE(r.output.find("--max-slowdown"), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace wb
