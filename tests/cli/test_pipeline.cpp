// The pipeline wb check and wb sweep go through (workbench/cli/pipeline.h) and the option
// groups they share (workbench/cli/options.h): records in the plan's order, a skipped
// unit as a skipped record, and after a fault that loses the device every unit left
// not run, each with its job's seed; the timing flags as a child of --isolate gets them.
// (--isolate itself, which execs wb, is shown in test_isolate.cpp.)
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "base/errors.h"
#include "emu/emu.h"
#include "tests/planted/planted.h"
#include "tests/support/test_helpers.h"
#include "workbench/cli/options.h"
#include "workbench/cli/pipeline.h"

namespace wb {
namespace {

using testing::contains;

TEST(Pipeline, RecordsFollowThePlanAndALostDeviceLeavesTheRestNotRun) {
  const Registry& reg = testing::planted_registry();
  const OpSpec& op = reg.op("residual_forward");
  const Variant& naive = reg.variant(op.name, Backend::emu, 1);
  const Variant& fault = reg.variant(op.name, Backend::emu, 90);
  const Variant& after = reg.variant(op.name, Backend::emu, 91);
  cli::Plan plan;
  plan.jobs.push_back({&op, parse_shape("B=2,T=3,C=40"), 7, false, 0, 0, "B=2,T=3,C=40"});
  plan.jobs.push_back({&op, parse_shape("B=1,T=5,C=8"), 8, false, 0, 1, "B=1,T=5,C=8"});
  plan.units = {{0, &naive, naive.default_params(), ""},
                {0, &naive, ParamValues{}, "not asked for"},
                {0, &fault, fault.default_params(), ""},
                {0, &after, after.default_params(), ""},
                {1, &naive, naive.default_params(), ""}};

  auto ex = make_executor(Backend::emu);
  cli::Execution how;
  how.eval.check_launches = 1;
  std::vector<std::string> made;
  how.made = [&](const cli::Unit& unit, const Record& r) {
    made.push_back(unit.describe(plan.jobs) + ": " + std::string(to_string(r.status)));
  };
  const std::vector<Record> records = cli::execute(reg, plan, *ex, how);

  ASSERT_EQ(records.size(), 5u);
  ASSERT_EQ(made.size(), 5u);
  EXPECT_EQ(made[0], "residual_forward emu/1 " + naive.default_params().describe() + " B=2 T=3 C=40: ok");
  EXPECT_EQ(records[0].status, Status::ok) << records[0].reason;
  EXPECT_EQ(records[0].seed, 7u);
  EXPECT_EQ(records[1].status, Status::skipped);
  EXPECT_EQ(records[1].reason, "not asked for");
  EXPECT_EQ(records[2].status, Status::incorrect);
  EXPECT_TRUE(contains(records[2].reason, "cudaErrorIllegalAddress")) << records[2].reason;
  for (std::size_t i : {3u, 4u}) {
    EXPECT_EQ(records[i].status, Status::not_run);
    EXPECT_EQ(records[i].reason.rfind("device lost: cudaErrorIllegalAddress", 0), 0u) << records[i].reason;
  }
  EXPECT_EQ(records[4].seed, 8u) << "a unit not run keeps its job's seed";
  EXPECT_EQ(records[4].variant, 1);

  const cli::StatusCounts n(records);
  EXPECT_EQ(n.ok, 1);
  EXPECT_EQ(n.skipped, 1);
  EXPECT_EQ(n.incorrect, 1);
  EXPECT_EQ(n.not_run, 2);
  std::ostringstream out;
  cli::print_device_lost(out, *ex, n.not_run);
  EXPECT_TRUE(contains(out.str(), "DEVICE LOST: cudaErrorIllegalAddress")) << out.str();
  EXPECT_TRUE(contains(out.str(), "2 configurations after the fault were not run")) << out.str();
  emu::reset();  // the emulated context is the process's: leave it fresh for other tests
}

TEST(Pipeline, NothingIsSaidOfADeviceThatWasNotLost) {
  auto ex = make_executor(Backend::cpu);
  std::ostringstream out;
  cli::print_device_lost(out, *ex, 0);
  EXPECT_EQ(out.str(), "");
}

TEST(Options, TimingFlagsAreCheckedAndPassedToAChildAsGiven) {
  cli::TimingFlags t;
  std::vector<std::string> args;
  t.pass_to(args);
  EXPECT_TRUE(args.empty()) << "absent flags stay absent: the child takes the backend's defaults";
  t.repetitions = 3;
  t.min_time_s = 0.002;
  t.no_flush = true;
  t.pass_to(args);
  EXPECT_EQ(args, (std::vector<std::string>{"--repetitions", "3", "--min-time", "0.002", "--no-flush"}));
  const TimingOptions o = t.resolve();
  EXPECT_EQ(o.repetitions, 3);
  EXPECT_DOUBLE_EQ(o.min_time_s, 0.002);
  EXPECT_FALSE(o.flush_cache);
  t.repetitions = 0;
  EXPECT_THROW(t.resolve(), UsageError);
}

TEST(Options, BlockSizesAllOrAList) {
  EXPECT_FALSE(cli::parse_block_sizes(""));
  EXPECT_FALSE(cli::parse_block_sizes("all"));
  EXPECT_EQ(*cli::parse_block_sizes("32,128"), (std::vector<int>{32, 128}));
  EXPECT_THROW(cli::parse_block_sizes("6x4"), UsageError);
}

}  // namespace
}  // namespace wb
