// Predicted reports in best.json (workbench/runtime/best.h): a report of wb sweep
// --backend emu --predict-for makes a section for the device it predicts for, marked
// predicted; a measured time always wins over a predicted one; and the kernel plan
// names the selections that come from predicted entries.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "contract/registry.h"
#include "tests/support/best_fixtures.h"
#include "tests/support/report_fixtures.h"
#include "trainer/gpt2.h"
#include "trainer/model.h"
#include "workbench/runtime/best.h"
#include "workbench/runtime/kernel_plan.h"
#include "workbench/runtime/workloads.h"

namespace wb {
namespace {

const std::string kH100 = "NVIDIA H100 80GB HBM3";

// An emulated record that passed the check, predicted at `seconds` on the device.
Record predicted_record(const std::string& op, int variant, double seconds, const std::string& shape) {
  Record r = testing::timed_record(op, variant, 1, 0);
  r.backend = Backend::emu;
  r.timing.reset();  // never timed: the emulator
  r.shape = parse_shape(shape);
  r.predicted = PredictedTime{seconds, "dram", 1};
  return r;
}

// A report of wb sweep --backend emu --predict-for nvidia-h100-sxm.
Report predicted_report(std::vector<Record> records) {
  Report r;
  r.context.device.backend = Backend::emu;
  r.context.device.name = "emu (sm_90)";
  r.context.device.slug = "emu";
  PredictedFor p;
  p.device = kH100;
  p.slug = slugify(kH100);
  p.compute_capability = "9.0";
  p.multiprocessors = 132;
  p.description = "results/devices/nvidia-h100-sxm.json";
  p.model = "wb.predict/1";
  p.sample_blocks = 2;
  r.context.predicted_for = p;
  r.records = std::move(records);
  return r;
}

TEST(BestPredicted, APredictedReportMakesAPredictedSectionOfItsDevice) {
  // Variant 2 is predicted 2x faster; variant 3 failed the check and is never a candidate.
  Record failed = predicted_record("layernorm_forward", 3, 1e-7, "B=8,T=1024,C=768");
  failed.status = Status::incorrect;
  failed.predicted.reset();
  const Report rep = predicted_report({predicted_record("layernorm_forward", 1, 20e-6, "B=8,T=1024,C=768"),
                                       predicted_record("layernorm_forward", 2, 10e-6, "B=8,T=1024,C=768"), failed});
  const DeviceInfo d = device_of(rep);
  EXPECT_EQ(d.backend, Backend::cuda);
  EXPECT_EQ(d.slug, "nvidia-h100-80gb-hbm3");
  const BestSection s = choose_best({{"p.json", rep}}, NumericClass::fp32);
  EXPECT_EQ(s.key(), "cuda/nvidia-h100-80gb-hbm3");
  EXPECT_EQ(s.compute_capability, "9.0");
  EXPECT_EQ(s.architecture, "sm_90");
  ASSERT_EQ(s.entries.size(), 1u);
  EXPECT_EQ(s.entries[0].variant, 2);
  EXPECT_TRUE(s.entries[0].predicted);
  EXPECT_DOUBLE_EQ(s.entries[0].median_s, 10e-6);
  EXPECT_EQ(s.entries[0].stddev_s, 0);
  EXPECT_NE(s.entries[0].note.find("not verified on a GPU"), std::string::npos) << s.entries[0].note;
  EXPECT_EQ(s.predicted_model, "wb.predict/1");
  EXPECT_EQ(s.predicted_entries(), 1u);

  // The marks survive best.json.
  BestFile file;
  file.merge(s);
  const BestFile back = best_from_json(to_json(file), "b.json");
  ASSERT_EQ(back.sections.size(), 1u);
  EXPECT_TRUE(back.sections[0].entries[0].predicted);
  EXPECT_EQ(back.sections[0].predicted_model, "wb.predict/1");
  EXPECT_EQ(back.sections[0].predicted_description, "results/devices/nvidia-h100-sxm.json");
  // A measured section stays as it was written: no mark on its entries.
  const BestSection measured = choose_best(
      {{"m.json", testing::fixture_report({testing::timed_record("layernorm_forward", 1, 5e-6, 0)}, kH100)}},
      NumericClass::fp32);
  BestFile plain;
  plain.merge(measured);
  const nlohmann::json j = to_json(plain);
  EXPECT_FALSE(j["sections"][0].contains("predicted"));
  EXPECT_FALSE(j["sections"][0]["ops"]["layernorm_forward"][0].contains("predicted"));
}

TEST(BestPredicted, MeasuredTimesAlwaysWin) {
  // Measured at B=8 T=1024 C=768 (variant 1, slower than any prediction); predicted there
  // and at a second shape.
  const Report measured = testing::fixture_report({testing::timed_record("layernorm_forward", 1, 50e-6, 1e-7)}, kH100);
  const Report predicted = predicted_report({predicted_record("layernorm_forward", 2, 1e-6, "B=8,T=1024,C=768"),
                                             predicted_record("layernorm_forward", 2, 1e-6, "B=4,T=64,C=768")});
  for (const bool measured_first : {true, false}) {
    SCOPED_TRACE(measured_first);
    std::vector<std::pair<std::string, Report>> reports{{"m.json", measured}, {"p.json", predicted}};
    if (!measured_first) std::swap(reports[0], reports[1]);
    const BestSection s = choose_best(reports, NumericClass::fp32);
    ASSERT_EQ(s.entries.size(), 2u);
    const BestEntry* big = s.find("layernorm_forward", parse_shape("B=8,T=1024,C=768"));
    const BestEntry* small = s.find("layernorm_forward", parse_shape("B=4,T=64,C=768"));
    ASSERT_TRUE(big && small);
    EXPECT_EQ(big->variant, 1);
    EXPECT_FALSE(big->predicted);
    EXPECT_EQ(big->report, "m.json");
    EXPECT_EQ(small->variant, 2);
    EXPECT_TRUE(small->predicted);
  }

  // Into a best.json: a predicted entry never replaces a measured one already there, and
  // a measured one replaces a predicted one.
  BestFile file;
  file.merge(choose_best({{"m.json", measured}}, NumericClass::fp32));
  file.merge(choose_best({{"p.json", predicted}}, NumericClass::fp32));
  ASSERT_EQ(file.sections.size(), 1u);
  const BestSection& s = file.sections[0];
  EXPECT_FALSE(s.find("layernorm_forward", parse_shape("B=8,T=1024,C=768"))->predicted);
  EXPECT_TRUE(s.find("layernorm_forward", parse_shape("B=4,T=64,C=768"))->predicted);
  EXPECT_EQ(s.predicted_model, "wb.predict/1");
  Report later = testing::fixture_report({testing::timed_record("layernorm_forward", 3, 2e-6, 1e-8)}, kH100);
  later.records[0].shape = parse_shape("B=4,T=64,C=768");
  file.merge(choose_best({{"later.json", later}}, NumericClass::fp32));
  EXPECT_EQ(file.sections[0].predicted_entries(), 0u);
  EXPECT_TRUE(file.sections[0].predicted_model.empty());
  EXPECT_EQ(file.sections[0].find("layernorm_forward", parse_shape("B=4,T=64,C=768"))->variant, 3);
}

// A trainer on the emulator running a predicted section says which selections it took
// from predicted times.
TEST(BestPredicted, ThePlanNamesThePredictedSelections) {
  const Registry& reg = Registry::global();
  auto ex = make_executor(Backend::emu);
  const auto workloads = trainer::step_workloads(trainer::config_from_init("1,64,2"), 2, 8);
  Shape btc;
  btc.B = 2, btc.T = 8, btc.C = 64;
  Shape mm = btc;
  mm.OC = 3 * 64;
  BestEntry guessed = testing::entry("layernorm_backward", btc, 1);
  guessed.predicted = true;
  BestFile b = testing::best_for(*ex, {guessed, testing::entry("matmul_forward", mm, 1)});
  b.sections[0].predicted_model = "wb.predict/1";
  b.sections[0].predicted_description = "results/devices/nvidia-h100-sxm.json";
  std::ostringstream notices;
  const KernelPlan plan(reg, *ex, PlanOptions{}, &b, workloads, notices);
  EXPECT_EQ(plan.at("layernorm_backward", btc).origin, "best.json, PREDICTED");
  EXPECT_EQ(plan.at("matmul_forward", mm).origin, "best.json");
  const std::string n = notices.str();
  EXPECT_NE(n.find("1 of the plan's"), std::string::npos) << n;
  EXPECT_NE(n.find("come from PREDICTED times (wb.predict/1, results/devices/nvidia-h100-sxm.json, a device wb never "
                   "measured)"),
            std::string::npos)
      << n;
  EXPECT_NE(n.find("layernorm_backward at B=2 T=8 C=64 cuda/1 "), std::string::npos) << n;
  EXPECT_EQ(n.find("matmul_forward at B=2 T=8 C=64 OC=192 cuda/1"), std::string::npos) << n;
}

}  // namespace
}  // namespace wb
