// --predict-for DEVICE (workbench/cli/for_device.h): wb check and run on the emulator
// with each passing configuration's time predicted on a described device, and the
// refusals. At tiny shapes so that the emulator runs and counts in seconds.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

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
  const testing::TempDir dir;
  const std::string out = dir / "check.json";
  const testing::Result r = wb("check residual_forward --backend emu --shapes tiny --seed 5 --predict-for "
                               "nvidia-h100-sxm --json " + out);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("predicted for NVIDIA H100 80GB HBM3"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("published figures, unscored until measured"), std::string::npos) << r.output;
  const json report = read_json(out);
  const json& p = report["context"]["predicted_for"];
  EXPECT_EQ(p["slug"], "nvidia-h100-80gb-hbm3");
  EXPECT_EQ(p["model"], kPredictModel);
  EXPECT_EQ(p["sample_blocks"], 2);
  EXPECT_EQ(p["device_measured"], false);
  EXPECT_EQ(report["context"]["device"]["backend"], "emu");  // nothing was measured on the device
  EXPECT_GT(check_predictions(report), 0);
}

TEST(PredictFor, RunPrintsThePredictionBesideTheVerdict) {
  const testing::TempDir dir;
  const std::string out = dir / "run.json";
  const testing::Result r = wb("run residual_forward --variant 1 --backend emu --shape B=2,T=8,C=64 --seed 5 "
                               "--predict-for nvidia-h200 --sample-blocks 1 --json " + out);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("  predicted "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("predicted for NVIDIA H200 ("), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("a device wb measured"), std::string::npos) << r.output;
  const json report = read_json(out);
  EXPECT_EQ(report["context"]["predicted_for"]["sample_blocks"], 1);
  EXPECT_EQ(check_predictions(report), 1);
}

TEST(PredictFor, RefusedWithoutTheEmulatorOrAKnownDevice) {
  testing::Result r = wb("check residual_forward --backend cpu --shapes tiny --predict-for nvidia-h200");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--predict-for predicts from the emulator's counts: give it with --backend emu, not cpu"),
            std::string::npos)
      << r.output;
  r = wb("check residual_forward --backend emu --shapes tiny --predict-for nvidia-h300");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("unknown device 'nvidia-h300'"), std::string::npos) << r.output;
  // Without --counters or --predict-for, --sample-blocks has nothing to sample.
  r = wb("check residual_forward --backend emu --shapes tiny --sample-blocks 2");
  EXPECT_EQ(r.code, 2) << r.output;
}

}  // namespace
}  // namespace wb
