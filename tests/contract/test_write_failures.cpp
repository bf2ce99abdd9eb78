// A write that fails leaves no debris: past the file size limit (ulimit -f), where the
// kernel answers a write with SIGXFSZ unless the program ignores it, every program of wb
// ends with exit 2 and a message naming the file, removes its temporary file and leaves
// the previous file as it was. The same path serves a full disk (ENOSPC) and an I/O
// error (EIO): AtomicFile::write fails on any error of write(2).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/tiny_vocabulary.h"
#include "trainer/data.h"
#include "trainer/model.h"

namespace wb {
namespace {

namespace fs = std::filesystem;
using testing::Result;
using testing::TempDir;

// The command with the file size limit at 0 blocks: any byte written to a file fails.
Result limited(const std::string& binary, const std::string& args) {
  return testing::run_command("ulimit -f 0; " + std::string(binary), args);
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Temporary files of the atomic writer (target + ".tmp-<pid>-<n>") left in a folder.
std::vector<std::string> debris(const std::string& folder) {
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(folder))
    if (e.path().filename().string().find(".tmp-") != std::string::npos) left.push_back(e.path().string());
  return left;
}

// Exit 2, the file and the reason in the message, no temporary file, the old file intact.
void expect_clean_failure(const Result& r, const TempDir& dir, const std::string& target, const std::string& old) {
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("cannot write " + target), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("File too large"), std::string::npos) << r.output;
  EXPECT_EQ(debris(dir / ""), std::vector<std::string>{});
  EXPECT_EQ(read_all(target), old);
}

constexpr const char* kSweep = "sweep residual_forward --backend cpu --shape B=2,T=8,C=32 --repetitions 1 --min-time 0.001 --variants no-torch";

TEST(WriteFailure, SweepReport) {
  TempDir dir;
  const std::string out = dir / "report.json";
  std::ofstream(out) << "the previous report\n";
  expect_clean_failure(limited(WB_BINARY, std::string(kSweep) + " --out " + out), dir, out,
                       "the previous report\n");
}

TEST(WriteFailure, BestJson) {
  TempDir dir;
  const std::string report = dir / "report.json", best = dir / "best.json";
  const Result swept = testing::run_command(WB_BINARY, std::string(kSweep) + " --out " + report);
  ASSERT_EQ(swept.code, 0) << swept.output;
  const Result first = testing::run_command(WB_BINARY, "best " + report + " --out " + best);
  ASSERT_EQ(first.code, 0) << first.output;
  const std::string old = read_all(best);
  expect_clean_failure(limited(WB_BINARY, "best " + report + " --out " + best), dir, best, old);
}

TEST(WriteFailure, TrainerSave) {
  TempDir dir;
  trainer::Config c = trainer::config_from_init("1,32,2");
  c.V = 64, c.Vp = 128, c.maxT = 16;
  const std::vector<float> params = trainer::init_params(c, 1);
  trainer::write_checkpoint(dir / "model.bin", c, params.data());
  std::vector<int32_t> tokens(200);
  for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = int32_t(i % 64);
  trainer::write_tokens(dir / "train.bin", tokens);
  const std::string save = dir / "saved.bin";
  std::ofstream(save) << "the previous model\n";
  const Result r = limited(WB_TRAINER, "--backend cpu --model " + (dir / "model.bin") + " --train " +
                                           (dir / "train.bin") + " -b 2 -t 8 --steps 1 --peak-tflops 1 --save " + save);
  expect_clean_failure(r, dir, save, "the previous model\n");
}

// A vocabulary written here (the real one lives outside the repository): any byte of
// the tokenizer file fails the same way.
TEST(WriteFailure, PrepareData) {
  TempDir dir, vocab;
  testing::write_tiny_vocabulary(vocab.path());
  const std::string out = dir / "gpt2_tokenizer.bin";
  const std::string folder = fs::path(out).parent_path().string();
  std::ofstream(out) << "the previous tokenizer\n";
  expect_clean_failure(limited(WB_PREPARE_DATA, "tokenizer --vocab " + vocab.path().string() + " --out " + folder), dir,
                       out, "the previous tokenizer\n");
}

}  // namespace
}  // namespace wb
