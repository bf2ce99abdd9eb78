// The counters end to end: `wb check --backend emu --counters` records them, and `wb
// compare` fails on a planted uncoalesced load. residual_forward emu/97 of tests/planted/
// (planted_strided) is emu/91 (the naive port) with every warp's accesses at a stride of
// 2 floats; its record, relabelled as emu/91's, stands for a change that uncoalesced
// emu/91. And the control for a warp's turns (emu/84 against emu/83). The plain build
// only (the sanitized builds report no plain accesses).
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

// The counters' control for a warp's turns. residual_forward emu/84 (planted_half_warp_turns)
// has the two half-warps of every warp take turns, half 0 first, a __syncwarp between,
// at its two global loads and its shared store (lane l at word 2l); emu/83 is the same
// with both halves in the first turn. At N = 128 (four blocks of one full warp) a GPU
// issues, per warp and instruction, two requests of 16 lanes for emu/84 and one of 32
// for emu/83.
struct TurnFigures {
  SiteCount loads, stores;  // the global loads and the shared stores, summed
  std::string output;
};

TurnFigures turn_figures(const std::filesystem::path& dir, int variant) {
  const std::string json = (dir / ("turns" + std::to_string(variant) + ".json")).string();
  TurnFigures f;
  const Result r = run_planted("run residual_forward --variant " + std::to_string(variant) +
                               " --backend emu --shape B=2,T=8,C=8 --seed 1 --counters --json " + json);
  EXPECT_EQ(r.code, 0) << r.output;
  f.output = r.output;
  const Report report = read_planted_report(json);
  EXPECT_EQ(report.records.size(), 1u);
  for (const Record& rec : report.records) {
    EXPECT_TRUE(rec.counters.has_value());
    if (!rec.counters) continue;
    for (const KernelCount& k : rec.counters->kernels)
      for (const SiteCount& s : k.sites) {
        if (s.collective) continue;
        if (!s.shared && !s.store) f.loads += s;
        if (s.shared && s.store) f.stores += s;
      }
  }
  return f;
}

TEST_F(CountersGate, HalfWarpsTakingTurnsAreARequestATurnAndTogetherOne) {
  const TurnFigures turns = turn_figures(dir_.path(), 84);
  EXPECT_EQ(turns.loads.requests, 16u) << "2 loads x 4 warps x 2 turns";
  EXPECT_EQ(turns.loads.active_lanes, 16u * 16u) << "16 lanes a request";
  EXPECT_EQ(turns.loads.sectors, 16u * 2u) << "2 sectors a request, as for 16 lanes";
  EXPECT_EQ(turns.loads.ideal_sectors, 16u * 2u);
  EXPECT_EQ(turns.stores.requests, 8u);
  EXPECT_EQ(turns.stores.active_lanes, 8u * 16u);
  EXPECT_EQ(turns.stores.wavefronts, 8u) << "16 lanes in 16 banks: no bank conflict";
  EXPECT_EQ(turns.stores.ideal_wavefronts, 8u);
  EXPECT_FALSE(contains(turns.output, "shared store 2-way conflict")) << turns.output;

  const TurnFigures together = turn_figures(dir_.path(), 83);
  EXPECT_EQ(together.loads.requests, 8u) << "2 loads x 4 warps";
  EXPECT_EQ(together.loads.active_lanes, 8u * 32u);
  EXPECT_EQ(together.loads.sectors, 8u * 4u);
  EXPECT_EQ(together.loads.ideal_sectors, 8u * 4u);
  EXPECT_EQ(together.stores.requests, 4u);
  EXPECT_EQ(together.stores.active_lanes, 4u * 32u);
  EXPECT_EQ(together.stores.wavefronts, 8u) << "32 lanes in 16 banks: a real 2-way conflict";
  EXPECT_EQ(together.stores.ideal_wavefronts, 4u);
  EXPECT_TRUE(contains(together.output, "shared store 2-way conflict")) << together.output;
}

}  // namespace
}  // namespace wb
