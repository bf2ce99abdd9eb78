// The commands of the README's "Adding a variant" stay runnable: each `build/wb ...` it
// names runs, on gelu_forward, with its writes sent to a temporary folder and its checks
// narrowed to the tiny shape (the whole emulated check belongs to ctest's own passes).
// A command the README spells and wb no longer takes exits 2 and fails this test.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "emu/emu.h"
#include "tests/support/test_helpers.h"

namespace wb {
namespace {

namespace fs = std::filesystem;
using testing::Result;
using testing::TempDir;

// The section's `build/wb ...` commands, spans that may wrap across lines joined.
std::vector<std::string> readme_commands() {
  std::ifstream in(std::string(WB_SOURCE_DIR) + "/README.md");
  std::stringstream s;
  s << in.rdbuf();
  const std::string text = s.str();
  const std::size_t start = text.find("## Adding a variant");
  const std::size_t end = text.find("\n## ", start + 1);
  EXPECT_NE(start, std::string::npos) << "README.md has no section \"Adding a variant\"";
  std::string section = std::regex_replace(text.substr(start, end - start), std::regex(R"(\s+)"), " ");
  std::vector<std::string> out;
  const std::regex command("`(build/wb [^`]+)`");
  for (std::sregex_iterator it(section.begin(), section.end(), command), none; it != none; ++it)
    out.push_back((*it)[1].str());
  return out;
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  return std::regex_replace(s, std::regex(from), to);
}

TEST(ReadmeSteps, EveryCommandOfAddingAVariantRuns) {
  const std::vector<std::string> commands = readme_commands();
  ASSERT_GE(commands.size(), 5u) << "the section names fewer commands than its steps";
  TempDir dir;
  fs::create_directories(dir.path() / "contract");
  fs::copy(fs::path(WB_SOURCE_DIR) / "contract" / "ops", dir.path() / "contract" / "ops", fs::copy_options::recursive);
  fs::create_directories(dir.path() / "variants");
  fs::copy(fs::path(WB_SOURCE_DIR) / "variants" / "gelu_forward", dir.path() / "variants" / "gelu_forward",
           fs::copy_options::recursive);
  bool wrote_a_rung = false;
  for (const std::string& readme : commands) {
    std::string c = readme.substr(std::string("build/wb ").size());
    c = replaced(c, "<op>", "gelu_forward");
    c = replaced(c, "<NN>", "1");
    c = replaced(c, "<name>", "readme_probe");
    c = replaced(c, "--all", "gelu_forward");
    c = replaced(c, R"(--json \S+)", "--json " + (dir / "report.json"));
    c = replaced(c, R"(--out \S+)", "--out " + (dir / "sweep.json"));
    const bool is_new = c.rfind("new ", 0) == 0;
    if (is_new) c += " --root " + dir.path().string();
    if (c.rfind("check ", 0) == 0 && c.find("--shapes") == std::string::npos) c += " --shapes tiny";
    if (c.rfind("sweep ", 0) == 0) c += " --shape B=1,T=2,C=8 --repetitions 1 --min-time 0.001";
    // PyTorch's rungs start PyTorch and compile per shape (seconds each); check_torch_cpu
    // and TorchRungs.* test them, this test the README's steps.
    if ((c.rfind("check ", 0) == 0 || c.rfind("sweep ", 0) == 0) && c.find("--variants") == std::string::npos)
      c += " --variants no-torch";
    if (c.find("--counters") != std::string::npos && !emu::reports_accesses())
      continue;  // counting needs the plain build (this is a sanitizer's)
    const Result r = testing::run_command(WB_BINARY, c);
    // 3: no usable GPU for a --backend cuda step (or a sweep's default backend).
    EXPECT_TRUE(r.code == 0 || r.code == 3) << "README: " << readme << "\nran: wb " << c << "\nexit " << r.code
                                            << "\n" << r.output;
    if (is_new)  // at the op's next free CUDA id, whatever it is now
      for (const auto& e : fs::directory_iterator(dir.path() / "variants/gelu_forward"))
        wrote_a_rung = wrote_a_rung || std::regex_match(e.path().filename().string(), std::regex(R"(\d+_readme_probe\.cu)"));
  }
  EXPECT_TRUE(wrote_a_rung) << "the README's `wb new` step did not write the rung";
}

}  // namespace
}  // namespace wb
