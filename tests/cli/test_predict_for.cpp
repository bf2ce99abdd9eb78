// --predict-for DEVICE (workbench/cli/for_device.h): wb check, run and sweep on the
// emulator with each passing configuration's time predicted on a described device, the
// refusals, and a predicted sweep turned by wb best into a section marked predicted. At
// B=2 T=8 C=64 so that the emulator runs and counts in seconds.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "emu/emu.h"
#include "tests/support/test_helpers.h"
#include "workbench/runtime/predict.h"

namespace wb {
namespace {

using nlohmann::json;

testing::Result wb(const std::string& args) { return testing::run_command(WB_BINARY, args); }

json read_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

// Every record that passed with all its tensors has a predicted time, and no other
// record has one; none is timed. Returns how many were predicted.
int check_predictions(const json& report) {
  int predicted = 0;
  for (const json& r : report["records"]) {
    const bool passed = r["status"] == "ok" && r["omitted"].empty();
    EXPECT_EQ(r.contains("predicted"), passed) << r.dump();
    EXPECT_TRUE(r["timing"].is_null()) << r.dump();
    if (!r.contains("predicted")) continue;
    EXPECT_GT(r["predicted"]["us"].get<double>(), 0) << r.dump();
    EXPECT_FALSE(r["predicted"]["bound"].get<std::string>().empty());
    ++predicted;
  }
  return predicted;
}

TEST(PredictFor, CheckPredictsEveryPassingConfiguration) {
  if (!emu::reports_accesses()) GTEST_SKIP() << "counting needs the plain build (this is the " << emu::flavour() << ")";
  const testing::TempDir dir;
  const std::string out = dir / "check.json";
  const testing::Result r =
      wb("check residual_forward --backend emu --shapes tiny --seed 5 --predict-for "
         "nvidia-h100-sxm --json " +
         out);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("predicted for NVIDIA H100 80GB HBM3"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("published figures, unscored until measured"), std::string::npos) << r.output;
  const json report = read_json(out);
  const json& p = report["context"]["predicted_for"];
  EXPECT_EQ(p["slug"], "nvidia-h100-80gb-hbm3");
  EXPECT_EQ(p["model"], kPredictModel);
  EXPECT_EQ(p["sample_blocks"], 2);
  EXPECT_EQ(p["device_measured"], false);
  EXPECT_EQ(p["constants"], "prior");  // no sweep of an H100 to fit them to
  EXPECT_NE(r.output.find("prior constants"), std::string::npos) << r.output;
  EXPECT_EQ(report["context"]["device"]["backend"], "emu");  // nothing was measured on the device
  EXPECT_GT(check_predictions(report), 0);
}

TEST(PredictFor, RunPrintsThePredictionBesideTheVerdict) {
  if (!emu::reports_accesses()) GTEST_SKIP() << "counting needs the plain build (this is the " << emu::flavour() << ")";
  const testing::TempDir dir;
  const std::string out = dir / "run.json";
  const testing::Result r =
      wb("run residual_forward --variant 1 --backend emu --shape B=2,T=8,C=64 --seed 5 "
         "--predict-for nvidia-h200 --sample-blocks 1 --json " +
         out);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("  predicted "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("predicted for NVIDIA H200 ("), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("a device wb measured"), std::string::npos) << r.output;
  const json report = read_json(out);
  EXPECT_EQ(report["context"]["predicted_for"]["sample_blocks"], 1);
  EXPECT_EQ(check_predictions(report), 1);
  // The H200's sweep was measured: the constants fitted to it (results/nvidia-h200/
  // predict-scores.json) are used, and the report says where they came from.
  const std::string constants = report["context"]["predicted_for"]["constants"];
  EXPECT_EQ(constants.rfind("fitted: ", 0), 0u) << constants;
  EXPECT_NE(constants.find("nvidia-h200/predict-scores.json"), std::string::npos) << constants;
  EXPECT_NE(r.output.find("fitted constants"), std::string::npos) << r.output;
}

TEST(PredictFor, RefusedWithoutTheEmulatorOrAKnownDevice) {
  testing::Result r = wb("check residual_forward --backend cpu --shapes tiny --predict-for nvidia-h200");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--predict-for predicts from the emulator's counts: give it with --backend emu, not cpu"),
            std::string::npos)
      << r.output;
  r = wb("sweep residual_forward --backend cpu --shape B=2,T=8,C=64 --predict-for nvidia-h200 --out x.json");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("give it with --backend emu"), std::string::npos) << r.output;
  r = wb("check residual_forward --backend emu --shapes tiny --predict-for nvidia-h300");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("unknown device 'nvidia-h300'"), std::string::npos) << r.output;
  r = wb("sweep residual_forward --backend emu --shape B=2,T=8,C=64 --out x.json");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--predict-for DEVICE"), std::string::npos) << r.output;
  // Without --counters or --predict-for, --sample-blocks has nothing to sample.
  r = wb("check residual_forward --backend emu --shapes tiny --sample-blocks 2");
  EXPECT_EQ(r.code, 2) << r.output;
}

// The variant wb best picks from predicted times: per variant its fastest configuration,
// taken in order of id, a later one winning only when faster by at least 1%.
int expected_pick(const json& report) {
  std::map<int, double> fastest;
  for (const json& r : report["records"]) {
    if (!r.contains("predicted")) continue;
    const int id = r["variant"];
    const double us = r["predicted"]["us"];
    if (!fastest.count(id) || us < fastest[id]) fastest[id] = us;
  }
  int chosen = 0;
  double best = 0;
  for (const auto& [id, us] : fastest)
    if (chosen == 0 || (us < best * 0.99 && best - us > 0)) chosen = id, best = us;
  return chosen;
}

TEST(PredictFor, APredictedSweepMakesAPredictedBestSection) {
  if (!emu::reports_accesses()) GTEST_SKIP() << "counting needs the plain build (this is the " << emu::flavour() << ")";
  const testing::TempDir dir;
  const testing::Result s =
      wb("sweep residual_forward --backend emu --shape B=2,T=8,C=64 --seed 3 --predict-for "
         "nvidia-a100-sxm --out '" +
         dir / "{device}.json'");
  ASSERT_EQ(s.code, 0) << s.output;
  EXPECT_NE(s.output.find("never measured"), std::string::npos) << s.output;
  const std::string report_path = dir / "nvidia-a100-sxm4-80gb.json";
  const json report = read_json(report_path);
  EXPECT_EQ(report["context"]["predicted_for"]["device"], "NVIDIA A100-SXM4-80GB");
  ASSERT_GT(check_predictions(report), 1);

  const std::string best = dir / "best.json";
  const testing::Result b = wb("best " + report_path + " --out " + best);
  ASSERT_EQ(b.code, 0) << b.output;
  EXPECT_NE(b.output.find("PREDICTED"), std::string::npos) << b.output;
  const json file = read_json(best);
  ASSERT_EQ(file["sections"].size(), 1u);
  const json& section = file["sections"][0];
  EXPECT_EQ(section["backend"], "cuda");
  EXPECT_EQ(section["device"]["slug"], "nvidia-a100-sxm4-80gb");
  EXPECT_EQ(section["device"]["compute_capability"], "8.0");
  EXPECT_EQ(section["predicted"]["model"], kPredictModel);
  EXPECT_EQ(section["predicted"]["device_measured"], false);
  const json& entry = section["ops"]["residual_forward"][0];
  EXPECT_EQ(entry["predicted"], true);
  EXPECT_EQ(entry["variant"].get<int>(), expected_pick(report));
  EXPECT_EQ(entry["stddev_us"].get<double>(), 0);

  // wb best --show says which sections hold predicted entries.
  const testing::Result show = wb("best --show " + best);
  ASSERT_EQ(show.code, 0) << show.output;
  EXPECT_NE(show.output.find("cuda/nvidia-a100-sxm4-80gb: 1 of 1 entries predicted"), std::string::npos) << show.output;
}

}  // namespace
}  // namespace wb
