// The matmul_backward contract (dinp overwritten, dweight accumulated, no bias) and
// the variants of matmul_backward and matmul_backward_bias, on the host side: ids,
// names, numeric classes, launch parameters, requirements and skip reasons, workspace
// sizes. (Whether the kernels compute the right thing is Cuda.EveryVariantIsCorrect...
// in test_cuda.cpp, on a machine with a GPU.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "contract/registry.h"
#include "tests/support/ladder.h"

namespace wb {
namespace {

const Registry& reg() { return Registry::global(); }

const TensorSpec* tensor(const OpSpec& op, const std::string& name) {
  const auto i = op.tensor_index(name);
  return i ? &op.tensors[*i] : nullptr;
}

// dinp is overwritten (an output: the harness poisons it, so every element must be
// written), dweight accumulated, and the bias gradient is matmul_backward_bias's alone.
TEST(MatmulBackwardOp, DinpOverwrittenDweightAccumulatedNoBias) {
  const OpSpec& op = reg().op("matmul_backward");
  ASSERT_NE(tensor(op, "dinp"), nullptr);
  EXPECT_EQ(tensor(op, "dinp")->role, Role::output);
  ASSERT_NE(tensor(op, "dweight"), nullptr);
  EXPECT_EQ(tensor(op, "dweight")->role, Role::inout);
  EXPECT_EQ(tensor(op, "dbias"), nullptr);
  for (const auto& t : op.tensors) EXPECT_FALSE(t.optional) << t.name;
  const Shape s = parse_shape("B=2,T=3,C=5,OC=7");
  EXPECT_DOUBLE_EQ(op.flops(s), 4.0 * 2 * 3 * 5 * 7);

  const OpSpec& bias = reg().op("matmul_backward_bias");
  ASSERT_NE(tensor(bias, "dbias"), nullptr);
  EXPECT_EQ(tensor(bias, "dbias")->role, Role::inout);
}

TEST(MatmulBackwardVariants, CpuLadderKeepsBlockedAndOpenblas) {
  ASSERT_EQ(testing::rungs("matmul_backward", Backend::cpu),
            (std::vector<std::string>{"1 reference", "2 blocked", "3 openblas"}));
  // no bias pass, so no workspace (variant 3 once kept a vector of ones for it)
  const Shape s = parse_shape("B=3,T=37,C=75,OC=221");
  for (int id : {2, 3}) {
    const Variant& v = reg().variant("matmul_backward", Backend::cpu, id);
    EXPECT_EQ(v.workspace_bytes(s, v.default_params()), 0u) << v.key();
  }
}

#if WB_HAVE_CUDA

const Shape kDev = parse_shape("llmc-dev");  // B*T = 8192, C = 768, OC = 3072

ParamValues params_of(const Variant& v, std::initializer_list<std::pair<std::string, int>> set) {
  ParamValues p = v.default_params();
  for (const auto& [name, value] : set) p.set(name, value);
  return p;
}

// How a variant meets the grid's limit of 65535 blocks in y at shape `s`, by its launch
// parameter `param`: skipped naming the limit at `beyond`, skipped at `at_65536` (one
// block too many), run at `within`.
void expect_grid_limit(const Variant& v, const Shape& s, const std::string& param, int beyond, int at_65536,
                       int within) {
  const auto why = v.skip_reason(s, params_of(v, {{param, beyond}}));
  ASSERT_TRUE(why.has_value()) << param << "=" << beyond;
  EXPECT_NE(why->find("65535"), std::string::npos) << *why;
  EXPECT_TRUE(v.skip_reason(s, params_of(v, {{param, at_65536}})).has_value()) << param << "=" << at_65536;
  EXPECT_FALSE(v.skip_reason(s, params_of(v, {{param, within}})).has_value()) << param << "=" << within;
}

TEST(MatmulBackwardVariants, CudaLadderIdsNamesAndClasses) {
  EXPECT_EQ(testing::rungs("matmul_backward", Backend::cuda),
            (std::vector<std::string>{"1 naive", "2 shared_tiles", "3 register_tiles", "4 cublas", "5 cublaslt_tf32"}));
  for (const Variant* v : testing::wb_rungs(reg(), "matmul_backward", Backend::cuda)) {
    EXPECT_EQ(v->source, "variants/matmul_backward/0" + std::to_string(v->id) + "_" + v->name + ".cu");
    EXPECT_FALSE(v->summary.empty());
    EXPECT_EQ(v->numeric, v->id == 5 ? NumericClass::tf32 : NumericClass::fp32) << v->key();
    EXPECT_TRUE(v->requirements.empty()) << v->key() << ": every variant handles any shape's edges";
  }
}

TEST(MatmulBackwardVariants, LaunchParameters) {
  const Variant& naive = reg().variant("matmul_backward", Backend::cuda, 1);
  ASSERT_EQ(naive.params.size(), 1u);
  EXPECT_EQ(naive.params[0].name, "block_size");
  EXPECT_EQ(naive.params[0].values, (std::vector<int>{32, 64, 128, 256, 512, 1024}));

  // block size = tile^2: 8 x 8, 16 x 16, 32 x 32
  const Variant& shared = reg().variant("matmul_backward", Backend::cuda, 2);
  ASSERT_EQ(shared.params.size(), 1u);
  EXPECT_EQ(shared.params[0].name, "block_size");
  EXPECT_EQ(shared.params[0].values, (std::vector<int>{64, 256, 1024}));
  EXPECT_EQ(shared.params[0].default_value, 256);

  const Variant& tiles = reg().variant("matmul_backward", Backend::cuda, 3);
  ASSERT_EQ(tiles.params.size(), 4u);
  EXPECT_EQ(tiles.params[0].name, "tile");
  EXPECT_EQ(tiles.params[0].values, (std::vector<int>{64, 128}));
  EXPECT_EQ(tiles.params[1].name, "thread_tile");
  EXPECT_EQ(tiles.params[1].values, (std::vector<int>{4, 8}));
  EXPECT_EQ(tiles.params[2].name, "k_tile");
  EXPECT_EQ(tiles.params[2].values, (std::vector<int>{8, 16}));
  EXPECT_EQ(tiles.params[3].name, "splits");
  EXPECT_EQ(tiles.params[3].values, (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(tiles.default_params().describe(), "tile=128,thread_tile=8,k_tile=8,splits=2");
  EXPECT_EQ(tiles.all_params().size(), 24u);  // a sweep of modest size

  // the vendor variants have nothing to tune (variant 5's bias_epilogue went with dbias)
  EXPECT_TRUE(reg().variant("matmul_backward", Backend::cuda, 4).params.empty());
  EXPECT_TRUE(reg().variant("matmul_backward", Backend::cuda, 5).params.empty());
}

TEST(MatmulBackwardVariants, EveryConfigurationRunsTheCheckAndSweepShapes) {
  std::vector<Shape> shapes = check_shapes();
  shapes.push_back(kDev);
  for (const Variant* v : testing::wb_rungs(reg(), "matmul_backward", Backend::cuda))
    for (const ParamValues& p : v->all_params())
      for (const Shape& s : shapes) {
        const auto why = v->skip_reason(s, p);
        EXPECT_FALSE(why.has_value()) << v->key() << " " << p.describe() << ": " << why.value_or("");
      }
}

TEST(MatmulBackwardVariants, TiledVariantsSkipRowsBeyondTheGridLimit) {
  const Variant& shared = reg().variant("matmul_backward", Backend::cuda, 2);
  const Shape rows_1m = parse_shape("B=1024,T=1024,C=768");         // 2^20 rows
  expect_grid_limit(shared, rows_1m, "block_size", 64, 256, 1024);  // 256: 65536 tiles of 16 rows

  const Variant& tiles = reg().variant("matmul_backward", Backend::cuda, 3);
  const Shape rows_8m = parse_shape("B=8192,T=1024,C=768");  // 2^23 rows: 65536 tiles of 128
  EXPECT_TRUE(tiles.skip_reason(rows_8m, params_of(tiles, {{"tile", 128}})).has_value());
  EXPECT_FALSE(tiles.skip_reason(rows_1m, params_of(tiles, {{"tile", 64}})).has_value());
}

TEST(MatmulBackwardVariants, WorkspaceSizes) {
  // No bias pass any more: only split-K partials and cuBLASLt's own workspace remain.
  const Shape odd = parse_shape("B=3,T=37,C=75,OC=221");
  for (int id : {1, 2, 4}) {
    const Variant& v = reg().variant("matmul_backward", Backend::cuda, id);
    EXPECT_EQ(v.workspace_bytes(kDev, v.default_params()), 0u) << v.key();
    EXPECT_EQ(v.workspace_bytes(odd, v.default_params()), 0u) << v.key();
  }

  // register tiles: splits * OC * C floats when splits > 1, nothing otherwise
  const Variant& tiles = reg().variant("matmul_backward", Backend::cuda, 3);
  EXPECT_EQ(tiles.workspace_bytes(kDev, params_of(tiles, {{"splits", 1}})), 0u);
  EXPECT_EQ(tiles.workspace_bytes(kDev, params_of(tiles, {{"splits", 4}})), 4u * 3072u * 768u * 4u);
  EXPECT_EQ(tiles.workspace_bytes(odd, params_of(tiles, {{"splits", 2}})), 2u * 221u * 75u * 4u);

  // cuBLASLt: 32 MiB for the library, whatever the shape
  const Variant& lt = reg().variant("matmul_backward", Backend::cuda, 5);
  EXPECT_EQ(lt.workspace_bytes(kDev, lt.default_params()), 32u << 20);
  EXPECT_EQ(lt.workspace_bytes(odd, lt.default_params()), 32u << 20);
}

TEST(MatmulBackwardBiasVariants, CudaLadderIdsNamesAndParams) {
  ASSERT_EQ(testing::rungs("matmul_backward_bias", Backend::cuda),
            (std::vector<std::string>{"1 block_per_column", "2 warp_per_column", "3 column_tiles"}));
  const auto cuda = testing::wb_rungs(reg(), "matmul_backward_bias", Backend::cuda);
  for (const Variant* v : cuda) {
    EXPECT_EQ(v->numeric, NumericClass::fp32);
    EXPECT_TRUE(v->requirements.empty());
    ASSERT_FALSE(v->params.empty());
    EXPECT_EQ(v->params[0].name, "block_size");
    EXPECT_EQ(v->params[0].values, (std::vector<int>{32, 64, 128, 256, 512, 1024}));
  }
  const Variant& tiles = *cuda[2];
  ASSERT_EQ(tiles.params.size(), 2u);
  EXPECT_EQ(tiles.params[1].name, "rows");
  EXPECT_EQ(tiles.params[1].values, (std::vector<int>{64, 128, 256, 512, 1024}));
  EXPECT_EQ(tiles.all_params().size(), 30u);
}

TEST(MatmulBackwardBiasVariants, ColumnTilesWorkspaceAndGridLimit) {
  const Variant& tiles = reg().variant("matmul_backward_bias", Backend::cuda, 3);
  // ceil(B*T / rows) slices of OC floats
  EXPECT_EQ(tiles.workspace_bytes(kDev, params_of(tiles, {{"rows", 256}})), 32u * 3072u * 4u);
  EXPECT_EQ(tiles.workspace_bytes(kDev, params_of(tiles, {{"rows", 64}})), 128u * 3072u * 4u);
  const Shape odd = parse_shape("B=3,T=37,C=75,OC=221");
  EXPECT_EQ(tiles.workspace_bytes(odd, params_of(tiles, {{"rows", 64}})), 2u * 221u * 4u);
  for (const Variant* v : testing::wb_rungs(reg(), "matmul_backward_bias", Backend::cuda)) {
    if (v->id != 3) {
      EXPECT_EQ(v->workspace_bytes(kDev, v->default_params()), 0u) << v->key();
    }
  }

  for (const Shape& s : check_shapes())
    for (const ParamValues& p : tiles.all_params()) EXPECT_FALSE(tiles.skip_reason(s, p).has_value()) << p.describe();
  const Shape rows_8m = parse_shape("B=8192,T=1024,C=768");  // 2^23 rows
  expect_grid_limit(tiles, rows_8m, "rows", 64, 128, 256);   // 128: 65536 slices
}

#else

TEST(MatmulBackwardVariants, CudaLadder) { GTEST_SKIP() << "built without CUDA: no CUDA variants are compiled"; }

#endif

}  // namespace
}  // namespace wb
