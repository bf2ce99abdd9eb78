// The counters end to end: `wb check --backend emu --counters` records them, and `wb
// compare` fails on a planted uncoalesced load. residual_forward emu/97 of tests/planted/
// (planted_strided) is emu/91 (the naive port) with every warp's accesses at a stride of
// 2 floats; its record, relabelled as emu/91's, stands for a change that uncoalesced
// emu/91. The plain build only (the sanitized builds report no plain accesses).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/programs.h"
#include "workbench/runtime/report.h"

namespace wb {
namespace {

using testing::contains;
using testing::read_planted_report;
using testing::Result;
using testing::run_planted;

class CountersGate : public testing::PlainEmulatorSuite {
 protected:
  // One planted variant checked with counters at the odd shape; the report's path.
  std::string check(int variant) {
    const std::string json = dir_ / ("v" + std::to_string(variant) + ".json");
    const Result r = run_planted("check residual_forward --backend emu --variants " + std::to_string(variant) +
                                 " --shapes odd --seed 5 --counters --json " + json);
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "COUNTERS residual_forward emu/" + std::to_string(variant))) << r.output;
    return json;
  }
};

TEST_F(CountersGate, ReportsRecordTheCountersAndTheirSites) {
  const Report report = read_planted_report(check(97));
  ASSERT_FALSE(report.records.empty());
  for (const Record& r : report.records) {
    ASSERT_TRUE(r.counters.has_value()) << r.shape_text();
    const CounterTotals t = r.counters->totals();
    // Every full-warp request of the strided kernel touches 8 sectors where 4 would do;
    // the last warps of the odd shape are partial, so the ratio is at least 7/4 of the
    // ideal, never the ideal itself.
    EXPECT_GT(t.sectors, t.ideal_sectors * 7 / 4) << t.sectors << " of " << t.ideal_sectors;
    bool named = false;
    for (const KernelCount& k : r.counters->kernels)
      for (const SiteCount& s : k.sites) named = named || contains(s.site, "tests/planted/planted_faults.cu:");
    EXPECT_TRUE(named) << "no site names the planted kernel's line";
  }
}

TEST_F(CountersGate, ComparingAReportWithItselfPasses) {
  const std::string base = check(91);
  const Result r = run_planted("compare " + base + " " + base);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_FALSE(contains(r.output, "WORSE !")) << r.output;
}

TEST_F(CountersGate, FailsOnAPlantedUncoalescedLoadNamingItsSite) {
  const std::string base = check(91);
  // emu/97's records under emu/91's name: emu/91 as a change that uncoalesced it.
  const std::string strided = check(97);
  nlohmann::json j;
  std::ifstream(strided) >> j;
  for (auto& rec : j["records"]) {
    rec["variant"] = 91;
    rec["variant_name"] = "planted_naive_again";
  }
  const std::string changed = dir_ / "changed.json";
  std::ofstream(changed) << j.dump();

  const Result r = run_planted("compare " + base + " " + changed);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "WORSE !")) << r.output;
  EXPECT_TRUE(contains(r.output, "global sectors/request")) << r.output;
  EXPECT_TRUE(contains(r.output, "tests/planted/planted_faults.cu:")) << r.output;
  EXPECT_TRUE(contains(r.output, "global load")) << r.output;

  // The same change within an allowed increase of 200% passes.
  const Result allowed = run_planted("compare " + base + " " + changed + " --max-counter-increase 200%");
  EXPECT_EQ(allowed.code, 0) << allowed.output;
}

}  // namespace
}  // namespace wb
