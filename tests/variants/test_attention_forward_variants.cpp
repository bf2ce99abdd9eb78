// The attention_forward ladder: what each variant registers (ids, names, numeric
// classes, launch parameters, requirements, workspace) and the skip reasons it gives
// on shapes and configurations it cannot run; the CPU variant against the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "contract/ops/attention_forward.h"
#include "contract/registry.h"
#include "reference/reference.h"
#include "tests/support/ladder.h"

namespace wb {
namespace {

const Variant& variant(Backend b, int id) { return Registry::global().variant("attention_forward", b, id); }

TEST(AttentionForwardVariants, CpuOnlineSoftmaxIsRegistered) {
  const Variant& v = variant(Backend::cpu, 2);
  EXPECT_EQ(v.name, "online_softmax");
  EXPECT_EQ(v.numeric, NumericClass::fp32);
  EXPECT_TRUE(v.params.empty());
  EXPECT_TRUE(v.requirements.empty());
  EXPECT_EQ(v.workspace_bytes(parse_shape("B=8,T=1024,C=768,NH=12"), {}), 0u);
  EXPECT_EQ(v.source, "variants/attention_forward/cpu_02_online_softmax.cpp");
}

// The CPU variant against the reference on a shape with nothing a power of two and
// rows longer than one block of 64 keys.
TEST(AttentionForwardVariants, CpuOnlineSoftmaxMatchesTheReference) {
  const int B = 2, T = 70, C = 36, NH = 3;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> qkv(std::size_t(B) * T * 3 * C);
  for (float& x : qkv) x = u(rng);
  std::vector<float> out(std::size_t(B) * T * C, NAN), lse(std::size_t(B) * NH * T, NAN);
  std::vector<float> ref_out(out.size()), ref_lse(lse.size());
  reference::attention_forward({ref_out.data(), ref_lse.data(), qkv.data(), B, T, C, NH});
  const AttentionForwardArgs args{out.data(), lse.data(), qkv.data(), B, T, C, NH};
  variant(Backend::cpu, 2).run(&args, Launch{});
  for (std::size_t i = 0; i < out.size(); ++i)
    ASSERT_NEAR(out[i], ref_out[i], 1e-5 + 1e-4 * std::fabs(ref_out[i])) << i;
  for (std::size_t i = 0; i < lse.size(); ++i)
    ASSERT_NEAR(lse[i], ref_lse[i], 2e-5 + 1e-5 * std::fabs(ref_lse[i])) << i;
}

#if WB_HAVE_CUDA

std::string skip(const Variant& v, const std::string& shape, ParamValues p = {}) {
  return v.skip_reason(parse_shape(shape), v.complete(p)).value_or("runs");
}

bool has_substring(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const std::vector<int> kAllBlockSizes{32, 64, 128, 256, 512, 1024};

TEST(AttentionForwardVariants, CudaLadderIsRegistered) {
  const auto ladder = testing::wb_rungs(Registry::global(), "attention_forward", Backend::cuda);
  const std::vector<std::string> rungs = testing::rungs("attention_forward", Backend::cuda);
#if WB_HAVE_CUDNN
  EXPECT_EQ(rungs,
            (std::vector<std::string>{"1 naive", "2 cublas", "3 online_softmax", "4 flash_tiled", "5 cudnn_sdpa"}));
#else
  EXPECT_EQ(rungs, (std::vector<std::string>{"1 naive", "2 cublas", "3 online_softmax", "4 flash_tiled"}));
#endif
  for (const Variant* v : ladder) {
    EXPECT_EQ(v->numeric, v->id == 5 ? NumericClass::bf16 : NumericClass::fp32) << v->name;
    ASSERT_FALSE(v->params.empty()) << v->name;
    EXPECT_EQ(v->params[0].name, "block_size") << v->name;
    EXPECT_EQ(v->source_hash.size(), 64u) << v->name;
  }
}

TEST(AttentionForwardVariants, SimpleVariantsSweepEveryBlockSize) {
  for (int id : {1, 2, 3}) {
    const Variant& v = variant(Backend::cuda, id);
    ASSERT_EQ(v.params.size(), 1u) << id;
    EXPECT_EQ(v.params[0].values, kAllBlockSizes) << id;
    EXPECT_EQ(v.params[0].default_value, 256) << id;
  }
  // Variants 1 and 2 run any valid shape, every check shape included.
  for (int id : {1, 2})
    for (const Shape& s : check_shapes()) EXPECT_FALSE(variant(Backend::cuda, id).skip_reason(s, {{"block_size", 32}}));
}

TEST(AttentionForwardVariants, CublasDeclaresItsWorkspaceExactly) {
  const Variant& v = variant(Backend::cuda, 2);
  // q, k, v (B*T*C floats each) and S (B*NH*T*T floats); P v goes over q.
  const Shape tiny = parse_shape("B=3,T=37,C=75,NH=3");
  EXPECT_EQ(v.workspace_bytes(tiny, v.default_params()), (3u * 3 * 37 * 75 + 3u * 3 * 37 * 37) * sizeof(float));
  const Shape sweep = parse_shape("B=8,T=1024,C=768,NH=12");
  const std::size_t floats = 3ull * 8 * 1024 * 768 + 8ull * 12 * 1024 * 1024;
  EXPECT_EQ(v.workspace_bytes(sweep, v.default_params()), floats * sizeof(float));
  const Shape long_rows = parse_shape("B=16,T=2048,C=768,NH=12");  // S alone is 3 GiB: no 32-bit overflow
  EXPECT_EQ(v.workspace_bytes(long_rows, v.default_params()),
            (3ull * 16 * 2048 * 768 + 16ull * 12 * 2048 * 2048) * sizeof(float));
  for (int id : {1, 3, 4}) EXPECT_EQ(variant(Backend::cuda, id).workspace_bytes(sweep, {}), 0u) << id;
}

TEST(AttentionForwardVariants, OnlineSoftmaxTakesHeadsUpTo256) {
  const Variant& v = variant(Backend::cuda, 3);
  for (const Shape& s : check_shapes()) EXPECT_FALSE(v.skip_reason(s, v.default_params()));
  EXPECT_EQ(skip(v, "B=1,T=8,C=512,NH=2"), "runs");
  EXPECT_EQ(skip(v, "B=1,T=8,C=600,NH=2"), "requires C / NH <= 256");
}

TEST(AttentionForwardVariants, FlashTiledParamsAndLimits) {
  const Variant& v = variant(Backend::cuda, 4);
  ASSERT_EQ(v.params.size(), 3u);
  EXPECT_EQ(v.params[0].values, (std::vector<int>{64, 128, 256}));
  EXPECT_EQ(v.params[1].name, "tile_q");
  EXPECT_EQ(v.params[1].values, (std::vector<int>{32, 64, 128}));
  EXPECT_EQ(v.params[2].name, "tile_k");
  EXPECT_EQ(v.params[2].values, (std::vector<int>{32, 64}));
  EXPECT_EQ(v.default_params().describe(), "block_size=256,tile_q=64,tile_k=64");

  // Head sizes: at most 128 (the tile is padded to 64 or 128 channels).
  EXPECT_EQ(skip(v, "B=1,T=8,C=256,NH=2"), "runs");
  EXPECT_EQ(skip(v, "B=1,T=8,C=258,NH=2"), "requires C / NH <= 128");
  for (const Shape& s : check_shapes()) EXPECT_FALSE(v.skip_reason(s, v.default_params()));

  // tile_q must give 2, 4 or 8 rows per thread (block_size / 16 thread rows).
  const std::string gpt2 = "B=2,T=64,C=768,NH=12";
  EXPECT_TRUE(has_substring(skip(v, gpt2, {{"block_size", 64}, {"tile_q", 64}}), "2, 4 or 8 rows per thread"));
  EXPECT_TRUE(has_substring(skip(v, gpt2, {{"block_size", 128}, {"tile_q", 128}}), "2, 4 or 8 rows per thread"));
  EXPECT_EQ(skip(v, gpt2, {{"block_size", 64}, {"tile_q", 32}}), "runs");
  int runnable = 0;
  for (const ParamValues& p : v.all_params()) runnable += !v.skip_reason(parse_shape(gpt2), p);
  EXPECT_EQ(runnable, 12);  // 6 (block_size, tile_q) pairs x 2 tile_k

  // Shared memory: the largest tiles with hs > 64 (D = 128) need 166 KiB > 160 KiB.
  const ParamValues largest{{"block_size", 256}, {"tile_q", 128}, {"tile_k", 64}};
  EXPECT_EQ(skip(v, gpt2, largest), "runs");
  EXPECT_TRUE(has_substring(skip(v, "B=1,T=64,C=128,NH=1", largest), "KiB of shared memory"));
  EXPECT_EQ(skip(v, "B=1,T=64,C=128,NH=1", {{"tile_k", 32}, {"tile_q", 128}}), "runs");
}

#if WB_HAVE_CUDNN
TEST(AttentionForwardVariants, CudnnSdpaIsBf16WithHeadSizeRules) {
  const Variant& v = variant(Backend::cuda, 5);
  EXPECT_EQ(v.numeric, NumericClass::bf16);
  EXPECT_TRUE(has_substring(v.source, "cudnn"));
  EXPECT_EQ(v.params[0].values, kAllBlockSizes);
  // Check shapes: hs = 4 and 25 skip, hs = 64 and 48 run.
  const std::vector<Shape> shapes = check_shapes();
  ASSERT_GE(shapes.size(), 4u);
  EXPECT_EQ(v.skip_reason(shapes[0], v.default_params()), std::optional<std::string>("requires C / NH % 8 == 0"));
  EXPECT_EQ(v.skip_reason(shapes[1], v.default_params()), std::optional<std::string>("requires C / NH % 8 == 0"));
  EXPECT_FALSE(v.skip_reason(shapes[2], v.default_params()));
  EXPECT_FALSE(v.skip_reason(shapes[3], v.default_params()));
  EXPECT_EQ(skip(v, "B=1,T=8,C=272,NH=2"), "requires C / NH <= 128");
}

TEST(AttentionForwardVariants, CudnnSdpaWorkspaceHoldsBf16CopiesAndABoundForCudnn) {
  const Variant& v = variant(Backend::cuda, 5);
  auto round256 = [](std::size_t n) { return (n + 255) / 256 * 256; };
  for (const char* text : {"B=1,T=5,C=96,NH=2", "B=8,T=1024,C=768,NH=12"}) {
    const Shape s = parse_shape(text);
    const std::size_t btc = std::size_t(s.B) * s.T * s.C;
    const std::size_t bf16_copies = round256(3 * btc * 2) + round256(btc * 2);
    const std::size_t cudnn_bound = (std::size_t(64) << 20) + 16 * std::size_t(s.B) * s.NH * s.T;
    EXPECT_EQ(v.workspace_bytes(s, v.default_params()), bf16_copies + cudnn_bound) << text;
  }
}
#endif  // WB_HAVE_CUDNN

#endif  // WB_HAVE_CUDA

}  // namespace
}  // namespace wb
