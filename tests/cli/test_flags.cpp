// Numeric flags of wb and the trainer: nan, inf, negative and (where meaningless) zero
// are refused before any work, exit 2, with a message naming the flag.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "tests/support/test_helpers.h"

namespace wb {
namespace {

using testing::Result;

Result wb(const std::string& args) { return testing::run_command(WB_BINARY, args); }
Result trainer(const std::string& args) { return testing::run_command(WB_TRAINER, args); }

constexpr const char* kRun = "run residual_forward --variant 1 --backend cpu --shape B=2,T=8,C=32 ";
constexpr const char* kSweep = "sweep residual_forward --backend cpu --shape B=2,T=8,C=32 --out /dev/null ";

TEST(TimingFlags, RunRefusesMeaninglessValues) {
  for (const char* value : {"nan", "inf", "0", "-1", "-inf"}) {
    const Result r = wb(std::string(kRun) + "--min-time=" + value);
    EXPECT_EQ(r.code, 2) << value << ": " << r.output;
    EXPECT_NE(r.output.find("--min-time"), std::string::npos) << r.output;
  }
  for (const char* value : {"0", "-3"}) {
    const Result r = wb(std::string(kRun) + "--repetitions=" + value);
    EXPECT_EQ(r.code, 2) << value << ": " << r.output;
    EXPECT_NE(r.output.find("--repetitions"), std::string::npos) << r.output;
  }
  EXPECT_EXIT_WITH(wb(std::string(kRun) + "--repetitions 2 --min-time 0.001"), 0, "over 2 repetitions");
}

TEST(TimingFlags, SweepRefusesThemBeforeMeasuringAnything) {
  for (const char* flag : {"--min-time=nan", "--min-time=inf", "--min-time=0", "--repetitions=0", "--repetitions=-1"}) {
    const Result r = wb(std::string(kSweep) + flag);
    EXPECT_EQ(r.code, 2) << flag << ": " << r.output;
    EXPECT_NE(r.output.find(std::string(flag).substr(0, std::string(flag).find('='))), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("ceilings"), std::string::npos) << "no work before the check: " << r.output;
  }
}

// --shard K/N (1-based) is checked before anything is planned or measured; a shard
// without --seed would draw inputs its siblings do not.
TEST(ShardFlag, SweepRefusesBadShardsBeforeMeasuringAnything) {
  const std::pair<const char*, const char*> cases[] = {
      {"--shard=", "required"},
      {"--shard ''", "is not K/N"},
      {"--shard 3", "is not K/N"},
      {"--shard 1/3/4", "is not K/N"},
      {"--shard a/b", "is not K/N"},
      {"--shard=-1/3", "is not K/N"},
      {"--shard 1/0", "must be at least 1"},
      {"--shard 0/3", "K must be from 1 to 3"},
      {"--shard 4/3", "K must be from 1 to 3"},
  };
  for (const auto& [flag, message] : cases) {
    const Result r = wb(std::string(kSweep) + "--seed 1 " + flag);
    EXPECT_EQ(r.code, 2) << flag << ": " << r.output;
    EXPECT_NE(r.output.find("--shard"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << flag << ": " << r.output;
    EXPECT_EQ(r.output.find("ceilings"), std::string::npos) << "no work before the check: " << r.output;
  }
  EXPECT_EXIT_WITH(wb(std::string(kSweep) + "--shard 1/2"), 2, "--shard needs --seed");
  // Checked before the op, too.
  EXPECT_EXIT_WITH(wb("sweep no_such_op --out /dev/null --shard 0/2"), 2, "K must be from 1 to 2");
}

TEST(TimingFlags, CompareRefusesSlowdownsThatAreNotPercentages) {
  // Checked before the reports are read: these files do not exist.
  for (const char* value : {"nan", "nan%", "inf%", "-5%", "infinity"}) {
    const Result r = wb(std::string("compare /nonexistent/a.json /nonexistent/b.json --max-slowdown=") + value);
    EXPECT_EQ(r.code, 2) << value << ": " << r.output;
    EXPECT_NE(r.output.find("--max-slowdown"), std::string::npos) << r.output;
  }
}

// Each bad value is refused with its flag named, before the model (which does not
// exist) or the data are read.
TEST(TrainerFlags, MeaninglessValuesExitTwoBeforeAnyWork) {
  const std::string base = "--backend cpu --model /nonexistent/model.bin --train /nonexistent/train.bin ";
  const std::pair<const char*, const char*> cases[] = {
      {"--steps", "0"},
      {"--steps", "-2"},
      {"--lr", "nan"},
      {"--lr", "inf"},
      {"--lr", "-0.001"},
      {"--beta1", "1"},
      {"--beta1", "-0.1"},
      {"--beta2", "1.5"},
      {"--beta2", "nan"},
      {"--eps", "0"},
      {"--eps", "-1e-8"},
      {"--grad-clip", "-1"},
      {"--grad-clip", "nan"},
      {"--val-batches", "0"},
      {"--final-lr-frac", "1.5"},
      {"--final-lr-frac", "-0.1"},
      {"--batch", "0"},
      {"--seq-len", "-4"},
      {"--weight-decay", "-0.1"},
      {"--warmup", "-1"},
      {"--val-every", "-1"},
      {"--sample-every", "-1"},
      {"--sample-len", "0"},
      {"--peak-tflops", "nan"},
      {"--peak-tflops", "-1"},
  };
  for (const auto& [flag, value] : cases) {
    const Result r = trainer(base + flag + "=" + value);
    EXPECT_EQ(r.code, 2) << flag << " " << value << ": " << r.output;
    EXPECT_NE(r.output.find(flag), std::string::npos) << flag << " " << value << ": " << r.output;
    EXPECT_EQ(r.output.find("cannot read"), std::string::npos) << "the flag first: " << r.output;
  }
}

TEST(TrainerFlags, OutputsThatCannotBeWrittenAreRefusedAtStart) {
  const std::string base = "--backend cpu --model /nonexistent/model.bin --train /nonexistent/train.bin ";
  for (const char* flag : {"--save", "--log", "--dump-workloads", "--debug-state"}) {
    const Result r = trainer(base + flag + " /nonexistent/folder/out.bin");
    EXPECT_EQ(r.code, 2) << flag << ": " << r.output;
    EXPECT_NE(r.output.find(std::string("cannot write ") + flag + " /nonexistent/folder/out.bin"), std::string::npos)
        << r.output;
  }
  const std::string folder = std::filesystem::temp_directory_path().string();
  EXPECT_EXIT_WITH(trainer(base + "--save " + folder), 2, "it is a folder");
}

TEST(TrainerFlags, SizesBeyondTheModelExitTwo) {
  // Known once the model is: maxT (1024 for --init), and what the kernels take at B x T.
  EXPECT_EXIT_WITH(trainer("--backend cpu --init 1,8,2 -b 1 -t 2048 --train /nonexistent/t.bin"), 2,
                   "--seq-len 2048 is longer than the model's maxT 1024");
  EXPECT_EXIT_WITH(trainer("--backend cpu --init 1,8,2 -b 3000000 -t 1024 --train /nonexistent/t.bin"), 2,
                   "--batch 3000000 --seq-len 1024 is beyond what the kernels take");
}

}  // namespace
}  // namespace wb
