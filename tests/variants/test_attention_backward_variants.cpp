// The attention_backward ladder: registered ids, names, numeric classes, launch
// parameters, requirements, workspace sizes; the CPU variant run through the harness.
// The attention_backward_bf16 ladder: the same, its CUDA variants run emulated.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "contract/registry.h"
#include "tests/support/ladder.h"
#include "workbench/runtime/executor.h"
#include "workbench/runtime/harness.h"

namespace wb {
namespace {

constexpr const char* kOp = "attention_backward";

TEST(AttentionBackwardVariants, CpuLadder) {
  EXPECT_EQ(testing::rungs(kOp, Backend::cpu), (std::vector<std::string>{"1 reference", "2 recompute_from_lse"}));
  const Variant& v = testing::parameterless_cpu_rung(kOp, 2);
  EXPECT_EQ(v.source, "variants/attention_backward/cpu_02_recompute_from_lse.cpp");
  EXPECT_EQ(v.workspace_bytes(parse_shape("llmc-dev"), v.default_params()), 0u);
}

// Several query rows per head, hs = 8, T not a power of two: the CPU variant against
// the reference, written everywhere, repeatable.
TEST(AttentionBackwardVariants, CpuRecomputeFromLseMatchesTheReference) {
  const Registry& reg = Registry::global();
  const Variant& v = reg.variant(kOp, Backend::cpu, 2);
  auto ex = make_executor(Backend::cpu);
  Session session(Registry::global(), reg.op(kOp), parse_shape("B=2,T=19,C=24,NH=3"), 99, *ex);
  EvalOptions o;
  o.check_launches = 1;
  const Record r = session.evaluate(v, v.default_params(), o);
  EXPECT_EQ(r.status, Status::ok) << r.reason;
  EXPECT_EQ(r.deterministic, true);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].tensor, "dqkv");
  EXPECT_EQ(r.errors[0].count, 2 * 19 * 72);
}

constexpr const char* kBf16Op = "attention_backward_bf16";

// The emulated builds carry the CUDA variants' metadata with or without nvcc.
TEST(AttentionBackwardBf16Variants, EmulatedLadderAndWorkspaces) {
  const Registry& reg = Registry::global();
  EXPECT_EQ(testing::rungs(kBf16Op, Backend::emu),
            (std::vector<std::string>{"1 naive", "2 flash_tiled", "3 flash_mma", "4 cudnn_sdpa"}));
  // fp32 arithmetic, but cuda/3's bf16 mma operands and cuDNN's (cuda/4, emulated by
  // device/cuda/cudnn_sdpa_emu.cpp)
  for (const Variant* v : testing::wb_rungs(reg, kBf16Op, Backend::emu))
    EXPECT_EQ(v->numeric, v->id >= 3 ? NumericClass::bf16 : NumericClass::fp32) << v->name;
  EXPECT_EQ(reg.variant(kBf16Op, Backend::emu, 4).not_emulated, "");

  // The naive port sums in an fp32 copy of dqkv: 3 B*T*C floats.
  const Variant& naive = reg.variant(kBf16Op, Backend::emu, 1);
  EXPECT_EQ(naive.workspace_bytes(parse_shape("B=2,T=3,C=8,NH=2"), naive.default_params()), 144 * sizeof(float));

  // The tiled port: D (B*NH*T floats), plus the fp32 dq buffer (B*T*C) with dq_atomics=1.
  const Variant& flash = reg.variant(kBf16Op, Backend::emu, 2);
  EXPECT_EQ(flash.default_params().describe(), "block_size=256,tile=64,dq_atomics=0");
  EXPECT_EQ(flash.all_params().size(), 4u);
  for (const ParamValues& q : flash.all_params()) {
    const std::size_t dq = q.get("dq_atomics") ? 48 : 0;
    EXPECT_EQ(flash.workspace_bytes(parse_shape("B=2,T=3,C=8,NH=2"), q), (12 + dq) * sizeof(float));
    EXPECT_EQ(flash.claims_deterministic(q), q.get("dq_atomics") == 0);
  }
  EXPECT_EQ(flash.skip_reason(parse_shape("B=3,T=37,C=75,NH=3"), flash.default_params()), "requires C / NH % 4 == 0");

  // The tensor-core rung: the same workspace, heads up to 64 channels.
  const Variant& mma = reg.variant(kBf16Op, Backend::emu, 3);
  EXPECT_EQ(mma.default_params().describe(), "key_tile=64,query_tile=64,dq_atomics=0");
  EXPECT_EQ(mma.all_params().size(), 12u);
  EXPECT_EQ(mma.min_compute_capability, 80);
  for (const ParamValues& q : mma.all_params()) {
    const std::size_t dq = q.get("dq_atomics") ? 48 : 0;
    EXPECT_EQ(mma.workspace_bytes(parse_shape("B=2,T=3,C=8,NH=2"), q), (12 + dq) * sizeof(float));
    EXPECT_EQ(mma.claims_deterministic(q), q.get("dq_atomics") == 0);
  }
  EXPECT_EQ(mma.skip_reason(parse_shape("C=768,NH=6"), mma.default_params()),
            "requires C / NH % 4 == 0 and C / NH <= 64");                                      // hs = 128
  EXPECT_EQ(mma.skip_reason(parse_shape("llmc-dev"), mma.default_params()), std::nullopt);  // hs = 64
}

// hs = 8, T not a power of two and crossing a 32-row tile: every emulated
// configuration against the reference port, each gradient within its tolerance (half an
// ulp of it for the fp32-arithmetic rungs; the bf16 class for cuda/3).
TEST(AttentionBackwardBf16Variants, EmulatedVariantsMatchTheReferencePort) {
  const Registry& reg = Registry::global();
  auto ex = make_executor(Backend::emu);
  Session session(reg, reg.op(kBf16Op), parse_shape("B=2,T=37,C=24,NH=3"), 7, *ex);
  EvalOptions o;
  o.check_launches = 1;
  for (const Variant* v : testing::wb_rungs(reg, kBf16Op, Backend::emu)) {
    for (const ParamValues& p : v->all_params()) {
      // The tiled rung at its one block size; the tensor-core rung at its smallest tiles
      // (T = 37 crosses two key tiles and three query tiles), in both dq forms; cuDNN's
      // (emulated: device/cuda/cudnn_sdpa_emu.cpp) at its one configuration.
      if (p.find("block_size") ? p.get("block_size") != 256
                               : p.find("key_tile") && (p.get("key_tile") != 32 || p.get("query_tile") != 16))
        continue;
      const Record r = session.evaluate(*v, p, o);
      EXPECT_EQ(r.status, Status::ok) << v->name << " " << p.describe() << ": " << r.reason;
      ASSERT_EQ(r.errors.size(), 1u);
      EXPECT_EQ(r.errors[0].count, 2 * 37 * 72);
    }
  }
}

#if WB_HAVE_CUDA

TEST(AttentionBackwardVariants, CudaLadder) {
  EXPECT_EQ(testing::rungs(kOp, Backend::cuda),
            (std::vector<std::string>{"1 naive", "2 cublas_batched", "3 flash_tiled"}));
  for (const Variant* v : testing::wb_rungs(Registry::global(), kOp, Backend::cuda)) {
    EXPECT_EQ(v->numeric, NumericClass::fp32) << v->name;
    ASSERT_FALSE(v->params.empty());
    EXPECT_EQ(v->params[0].name, "block_size");
    EXPECT_EQ(v->source_hash.size(), 64u);
  }
}

TEST(AttentionBackwardVariants, NaiveRunsEveryShapeWithoutWorkspace) {
  const Variant& v = Registry::global().variant(kOp, Backend::cuda, 1);
  EXPECT_EQ(v.params.size(), 1u);
  EXPECT_EQ(v.params[0].values, (std::vector<int>{32, 64, 128, 256, 512, 1024}));
  for (const Shape& s : check_shapes()) {
    EXPECT_EQ(v.skip_reason(s, v.default_params()), std::nullopt);
    EXPECT_EQ(v.workspace_bytes(s, v.default_params()), 0u);
  }
}

TEST(AttentionBackwardVariants, CublasWorkspaceHoldsFourHeadBuffersAndTwoScoreSquares) {
  const Variant& v = Registry::global().variant(kOp, Backend::cuda, 2);
  EXPECT_EQ(v.params.size(), 1u);
  EXPECT_EQ(v.params[0].values, (std::vector<int>{32, 64, 128, 256, 512, 1024}));
  const ParamValues p = v.default_params();
  // B*T*C = 48 and B*NH*T*T = 36 floats, each buffer rounded up to 64 floats.
  EXPECT_EQ(v.workspace_bytes(parse_shape("B=2,T=3,C=8,NH=2"), p), (4 * 64 + 2 * 64) * sizeof(float));
  // B*T*C = 8325 -> 8384, B*NH*T*T = 12321 -> 12352.
  EXPECT_EQ(v.workspace_bytes(parse_shape("B=3,T=37,C=75,NH=3"), p), (4 * 8384 + 2 * 12352) * sizeof(float));
  // The sweep shape: 4 * 6291456 + 2 * 100663296 floats, 864 MiB.
  EXPECT_EQ(v.workspace_bytes(parse_shape("llmc-dev"), p), std::size_t(905969664));
  for (const Shape& s : check_shapes()) EXPECT_EQ(v.skip_reason(s, p), std::nullopt);
}

TEST(AttentionBackwardVariants, FlashTiledParamsRequirementsAndWorkspace) {
  const Variant& v = Registry::global().variant(kOp, Backend::cuda, 3);
  ASSERT_EQ(v.params.size(), 3u);
  EXPECT_EQ(v.params[0].values, (std::vector<int>{256}));
  EXPECT_EQ(v.params[1].name, "tile");
  EXPECT_EQ(v.params[1].values, (std::vector<int>{32, 64}));
  EXPECT_EQ(v.params[2].name, "dq_atomics");
  EXPECT_EQ(v.params[2].values, (std::vector<int>{0, 1}));
  EXPECT_EQ(v.default_params().describe(), "block_size=256,tile=64,dq_atomics=0");
  EXPECT_EQ(v.all_params().size(), 4u);

  const ParamValues p = v.default_params();
  EXPECT_EQ(v.skip_reason(parse_shape("B=3,T=37,C=75,NH=3"), p), "requires C / NH % 4 == 0");  // hs = 25
  EXPECT_EQ(v.skip_reason(parse_shape("C=768,NH=3"), p), "requires C / NH <= 128");            // hs = 256
  EXPECT_EQ(v.skip_reason(parse_shape("C=768,NH=6"), p), std::nullopt);                        // hs = 128
  EXPECT_EQ(v.skip_reason(parse_shape("llmc-dev"), p), std::nullopt);                          // hs = 64
  int runnable = 0;
  for (const Shape& s : check_shapes()) runnable += !v.skip_reason(s, p).has_value();
  EXPECT_EQ(runnable, int(check_shapes().size()) - 1);  // all but C=75, NH=3

  // D = dout . out per (b, h, t), whatever the tile or the dq mode.
  for (const ParamValues& q : v.all_params()) {
    EXPECT_EQ(v.workspace_bytes(parse_shape("B=2,T=3,C=8,NH=2"), q), 12 * sizeof(float));
    EXPECT_EQ(v.workspace_bytes(parse_shape("llmc-dev"), q), std::size_t(8 * 12 * 1024) * sizeof(float));
  }
}

#endif

}  // namespace
}  // namespace wb
