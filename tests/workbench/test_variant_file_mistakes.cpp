// A user's mistakes in a variant file that only the program can see (the build's
// generator catches the others: tests/python/test_variant_file_mistakes.py) are bad
// input: the message names the file and what to change, and the exit code is 2, never
// 4 (wb's own bugs). Each test registers a tiny registry of its own, as wb does its
// global one (variant_from_file, then Registry::add).
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <sstream>
#include <string>

#include "contract/catalogue.h"
#include "contract/ops/gelu_forward.h"
#include "contract/ops/layernorm_forward.h"
#include "contract/registry.h"
#include "contract/variant_errors.h"
#include "reference/reference.h"
#include "workbench/cli/commands.h"
#include "workbench/runtime/harness.h"

namespace wb {
namespace {

// The message and the exit code wb gives the mistake `f` throws.
struct Outcome {
  std::string message;
  int exit_code = -1;
};

Outcome outcome_of(const std::function<void()>& f) {
  try {
    f();
  } catch (...) {
    std::ostringstream err;
    const int code = cli::exit_code_for(std::current_exception(), err);
    return {err.str(), code};
  }
  return {"no error", 0};
}

void gelu_launch(const GeluForwardArgs&, const Launch&) {}
void gelu_bf16_launch(const GeluForwardBf16Args&, const Launch&) {}

Variant gelu_fp32() {
  Variant v = Variant::of(&gelu_launch);
  v.summary = "fp32";
  return v;
}

Variant gelu_bf16() {
  Variant v = Variant::of(&gelu_bf16_launch);
  v.summary = "a bf16 kernel";
  return v;
}

TEST(VariantFileMistakes, ARungInTheOtherPrecisionsFolderNamesBothStructsAndTheFolder) {
  Registry reg(all_ops());
  reg.add(variant_from_file(&gelu_bf16, "variants/gelu_forward_bf16/01_naive.cu", Backend::cuda));
  const Outcome o = outcome_of([&] {
    reg.add(variant_from_file(&gelu_bf16, "variants/gelu_forward/03_packed128.cu", Backend::cuda));
  });
  EXPECT_EQ(o.exit_code, cli::kBadUsage) << o.message;
  EXPECT_NE(o.message.find("variants/gelu_forward/03_packed128.cu"), std::string::npos) << o.message;
  // The struct found (the bf16 one) and the struct gelu_forward expects, each by name.
  EXPECT_NE(o.message.find("its launcher takes " + std::string("wb::GeluForwardArgsOn<")), std::string::npos)
      << o.message;
  EXPECT_NE(o.message.find("but gelu_forward takes wb::GeluForwardArgsOn<float>"), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("gelu_forward_bf16's argument struct"), std::string::npos) << o.message;
  // Where it belongs, with that folder's next free id: above this registry's variant 1
  // and above the build's own files there (cuda rungs 1 and 2 where the build has them;
  // a build without nvcc, as the sanitized one, has fewer).
  EXPECT_NE(o.message.find("belongs in variants/gelu_forward_bf16/ (with that folder's next free id, "),
            std::string::npos)
      << o.message;
}

TEST(VariantFileMistakes, AnIdTakenTwiceNamesBothFilesAndTheNextFreeId) {
  Registry reg(all_ops());
  reg.add(variant_from_file(&gelu_fp32, "variants/gelu_forward/02_vec4.cu", Backend::cuda));
  const Outcome o = outcome_of(
      [&] { reg.add(variant_from_file(&gelu_fp32, "variants/gelu_forward/02_mine.cu", Backend::cuda)); });
  EXPECT_EQ(o.exit_code, cli::kBadUsage) << o.message;
  EXPECT_NE(o.message.find("id 2 is taken twice in variants/gelu_forward/, by variants/gelu_forward/02_vec4.cu"),
            std::string::npos)
      << o.message;
  EXPECT_NE(o.message.find("(variants/gelu_forward/02_mine.cu)"), std::string::npos) << o.message;
  // Above both files, and above whatever else the folder holds on disk (the Triton
  // rung 03_triton_sigmoid.py takes 3).
  const std::size_t at = o.message.find("the next free id, ");
  ASSERT_NE(at, std::string::npos) << o.message;
  EXPECT_GE(std::stoi(o.message.substr(at + 18)), 3) << o.message;
}

Variant says_another_id() {
  Variant v = gelu_fp32();
  v.id = 4;
  return v;
}

TEST(VariantFileMistakes, AFactoryThatSaysAnotherIdThanItsFileIsTheFilesMistake) {
  const Outcome o = outcome_of(
      [&] { variant_from_file(&says_another_id, "variants/gelu_forward/03_fast.cu", Backend::cuda); });
  EXPECT_EQ(o.exit_code, cli::kBadUsage) << o.message;
  EXPECT_NE(o.message.find("variants/gelu_forward/03_fast.cu"), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("its factory sets id 4, its file name says 3"), std::string::npos) << o.message;
}

TEST(VariantFileMistakes, AFileInAFolderThatIsNoOpsNamesTheOps) {
  Registry reg(all_ops());
  const Outcome o =
      outcome_of([&] { reg.add(variant_from_file(&gelu_fp32, "variants/gelu/03_fast.cu", Backend::cuda)); });
  EXPECT_EQ(o.exit_code, cli::kBadUsage) << o.message;
  EXPECT_NE(o.message.find("variants/gelu/ is no op's folder"), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("gelu_forward"), std::string::npos) << o.message;
}

// A launcher reading a block size its factory never declared: every configuration
// would be INCORRECT for a reason that is the file's, so the check stops with the fix.
void reads_block_size(const LayernormForwardArgs& a, const Launch& l) {
  if (l.block_size() > 0) reference::layernorm_forward(a);
}

Variant without_its_block_size() {
  Variant v = Variant::of(&reads_block_size);
  v.summary = "forgets v.params";
  return v;
}

TEST(VariantFileMistakes, ALaunchParameterReadButNotDeclaredStopsTheCheckNamingTheFile) {
  const Variant v =
      variant_from_file(&without_its_block_size, "variants/layernorm_forward/cpu_09_mine.cpp", Backend::cpu);
  const std::unique_ptr<Executor> ex = make_executor(Backend::cpu);
  const OpSpec& op = Registry::global().op("layernorm_forward");
  Session session(Registry::global(), op, parse_shape("B=2,T=3,C=8"), 1234, *ex);
  const Outcome o = outcome_of([&] { session.evaluate(v, v.default_params(), EvalOptions{}); });
  EXPECT_EQ(o.exit_code, cli::kBadUsage) << o.message;
  EXPECT_NE(o.message.find("variants/layernorm_forward/cpu_09_mine.cpp"), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("reads the launch parameter 'block_size', which its factory does not declare"),
            std::string::npos)
      << o.message;
  EXPECT_NE(o.message.find("v.params = {block_size_param()};"), std::string::npos) << o.message;
}

TEST(VariantFileMistakes, AMissingParameterOutsideAVariantStaysWbsOwnBug) {
  // ParamValues asked for what it does not hold by wb itself: an internal error.
  const Outcome o = outcome_of([] { ParamValues{}.get("block_size"); });
  EXPECT_EQ(o.exit_code, cli::kInternalError) << o.message;
}

}  // namespace
}  // namespace wb
