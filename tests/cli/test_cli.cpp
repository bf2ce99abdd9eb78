// The wb command line, run as a user runs it: exit codes and messages of every error
// path, and the happy paths on the cpu backend.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "contract/launch_resources.h"
#include "contract/registry.h"
#include "tests/support/test_helpers.h"
#include "workbench/runtime/executor.h"
#include "workbench/runtime/report.h"

namespace wb {
namespace {

using testing::Result;

Result wb(const std::string& args) { return testing::run_command(WB_BINARY, args); }

constexpr const char* kSmall = "--shape B=2,T=8,C=32";

TEST(Cli, MissingSubcommand) { EXPECT_EXIT_WITH(wb(""), 2, "A subcommand is required"); }

TEST(Cli, HelpExitsZero) { EXPECT_EXIT_WITH(wb("run --help"), 0, "--block-size"); }

TEST(Cli, UnknownOpNamesTheOps) {
  EXPECT_EXIT_WITH(wb("run nope --variant 1"), 2, "unknown op 'nope'");
  EXPECT_EXIT_WITH(wb("run nope --variant 1"), 2, "layernorm_forward");
  EXPECT_EXIT_WITH(wb("check nope"), 2, "unknown op 'nope'");
  EXPECT_EXIT_WITH(wb("list nope"), 2, "unknown op 'nope'");
  EXPECT_EXIT_WITH(wb("sweep nope --out x.json"), 2, "unknown op 'nope'");
}

TEST(Cli, UnknownVariantNamesTheIds) {
  EXPECT_EXIT_WITH(wb("run layernorm_forward --variant 42 --backend cpu"), 2,
                   "unknown variant 42 of layernorm_forward on cpu (cpu variants: 1 reference");
  EXPECT_EXIT_WITH(wb("sweep layernorm_forward --backend cpu --variants 1,42 --out x.json"), 2, "unknown variant 42");
}

TEST(Cli, BlockSizeErrors) {
  EXPECT_EXIT_WITH(wb("run layernorm_forward --variant 1 --backend cpu --block-size abc"), 2, "Could not convert");
  EXPECT_EXIT_WITH(wb("run layernorm_forward --variant 1 --backend cpu --block-size 256"), 2,
                   "has no launch parameter 'block_size'");
  EXPECT_EXIT_WITH(wb("sweep layernorm_forward --backend cpu --block-sizes 48 --out x.json"), 2, "does not apply");
  EXPECT_EXIT_WITH(wb("sweep layernorm_forward --backend cpu --block-sizes 6x4 --out x.json"), 2, "not an integer");
}

TEST(Cli, CudaBlockSizeMustBeLegal) {
  if (auto why = cuda_unavailable_reason()) GTEST_SKIP() << "needs a CUDA device: " << *why;
  EXPECT_EXIT_WITH(wb("run layernorm_forward --variant 3 --backend cuda --block-size 48"), 2,
                   "block_size 48 is not legal");
  EXPECT_EXIT_WITH(wb("sweep layernorm_forward --backend cuda --block-sizes 48 --out x.json"), 2,
                   "not legal for any selected variant");
}

TEST(Cli, MalformedShapes) {
  EXPECT_EXIT_WITH(wb("run layernorm_forward --variant 1 --backend cpu --shape B=x"), 2, "malformed shape");
  EXPECT_EXIT_WITH(wb("run layernorm_forward --variant 1 --backend cpu --shape Z=3"), 2, "unknown dim 'Z'");
  EXPECT_EXIT_WITH(wb("run layernorm_forward --variant 1 --backend cpu --shape gpt5"), 2, "unknown shape preset");
  EXPECT_EXIT_WITH(wb("run attention_forward --variant 1 --backend cpu --shape B=1,T=4,C=10,NH=3"), 2,
                   "C=10 is not divisible by NH=3");
}

TEST(Cli, OtherUsageErrors) {
  EXPECT_EXIT_WITH(wb("run layernorm_forward --variant 1 --backend tpu"), 2, "unknown backend 'tpu'");
  EXPECT_EXIT_WITH(wb("run layernorm_forward --variant 1 --backend cpu --param tile"), 2, "NAME=VALUE");
  EXPECT_EXIT_WITH(wb("run layernorm_forward"), 2, "--variant is required");
  EXPECT_EXIT_WITH(wb("sweep layernorm_forward --backend cpu"), 2, "--out is required");
  EXPECT_EXIT_WITH(wb("sweep --backend cpu --out x.json"), 2, "give one op, --all or --workloads FILE");
  EXPECT_EXIT_WITH(wb("check --backend cpu"), 2, "give one op or --all");
  EXPECT_EXIT_WITH(wb("check --all --variants 2 --backend cpu"), 2, "with --all leave it out");
}

TEST(Cli, CudaWithoutDeviceExitsThree) {
  if (!cuda_unavailable_reason()) GTEST_SKIP() << "a CUDA device is usable here";
  EXPECT_EXIT_WITH(wb("run layernorm_forward --variant 1 --backend cuda"), 3, "no usable CUDA device");
  EXPECT_EXIT_WITH(wb("check layernorm_forward --backend cuda"), 3, "no usable CUDA device");
  EXPECT_EXIT_WITH(wb("sweep layernorm_forward --backend cuda --out x.json"), 3, "no usable CUDA device");
}

TEST(Cli, RunOnTheCpuValidatesAndTimes) {
  const Result r = wb(std::string("run matmul_forward --variant 2 --backend cpu --seed 5 ") + kSmall);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("cpu/2 blocked"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("check   out: max abs"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("seed 5"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("GB/s"), std::string::npos) << r.output;
}

TEST(Cli, SweepWritesAReportThatParses) {
  const auto dir = std::filesystem::temp_directory_path() / ("wb_cli_" + std::to_string(::getpid()));
  const std::string out = (dir / "r.json").string();
  const Result r =
      wb("sweep matmul_forward --backend cpu --variants no-torch --repetitions 2 --min-time 0.001 --out " + out + " " + kSmall);
  ASSERT_EQ(r.code, 0) << r.output;
  const Report report = read_report(out, Registry::global());
  ASSERT_EQ(report.records.size(), 3u);
  for (const auto& rec : report.records) {
    EXPECT_EQ(rec.status, Status::ok) << rec.variant_label();
    ASSERT_TRUE(rec.timing);
    EXPECT_EQ(rec.timing->repetitions, 2);
    EXPECT_EQ(rec.shape_text(), "B=2 T=8 C=32 OC=128");
  }
  EXPECT_EQ(report.context.device.backend, Backend::cpu);
  std::filesystem::remove_all(dir);
}

TEST(Cli, CheckPrintsATableAndExitsZero) {
  const Result r = wb("check layernorm_forward --backend cpu --seed 3 --variants no-torch");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("cpu/1 reference"), std::string::npos);
  EXPECT_NE(r.output.find("0 incorrect (seed 3)"), std::string::npos) << r.output;
}

TEST(Cli, ListShowsVariantsAndTheirStatus) {
  const Result r = wb("list layernorm_forward");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.output.find("reference"), std::string::npos);
#if WB_HAVE_CUDA
  EXPECT_NE(r.output.find("vec4_registers"), std::string::npos);
  EXPECT_NE(r.output.find("C % 4 == 0"), std::string::npos);
#endif
  // Variant 7 refuses some configurations at some shapes (a tile holds rows of up to 64
  // floats a thread): its launch limit stands among its requirements. Every CUDA
  // variant has its emulated row, so this holds in a build without nvcc too.
  EXPECT_NE(r.output.find("C % 4 == 0, C <= 2048, launch_limit"), std::string::npos) << r.output;
}

TEST(Cli, DumpWritesManifestAndTensors) {
  const auto dir = std::filesystem::temp_directory_path() / ("wb_dump_" + std::to_string(::getpid()));
  const Result r = wb("dump gelu_forward --shape B=1,T=2,C=3 --seed 9 --out " + dir.string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(std::filesystem::exists(dir / "manifest.json"));
  EXPECT_EQ(std::filesystem::file_size(dir / "inp.initial.bin"), 6 * 4u);
  EXPECT_EQ(std::filesystem::file_size(dir / "out.expected.bin"), 6 * 4u);
  std::filesystem::remove_all(dir);
}

// A stripped wb cannot name its kernels, so it cannot check their launch limits: its
// emulator would pass, and the CUDA backend try, launches a GPU refuses (the first GPU
// run met this: a stripped bundle launched blocks of 1024 threads at 93 registers each,
// and the H200 answered cudaErrorLaunchOutOfResources). It stops with the reason
// instead; `strip --strip-debug` keeps the symbol table and the check.
TEST(Cli, StrippedProgramRefusesToRunWithoutItsLaunchLimits) {
  if (!compiled_kernels_known()) GTEST_SKIP() << "a build without nvcc has no table of compiled kernels";
  const auto dir = std::filesystem::temp_directory_path() / ("wb_strip_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string copy = (dir / "wb").string();
  const std::string args = "check layernorm_forward --backend emu --variants 7 --shapes wide --block-sizes 1024 --verbose";
  ASSERT_EQ(std::system(("strip -o " + copy + " " + WB_BINARY).c_str()), 0);
  EXPECT_EXIT_WITH(testing::run_command(copy, args), 4, "no symbol table (was it stripped?)");
  ASSERT_EQ(std::system(("strip --strip-debug -o " + copy + " " + WB_BINARY).c_str()), 0);
  EXPECT_EXIT_WITH(testing::run_command(copy, args), 0,
                   "skipped cannot launch: variants::layernorm_cg_tiles<16u, 16> needs");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace wb
