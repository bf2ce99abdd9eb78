// The device descriptions (workbench/runtime/device_description.h): every committed file
// under results/devices/ reads, the H200's ceilings are the ones wb measured there, and a
// broken description is refused with a message naming what is wrong.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "base/errors.h"
#include "workbench/runtime/device_description.h"

namespace wb {
namespace {

namespace fs = std::filesystem;

const fs::path kDevices = fs::path(WB_SOURCE_DIR) / "results" / "devices";

nlohmann::json committed(const std::string& slug) {
  std::ifstream in(kDevices / (slug + ".json"));
  return nlohmann::json::parse(in);
}

// The message parse_device_description throws for `j`, or "" when it reads.
std::string refusal(const nlohmann::json& j) {
  try {
    parse_device_description(j.dump(), "d.json");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(DeviceDescription, EveryCommittedFileReads) {
  const std::vector<std::string> slugs = known_devices();
  for (const char* want : {"nvidia-a100-sxm", "nvidia-h100-sxm", "nvidia-h200"})
    EXPECT_NE(std::find(slugs.begin(), slugs.end(), want), slugs.end()) << want;
  for (const std::string& slug : slugs) {
    SCOPED_TRACE(slug);
    const DeviceDescription d = find_device_description(slug);
    EXPECT_GT(d.model.sms, 0);
    EXPECT_GT(d.model.clock_hz, 1e8);
    EXPECT_GT(d.model.ceilings.copy_gbps, 0);
    EXPECT_FALSE(d.model.source.empty());
    // Only the H200 was measured; the others are predicted, unscored until measured.
    EXPECT_EQ(d.model.measured, slug == "nvidia-h200");
  }
}

TEST(DeviceDescription, FiguresOfEachDevice) {
  const DeviceDescription h100 = find_device_description("nvidia-h100-sxm");
  EXPECT_EQ(h100.model.sms, 132);
  EXPECT_EQ(h100.model.compute_capability, 90);
  EXPECT_EQ(h100.compute_capability, "9.0");
  EXPECT_DOUBLE_EQ(h100.model.l2_bytes, 50.0 * (1 << 20));  // 50 MB as sold, not the die's 60
  EXPECT_EQ(h100.slug, "nvidia-h100-80gb-hbm3");            // what a real H100 SXM's report is keyed by
  const DeviceDescription a100 = find_device_description((kDevices / "nvidia-a100-sxm.json").string());
  EXPECT_EQ(a100.model.sms, 108);
  EXPECT_EQ(a100.model.compute_capability, 80);
  EXPECT_DOUBLE_EQ(a100.model.clock_hz, 1.41e9);
  EXPECT_DOUBLE_EQ(a100.model.ceilings.bf16_tflops, 312);
}

// The H200's ceilings are the fastest of each that its committed sweep reports measured.
TEST(DeviceDescription, H200CeilingsAreTheMeasuredOnes) {
  const DeviceDescription h200 = find_device_description("nvidia-h200");
  EXPECT_EQ(h200.model.name, "NVIDIA H200");
  double copy = 0, fp32 = 0, tf32 = 0, bf16 = 0;
  int reports = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(WB_SOURCE_DIR) / "results" / "nvidia-h200" / "sweep")) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    const nlohmann::json context = nlohmann::json::parse(in).at("context");
    const nlohmann::json& c = context.at("ceilings");
    copy = std::max(copy, c.at("copy_gbps").get<double>());
    fp32 = std::max(fp32, c.at("fp32_tflops").get<double>());
    tf32 = std::max(tf32, c.at("tf32_tflops").get<double>());
    bf16 = std::max(bf16, c.at("bf16_tflops").get<double>());
    EXPECT_EQ(context.at("device").at("multiprocessors").get<int>(), h200.model.sms);
    ++reports;
  }
  ASSERT_GT(reports, 0);
  const Ceilings& mine = h200.model.ceilings;
  EXPECT_NEAR(mine.copy_gbps, copy, 0.1);  // rounded to a tenth of a GB/s
  EXPECT_NEAR(mine.fp32_tflops, fp32, 0.01);
  EXPECT_NEAR(mine.tf32_tflops, tf32, 0.01);
  EXPECT_NEAR(mine.bf16_tflops, bf16, 0.01);
}

TEST(DeviceDescription, BrokenFilesAreRefusedWithTheField) {
  const nlohmann::json good = committed("nvidia-h200");
  ASSERT_EQ(refusal(good), "");

  nlohmann::json j = good;
  j.erase("sms");
  EXPECT_NE(refusal(j).find("d.json: missing field 'sms'"), std::string::npos) << refusal(j);
  j = good;
  j["ceilings"].erase("bf16_tflops");
  EXPECT_NE(refusal(j).find("d.json.ceilings: missing field 'bf16_tflops'"), std::string::npos) << refusal(j);
  j = good;
  j["clock_mhz"] = "1980";
  EXPECT_NE(refusal(j).find("d.json.clock_mhz is \"1980\", not a positive number"), std::string::npos) << refusal(j);
  j = good;
  j["sms"] = 13.5;
  EXPECT_NE(refusal(j).find("d.json.sms is 13.5, not an integer"), std::string::npos) << refusal(j);
  j = good;
  j["measured"] = "yes";
  EXPECT_NE(refusal(j).find("not true or false"), std::string::npos) << refusal(j);
  j = good;
  j["issue_rates"]["mma"] = -1;
  EXPECT_NE(refusal(j).find("d.json.issue_rates.mma is -1, not a positive number"), std::string::npos) << refusal(j);
  j = good;
  j["l2_gbs"] = 10000;  // misspelt: never a default taken silently
  EXPECT_NE(refusal(j).find("unknown field 'l2_gbs'"), std::string::npos) << refusal(j);
  j = good;
  j["compute_capability"] = "nine";
  EXPECT_NE(refusal(j).find("not of the form \"9.0\""), std::string::npos) << refusal(j);
  j = good;
  j["schema"] = "wb.device/0";
  EXPECT_NE(refusal(j).find("expected 'wb.device/1'"), std::string::npos) << refusal(j);
  EXPECT_THROW(parse_device_description("{", "d.json"), UsageError);
}

TEST(DeviceDescription, UnknownDeviceNamesTheKnownOnes) {
  try {
    find_device_description("nvidia-h300");
    FAIL() << "an unknown slug was accepted";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("unknown device 'nvidia-h300'"), std::string::npos) << what;
    EXPECT_NE(what.find("nvidia-h100-sxm"), std::string::npos) << what;
  }
  EXPECT_THROW(find_device_description("/no/such/device.json"), UsageError);
}

}  // namespace
}  // namespace wb
