// Every emulated CUDA rung runs in each of CI's emulated passes, and in the plain one
// at a ragged shape: a rung whose requirements (C % 8, OC % 8, a head size, a tile it
// was built for) no shape of a pass meets is skipped at every one of them, and that
// pass checks nothing of it. The passes: ctest's check_all_emu and check_all_emu_large
// (between them every emulated check shape, as tests/CMakeLists.txt declares them) and
// the sanitized passes, as ci/run_tests.sh runs them (their --shapes, --block-sizes and
// --defaults, read from its lines).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <iterator>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "base/errors.h"
#include "base/text.h"
#include "contract/registry.h"
#include "workbench/runtime/block_sizes.h"
#include "workbench/runtime/can_run.h"
#include "workbench/runtime/executor.h"

namespace wb {
namespace {

// The check shapes whose extents are not multiples of what the rungs tile by: the
// plain pass must run every rung at one of them.
const std::set<std::string> kRagged = {"odd", "ragged", "ragged8"};

struct Pass {
  std::string name;
  std::vector<CheckShape> shapes;
  std::optional<std::vector<int>> block_sizes;  // nullopt: every legal configuration
  bool defaults = false;                        // --defaults: the other launch parameters at their defaults
};

std::vector<CheckShape> shapes_named(const std::string& names) {
  std::vector<CheckShape> out;
  for (const std::string& name : split_list(names)) {
    const std::size_t before = out.size();
    for (const CheckShape& c : named_check_shapes(true))
      if (c.name == name) out.push_back(c);
    EXPECT_EQ(out.size(), before + 1) << "ci/run_tests.sh names the check shape '" << name << "', which is not one";
  }
  return out;
}

// A pass of `wb check --all --backend emu` with `options` (--shapes, --block-sizes,
// --defaults).
Pass pass_with(const std::string& name, const std::string& options) {
  Pass p{name, named_check_shapes(true), std::nullopt};
  std::smatch s;
  const std::regex sizes(R"(--block-sizes (\S+))"), shapes(R"(--shapes (\S+))");
  if (std::regex_search(options, s, shapes)) p.shapes = shapes_named(s[1].str());
  if (std::regex_search(options, s, sizes)) {
    std::vector<int> bs;
    for (const std::string& b : split_list(s[1].str())) bs.push_back(std::stoi(b));
    p.block_sizes = bs;
  }
  p.defaults = std::regex_search(options, std::regex(R"((^|\s)--defaults(\s|$))"));
  return p;
}

// The sanitized passes of ci/run_tests.sh: "pass emu-thread bash ci/emu_sanitized.sh
// thread --block-sizes 32,128 --shapes tiny".
std::vector<Pass> sanitized_passes() {
  std::ifstream in(std::string(WB_SOURCE_DIR) + "/ci/run_tests.sh");
  EXPECT_TRUE(in.good()) << "cannot read " << WB_SOURCE_DIR << "/ci/run_tests.sh";
  std::vector<Pass> passes;
  const std::regex line(R"(^pass (\S+) bash ci/emu_sanitized\.sh \S+(.*)$)");
  for (std::string text; std::getline(in, text);) {
    std::smatch m;
    if (std::regex_match(text, m, line)) passes.push_back(pass_with(m[1], m[2]));
  }
  return passes;
}

// ctest's plain emulated passes, as tests/CMakeLists.txt declares them: "add_test(NAME
// check_all_emu COMMAND $<TARGET_FILE:wb> check --all --backend emu --shapes ...)".
std::vector<Pass> ctest_passes() {
  std::ifstream in(std::string(WB_SOURCE_DIR) + "/tests/CMakeLists.txt");
  EXPECT_TRUE(in.good()) << "cannot read " << WB_SOURCE_DIR << "/tests/CMakeLists.txt";
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::regex test(R"(add_test\(NAME (check_all_emu\S*) COMMAND \$<TARGET_FILE:wb> check --all --backend emu([^)]*)\))");
  std::vector<Pass> passes;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), test); it != std::sregex_iterator(); ++it)
    passes.push_back(pass_with((*it)[1], (*it)[2]));
  return passes;
}

TEST(EmulatedCoverage, CtestsPlainPassesCoverEveryCheckShape) {
  const std::vector<Pass> plain = ctest_passes();
  ASSERT_GE(plain.size(), 1u) << "tests/CMakeLists.txt declares no check_all_emu test";
  for (const CheckShape& c : named_check_shapes(true)) {
    const bool covered = std::any_of(plain.begin(), plain.end(), [&](const Pass& p) {
      return std::any_of(p.shapes.begin(), p.shapes.end(), [&](const CheckShape& s) { return s.name == c.name; });
    });
    EXPECT_TRUE(covered) << "no check_all_emu test of tests/CMakeLists.txt runs the check shape " << c.name;
  }
  // Every configuration at the ragged shapes: their edges are what the tiles and
  // vector widths of a rung's configurations meet.
  for (const Pass& p : plain)
    for (const CheckShape& c : p.shapes)
      if (kRagged.count(c.name)) {
        EXPECT_FALSE(p.defaults) << p.name << " runs the ragged shape " << c.name << " with --defaults";
        EXPECT_FALSE(p.block_sizes) << p.name << " runs the ragged shape " << c.name << " at some block sizes only";
      }
}

// The shapes of the pass at which some configuration of v runs.
std::vector<std::string> shapes_run(const OpSpec& op, const Variant& v, const Pass& pass, const DeviceInfo& device) {
  std::vector<std::string> run;
  for (const CheckShape& c : pass.shapes) {
    try {
      op.check_shape(c.shape);
    } catch (const UsageError&) {
      continue;  // the shape does not apply to the op
    }
    for (const ParamValues& p : configurations_at(v, pass.block_sizes, pass.defaults))
      if (!why_cannot_run(Registry::global(), v, c.shape, p, device)) {
        run.push_back(c.name);
        break;
      }
  }
  return run;
}

// The attention step of ci/emu_sanitized.sh, which runs after its `wb check --all`: the
// ops of its attention_ops line at its attention_shape, block sizes 32 and 128 with
// every other launch parameter.
struct AttentionStep {
  std::vector<std::string> ops;
  std::string shape_name;
  Pass pass;
};
AttentionStep attention_step() {
  std::ifstream in(std::string(WB_SOURCE_DIR) + "/ci/emu_sanitized.sh");
  EXPECT_TRUE(in.good()) << "cannot read " << WB_SOURCE_DIR << "/ci/emu_sanitized.sh";
  AttentionStep step;
  const std::regex ops_line(R"re(^attention_ops="([^"]+)"$)re"), shape_line(R"re(^attention_shape=(\S+)$)re");
  for (std::string text; std::getline(in, text);) {
    std::smatch m;
    if (std::regex_match(text, m, ops_line))
      for (const std::string& op : split_list(m[1].str(), ' ')) step.ops.push_back(op);
    if (std::regex_match(text, m, shape_line)) step.shape_name = m[1];
  }
  EXPECT_FALSE(step.ops.empty()) << "ci/emu_sanitized.sh has no attention_ops=\"...\" line";
  step.pass = Pass{"the sanitized attention step", shapes_named(step.shape_name), std::vector<int>{32, 128}};
  return step;
}

TEST(EmulatedCoverage, EveryRungRunsInEveryEmulatedPassAndAtARaggedShape) {
  const std::vector<Pass> sanitized = sanitized_passes();
  // The thread pass is run by hand for now (ci/run_tests.sh says why); the address pass
  // is CI's, and every sanitized pass that is in CI must reach every rung.
  ASSERT_GE(sanitized.size(), 1u) << "ci/run_tests.sh runs the address pass";
  EXPECT_EQ(sanitized.front().name, "emu-address");
  const std::vector<Pass> plain = ctest_passes();
  const AttentionStep step = attention_step();
  auto ex = make_executor(Backend::emu);
  const Registry& reg = Registry::global();
  int rungs = 0;
  for (const OpSpec* op : reg.ops())
    for (const Variant* v : reg.variants(op->name, Backend::emu)) {
      if (!v->not_emulated.empty()) continue;
      ++rungs;
      std::vector<std::string> at;
      for (const Pass& pass : plain)
        for (const std::string& shape : shapes_run(*op, *v, pass, ex->device())) at.push_back(shape);
      const bool ragged = std::any_of(at.begin(), at.end(), [](const std::string& s) { return kRagged.count(s) > 0; });
      std::string listed;
      for (const std::string& s : at) listed += (listed.empty() ? "" : ", ") + s;
      EXPECT_TRUE(ragged) << v->key() << " runs at no ragged shape of check_all_emu (it runs at: " << listed << ")";
      // Each sanitized pass runs the attention step after its check (ci/emu_sanitized.sh).
      const bool in_step = std::find(step.ops.begin(), step.ops.end(), op->name) != step.ops.end() &&
                           !shapes_run(*op, *v, step.pass, ex->device()).empty();
      for (const Pass& pass : sanitized)
        EXPECT_TRUE(in_step || !shapes_run(*op, *v, pass, ex->device()).empty())
            << v->key() << " is skipped at every shape of the " << pass.name << " pass and its attention step";
    }
  EXPECT_GT(rungs, 90);
}

// How a pipelined rung's blocks stream tiles through a buffer of several stages in
// shared memory (a cp.async pipeline or a double buffer): `tiles`, the most a block
// streams (for a rung with several pipelined loops, the least of their most), and
// `stages`, the buffers it cycles through. A block refills a buffer tiles - stages times.
// Kept here, not as a field of Variant: a change to contract/variant.h changes every
// variant's identity and so undoes every device verification (tests/python/test_rekey.py).
struct Pipeline {
  long tiles = 0;
  int stages = 0;
  long refills() const { return tiles > stages ? tiles - stages : 0; }
};
using PipelineOf = std::function<Pipeline(const Shape&, const ParamValues&)>;

long ceil_div(long a, long b) { return (a + b - 1) / b; }

// The pipelined rungs, by key: the tensor-core GEMMs stream k in slabs of 32 channels
// (variants/matmul/bf16_slabs.cuh, kBK), cuda/5 double-buffered; matmul_backward_bf16's
// two products have k = OC (dinp) and B*T (dweight); the FlashAttention-2 forward's last
// query tile streams every key tile up to T, and both backward kernels stream tiles of
// query_tile rows in two stages (variants/attention/flash_attention_backward_mma.cuh).
const std::map<std::string, PipelineOf>& pipelines() {
  static const std::map<std::string, PipelineOf> table = {
      {"matmul_forward_bf16 emu/5", [](const Shape& s, const ParamValues&) { return Pipeline{ceil_div(s.C, 32), 2}; }},
      {"matmul_forward_bf16 emu/6",
       [](const Shape& s, const ParamValues& p) { return Pipeline{ceil_div(s.C, 32), p.get("stages")}; }},
      {"matmul_gelu_forward_bf16 emu/4",
       [](const Shape& s, const ParamValues& p) { return Pipeline{ceil_div(s.C, 32), p.get("stages")}; }},
      {"matmul_backward_bf16 emu/4",
       [](const Shape& s, const ParamValues& p) {
         return Pipeline{ceil_div(std::min<long>(s.OC, long(s.B) * s.T), 32), p.get("stages")};
       }},
      {"attention_forward_bf16 emu/4",
       [](const Shape& s, const ParamValues& p) { return Pipeline{ceil_div(s.T, p.get("key_tile")), p.get("stages")}; }},
      {"attention_backward_bf16 emu/3",
       [](const Shape& s, const ParamValues& p) { return Pipeline{ceil_div(s.T, p.get("query_tile")), 2}; }},
  };
  return table;
}

// A pipelined rung whose default launch never refills a buffer in CI checks its pipeline
// only at launches nobody uses by default: a refill issued before the barrier that ends
// the other warps' reads of its buffer shows only where a block refills. So
// check_all_emu (or check_all_emu_large) must run each one's default launch, at some check shape, with at least
// two refills (tests/emu/test_emu_planted.cpp's refill_before_barrier control shows the
// flash shape catching what the others cannot). Every emulated rung whose summary names a
// cp.async pipeline or a double buffer must be in the table. The test prints, per rung,
// the shapes where that holds.
TEST(EmulatedCoverage, EveryPipelinedRungRefillsTwiceAtItsDefaultLaunchInCheckAllEmu) {
  auto ex = make_executor(Backend::emu);
  const Registry& reg = Registry::global();
  int pipelined = 0;
  for (const OpSpec* op : reg.ops())
    for (const Variant* v : reg.variants(op->name, Backend::emu)) {
      if (!v->not_emulated.empty()) continue;
      const auto it = pipelines().find(v->key());
      const bool names_one = v->summary.find("cp.async pipeline") != std::string::npos ||
                             v->summary.find("double buffer") != std::string::npos;
      EXPECT_TRUE(it != pipelines().end() || !names_one)
          << v->key() << " (" << v->summary << ") streams through stages: add it to pipelines()";
      if (it == pipelines().end()) continue;
      ++pipelined;
      const ParamValues launch = v->default_params();
      std::string refilled;
      for (const CheckShape& c : named_check_shapes(true)) {
        try {
          op->check_shape(c.shape);
        } catch (const UsageError&) {
          continue;
        }
        if (why_cannot_run(reg, *v, c.shape, launch, ex->device())) continue;
        const Pipeline p = it->second(c.shape, launch);
        if (p.refills() >= 2)
          refilled += (refilled.empty() ? "" : ", ") + c.name + " (" + std::to_string(p.tiles) + " tiles, " +
                      std::to_string(p.stages) + " stages)";
      }
      EXPECT_FALSE(refilled.empty()) << v->key() << " at its default launch (" << launch.describe()
                                     << ") refills no buffer twice at any check shape of check_all_emu";
      std::cout << v->key() << " " << launch.describe() << ": " << refilled << "\n";
    }
  EXPECT_EQ(pipelined, int(pipelines().size())) << "a rung of pipelines() is not an emulated rung";
}

// The sanitized passes' attention step (ci/emu_sanitized.sh: the ops of its
// attention_ops line at its attention_shape, block sizes 32 and 128 with every other
// launch parameter) runs every rung of those ops, and at that
// shape a backward with dq_atomics=1 at its smallest key tile has two blocks adding into
// the same dQ rows.
TEST(EmulatedCoverage, TheSanitizedAttentionStepRunsEveryAttentionRungWhereBlocksShareRows) {
  const AttentionStep step = attention_step();
  ASSERT_EQ(step.pass.shapes.size(), 1u);
  auto ex = make_executor(Backend::emu);
  const Registry& reg = Registry::global();
  for (const std::string& name : step.ops)
    for (const Variant* v : reg.variants(name, Backend::emu)) {
      if (v->not_emulated.empty()) {
        EXPECT_FALSE(shapes_run(reg.op(name), *v, step.pass, ex->device()).empty())
            << v->key() << " does not run at " << step.shape_name;
      }
    }
  const std::vector<std::string>& ops = step.ops;
  const std::vector<CheckShape>& at = step.pass.shapes;
  const Shape& s = at.front().shape;
  EXPECT_LE(s.C / s.NH, 64) << "the FlashAttention-2 rungs hold head sizes up to 64";
  EXPECT_GT(s.T, 32) << "two key tiles of 32: two blocks add into the same dQ rows";
  EXPECT_NE(std::find(ops.begin(), ops.end(), "attention_backward_bf16"), ops.end());
}

}  // namespace
}  // namespace wb
