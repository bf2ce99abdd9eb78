// The CUDA ladders of the memory-bound backward ops and the optimizer:
// crossentropy_softmax_backward, gelu_backward, encoder_backward, adamw, global_norm,
// layernorm_backward. What can be checked without a GPU: the registered ids, names,
// numeric classes, launch parameters, requirements and skip reasons, workspaces.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "contract/registry.h"

namespace wb {
namespace {

const std::vector<int> kBlockSizes{32, 64, 128, 256, 512, 1024};

struct Expected {
  const char* op;
  int id;
  const char* name;
};

const std::vector<Expected>& expected_ladders() {
  static const std::vector<Expected> ladders{
      {"crossentropy_softmax_backward", 1, "naive"},
      {"crossentropy_softmax_backward", 2, "block_per_row_vec4"},
      {"gelu_backward", 1, "naive"},
      {"gelu_backward", 2, "vec4"},
      {"encoder_backward", 1, "atomic"},
      {"encoder_backward", 2, "bucketed"},
      {"adamw", 1, "naive"},
      {"adamw", 2, "vec4"},
      {"global_norm", 1, "atomic"},
      {"global_norm", 2, "two_pass"},
      {"layernorm_backward", 1, "naive"},
      {"layernorm_backward", 2, "shared_atomic"},
      {"layernorm_backward", 3, "vec4_deterministic"},
      {"layernorm_backward", 4, "vec4_atomic"},
  };
  return ladders;
}

#if WB_HAVE_CUDA

const Variant& cuda_variant(const char* op, int id) { return Registry::global().variant(op, Backend::cuda, id); }

TEST(BwdMemoryVariants, LaddersAreRegisteredWithTheirNames) {
  for (const Expected& e : expected_ladders()) {
    const Variant& v = cuda_variant(e.op, e.id);
    EXPECT_EQ(v.name, e.name) << e.op << " " << e.id;
    EXPECT_EQ(v.numeric, NumericClass::fp32) << e.op << " " << e.id;
    EXPECT_FALSE(v.summary.empty()) << e.op << " " << e.id;
    ASSERT_FALSE(v.params.empty()) << e.op << " " << e.id;
    EXPECT_EQ(v.params[0].name, "block_size") << e.op << " " << e.id;
    EXPECT_EQ(v.params[0].values, kBlockSizes) << e.op << " " << e.id;
    EXPECT_EQ(v.params[0].default_value, 256) << e.op << " " << e.id;
    const std::string file = "variants/" + std::string(e.op) + "/0" + std::to_string(e.id) + "_" + e.name + ".cu";
    EXPECT_EQ(v.source, file);
    EXPECT_EQ(v.source_hash.size(), 64u);
  }
}

TEST(BwdMemoryVariants, ExtraTuningParameters) {
  const Variant& adamw = cuda_variant("adamw", 2);
  ASSERT_EQ(adamw.params.size(), 2u);
  EXPECT_EQ(adamw.params[1].name, "vecs");
  EXPECT_EQ(adamw.params[1].values, (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(adamw.default_params().describe(), "block_size=256,vecs=2");
  EXPECT_EQ(adamw.all_params().size(), 18u);
  for (int id : {3, 4}) {
    const Variant& v = cuda_variant("layernorm_backward", id);
    ASSERT_EQ(v.params.size(), 2u) << id;
    EXPECT_EQ(v.params[1].name, "rows_per_warp");
    EXPECT_EQ(v.params[1].values, (std::vector<int>{1, 2, 4, 8, 16}));
    EXPECT_EQ(v.default_params().describe(), "block_size=256,rows_per_warp=4");
    EXPECT_EQ(v.all_params().size(), 30u);
  }
  for (const Expected& e : expected_ladders()) {
    const bool extra = (std::string(e.op) == "adamw" && e.id == 2) ||
                       (std::string(e.op) == "layernorm_backward" && (e.id == 3 || e.id == 4));
    if (!extra) {
      EXPECT_EQ(cuda_variant(e.op, e.id).params.size(), 1u) << e.op << " " << e.id;
    }
  }
}

TEST(BwdMemoryVariants, RunOnEveryCheckShapeTheyCan) {
  // Which variants skip which check shape; everything else runs every check shape.
  for (const Shape& s : check_shapes()) {
    for (const Expected& e : expected_ladders()) {
      const Variant& v = cuda_variant(e.op, e.id);
      const auto why = v.skip_reason(s, v.default_params());
      const bool lnb_vec4 = std::string(e.op) == "layernorm_backward" && e.id >= 3;
      if (lnb_vec4 && s.C % 4 != 0) {
        EXPECT_EQ(why, "requires C % 4 == 0") << e.op << " " << e.id << " C=" << s.C;
      } else {
        EXPECT_EQ(why, std::nullopt) << e.op << " " << e.id << " C=" << s.C;
      }
    }
  }
}

TEST(BwdMemoryVariants, SkipReasonsNameTheRequirement) {
  const Variant& ce = cuda_variant("crossentropy_softmax_backward", 2);
  EXPECT_EQ(ce.skip_reason(parse_shape("B=2,T=3,V=11,Vp=18"), ce.default_params()), "requires Vp % 4 == 0");
  EXPECT_EQ(cuda_variant("crossentropy_softmax_backward", 1)
                .skip_reason(parse_shape("B=2,T=3,V=11,Vp=18"), ce.default_params()),
            std::nullopt);

  for (int id : {3, 4}) {
    const Variant& v = cuda_variant("layernorm_backward", id);
    const ParamValues p = v.default_params();
    EXPECT_EQ(v.skip_reason(parse_shape("C=75"), p), "requires C % 4 == 0");
    EXPECT_EQ(v.skip_reason(parse_shape("C=1028"), p), "requires C <= 1024");
    EXPECT_EQ(v.skip_reason(parse_shape("C=1024"), p), std::nullopt);
  }
  const Variant& shared = cuda_variant("layernorm_backward", 2);
  EXPECT_EQ(shared.skip_reason(parse_shape("C=6148"), shared.default_params()), "requires C <= 6144");
  EXPECT_EQ(shared.skip_reason(parse_shape("C=6144"), shared.default_params()), std::nullopt);
  EXPECT_EQ(shared.skip_reason(parse_shape("C=75"), shared.default_params()), std::nullopt);

  const Variant& enc = cuda_variant("encoder_backward", 2);
  EXPECT_EQ(enc.skip_reason(parse_shape("C=2097152"), enc.default_params()), "requires C <= 2097120");
}

TEST(BwdMemoryVariants, WorkspaceOnlyWhereDeclared) {
  const Shape s = parse_shape("llmc-dev");
  for (const Expected& e : expected_ladders()) {
    const std::string op = e.op;
    const bool has = (op == "encoder_backward" && e.id == 2) || (op == "global_norm" && e.id == 2) ||
                     (op == "layernorm_backward" && e.id == 3);
    const Variant& v = cuda_variant(e.op, e.id);
    if (has) {
      EXPECT_GT(v.workspace_bytes(s, v.default_params()), 0u) << op << " " << e.id;
    } else {
      EXPECT_EQ(v.workspace_bytes(s, v.default_params()), 0u) << op << " " << e.id;
    }
  }
}

TEST(BwdMemoryVariants, GlobalNormPartialsFollowTheCappedGrid) {
  const Variant& v = cuda_variant("global_norm", 2);
  // N = 1040 at the tiny check shape: 260 float4, 2 blocks of 256.
  const Shape tiny = check_shapes()[0];
  ASSERT_EQ(tiny.N, 1040);
  EXPECT_EQ(v.workspace_bytes(tiny, {{"block_size", 256}}), 2 * sizeof(float));
  EXPECT_EQ(v.workspace_bytes(tiny, {{"block_size", 1024}}), 1 * sizeof(float));
  EXPECT_EQ(v.workspace_bytes(tiny, {{"block_size", 32}}), 9 * sizeof(float));  // ceil(260 / 32)
  // GPT-2 124M: 2^18 threads at most, one partial per block.
  const Shape big = parse_shape("gpt2-124m");
  ASSERT_EQ(big.N, 124475904);
  EXPECT_EQ(v.workspace_bytes(big, {{"block_size", 256}}), 1024 * sizeof(float));
  EXPECT_EQ(v.workspace_bytes(big, {{"block_size", 32}}), 8192 * sizeof(float));
  EXPECT_EQ(v.workspace_bytes(big, {{"block_size", 1024}}), 256 * sizeof(float));
}

TEST(BwdMemoryVariants, EncoderBucketsScaleWithThePositions) {
  const Variant& v = cuda_variant("encoder_backward", 2);
  const ParamValues p = v.default_params();
  // H = max(4096, next power of two >= B*T) ints of counts and of starts, then 16 bytes
  // per position (a (token, position) pair, its sorted slot, its run length).
  EXPECT_EQ(v.workspace_bytes(parse_shape("B=2,T=3,C=8,V=11"), p), 2u * 4096 * 4 + 6 * 16);
  EXPECT_EQ(v.workspace_bytes(parse_shape("B=5,T=1000"), p), 2u * 8192 * 4 + 5000 * 16);
  EXPECT_EQ(v.workspace_bytes(parse_shape("llmc-dev"), p), 2u * 8192 * 4 + 8192 * 16);
  // Independent of V and C and of the block size.
  EXPECT_EQ(v.workspace_bytes(parse_shape("llmc-dev,V=1000,C=96"), {{"block_size", 32}}), 2u * 8192 * 4 + 8192 * 16);
}

TEST(BwdMemoryVariants, LayernormPartialsArePerBlock) {
  const Variant& v = cuda_variant("layernorm_backward", 3);
  // llmc-dev: 8192 rows; 8 warps x 4 rows per block -> 256 blocks, 2 x 256 x 768 floats.
  EXPECT_EQ(v.workspace_bytes(parse_shape("llmc-dev"), v.default_params()), 2u * 256 * 768 * 4);
  EXPECT_EQ(v.workspace_bytes(parse_shape("llmc-dev"), {{"block_size", 1024}, {"rows_per_warp", 16}}),
            2u * 16 * 768 * 4);
  EXPECT_EQ(v.workspace_bytes(parse_shape("llmc-dev"), {{"block_size", 32}, {"rows_per_warp", 1}}),
            2u * 8192 * 768 * 4);
  // 111 rows, 32 warps x 16 rows: a single block.
  EXPECT_EQ(v.workspace_bytes(parse_shape("B=3,T=37,C=76"), {{"block_size", 1024}, {"rows_per_warp", 16}}),
            2u * 76 * 4);
  EXPECT_EQ(cuda_variant("layernorm_backward", 4).workspace_bytes(parse_shape("llmc-dev"), v.default_params()), 0u);
}

#endif  // WB_HAVE_CUDA

}  // namespace
}  // namespace wb
