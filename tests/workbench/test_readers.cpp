// Readers of files and what the programs make of failures: model headers are checked
// against the file's size before anything is allocated, reports with impossible times or
// names this wb does not know are refused naming the field, a comparison that measured
// nothing fails, and running out of memory is bad input (2) while an internal error has
// its own exit code (4).
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <new>
#include <sstream>
#include <stdexcept>

#include "base/errors.h"
#include "contract/registry.h"
#include "tests/support/not_integers.h"
#include "tests/support/test_helpers.h"
#include "trainer/data.h"
#include "trainer/model.h"
#include "workbench/cli/commands.h"
#include "workbench/runtime/executor.h"
#include "workbench/runtime/harness.h"
#include "workbench/runtime/report.h"

namespace wb {
namespace {

namespace fs = std::filesystem;
using testing::Result;
using testing::usage_error;

Result wb(const std::string& args) { return testing::run_command(WB_BINARY, args); }

// The command under a virtual-memory limit (KiB), so that a large allocation fails
// instead of being attempted.
Result limited(const std::string& binary, const std::string& args, int kib) {
  return testing::run_command("bash", "-c 'ulimit -v " + std::to_string(kib) + "; exec " + binary + " " + args + "'");
}

class Files : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("wb_test_readers_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // A model file: the header of `c`, then `floats` parameters.
  std::string model(const std::string& name, const trainer::Config& c, int64_t floats) const {
    std::array<int32_t, 256> header{};
    header[0] = 20240326;
    header[1] = 3;
    header[2] = c.maxT, header[3] = c.V, header[4] = c.L, header[5] = c.NH, header[6] = c.C, header[7] = c.Vp;
    std::ofstream out(path(name), std::ios::binary);
    out.write(reinterpret_cast<const char*>(header.data()), sizeof(header));
    const std::vector<float> zeros(std::size_t(floats), 0.0f);
    out.write(reinterpret_cast<const char*>(zeros.data()), std::streamsize(zeros.size() * sizeof(float)));
    return path(name);
  }
  fs::path dir_;
};

trainer::Config tiny() {
  trainer::Config c;
  c.maxT = 8, c.V = 16, c.Vp = 16, c.L = 1, c.NH = 2, c.C = 8;
  return c;
}

TEST_F(Files, ModelHeadersAreCheckedAgainstTheFileSizeFirst) {
  const trainer::Config c = tiny();
  const int64_t n = trainer::num_params(c);
  EXPECT_EQ(trainer::read_checkpoint(model("ok.bin", c, n)).params.size(), std::size_t(n));

  const std::string trailing = usage_error([&] { trainer::read_checkpoint(model("trailing.bin", c, n + 3)); });
  EXPECT_NE(trailing.find("12 bytes after the last parameter"), std::string::npos) << trailing;

  trainer::Config layers = c;
  layers.L = 100000;
  const std::string huge = usage_error([&] { trainer::read_checkpoint(model("layers.bin", layers, n)); });
  EXPECT_NE(huge.find("L=100000"), std::string::npos) << huge;
  EXPECT_NE(huge.find("the file has " + std::to_string(1024 + 4 * n)), std::string::npos) << huge;

  trainer::Config vocab = c;
  vocab.V = vocab.Vp = 2147483647;
  EXPECT_NE(usage_error([&] { trainer::read_checkpoint(model("vocab.bin", vocab, n)); }).find("Vp=2147483647"),
            std::string::npos);

  trainer::Config wide = c;
  wide.C = 1 << 30, wide.NH = 1;
  EXPECT_NE(usage_error([&] { trainer::read_checkpoint(model("wide.bin", wide, n)); }).find("C must be below 2^29"),
            std::string::npos);
}

TEST_F(Files, TheTrainerRefusesAHugeHeaderWithoutAllocating) {
  trainer::Config layers = tiny();
  layers.L = 100000, layers.C = 768, layers.NH = 12;  // 7.1 million parameters a layer: 2.8 TB claimed
  const Result r = limited(
      WB_TRAINER, "--backend cpu --model " + model("m.bin", layers, 10) + " --train /nonexistent/t.bin", 2000000);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("truncated model file: the header"), std::string::npos) << r.output;
}

TEST_F(Files, TokenFilesWithTrailingBytesAreRefused) {
  trainer::write_tokens(path("t.bin"), {1, 2, 3});
  std::ofstream(path("t.bin"), std::ios::app | std::ios::binary) << "xy";
  const std::string e = usage_error([&] { trainer::read_tokens(path("t.bin")); });
  EXPECT_NE(e.find("the header says 3 tokens but the file has 1032 bytes"), std::string::npos) << e;
}

// A small correct report of residual_forward on the cpu, as JSON to break.
nlohmann::json small_report() {
  auto ex = make_executor(Backend::cpu);
  const OpSpec& op = Registry::global().op("residual_forward");
  const Shape shape = parse_shape("B=2,T=4,C=8");
  Record r = record_for(op, Registry::global().variant(op.name, Backend::cpu, 1), {}, shape);
  r.status = Status::ok;
  TimingStats t;
  t.median_s = t.min_s = t.mean_s = 1e-6;
  t.repetitions = 3;
  t.iterations = 10;
  r.timing = t;
  return to_json(Report{make_context(*ex, TimingOptions{}, "wb test"), {r}});
}

TEST_F(Files, ReportsWithImpossibleValuesOrUnknownNamesAreRefused) {
  auto write = [&](const std::string& name, const nlohmann::json& j) {
    std::ofstream(path(name)) << j.dump();
    return path(name);
  };
  const std::string good = write("good.json", small_report());
  EXPECT_NO_THROW(read_report(good, Registry::global()));
  struct Case {
    const char* name;
    std::function<void(nlohmann::json&)> edit;
    const char* message;
  };
  const Case cases[] = {
      {"negative", [](auto& j) { j["records"][0]["timing"]["median_us"] = -1.0; }, "'median_us' is -1.0"},
      {"null", [](auto& j) { j["records"][0]["timing"]["stddev_us"] = nullptr; }, "'stddev_us' is null"},
      {"nan", [](auto& j) { j["records"][0]["timing"]["min_us"] = "nan"; }, "'min_us' is \"nan\""},
      {"huge", [](auto& j) { j["records"][0]["timing"]["mean_us"] = 1e308 * 10; }, "'mean_us' is null"},
      {"cv", [](auto& j) { j["records"][0]["timing"]["cv"] = -0.5; }, "'cv' is -0.5"},
      {"flops", [](auto& j) { j["records"][0]["model"]["flops"] = -3; }, "model 'flops' is -3"},
      {"op", [](auto& j) { j["records"][0]["op"] = "residual"; }, "records[0].op: unknown op 'residual'"},
      {"variant", [](auto& j) { j["records"][0]["variant"] = 42; },
       "records[0].variant: unknown variant 42 of residual_forward on cpu"},
      {"param", [](auto& j) { j["records"][0]["params"]["block_size"] = 256; },
       "records[0].params: residual_forward cpu/1 has no launch parameter 'block_size'"},
  };
  for (const Case& c : cases) {
    nlohmann::json j = small_report();
    c.edit(j);
    const std::string file = write(std::string(c.name) + ".json", j);
    const std::string e = usage_error([&] { read_report(file, Registry::global()); });
    EXPECT_NE(e.find(c.message), std::string::npos) << c.name << ": " << e;
    const Result r = wb("compare " + good + " " + file);
    EXPECT_EQ(r.code, 2) << c.name << ": " << r.output;
  }
}

// A report's integers are read only when they are integers in the field's range: a float
// beyond int's once reached nlohmann's get<int>() (undefined behaviour; for the seed, its
// get<uint64_t>()), and one beyond it as an integer wrapped.
TEST_F(Files, ReportIntegersAreIntegersInRange) {
  const nlohmann::json good = small_report();
  auto with = [&](const std::string& pointer, const nlohmann::json& value) {
    nlohmann::json j = good;
    j[nlohmann::json::json_pointer(pointer)] = value;
    return j.dump();
  };
  auto refusal = [&](const std::string& pointer, const nlohmann::json& value) {
    return usage_error([&] { parse_report(with(pointer, value), "r.json"); });
  };
  for (const testing::NotAnInteger& bad : testing::not_integers(
           {{"/records/0/variant", "records[0] 'variant'", 1, testing::kIntMax},
            {"/records/0/params/threads", "records[0] params.threads", 0, testing::kIntMax},
            {"/records/0/shape/C", "records[0] shape.C", 1, testing::kInt64Max},
            {"/records/0/timing/repetitions", "records[0].timing 'repetitions'", 1, testing::kIntMax},
            {"/context/device/multiprocessors", ".context.device 'multiprocessors'", 0, testing::kIntMax}})) {
    const std::string e = refusal(bad.pointer, bad.value);
    EXPECT_NE(e.find(bad.message), std::string::npos) << bad.pointer << " = " << bad.value.dump() << ": " << e;
  }
  // The seed, a uint64, has no top to pass but every integer type's.
  const std::string seed = refusal("/records/0/seed", 2.2e81);
  EXPECT_NE(seed.find("records[0] 'seed' is not an integer of 0 or more"), std::string::npos) << seed;
  // What is an integer in range is read, written as a float or not.
  EXPECT_EQ(parse_report(with("/records/0/variant", 1.0), "r.json").records[0].variant, 1);
  const std::string file = path("huge.json");
  std::ofstream(file) << with("/records/0/variant", 2.2e81);
  EXPECT_EXIT_WITH(wb("compare " + file + " " + file), 2,
                   "records[0] 'variant' is 2.2e+81, not an integer in [1, 2147483647]");
}

TEST_F(Files, CompareOfAReportThatMeasuredNothingFails) {
  auto write = [&](const std::string& name, const nlohmann::json& j) {
    std::ofstream(path(name)) << j.dump();
    return path(name);
  };
  const std::string base = write("base.json", small_report());
  EXPECT_EXIT_WITH(wb("compare " + base + " " + base), 0, "PASS");

  nlohmann::json empty = small_report();
  empty["records"] = nlohmann::json::array();
  EXPECT_EXIT_WITH(wb("compare " + base + " " + write("empty.json", empty)), 2, "the new report has no records");
  EXPECT_EXIT_WITH(wb("compare " + write("empty_base.json", empty) + " " + base), 2,
                   "the baseline report has no records");

  // Every record of the baseline missing: another op only.
  nlohmann::json other = small_report();
  other["records"][0]["op"] = "gelu_forward";
  EXPECT_EXIT_WITH(wb("compare " + base + " " + write("other.json", other)), 1,
                   "FAIL: no record of the baseline ran again");

  // Present, but never run (the device was lost before it).
  nlohmann::json not_run = small_report();
  not_run["records"][0]["status"] = "not_run";
  not_run["records"][0]["timing"] = nullptr;
  not_run["records"][0]["throughput"] = nullptr;
  const Result r = wb("compare " + base + " " + write("not_run.json", not_run));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("GONE"), std::string::npos) << r.output;
}

TEST(ExitCodes, ResourceFailuresAreBadInputAndBugsHaveTheirOwnCode) {
  auto code = [](std::exception_ptr e, const char* text) {
    std::ostringstream err;
    const int c = cli::exit_code_for(e, err);
    EXPECT_NE(err.str().find(text), std::string::npos) << err.str();
    return c;
  };
  EXPECT_EQ(code(std::make_exception_ptr(UsageError("bad shape")), "wb: error: bad shape"), cli::kBadUsage);
  EXPECT_EQ(code(std::make_exception_ptr(std::bad_alloc()), "out of memory"), cli::kBadUsage);
  EXPECT_EQ(code(std::make_exception_ptr(DeviceUnavailable("no GPU")), "no GPU"), cli::kNoDevice);
  EXPECT_EQ(code(std::make_exception_ptr(BackendError("cudaMemcpy failed")), "the device failed"), cli::kNoDevice);
  // What this machine or a library cannot do is not wb's bug.
  EXPECT_EQ(code(std::make_exception_ptr(Unsupported("oneDNN bf16 matmul: not implemented for this CPU")),
                 "wb: error: this machine cannot run it: oneDNN bf16 matmul"),
            cli::kBadUsage);
  EXPECT_EQ(code(std::make_exception_ptr(std::logic_error("broken invariant")), "wb: internal error: broken invariant"),
            cli::kInternalError);
  EXPECT_NE(cli::kInternalError, cli::kCheckFailed);
}

TEST_F(Files, OutOfMemoryIsExitTwoWithAMessage) {
  // 1 GiB a tensor, 18 GiB for a check: within many machines' memory (so the up-front
  // check may pass), far beyond the 1.5 GiB this process may map.
  const Result r =
      limited(WB_BINARY, "run residual_forward --variant 1 --backend cpu --shape B=64,T=1024,C=4096", 1500000);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("memory"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;

  // The logits alone, 64 x 1024 x 50304 floats, are 12 GiB.
  trainer::write_tokens(path("t.bin"), std::vector<int32_t>(64 * 1024 + 1, 7));
  const Result t = limited(WB_TRAINER, "--backend cpu --init 2,64,2 -b 64 -t 1024 --train " + path("t.bin"), 1500000);
  EXPECT_EQ(t.code, 2) << t.output;
  EXPECT_NE(t.output.find("out of memory"), std::string::npos) << t.output;
}

}  // namespace
}  // namespace wb
