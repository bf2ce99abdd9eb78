// The CPU-side logic of the matmul_forward ladder: registered ids, names, numeric
// classes, launch parameters, requirements and skip reasons, workspaces. The kernels
// themselves are checked on a device by `wb check matmul_forward` (tests/variants/test_cuda.cpp).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "contract/registry.h"
#include "contract/shape.h"
#include "tests/support/ladder.h"
#include "tests/support/test_helpers.h"

namespace wb {
namespace {

constexpr const char* kOp = "matmul_forward";

TEST(MatmulForwardVariants, CpuLadderKeepsItsThreeVariants) {
  EXPECT_EQ(testing::rungs(kOp, Backend::cpu), (std::vector<std::string>{"1 reference", "2 blocked", "3 openblas"}));
}

#if WB_HAVE_CUDA

const Variant& cuda_variant(int id) { return Registry::global().variant(kOp, Backend::cuda, id); }

std::string reason(const Variant& v, const Shape& s, const ParamValues& p) {
  return v.skip_reason(s, v.complete(p)).value_or("");
}

using testing::contains;

TEST(MatmulForwardVariants, CudaLadderHasItsSevenVariants) {
  ASSERT_EQ(testing::rungs(kOp, Backend::cuda),
            (std::vector<std::string>{"1 naive", "2 shared_tiles", "3 register_tiles", "4 vec4_double_buffer",
                                      "5 cublas", "6 cublaslt_tf32", "7 tf32_wmma"}));
  for (const Variant* v : testing::wb_rungs(Registry::global(), kOp, Backend::cuda)) {
    EXPECT_EQ(v->numeric, v->id >= 6 ? NumericClass::tf32 : NumericClass::fp32) << v->label();
    EXPECT_EQ(v->source, "variants/matmul_forward/0" + std::to_string(v->id) + "_" + v->name + ".cu");
    EXPECT_EQ(v->source_hash.size(), 64u) << v->label();
    EXPECT_FALSE(v->summary.empty());
  }
}

TEST(MatmulForwardVariants, LaunchParametersAndTheirDefaults) {
  const std::vector<int> all_blocks{32, 64, 128, 256, 512, 1024};
  for (int id : {1, 5}) {
    const Variant& v = cuda_variant(id);
    ASSERT_EQ(v.params.size(), 1u);
    EXPECT_EQ(v.params[0].name, "block_size");
    EXPECT_EQ(v.params[0].values, all_blocks);
  }
  EXPECT_EQ(cuda_variant(2).params_text(), "64, 256, 1024");
  EXPECT_EQ(cuda_variant(2).default_params().describe(), "block_size=256");
  for (int id : {3, 4}) {
    const Variant& v = cuda_variant(id);
    EXPECT_EQ(v.params_text(), "block_size 64, 256, 1024; tile 64, 128; tile_k 8, 16");
    EXPECT_EQ(v.default_params().describe(), "block_size=256,tile=128,tile_k=8");
    EXPECT_EQ(v.all_params().size(), 12u);
  }
  EXPECT_TRUE(cuda_variant(6).params.empty());
  EXPECT_EQ(cuda_variant(7).params_text(), "block_size 128, 256; tile 64, 128");
  EXPECT_EQ(cuda_variant(7).default_params().describe(), "block_size=256,tile=128");
}

TEST(MatmulForwardVariants, RegisterTilesSkipThreadTilesThatAreNotBuilt) {
  const Shape s = parse_shape("llmc-dev");
  for (int id : {3, 4}) {
    const Variant& v = cuda_variant(id);
    EXPECT_TRUE(contains(reason(v, s, {{"block_size", 64}, {"tile", 128}}), "16x16 outputs per thread"))
        << reason(v, s, {{"block_size", 64}, {"tile", 128}});
    EXPECT_TRUE(contains(reason(v, s, {{"block_size", 1024}, {"tile", 64}}), "2x2 outputs per thread"));
    EXPECT_EQ(reason(v, s, {{"block_size", 64}, {"tile", 64}}), "");     // 8x8 per thread
    EXPECT_EQ(reason(v, s, {{"block_size", 256}, {"tile", 64}}), "");    // 4x4
    EXPECT_EQ(reason(v, s, {{"block_size", 256}, {"tile", 128}}), "");   // 8x8
    EXPECT_EQ(reason(v, s, {{"block_size", 1024}, {"tile", 128}}), "");  // 4x4
    int runnable = 0;
    for (const ParamValues& p : v.all_params()) runnable += v.skip_reason(s, p) ? 0 : 1;
    EXPECT_EQ(runnable, 8) << v.label();
  }
}

TEST(MatmulForwardVariants, Vec4VariantsNeedMultiplesOfFour) {
  const Shape odd = parse_shape("B=3,T=37,C=75,OC=221");
  const Shape odd_oc = parse_shape("B=3,T=37,C=768,OC=221");
  EXPECT_EQ(reason(cuda_variant(4), odd, {}), "requires C % 4 == 0");
  EXPECT_EQ(reason(cuda_variant(4), odd_oc, {}), "requires OC % 4 == 0");
  EXPECT_EQ(reason(cuda_variant(7), odd, {}), "requires C % 4 == 0");
  EXPECT_EQ(reason(cuda_variant(7), odd_oc, {}), "");  // scalar, masked stores: any OC
  EXPECT_EQ(cuda_variant(4).requirements_text(), "C % 4 == 0, OC % 4 == 0");
  EXPECT_EQ(cuda_variant(7).requirements_text(), "C % 4 == 0");
}

TEST(MatmulForwardVariants, EdgeHandlingVariantsRunEveryCheckShape) {
  for (int id : {1, 2, 3, 5, 6}) {
    const Variant& v = cuda_variant(id);
    EXPECT_TRUE(v.requirements.empty()) << v.label();
    for (const Shape& s : check_shapes()) {
      EXPECT_EQ(v.skip_reason(s, v.default_params()), std::nullopt) << v.label() << " at C=" << s.C;
    }
  }
  // Every configuration of the tf32 kernel runs the shapes with C % 4 == 0.
  for (const Shape& s : check_shapes())
    for (const ParamValues& p : cuda_variant(7).all_params())
      EXPECT_EQ(cuda_variant(7).skip_reason(s, p).has_value(), s.C % 4 != 0) << p.describe();
}

TEST(MatmulForwardVariants, RowTilesBeyondGridYAreSkipped) {
  const Shape huge = parse_shape("B=1024,T=65536,C=768,OC=64");  // B*T = 2^26 rows
  EXPECT_TRUE(contains(reason(cuda_variant(2), huge, {{"block_size", 64}}), "more than gridDim.y allows"));
  for (int id : {3, 4, 7})
    EXPECT_TRUE(contains(reason(cuda_variant(id), huge, {}), "more than gridDim.y allows")) << id;
  EXPECT_EQ(reason(cuda_variant(1), huge, {}), "");  // 1-D grid: 2^32 outputs / 256 fit gridDim.x
  EXPECT_EQ(reason(cuda_variant(3), parse_shape("llmc-dev"), {}), "");
}

TEST(MatmulForwardVariants, OnlyCublasLtDeclaresAWorkspace) {
  const Shape s = parse_shape("llmc-dev");
  for (int id = 1; id <= 7; ++id) {
    const Variant& v = cuda_variant(id);
    const std::size_t expected = id == 6 ? std::size_t(32) << 20 : 0;
    EXPECT_EQ(v.workspace_bytes(s, v.default_params()), expected) << v.label();
  }
  EXPECT_EQ(cuda_variant(6).workspace_bytes(parse_shape("B=1,T=5,C=96,OC=384"), {}), std::size_t(32) << 20);
}

#else

TEST(MatmulForwardVariants, CudaLadderNeedsCuda) {
  GTEST_SKIP() << "built without CUDA: no CUDA variants are compiled";
}

#endif

}  // namespace
}  // namespace wb
