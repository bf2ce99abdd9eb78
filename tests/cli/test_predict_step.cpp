// wb predict --plan: a trainer's step predicted from the kernel plan its log printed
// (workbench/cli/predict_step.h), at a small shape so that the emulator counts quickly,
// and a plan it cannot read refused as the user's mistake.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "emu/emu.h"
#include "tests/support/test_helpers.h"

namespace wb {
namespace {

const std::string kMeasured = std::string(WB_SOURCE_DIR) + "/results/nvidia-h200/sweep/00-layernorm_forward.json";

testing::Result wb(const std::string& args) { return testing::run_command(WB_BINARY, args); }

TEST(PredictStep, PredictsEachCallOfAPrintedPlanAndHoldsTheStepToTheLogsTime) {
  if (!emu::reports_accesses()) GTEST_SKIP() << "counting needs the plain build (this is the " << emu::flavour() << ")";
  const testing::TempDir dir;
  const std::string log = dir / "train.log";
  std::ofstream(log) << "GPT-2 L=1 C=64 NH=4 V=64 Vp=128 maxT=8, B=2 T=8, cuda backend on NVIDIA H200, precision fp32\n"
                        "kernels: each op's default\n"
                        "  op                 shape            calls  backend  variant  name            launch          "
                        "class  from\n"
                        "  layernorm_forward  B=2 T=8 C=64     3      cuda     6        vec4_registers  block_size=64   "
                        "fp32   default\n"
                        "  residual_forward   B=2 T=8 C=64     2      cuda     1        naive           block_size=128  "
                        "fp32   default\n"
                        "\n"
                        "summary: 8 steps, 1.00 ms/step, 16 tokens/s\n";
  const testing::Result r = wb("predict " + kMeasured + " --plan " + log);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("layernorm_forward"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cuda/1 naive"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("predicted step:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("measured in the same log: 1.00 ms/step"), std::string::npos) << r.output;
}

TEST(PredictStep, APlanItCannotReadIsTheUsersMistake) {
  if (!emu::reports_accesses()) GTEST_SKIP() << "counting needs the plain build (this is the " << emu::flavour() << ")";
  const testing::TempDir dir;
  const std::string log = dir / "empty.log";
  std::ofstream(log) << "no plan here\n";
  const testing::Result r = wb("predict " + kMeasured + " --plan " + log);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("no kernel plan in it"), std::string::npos) << r.output;
  const std::string bad = dir / "bad.log";
  std::ofstream(bad) << "  op                 shape            calls  backend  variant  name   launch          class  from\n"
                        "  layernorm_forward  B=2 T=8 C=64     3      cuda     99       nope   block_size=64   fp32   x\n";
  const testing::Result b = wb("predict " + kMeasured + " --plan " + bad);
  EXPECT_EQ(b.code, 2) << b.output;
  EXPECT_NE(b.output.find("no cuda/99"), std::string::npos) << b.output;
}

}  // namespace
}  // namespace wb
