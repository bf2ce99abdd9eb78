// A crashing kernel does not take the run down. The planted variants of tests/planted/
// (emu/90 and cuda/90 write out of bounds, cpu/90 dies by SIGSEGV) show:
//   without --isolate, a sticky fault loses the device: the faulting configuration is
//   incorrect with the fault, every later one not_run ("device lost: ..."), the report
//   is written and wb exits 1;
//   with --isolate, each variant runs in a child process, so the fault (or the child's
//   death by a signal) costs that variant only.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "emu/emu.h"
#include "tests/support/programs.h"
#include "workbench/runtime/harness.h"
#include "workbench/runtime/report.h"

namespace wb {
namespace {

using testing::contains;
using testing::planted_registry;
using testing::read_planted_report;
using testing::Result;
using testing::run_planted;

std::string temp_path(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("wb_isolate_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

// The records of one variant in a report.
std::vector<Record> of_variant(const Report& r, int id) {
  std::vector<Record> out;
  for (const Record& rec : r.records)
    if (rec.variant == id) out.push_back(rec);
  return out;
}

// The record of a variant that ran once (one configuration at one shape); a failure,
// and an empty record, when it has none or several.
Record only_record(const Report& r, int id) {
  const std::vector<Record> records = of_variant(r, id);
  EXPECT_EQ(records.size(), 1u) << "records of variant " << id;
  return records.size() == 1 ? records[0] : Record{};
}

// What `wb_planted <command> FILE` printed, and the report it wrote to FILE, a fresh
// temporary `name` (the command ends in --json or --out).
struct Written {
  Result result;
  Report report;
};
Written planted_report(const std::string& command, const std::string& name) {
  const std::string path = temp_path(name);
  std::filesystem::remove(path);
  Written w{run_planted(command + " " + path), {}};
  EXPECT_TRUE(std::filesystem::exists(path)) << w.result.output;
  if (std::filesystem::exists(path)) w.report = read_planted_report(path);
  return w;
}

TEST(DeviceLost, AStickyFaultLosesTheEmulatedDeviceForEverythingAfterIt) {
  const Registry& reg = planted_registry();
  const OpSpec& op = reg.op("residual_forward");
  auto ex = make_executor(Backend::emu);
  Session session(reg, op, parse_shape("B=2,T=3,C=40"), 7, *ex);
  EvalOptions eval;
  eval.check_launches = 1;
  const Variant& naive = reg.variant(op.name, Backend::emu, 1);
  const Variant& fault = reg.variant(op.name, Backend::emu, 90);
  const Variant& after = reg.variant(op.name, Backend::emu, 91);

  // A refused launch (more threads than a block may have) is not sticky.
  const Record refused = session.evaluate(naive, ParamValues{{"block_size", 2048}}, eval);
  EXPECT_EQ(refused.status, Status::incorrect);
  EXPECT_TRUE(contains(refused.reason, "cudaErrorInvalidConfiguration")) << refused.reason;
  EXPECT_FALSE(ex->lost());
  EXPECT_EQ(session.evaluate(naive, naive.default_params(), eval).status, Status::ok);

  const Record faulted = session.evaluate(fault, fault.default_params(), eval);
  EXPECT_EQ(faulted.status, Status::incorrect);
  EXPECT_TRUE(contains(faulted.reason, "cudaErrorIllegalAddress")) << faulted.reason;
  EXPECT_TRUE(contains(faulted.reason, "memcheck")) << faulted.reason;
  ASSERT_TRUE(ex->lost());
  EXPECT_TRUE(contains(*ex->lost(), "cudaErrorIllegalAddress")) << *ex->lost();

  const Record skipped = session.evaluate(after, after.default_params(), eval);
  EXPECT_EQ(skipped.status, Status::not_run);
  EXPECT_EQ(skipped.reason.rfind("device lost: cudaErrorIllegalAddress", 0), 0u) << skipped.reason;
  EXPECT_EQ(to_string(skipped.status), "not_run");
  emu::reset();  // the emulated context is the process's: leave it fresh for other tests
}

TEST(DeviceLost, CheckReportsTheFaultMarksTheRestNotRunWritesTheReportAndExits1) {
  const auto [r, report] = planted_report(
      "check residual_forward --backend emu --variants 1,90,91 --shapes tiny,odd --seed 3 --json", "lost.json");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "DEVICE LOST: cudaErrorIllegalAddress")) << r.output;
  EXPECT_TRUE(contains(r.output, "not run")) << r.output;
  std::size_t ok = 0, incorrect = 0, not_run = 0;
  for (const Record& rec : report.records) {
    ok += rec.status == Status::ok;
    incorrect += rec.status == Status::incorrect;
    not_run += rec.status == Status::not_run;
  }
  // tiny: emu/1 ok at its 6 block sizes, emu/90 faults, emu/91 not run; odd: nothing
  // runs (8 configurations).
  EXPECT_EQ(report.records.size(), 16u);
  EXPECT_EQ(ok, 6u);
  EXPECT_EQ(incorrect, 1u);
  EXPECT_EQ(not_run, 9u);
  for (const Record& rec : of_variant(report, 90)) {
    if (rec.status == Status::incorrect) {
      EXPECT_TRUE(contains(rec.reason, "memcheck")) << rec.reason;
    }
  }
  for (const Record& rec : of_variant(report, 91)) {
    EXPECT_EQ(rec.status, Status::not_run);
    EXPECT_EQ(rec.reason.rfind("device lost: ", 0), 0u) << rec.reason;
  }
}

TEST(Isolate, CheckRunsEachVariantInAChildSoOneFaultCostsOneVariant) {
  const auto [r, report] = planted_report(
      "check residual_forward --backend emu --variants 1,90,91 --shapes tiny,odd --seed 3 --isolate --json",
      "isolated.json");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_FALSE(contains(r.output, "DEVICE LOST")) << r.output;
  EXPECT_EQ(report.records.size(), 16u);
  for (int id : {1, 91})
    for (const Record& rec : of_variant(report, id)) EXPECT_EQ(rec.status, Status::ok) << id << ": " << rec.reason;
  for (const Record& rec : of_variant(report, 90)) {
    EXPECT_EQ(rec.status, Status::incorrect);
    EXPECT_TRUE(contains(rec.reason, "cudaErrorIllegalAddress")) << rec.reason;
  }
  // The children used the seed this process would have: the same inputs.
  const auto [plain, alone] = planted_report(
      "check residual_forward --backend emu --variants 1 --shapes tiny,odd --seed 3 --json", "plain.json");
  EXPECT_EQ(plain.code, 0) << plain.output;
  ASSERT_EQ(alone.records.size(), 12u);
  for (std::size_t i = 0; i < alone.records.size(); ++i)
    EXPECT_EQ(alone.records[i].seed, of_variant(report, 1)[i].seed);
}

// Variant 89 faults at block size 64 with unroll 1 only. Without --isolate the fault
// loses the device and the configurations after it are not run; with --isolate each is
// sent to a fresh child, block size 64 with unroll 2 included (a child narrowed by block
// size alone would run the fault again first and lose it), so the fault costs its own
// configuration only.
TEST(Isolate, AfterAFaultTheShapesOtherConfigurationsAreEachStillChecked) {
  const auto faulting = [](const Record& rec) {
    return rec.params.get("block_size") == 64 && rec.params.get("unroll") == 1;
  };
  const auto [plain, lost] = planted_report(
      "check residual_forward --backend emu --variants 89 --shapes tiny --seed 3 --json", "fault_lost.json");
  EXPECT_EQ(plain.code, 1) << plain.output;
  ASSERT_EQ(lost.records.size(), 6u);
  int not_run = 0;
  for (const Record& rec : lost.records) not_run += rec.status == Status::not_run;
  EXPECT_GE(not_run, 1) << plain.output;

  const auto [r, report] = planted_report(
      "check residual_forward --backend emu --variants 89 --shapes tiny --seed 3 --isolate --json", "fault_iso.json");
  EXPECT_EQ(r.code, 1) << r.output;
  ASSERT_EQ(report.records.size(), 6u);
  for (const Record& rec : report.records) {
    if (faulting(rec)) {
      EXPECT_EQ(rec.status, Status::incorrect);
      EXPECT_TRUE(contains(rec.reason, "cudaErrorIllegalAddress")) << rec.reason;
    } else {
      EXPECT_EQ(rec.status, Status::ok) << rec.params.describe() << ": " << rec.reason;
    }
  }
  EXPECT_FALSE(contains(r.output, "not run")) << r.output;
}

// A child told a configuration its plan does not hold is a usage error naming it.
TEST(Isolate, AConfigurationThePlanDoesNotHoldIsAUsageError) {
  const Result r = run_planted(
      "check residual_forward --backend emu --variants 89 --shapes tiny --configurations block_size=64,unroll=3");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "'block_size=64,unroll=3' is not a configuration")) << r.output;
}

TEST(Isolate, AChildKilledByASignalIsReportedAndTheRunGoesOn) {
  // Without --isolate the planted SIGSEGV takes wb down with it.
  EXPECT_NE(run_planted("check residual_forward --backend cpu --variants 90 --shapes tiny --seed 1").code, 0);

  const auto [r, report] = planted_report(
      "check residual_forward --backend cpu --variants 90,1 --shapes tiny --seed 1 --isolate --json", "signal.json");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "child process died: signal 11")) << r.output;
  const Record died = only_record(report, 90);
  EXPECT_EQ(died.status, Status::incorrect);
  EXPECT_TRUE(contains(died.reason, "child process died: signal 11")) << died.reason;
  EXPECT_EQ(only_record(report, 1).status, Status::ok);
}

TEST(Isolate, RunAndSweepToo) {
  const auto [run, run_report] = planted_report(
      "run residual_forward -v 90 --backend cpu --shape B=2,T=4,C=8 --seed 1 --isolate --json", "run.json");
  EXPECT_EQ(run.code, 1) << run.output;
  EXPECT_TRUE(contains(run.output, "INCORRECT child process died: signal 11")) << run.output;
  EXPECT_EQ(only_record(run_report, 90).status, Status::incorrect);

  EXPECT_EXIT_WITH(run_planted("run residual_forward -v 90 --backend emu --shape B=2,T=4,C=8 --seed 1"), 1,
                   "cudaErrorIllegalAddress");

  const auto [sweep, report] = planted_report(
      "sweep residual_forward --backend cpu --variants 1,90 --shape B=2,T=4,C=8 --seed 1 "
      "--repetitions 1 --min-time 0.001 --isolate --out",
      "sweep.json");
  EXPECT_EQ(sweep.code, 1) << sweep.output;
  const Record timed = only_record(report, 1);
  EXPECT_EQ(timed.status, Status::ok);
  EXPECT_TRUE(timed.timing.has_value());
  EXPECT_GT(report.context.ceilings.copy_gbps, 0);  // measured once, by the parent
  EXPECT_TRUE(contains(only_record(report, 90).reason, "child process died: signal 11"));
}

// A report read back lists launch parameters by name; attention_backward's flash_tiled
// declares them otherwise (block_size, tile, dq_atomics): the parent must still find each
// record of its child. Block size 32 is the naive rung's but not flash_tiled's, so its
// child is told flash_tiled's default (256) and plans the same four configurations as its
// parent.
TEST(Isolate, AChildsRecordsAreFoundWhateverTheOrderOfTheirLaunchParameters) {
  const auto [r, report] = planted_report(
      "check attention_backward --backend emu --variants 1,3 --shapes tiny --seed 1 --block-sizes 32 --isolate --json",
      "order.json");
  EXPECT_EQ(r.code, 0) << r.output;
  ASSERT_EQ(report.records.size(), 5u);
  EXPECT_EQ(of_variant(report, 3).size(), 4u);
  for (const Record& rec : report.records) EXPECT_EQ(rec.status, Status::ok) << rec.params.describe() << rec.reason;
}

TEST(Isolate, FlagsAreValidatedBeforeAnyChildRuns) {
  EXPECT_EXIT_WITH(run_planted("check residual_forward --backend emu --isolate --shapes nope"), 2,
                   "unknown check shape");
  EXPECT_EXIT_WITH(run_planted("sweep residual_forward --backend emu --isolate --out x.json"), 2, "never timed");
}

TEST(DeviceLost, APlantedOutOfBoundsKernelOnAGpu) {
  if (auto why = cuda_unavailable_reason()) GTEST_SKIP() << "no usable CUDA device: " << *why;
  const auto [r, lost] = planted_report(
      "check residual_forward --backend cuda --variants 1,90,91 --shapes tiny --seed 3 --json", "gpu.json");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "DEVICE LOST: cudaErrorIllegalAddress")) << r.output;
  EXPECT_EQ(of_variant(lost, 1).at(0).status, Status::ok);
  EXPECT_EQ(of_variant(lost, 90).at(0).status, Status::incorrect);
  EXPECT_EQ(of_variant(lost, 91).at(0).status, Status::not_run);

  const auto [isolated, report] = planted_report(
      "check residual_forward --backend cuda --variants 1,90,91 --shapes tiny --seed 3 --isolate --json", "gpu.json");
  EXPECT_EQ(isolated.code, 1) << isolated.output;
  EXPECT_EQ(of_variant(report, 90).at(0).status, Status::incorrect);
  EXPECT_EQ(of_variant(report, 91).at(0).status, Status::ok);
}

}  // namespace
}  // namespace wb
