// The prediction's gate: wb predict, from the committed counts of the H200's sweep
// (results/nvidia-h200/predict-counts.json), scores at least as well out of sample as the
// committed scores say (results/nvidia-h200/predict-scores.json). A change to the model
// that scores worse fails here; one that scores better commits the new scores. The
// counts are committed so that the scores do not depend on this build's compiler: a
// configuration whose emulated variant changed since is counted again here, and then
// its counts are this build's.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/test_helpers.h"
#include "workbench/runtime/predict.h"

namespace wb {
namespace {

using nlohmann::json;

const std::filesystem::path kDevice = std::filesystem::path(WB_SOURCE_DIR) / "results" / "nvidia-h200";

json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return json::parse(in);
}

TEST(PredictGate, OutOfSampleScoresAreNoWorseThanTheCommittedOnes) {
  std::vector<std::string> sweep;
  for (const auto& entry : std::filesystem::directory_iterator(kDevice / "sweep"))
    if (entry.path().extension() == ".json") sweep.push_back(entry.path().string());
  std::sort(sweep.begin(), sweep.end());
  ASSERT_FALSE(sweep.empty());
  std::string args = "predict";
  for (const std::string& s : sweep) args += " " + s;
  const testing::TempDir dir;
  const std::string out = dir / "scores.json";
  args += " --counts " + (kDevice / "predict-counts.json").string() + " --scores-out " + out;
  const testing::Result r = testing::run_command(WB_BINARY, args);
  ASSERT_EQ(r.code, 0) << r.output;
  const json now = read_json(out), committed = read_json(kDevice / "predict-scores.json");
  ASSERT_EQ(committed["model"], kPredictModel)
      << "the model changed: score it and commit its scores (results/nvidia-h200/README.md has the commands)";
  EXPECT_EQ(now["configurations"], committed["configurations"]);
  const json &a = now["out_of_sample"], &b = committed["out_of_sample"];
  EXPECT_LE(a["mape"].get<double>(), b["mape"].get<double>() + 1e-9);
  EXPECT_GE(a["lowest_spearman"].get<double>(), b["lowest_spearman"].get<double>() - 1e-9);
  EXPECT_GE(a["picks_within_5"].get<int>(), b["picks_within_5"].get<int>());
  EXPECT_GE(a["best_in_top3"].get<int>(), b["best_in_top3"].get<int>());

  // The gate's negative control: the model without its shared-memory term scores worse
  // out of sample, and the comparison above would fail it.
  const std::string worse = dir / "worse.json";
  const testing::Result w = testing::run_command(
      WB_BINARY, args.substr(0, args.rfind(" --scores-out")) + " --set wavefront_clocks=0 --scores-out " + worse);
  ASSERT_EQ(w.code, 0) << w.output;
  EXPECT_GT(read_json(worse)["out_of_sample"]["mape"].get<double>(), b["mape"].get<double>() + 0.01);
}

// The fits' shrinkage toward the prior (model 7): chosen when not given, and the
// committed scores' choice; a plain fit (--shrinkage 0) scores worse out of sample, and
// a weight below 0 is refused.
TEST(PredictGate, APlainFitScoresWorseOutOfSampleThanTheShrunkOne) {
  std::string args = "predict";
  for (const auto& entry : std::filesystem::directory_iterator(kDevice / "sweep"))
    if (entry.path().extension() == ".json") args += " " + entry.path().string();
  args += " --counts " + (kDevice / "predict-counts.json").string();
  const json committed = read_json(kDevice / "predict-scores.json");
  ASSERT_TRUE(committed.contains("shrinkage"));
  const testing::TempDir dir;
  const std::string plain = dir / "plain.json";
  const testing::Result r = testing::run_command(WB_BINARY, args + " --shrinkage 0 --scores-out " + plain);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(testing::contains(r.output, "fits shrink toward the prior: 0 (--shrinkage)")) << r.output;
  const json p = read_json(plain);
  EXPECT_EQ(p["shrinkage"].get<double>(), 0.0);
  EXPECT_GT(p["out_of_sample"]["mape"].get<double>(), committed["out_of_sample"]["mape"].get<double>() + 0.01);
  const testing::Result refused = testing::run_command(WB_BINARY, args + " --shrinkage -1");
  EXPECT_EQ(refused.code, 2) << refused.output;
  EXPECT_TRUE(testing::contains(refused.output, "--shrinkage: not a number >= 0: -1")) << refused.output;
}

}  // namespace
}  // namespace wb
