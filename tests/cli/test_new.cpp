// wb new OP NAME: the rung's file at the op's next free id, with its op's glue and
// contract, a stub every check skips as not implemented; written into a copy of the
// op's folder (--root), so that no test touches the tree or rebuilds the project.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "contract/registry.h"
#include "tests/support/test_helpers.h"
#include "workbench/cli/new_variant.h"

namespace wb {
namespace {

namespace fs = std::filesystem;
using testing::contains;
using testing::Result;
using testing::TempDir;

Result wb(const std::string& args) { return testing::run_command(WB_BINARY, args); }

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int regular_files(const fs::path& folder) {
  int files = 0;
  for (const auto& e : fs::directory_iterator(folder)) files += e.is_regular_file();
  return files;
}

// A source tree holding what wb new reads: the op headers and a copy of the op's folder.
void copy_tree(const TempDir& dir, const std::string& op) {
  const fs::path src(WB_SOURCE_DIR);
  fs::create_directories(dir.path() / "contract");
  fs::copy(src / "contract" / "ops", dir.path() / "contract" / "ops", fs::copy_options::recursive);
  fs::create_directories(dir.path() / "variants");
  fs::copy(src / "variants" / op, dir.path() / "variants" / op, fs::copy_options::recursive);
}

TEST(WbNew, WritesTheNextFreeCudaRungWithItsOpsGlueAndContract) {
  TempDir dir;
  copy_tree(dir, "gelu_forward");
  const int copied = regular_files(dir.path() / "variants/gelu_forward");
  const Result r = wb("new gelu_forward my_kernel --root " + dir.path().string());
  ASSERT_EQ(r.code, 0) << r.output;
  // gelu_forward has CUDA rungs 1 and 2 and the Triton rung 3, which takes a CUDA id (and
  // CPU rungs up to 4, another id sequence).
  const fs::path file = dir.path() / "variants/gelu_forward/04_my_kernel.cu";
  ASSERT_TRUE(fs::exists(file)) << r.output;
  const std::string text = read(file);
  EXPECT_TRUE(contains(text, "Variant gelu_forward_cuda_4() {")) << text;
  EXPECT_TRUE(contains(text, "#include \"contract/ops/gelu_forward.h\"")) << text;
  EXPECT_TRUE(contains(text, "void launch(const GeluForwardArgs& a, const Launch& l)")) << text;
  EXPECT_TRUE(contains(text, "WB_LAUNCH(my_kernel_kernel,")) << text;
  EXPECT_TRUE(contains(text, "v.params = {block_size_param()};")) << text;
  // The contract: the tensors with what a rung owes each, the shapes it is checked at.
  EXPECT_TRUE(contains(text, "output out (B, T, C) f32: overwritten, every element")) << text;
  EXPECT_TRUE(contains(text, "input inp (B, T, C) f32: read only")) << text;
  EXPECT_TRUE(contains(text, "odd: ")) << text;
  // The stub's mark, never a silent pass.
  EXPECT_TRUE(contains(text, std::string("{\"") + cli::kStubRequirement + "\", [](const Shape&) { return false; }}"))
      << text;
  // The commands that follow.
  EXPECT_TRUE(contains(r.output, "build/wb check gelu_forward --backend emu --variants 4")) << r.output;
  EXPECT_TRUE(contains(r.output, "results/emu/check.json")) << r.output;
  // Nothing else was written beside it.
  EXPECT_EQ(regular_files(dir.path() / "variants/gelu_forward"), copied + 1);  // the copied ones and the new one
}

TEST(WbNew, ABf16CpuRungTakesTheBf16StructFromItsTwinsHeader) {
  TempDir dir;
  copy_tree(dir, "gelu_forward_bf16");
  const Result r = wb("new gelu_forward_bf16 lanes --backend cpu --root " + dir.path().string());
  ASSERT_EQ(r.code, 0) << r.output;
  const fs::path file = dir.path() / "variants/gelu_forward_bf16/cpu_03_lanes.cpp";
  ASSERT_TRUE(fs::exists(file)) << r.output;
  const std::string text = read(file);
  EXPECT_TRUE(contains(text, "Variant gelu_forward_bf16_cpu_3() {")) << text;
  EXPECT_TRUE(contains(text, "#include \"contract/ops/gelu_forward.h\"")) << text;
  EXPECT_TRUE(contains(text, "const GeluForwardBf16Args& a")) << text;
  EXPECT_TRUE(contains(text, "v.params = {cpu::threads_param()};")) << text;
  EXPECT_TRUE(contains(r.output, "build/wb check gelu_forward_bf16 --backend cpu --variants 3")) << r.output;
}

TEST(WbNew, AnOpWithoutAFolderStartsAtOne) {
  TempDir dir;
  copy_tree(dir, "gelu_forward");
  const cli::Scaffold s =
      cli::scaffold_variant(Registry::global(), dir.path(), "residual_forward", "first", Backend::cuda);
  EXPECT_EQ(s.id, 1);
  EXPECT_EQ(s.path, fs::path("variants/residual_forward/01_first.cu"));
}

TEST(WbNew, BadInputIsExitTwoAndWritesNothing) {
  TempDir dir;
  copy_tree(dir, "gelu_forward");
  const int copied = regular_files(dir.path() / "variants/gelu_forward");
  const std::string root = " --root " + dir.path().string();
  EXPECT_EXIT_WITH(wb("new gelu_forwrd x" + root), 2, "unknown op 'gelu_forwrd'");
  EXPECT_EXIT_WITH(wb("new gelu_forward Vec4" + root), 2, "'Vec4' cannot name a variant");
  EXPECT_EXIT_WITH(wb("new gelu_forward x --backend emu" + root), 2, "cuda or cpu");
  EXPECT_EXIT_WITH(wb("new gelu_forward x --root " + (dir.path() / "nowhere").string()), 2, "no wb source tree");
  EXPECT_EQ(regular_files(dir.path() / "variants/gelu_forward"), copied);
}

}  // namespace
}  // namespace wb
